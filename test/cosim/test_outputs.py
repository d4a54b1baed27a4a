"""Published values as plain arrays: joint states with mimic joints, TF frames, cable polyline, colliders."""
import numpy as np
import pytest

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


def test_soft_body_surface_is_the_closed_outward_boundary():
    """The triangle list of an FEM box encloses the box's volume by the divergence theorem (sum of a . (b x c) / 6
    over outward triangles), so it is closed and outward, and it follows the state's node positions."""
    from cond_ros.cosim import soft_body_surface
    from cond_ros.sim import FemMaterial, ModelBuilder, add_soft_body, box_mesh
    builder = ModelBuilder()
    body = add_soft_body(builder, box_mesh((0.1, 0.05, 0.02), (3, 2, 1), center=(0.3, 0.0, 0.5)),
                         FemMaterial(1e5, 0.3, 1000.0))
    state = builder.finalize().state()

    def enclosed(corners):
        a, b, c = corners[0::3], corners[1::3], corners[2::3]
        return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    corners = soft_body_surface(state, body)
    assert corners.shape == (3 * len(body.surface_faces), 3)
    assert enclosed(corners) == pytest.approx(0.2 * 0.1 * 0.04, rel=1e-12)
    state.particle_q[body.particles] *= 2.0  # every length doubled: eight times the volume
    assert enclosed(soft_body_surface(state, body)) == pytest.approx(8 * 0.2 * 0.1 * 0.04, rel=1e-12)


def test_contact_force_segments_carry_the_weight_of_a_box_at_rest():
    """A 0.5 kg box at rest on a plane: each segment starts at its contact point, and the forces the segments
    draw (end - start over the scale) sum to the box's weight, upwards (statics); no contacts, no segments."""
    from cond_ros.cosim import contact_force_segments
    from cond_ros.scenes import BOX_MASS, box_on_plane
    from cond_ros.sim import SimOptions, Simulator
    sim = Simulator(box_on_plane(), options=SimOptions(0.01, "cond", {"tolerance": 1e-10, "max_iterations": 5000}))
    for _ in range(100):
        sim.step()
    segments = contact_force_segments(sim.contacts, 0.01)
    assert segments.shape == (2 * sim.contacts.count, 3) and sim.contacts.count == 4
    np.testing.assert_array_equal(segments[0::2], sim.contacts.position)
    total = ((segments[1::2] - segments[0::2]) / 0.01).sum(axis=0)
    np.testing.assert_allclose(total, [0.0, 0.0, BOX_MASS * 9.81], atol=1e-3 * BOX_MASS * 9.81)
    assert contact_force_segments(None, 0.01).shape == (0, 3)
