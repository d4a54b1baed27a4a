"""Published values as plain arrays: joint states with mimic joints, TF frames, cable polyline, colliders."""
import numpy as np

from cond_ros.cosim.outputs import (RateDivider, JointStateLayout, cable_polyline, collider_shapes, link_frames,
                                  robot_kinematics, sensor_frame_id)


def test_rate_divider():
    """Rates in simulated time: 0 every step, 25 Hz at 10 ms every 4th step, negative never."""
    assert [RateDivider(0.0, 0.01).due(k) for k in range(3)] == [True, True, True]
    assert [k for k in range(10) if RateDivider(25.0, 0.01).due(k)] == [0, 4, 8]
    assert not any(RateDivider(-1.0, 0.01).due(k) for k in range(10))


def test_joint_states_include_mimic_joints(small_scene):
    """Every moving joint, leaders in DOF order, the mimic finger after its leader with its value."""
    sim = small_scene.simulator
    layout = JointStateLayout.from_model(sim.model)
    assert layout.names == [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]
    q, qd = layout.values(sim.state)
    np.testing.assert_array_equal(q[:8], sim.state.robot_q)
    assert q[8] == q[7]


def test_link_frames_compose_to_forward_kinematics(small_scene):
    """Chaining the parent-to-child transforms from world gives each link's world pose."""
    sim = small_scene.simulator
    kinematics = robot_kinematics(sim.model)
    frames = link_frames(sim.model, sim.state, kinematics)
    world = {"world": np.eye(4)}
    for parent, child, pose in frames:
        world[child] = world[parent] @ pose
    art = sim.model.robots[0]
    for link, name in enumerate(art.link_name):
        np.testing.assert_allclose(world[name], kinematics[0].link_pose[link], atol=1e-12)


def test_sensor_frame_ids(small_scene):
    """A reading is stamped with the frame it is expressed in."""
    spec = small_scene.sensors[0].spec
    assert spec.frame == "parent" and sensor_frame_id(spec) == "ft_sensor_link"


def test_cable_polyline_ends(small_scene):
    """The polyline runs from the cable's welded start through the segment centres to its end."""
    sim, rod = small_scene.simulator, small_scene.cables[0]
    line = cable_polyline(sim.model, sim.state, rod)
    assert line.shape == (rod.segments + 2, 3)
    np.testing.assert_allclose(line[0], rod.start, atol=1e-9)
    np.testing.assert_allclose(line[-1], rod.end, atol=1e-9)


def test_collider_shapes(small_scene):
    """The post is a 4 cm x 35 cm cylinder, the table a 0.6 x 1.2 x 0.1 m box."""
    post, table = collider_shapes(small_scene.simulator.model)
    assert post.kind == "cylinder"
    np.testing.assert_allclose(post.size, [0.04, 0.04, 0.35])
    assert table.kind == "box"
    np.testing.assert_allclose(table.size, [0.6, 1.2, 0.1])
    np.testing.assert_allclose(table.pose[:3, 3], [0.6, 0.0, -0.05])
