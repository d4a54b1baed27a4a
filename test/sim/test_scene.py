"""Scene YAML: the panda_pick scene lifts its box; malformed scene files name the bad key."""
import numpy as np
import pytest

from cond_ros.sim import ModelError
from cond_ros.sim.scene import load_scene
from cond_ros.tools.benchmarks import bench_panda_pick

GOOD = """
dt: 0.01
duration: 0.1
robots:
  - name: arm
    urdf: urdf/panda.urdf
    q: [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.04]
    drive_stiffness: [100, 100, 100, 100, 100, 100, 100, 100]
    drive_damping: [10, 10, 10, 10, 10, 10, 10, 10]
colliders:
  - {type: plane}
script:
  robot: arm
  tool_link: panda_tcp
  gripper_joints: [panda_finger_joint1]
  waypoints:
    - {t: 0.0, gripper: open}
"""


def write(tmp_path, text):
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.slow
def test_panda_pick_lifts_the_box():
    """The scripted Panda grasps the 0.4 kg box and lifts it by the scripted 0.165 m minus the grasp height
    (>= 100 mm), and `cond-ros bench panda_pick --json` reports the issue's keys."""
    result = bench_panda_pick()
    for key in ("dynamics_ms", "solver_ms", "iterations_mean", "max_penetration_mm"):
        assert key in result and np.isfinite(result[key])
    assert result["lift_mm"] > 100.0
    assert result["max_penetration_mm"] < 5.0  # closing impact, u dt / 2 (see contacts module)


def test_good_scene_loads(tmp_path):
    """A minimal scene builds a simulator and a script with the arm's joints."""
    simulator, script, duration = load_scene(write(tmp_path, GOOD))[:3]
    assert simulator.model.robot_dof_count == 8 and duration == pytest.approx(0.1)
    control = script.control(0.0)
    assert control.robot_q_target[7] == pytest.approx(0.04)


@pytest.mark.parametrize("old,new,message", [
    ("dt: 0.01", "dt: fast", "dt must be a finite number"),
    ("q: [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.04]", "q: [0.0]", r"robots\[0\].q must be 8"),
    ("robot: arm", "robot: hand", "script.robot 'hand'"),
    ("tool_link: panda_tcp", "tool_link: nope", "no link 'nope'"),
    ("{type: plane}", "{type: torus}", r"colliders\[0\].type"),
    ("urdf: urdf/panda.urdf", "urdf: urdf/missing.urdf", "missing.urdf"),
    ("    - {t: 0.0, gripper: open}", "    - {t: 0.0, gripper: maybe}", "gripper must be 'open' or 'close'"),
    ("dt: 0.01", "dt: [", "invalid YAML"),
])
def test_malformed_scene_names_the_key(tmp_path, old, new, message):
    """Each malformed entry raises ModelError naming the key path (and nothing is simulated)."""
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, GOOD.replace(old, new)))


CABLE = GOOD + """
cables:
  - {segments: 10, radius: 0.002, density: 1259.0, youngs_modulus: 1.0e+6, poisson_ratio: 0.4,
     start: [0.4, -0.2, 0.3], grip: {robot: arm, link: panda_tcp, length: 0.01}}
sensors:
  - {name: wrist, robot: arm, parent_link: ft_sensor_link, child_link: panda_hand}
"""


def test_cable_scene_welds_the_cable_to_the_tool(tmp_path):
    scene = load_scene(write(tmp_path, CABLE))
    (rod,) = scene.cables
    model = scene.simulator.model
    assert rod.segments == 10 and model.body_count == 10
    assert len(scene.sensors) == 1 and scene.sensors[0].spec.name == "wrist"
    assert model.damping_policy == 1  # geometric by default with cables


@pytest.mark.parametrize("old,new,message", [
    ("segments: 10", "segments: 1", "segments"),
    ("poisson_ratio: 0.4", "poisson_ratio: 0.5", "poisson_ratio"),
    ("link: panda_tcp, length", "link: nope, length", "no link 'nope'"),
    ("grip: {robot: arm", "grip: {robot: hand", "grip.robot 'hand'"),
    ("child_link: panda_hand}", "child_link: panda_hand, frame: world}", "frame"),
    ("parent_link: ft_sensor_link", "parent_link: panda_link7", "the parent of 'panda_hand' is 'ft_sensor_link'"),
])
def test_malformed_cable_or_sensor_names_the_key(tmp_path, old, new, message):
    with pytest.raises(ModelError, match=message):
        load_scene(write(tmp_path, CABLE.replace(old, new)))


def test_scene_without_its_script_starts_where_the_script_does():
    """``script=False`` (the sim node) solves only the trajectory's first row: the robot, cable and every
    other body start bit-identical to the scene with its whole 5 500-row IK track, which starts on row 0."""
    from cond_ros.resources import scene_files
    whole = load_scene(scene_files()["panda_cable_small"])
    start = load_scene(scene_files()["panda_cable_small"], script=False)
    assert start.script is None and whole.script is not None
    assert len(whole.script.track.q) > 5000
    for name in ("robot_q", "robot_qd", "body_q", "body_quat", "body_qd", "particle_q", "particle_qd"):
        assert np.array_equal(getattr(start.simulator.state, name), getattr(whole.simulator.state, name)), name
    assert np.array_equal(start.simulator.state.robot_q[:7], whole.script.track.q[0][:7])
