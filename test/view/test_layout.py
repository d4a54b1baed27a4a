"""What the viewer draws, checked against the model it comes from: the FEM surface encloses the body's volume
(divergence theorem against the tetrahedra), cable tubes join end to end, collider meshes have the colliders'
extents, and the F/T arrow is the reading turned into world axes."""
import pathlib

import numpy as np
import pytest
import trimesh

from cond_ros.scenes import load_named_scene
from cond_ros.sim import quat_to_matrix
from cond_ros.view import FrameSampler, scene_layout
from cond_ros.view.layout import collider_mesh, nice_scale


@pytest.fixture(scope="module")
def soft_ball():
    return load_named_scene("soft_ball")


def test_fem_surface_encloses_the_tetrahedra_volume(soft_ball):
    layout = scene_layout(soft_ball)
    (surface,) = layout.soft_bodies
    body = soft_ball.soft_bodies[0]
    state = soft_ball.simulator.state
    frame = FrameSampler(soft_ball, layout).frame(0, state, None)
    x = frame.soft_body_vertices[0][surface.faces]  # (F, 3 corners, 3)
    enclosed = np.einsum("fi,fi->f", x[:, 0], np.cross(x[:, 1], x[:, 2])).sum() / 6.0  # outward faces: > 0
    assert enclosed == pytest.approx(body.mesh.volumes().sum(), rel=1e-9)
    assert surface.node_count == len(body.particles)


def test_cable_tubes_join_end_to_end(small_scene):
    layout = scene_layout(small_scene)
    (cable,) = layout.cables
    frame = FrameSampler(small_scene, layout).frame(0, small_scene.simulator.state, None)
    centres, quats = frame.cable_poses[0]
    axes = np.array([quat_to_matrix(q)[:, 2] for q in quats])  # a tube's axis: its segment's local z
    half = 0.5 * cable.segment_lengths[:, None] * axes
    gaps = np.linalg.norm((centres + half)[:-1] - (centres - half)[1:], axis=1)
    assert gaps.max() < 1e-6 * cable.segment_lengths.mean()
    assert len(centres) == 20 and cable.radius == pytest.approx(0.002)


def test_collider_meshes_have_the_colliders_extents(small_scene):
    shapes = scene_layout(small_scene).colliders
    assert {s.kind for s in shapes} == {"cylinder", "box"}
    for shape in shapes:
        mesh = collider_mesh(shape)
        assert np.ptp(mesh.vertices, axis=0) == pytest.approx(shape.size, rel=1e-6)


def test_every_link_with_collision_geometry_has_a_mesh(small_scene):
    (robot,) = scene_layout(small_scene).robots
    art = small_scene.simulator.model.robots[0]
    assert robot.source == "collision primitives"  # urdf/panda.urdf has no visual geometry
    assert set(robot.link_meshes) == {int(link) for link in art.geom_link}
    for g in np.flatnonzero(art.geom_type == 2):  # spheres: the mesh reaches exactly their radius
        centre, radius = art.geom_origin[g][:3, 3], art.geom_size[g][0]
        distance = np.linalg.norm(robot.link_meshes[int(art.geom_link[g])].vertices - centre, axis=1)
        assert distance.max() >= radius * (1 - 1e-6)


def test_ft_arrow_is_the_reading_in_world_axes(small_scene):
    sim = small_scene.simulator
    sim.reset()
    sensor = small_scene.sensors[0]
    sim.step(small_scene.control(0.0))
    reading, wrench = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
    layout = scene_layout(small_scene)
    pose, force, torque = FrameSampler(small_scene, layout).frame(1, sim.state, sim.contacts).ft[0]
    # the reading is in the parent link's frame (frame: parent); back into it, the arrow is the reading
    assert pose[:3, :3].T @ force == pytest.approx(reading.true_wrench[:3], abs=1e-12)
    assert pose[:3, :3].T @ torque == pytest.approx(reading.true_wrench[3:], abs=1e-12)
    assert pose == pytest.approx(wrench.parent_pose)
    sim.reset()
    sensor.reset()


@pytest.mark.parametrize("largest", [0.003, 0.7, 1.0, 13.0, 480.0])
def test_force_scale_is_round_and_fits(largest):
    scale = nice_scale(largest, 0.1)
    assert largest * scale <= 0.1 + 1e-12 and largest * scale > 0.1 / 2.5
    mantissa = scale / 10 ** np.floor(np.log10(scale))
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9


GRIPPER_URDF = pathlib.Path(__file__).resolve().parents[2] / "urdf" / "two_finger_gripper.urdf"


def _gripper_with_visuals(tmp_path, mesh_file: str):
    """two_finger_gripper.urdf with a mesh visual (scaled 2x, 5 cm up) on the palm and a box on the left finger."""
    trimesh.creation.box(extents=(0.01, 0.02, 0.03)).export(tmp_path / "palm.stl")
    text = GRIPPER_URDF.read_text()
    text = text.replace('<collision><origin xyz="0 0 0.01"/>',
                        f'<visual><origin xyz="0 0 0.05"/><geometry><mesh filename="{mesh_file}" scale="2 2 2"/>'
                        '</geometry></visual><collision><origin xyz="0 0 0.01"/>', 1)
    text = text.replace('<collision><origin xyz="0 0.005 -0.03"/>',
                        '<visual><geometry><box size="0.02 0.01 0.06"/></geometry></visual>'
                        '<collision><origin xyz="0 0.005 -0.03"/>', 1)
    urdf = tmp_path / "gripper.urdf"
    urdf.write_text(text)
    scene = tmp_path / "scene.yaml"
    scene.write_text(f"name: visuals\ndt: 0.01\nduration: 0.1\nrobots:\n  - name: gripper\n    urdf: {urdf}\n"
                     "    q: [0.0, 0.02]\n    drive_stiffness: [0, 0]\n    drive_damping: [0, 0]\n")
    return load_named_scene("visuals", path=str(scene))


def test_robot_drawn_from_its_urdf_visuals(tmp_path):
    scene = _gripper_with_visuals(tmp_path, str(tmp_path / "palm.stl"))
    (robot,) = scene_layout(scene).robots
    assert robot.source == "visual meshes"
    links = {name: robot.link_meshes.get(i) for i, name in enumerate(robot.link_names)}
    assert set(name for name, mesh in links.items() if mesh is not None) == {"palm", "left_finger"}
    palm, finger = links["palm"].vertices, links["left_finger"].vertices
    assert np.ptp(palm, axis=0) == pytest.approx([0.02, 0.04, 0.06], rel=1e-6)  # the mesh, scaled 2x
    assert palm.mean(axis=0) == pytest.approx([0.0, 0.0, 0.05], abs=1e-7)  # at the visual's origin
    assert np.ptp(finger, axis=0) == pytest.approx([0.02, 0.01, 0.06], rel=1e-6)


def test_a_missing_visual_mesh_falls_back_to_the_collision_primitives(tmp_path):
    scene = _gripper_with_visuals(tmp_path, str(tmp_path / "no_such.stl"))
    (robot,) = scene_layout(scene).robots
    assert robot.source == "collision primitives"
    assert np.ptp(robot.link_meshes[robot.link_names.index("palm")].vertices, axis=0) == pytest.approx(
        [0.04, 0.16, 0.02], rel=1e-6)
