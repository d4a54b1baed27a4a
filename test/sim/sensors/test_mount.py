"""A body on a 6-axis F/T mount: the reading against statics (weight, applied loads, their moments)."""
import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from cond_ros.sim import ModelError
from cond_ros.sim.builder import ModelBuilder, box_inertia
from cond_ros.scenes.scene import load_scene
from cond_ros.sim.sensors import mount_body
from cond_ros.sim.simulator import Simulator
from cond_ros.scenes.registry import scene_file

MASS, HALF = 0.05, np.array([0.015, 0.02, 0.01])
GAINS = dict(stiffness=[9.1e6, 9.1e6, 1.8e7], damping=0.0, rotation_stiffness=1.1e3, rotation_damping=0.0)


def mounted_box(local, quat=(1.0, 0.0, 0.0, 0.0), **gains):
    builder = ModelBuilder()
    body = builder.add_body([0.1, -0.2, 0.3], mass=MASS, inertia=box_inertia(MASS, HALF), quat=quat)
    mount = mount_body(builder, body, local, name="box", **{**GAINS, **gains})
    sim = Simulator(builder.finalize(), dt=0.01,
                    solver_options=dict(tolerance=1e-12, max_iterations=1000, weights="block"))
    return sim, mount


@pytest.mark.parametrize("local, rotvec", [
    ([0.0, 0.0, -0.01], [0.0, 0.0, 0.0]),
    ([0.012, -0.005, -0.01], [0.3, -0.2, 0.5]),  # off-centre, tilted: the weight's moment shows up
])
def test_a_mounted_body_at_rest_reads_its_weight_and_its_moment_about_the_sensor(local, rotvec):
    quat = Rotation.from_rotvec(rotvec).as_quat(scalar_first=True)
    sim, mount = mounted_box(local, quat)
    weight = MASS * np.array([0.0, 0.0, -9.81])
    for _ in range(20):
        sim.step()
        force, torque = mount.wrench(sim.model, sim.previous_state, sim.state, sim.dt)
        com = sim.state.body_q[0]
        np.testing.assert_allclose(force, weight, rtol=0, atol=1e-8)
        np.testing.assert_allclose(torque, np.cross(com - mount.point, weight), rtol=0, atol=1e-8)
    assert np.abs(sim.state.body_qd[0]).max() < 1e-10  # preloaded: no ringing of the stiff mount


def test_an_applied_wrench_goes_through_the_sensor():
    """Every step, the sensor wrench is what the body's momentum balances leave over (momenta from the
    solved velocities, the sensor's from its potentials): a load ramp at the COM, held."""
    sim, mount = mounted_box([0.0, 0.0, -0.01], damping=2 * np.sqrt(9.1e6 * MASS), rotation_damping=0.2)
    push, twist = np.array([1.5, -0.4, 2.0]), np.array([0.02, 0.0, -0.03])
    weight = MASS * np.array([0.0, 0.0, -9.81])
    inertia = box_inertia(MASS, HALF)
    control = sim.model.control()
    for k in range(100):
        ramp = min(1.0, (k + 1) / 50)
        control.body_wrench[0] = ramp * np.concatenate([push, twist])
        sim.step(control)
        force, torque = mount.wrench(sim.model, sim.previous_state, sim.state, sim.dt)
        before, after = sim.previous_state, sim.state
        rot = Rotation.from_quat(before.body_quat[0], scalar_first=True).as_matrix()
        momentum_rate = MASS * (after.body_qd[0, :3] - before.body_qd[0, :3]) / sim.dt
        spin_rate = rot @ inertia @ rot.T @ (after.body_qd[0, 3:] - before.body_qd[0, 3:]) / sim.dt
        applied = weight + ramp * push
        arm = before.body_q[0] - mount.point
        np.testing.assert_allclose(force, applied - momentum_rate, atol=1e-7)
        np.testing.assert_allclose(torque, ramp * twist - spin_rate + np.cross(arm, applied - momentum_rate),
                                   rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(force, weight + push, rtol=1e-3)  # and it has nearly settled on the load


def scene_with_mount(tmp_path, mount):
    with open(scene_file("soft_gripper")) as fh:
        data = yaml.safe_load(fh)
    data["soft_bodies"] = []
    data["bodies"][0]["mount"] = mount
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize("mount, message", [
    ({"stiffness": -1.0}, r"bodies\[0\].mount.stiffness must be one or 3 numbers > 0"),
    ({"rotation_stiffness": [1.0, 2.0]}, r"mount.rotation_stiffness must be one or 3 numbers"),
    ({"damping": -5.0}, r"mount.damping must be one or 3 numbers >= 0"),
    ({"point": [0.0, "x", 0.0]}, r"mount.point must be"),
    ({"stiffness": float("nan")}, r"mount.stiffness"),
])
def test_bad_mount_yaml_is_named(tmp_path, mount, message):
    with pytest.raises(ModelError, match=message):
        load_scene(scene_with_mount(tmp_path, mount))


def test_a_scene_mount_holds_the_body_where_it_was_loaded(tmp_path):
    scene = load_scene(scene_with_mount(tmp_path, {"point": [0.0, 0.0, -0.015]}))
    (mount,) = scene.mounts
    np.testing.assert_allclose(mount.point, [0.0, 0.0, 0.0005])
    sim = scene.simulator
    sim.step()
    force, _ = mount.wrench(sim.model, sim.previous_state, sim.state, sim.dt)
    np.testing.assert_allclose(force, [0.0, 0.0, -0.05 * 9.81], atol=1e-9)
