"""Tests of ``cond_ros.sim.kinematics.urdf.load_urdf`` (URDF -> Articulation).

Every expected value is derived independently in the test: the XML is re-read with
``xml.etree.ElementTree``, rotations are built from explicit Rz Ry Rx products (and checked once
against scipy), mesh vertices are loaded with trimesh here. No kinematics kernel is used.
Malformed URDFs must raise ``ModelError`` whose message names the offending element.
"""
import os
import pathlib
import shutil
import site
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from cond_ros.sim.kinematics.urdf import fit_bounding_primitive, load_urdf
from cond_ros.sim.model import GeometryType, JointType
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # test/, home of reference.py
from reference import rot_x, rot_y, rot_z  # noqa: E402

ERD = os.path.join(site.getsitepackages()[0], "cmeel.prefix", "share", "example-robot-data")
PANDA = os.path.join(ERD, "robots", "panda_description", "urdf", "panda.urdf")
PANDA_MESHES = os.path.join(ERD, "robots", "panda_description", "meshes", "collision")
needs_panda = pytest.mark.skipif(not os.path.isfile(PANDA), reason="example-robot-data not installed")
TOL = 1e-12


# -- independent helpers -------------------------------------------------------------------------
def floats(text, default):
    return np.array([float(v) for v in (text or default).split()])


def origin_matrix(origin_el):
    """URDF <origin>: fixed-axis roll-pitch-yaw, R = Rz(y) Ry(p) Rx(r)."""
    xyz = floats(None if origin_el is None else origin_el.get("xyz"), "0 0 0")
    r, p, y = floats(None if origin_el is None else origin_el.get("rpy"), "0 0 0")
    out = np.eye(4)
    out[:3, :3] = rot_z(y) @ rot_y(p) @ rot_x(r)
    out[:3, 3] = xyz
    return out


def robot(body, name="r"):
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def link(name, inertial="", extra=""):
    return f'<link name="{name}">{inertial}{extra}</link>'


def inertial(mass=1.0, diag=(0.1, 0.1, 0.1), off=(0.0, 0.0, 0.0), xyz="0 0 0", rpy="0 0 0"):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{diag[0]}" iyy="{diag[1]}" izz="{diag[2]}" ixy="{off[0]}" ixz="{off[1]}" iyz="{off[2]}"/>'
            '</inertial>')


def joint(name, parent, child, kind="revolute", extra='<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" '
          'velocity="2"/>'):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def chain(kind="revolute", extra=None):
    """Two links a -> b joined by joint j1."""
    args = {} if extra is None else {"extra": extra}
    return robot(link("a", inertial()) + link("b", inertial()) + joint("j1", "a", "b", kind, **args))


def mesh_collision(filename, xyz="0 0 0", rpy="0 0 0", scale=None):
    scale = "" if scale is None else f' scale="{scale}"'
    return (f'<collision><origin xyz="{xyz}" rpy="{rpy}"/><geometry><mesh filename="{filename}"{scale}/></geometry>'
            '</collision>')


def points_in_frame(transform, points):
    inv = np.linalg.inv(transform)
    return points @ inv[:3, :3].T + inv[:3, 3]


def outside_distance(kind, size, local):
    """Largest distance by which any point (primitive frame) lies outside the primitive (<= 0: all inside)."""
    if kind == GeometryType.BOX:
        return float(np.max(np.abs(local) - size))
    half_len = size[1] if kind == GeometryType.CAPSULE else 0.0
    z = np.clip(local[:, 2], -half_len, half_len)
    return float(np.max(np.linalg.norm(local - np.c_[np.zeros((len(z), 2)), z], axis=1) - size[0]))


@pytest.fixture(scope="module")
def panda():
    return load_urdf(PANDA)


@pytest.fixture(scope="module")
def panda_xml():
    return ET.parse(PANDA).getroot()


# -- the Panda of example-robot-data -------------------------------------------------------------
@needs_panda
def test_panda_tree_matches_xml(panda, panda_xml):
    """Links, parents and joints are those of the XML, parents come before children, the root is link0."""
    xml_joints = {j.get("name"): j for j in panda_xml.findall("joint")}
    assert set(panda.link_name) == {el.get("name") for el in panda_xml.findall("link")}
    assert panda.link_name[0] == "panda_link0" and panda.link_parent[0] == -1 and panda.joint_name[0] == ""
    assert set(panda.joint_name[1:]) == set(xml_joints)
    for i in range(1, panda.link_count):
        el = xml_joints[panda.joint_name[i]]
        assert el.find("child").get("link") == panda.link_name[i]
        assert panda.link_name[panda.link_parent[i]] == el.find("parent").get("link")
        assert panda.link_parent[i] < i
        kind = {"fixed": JointType.FIXED, "revolute": JointType.REVOLUTE, "prismatic": JointType.PRISMATIC}
        assert panda.joint_type[i] == kind[el.get("type")]


@needs_panda
def test_panda_dofs_and_mimic_match_xml(panda, panda_xml):
    """DOFs: the moving joints without <mimic>, in link order; a <mimic> joint shares its target's DOF."""
    mimic = {j.get("name"): j.find("mimic") for j in panda_xml.findall("joint") if j.find("mimic") is not None}
    moving = [j.get("name") for j in panda_xml.findall("joint") if j.get("type") != "fixed"]
    # This example-robot-data Panda has 7 arm joints and 2 finger joints; the second finger mimics the first.
    assert len(moving) == 9 and set(mimic) == {"panda_finger_joint2"}
    assert panda.dof_count == len(moving) - len(mimic) == 8
    assert panda.dof_name == [n for n in panda.joint_name if n in moving and n not in mimic]
    assert panda.dof_name == [f"panda_joint{k}" for k in range(1, 8)] + ["panda_finger_joint1"]
    for i, name in enumerate(panda.joint_name):
        if name in mimic:
            target = mimic[name].get("joint")
            assert panda.joint_dof[i] == panda.dof_index(target)
            assert panda.joint_multiplier[i] == float(mimic[name].get("multiplier", 1.0))
            assert panda.joint_offset[i] == float(mimic[name].get("offset", 0.0))
        elif name in moving:
            assert panda.dof_name[panda.joint_dof[i]] == name
            assert panda.joint_multiplier[i] == 1.0 and panda.joint_offset[i] == 0.0
        else:
            assert panda.joint_dof[i] == -1


@needs_panda
def test_panda_origins_and_axes_match_xml(panda, panda_xml):
    """joint_origin = xyz + Rz Ry Rx(rpy) and joint_axis = normalized <axis>, read independently."""
    for j in panda_xml.findall("joint"):
        i = panda.joint_name.index(j.get("name"))
        np.testing.assert_allclose(panda.joint_origin[i], origin_matrix(j.find("origin")), atol=TOL)
        if j.get("type") != "fixed":
            axis = floats(j.find("axis").get("xyz"), "1 0 0")
            np.testing.assert_allclose(panda.joint_axis[i], axis / np.linalg.norm(axis), atol=TOL)
    np.testing.assert_allclose(panda.joint_origin[0], np.eye(4))
    np.testing.assert_allclose(panda.base_transform, np.eye(4))


@needs_panda
def test_panda_limits_and_dynamics_match_xml(panda, panda_xml):
    """Position/velocity/effort limits and damping/friction per DOF equal the owning joint's XML values."""
    for k, name in enumerate(panda.dof_name):
        el = next(j for j in panda_xml.findall("joint") if j.get("name") == name)
        lim, dyn = el.find("limit"), el.find("dynamics")
        assert panda.dof_lower[k] == float(lim.get("lower")) and panda.dof_upper[k] == float(lim.get("upper"))
        assert panda.dof_velocity_limit[k] == float(lim.get("velocity"))
        assert panda.dof_effort_limit[k] == float(lim.get("effort"))
        assert panda.dof_damping[k] == float(dyn.get("damping", 0.0))
        assert panda.dof_friction[k] == float(dyn.get("friction", 0.0))


@needs_panda
def test_panda_inertials_match_xml(panda, panda_xml):
    """Mass, COM and link-frame inertia R I R^T per link, from the XML <inertial>."""
    for el in panda_xml.findall("link"):
        i = panda.link_index(el.get("name"))
        node = el.find("inertial")
        if node is None:
            assert panda.link_mass[i] == 0.0 and not panda.link_inertia[i].any()
            continue
        g = {k: float(v) for k, v in node.find("inertia").attrib.items()}
        tensor = np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                           [g["ixz"], g["iyz"], g["izz"]]])
        frame = origin_matrix(node.find("origin"))
        assert panda.link_mass[i] == float(node.find("mass").get("value"))
        np.testing.assert_allclose(panda.link_com[i], frame[:3, 3], atol=TOL)
        np.testing.assert_allclose(panda.link_inertia[i], frame[:3, :3] @ tensor @ frame[:3, :3].T, atol=TOL)


@needs_panda
def test_panda_matches_pinocchio():
    """Arm joint placements and link inertias agree with Pinocchio's URDF parser.

    Pinocchio merges fixed children into their parent body; links 1-6 have none, so their inertias compare directly.
    """
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(PANDA)
    art = load_urdf(PANDA, mesh_primitives=False)
    for k in range(1, 8):
        jid = model.getJointId(f"panda_joint{k}")
        i = art.joint_name.index(f"panda_joint{k}")
        np.testing.assert_allclose(art.joint_origin[i], model.jointPlacements[jid].homogeneous, atol=1e-12)
        if k < 7:
            body = model.inertias[jid]
            assert art.link_mass[i] == pytest.approx(body.mass, rel=1e-12)
            np.testing.assert_allclose(art.link_com[i], body.lever, atol=1e-12)
            np.testing.assert_allclose(art.link_inertia[i], body.inertia, atol=1e-12)


@needs_panda
@pytest.mark.parametrize("link_name", ["panda_link0", "panda_link1", "panda_link4", "panda_link7", "panda_hand"])
def test_panda_mesh_primitive_encloses_vertices(panda, link_name):
    """The primitive fitted to a Panda collision mesh contains every vertex (1e-9) and touches the mesh."""
    i = panda.link_index(link_name)
    (g,) = np.flatnonzero(panda.geom_link == i)
    stem = "hand" if link_name == "panda_hand" else link_name.replace("panda_", "")
    vertices = np.asarray(trimesh.load(os.path.join(PANDA_MESHES, stem + ".stl"), force="mesh").vertices)
    kind = GeometryType(panda.geom_type[g])
    assert kind in (GeometryType.BOX, GeometryType.CAPSULE, GeometryType.SPHERE)
    gap = outside_distance(kind, panda.geom_size[g], points_in_frame(panda.geom_origin[g], vertices))
    assert -1e-9 < gap <= 1e-9  # inside, and not inflated
    rot = panda.geom_origin[g, :3, :3]
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) == pytest.approx(1.0)


@needs_panda
def test_panda_finger_boxes(panda, panda_xml):
    """<box> collisions become BOX geoms with half extents and the <collision> origin."""
    i = panda.link_index("panda_leftfinger")
    boxes = [c for c in next(el for el in panda_xml.findall("link") if el.get("name") == "panda_leftfinger")
             .findall("collision")]
    geoms = np.flatnonzero(panda.geom_link == i)
    assert len(geoms) == len(boxes) == 4
    for g, c in zip(geoms, boxes):
        assert panda.geom_type[g] == GeometryType.BOX
        np.testing.assert_allclose(panda.geom_size[g], floats(c.find("geometry/box").get("size"), "") / 2, atol=TOL)
        np.testing.assert_allclose(panda.geom_origin[g], origin_matrix(c.find("origin")), atol=TOL)


# -- small synthetic robots ---------------------------------------------------------------------
def test_rpy_convention_matches_scipy():
    """The test's Rz Ry Rx helper is scipy's extrinsic 'xyz' Euler rotation (guards the reference itself)."""
    r, p, y = 0.3, -0.7, 1.9
    np.testing.assert_allclose(rot_z(y) @ rot_y(p) @ rot_x(r), Rotation.from_euler("xyz", [r, p, y]).as_matrix(),
                               atol=1e-15)


def test_rotated_inertial_and_origin():
    """An <inertial> with rpy is rotated into the link frame; a joint origin with all three angles is composed."""
    rpy, diag, off = (0.4, -1.1, 2.3), (0.3, 0.4, 0.5), (0.01, -0.02, 0.03)
    text = robot(link("a", inertial()) + link("b", inertial(2.0, diag, off, "0.1 0.2 0.3", " ".join(map(str, rpy))))
                 + joint("j1", "a", "b", extra='<origin xyz="1 2 3" rpy="0.5 0.6 0.7"/><axis xyz="1 1 0"/>'))
    art = load_urdf(text)
    tensor = np.array([[diag[0], off[0], off[1]], [off[0], diag[1], off[2]], [off[1], off[2], diag[2]]])
    rot = rot_z(rpy[2]) @ rot_y(rpy[1]) @ rot_x(rpy[0])
    np.testing.assert_allclose(art.link_inertia[1], rot @ tensor @ rot.T, atol=TOL)
    np.testing.assert_allclose(art.link_com[1], [0.1, 0.2, 0.3])
    assert art.link_mass[1] == 2.0
    np.testing.assert_allclose(art.joint_origin[1, :3, :3], rot_z(0.7) @ rot_y(0.6) @ rot_x(0.5), atol=TOL)
    np.testing.assert_allclose(art.joint_axis[1], [2 ** -0.5, 2 ** -0.5, 0.0], atol=TOL)
    assert art.dof_lower[0] == -np.inf and art.dof_effort_limit[0] == np.inf  # no <limit>
    assert art.dof_damping[0] == 0.0 and art.dof_friction[0] == 0.0  # no <dynamics>


def test_mimic_joint_and_dof_order():
    """A mimic joint listed before its target gets the target's DOF, multiplier and offset; DOFs follow link order."""
    text = robot(link("base", inertial()) + link("m", inertial()) + link("t", inertial()) + link("c", inertial())
                 + joint("jm", "base", "m", "prismatic", '<axis xyz="0 1 0"/><mimic joint="jt" multiplier="-2" '
                         'offset="0.1"/><limit lower="0" upper="9" effort="1" velocity="1"/>')
                 + joint("jt", "base", "t", "prismatic", '<axis xyz="0 -1 0"/><limit lower="0" upper="0.04" '
                                                        'effort="100" velocity="0.2"/><dynamics damping="0.3"/>')
                 + joint("jc", "t", "c", "continuous", '<axis xyz="0 0 1"/><limit effort="3" velocity="4" '
                                                      'lower="-1" upper="1"/>'))
    art = load_urdf(text)
    assert art.link_name == ["base", "m", "t", "c"]
    assert art.dof_name == ["jt", "jc"] and art.dof_count == 2
    np.testing.assert_array_equal(art.joint_dof, [-1, 0, 0, 1])
    assert art.joint_multiplier[1] == -2.0 and art.joint_offset[1] == 0.1
    assert (art.dof_lower[0], art.dof_upper[0], art.dof_damping[0]) == (0.0, 0.04, 0.3)
    assert (art.dof_lower[1], art.dof_upper[1]) == (-np.inf, np.inf)  # continuous: no position limits
    assert (art.dof_effort_limit[1], art.dof_velocity_limit[1]) == (3.0, 4.0)


def test_primitive_geometries_and_capsule_tag():
    """box/sphere/cylinder/capsule map to GeometryType sizes with the <collision> origin."""
    geoms = ('<collision><origin xyz="1 0 0" rpy="0 0 1"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>'
             '<collision><geometry><sphere radius="0.3"/></geometry></collision>'
             '<collision><geometry><cylinder radius="0.1" length="0.8"/></geometry></collision>'
             '<collision><geometry><capsule radius="0.05" length="0.5"/></geometry></collision>')
    art = load_urdf(robot(link("a", inertial(), geoms)))
    np.testing.assert_array_equal(art.geom_type, [GeometryType.BOX, GeometryType.SPHERE, GeometryType.CYLINDER,
                                                  GeometryType.CAPSULE])
    np.testing.assert_allclose(art.geom_size, [[0.1, 0.2, 0.3], [0.3, 0, 0], [0.1, 0.4, 0], [0.05, 0.25, 0]])
    np.testing.assert_allclose(art.geom_origin[0], origin_matrix(ET.fromstring('<o xyz="1 0 0" rpy="0 0 1"/>')),
                               atol=TOL)
    np.testing.assert_array_equal(art.geom_link, [0, 0, 0, 0])


def test_mimic_on_fixed_joint_is_ignored():
    """A <mimic> inside a fixed joint (left over in reduced URDFs) is ignored: the joint stays fixed, no DOF."""
    art = load_urdf(chain("fixed", '<mimic joint="nowhere"/>'))
    assert art.dof_count == 0 and art.joint_dof[1] == -1 and art.joint_type[1] == JointType.FIXED


def test_link_without_inertial_and_base_transform(tmp_path):
    """No <inertial>: mass 0, zero inertia; base_transform is stored; a file path and its text load the same."""
    text = robot(link("a") + link("b", inertial()) + joint("j1", "a", "b", "fixed"))
    path = tmp_path / "r.urdf"
    path.write_text(text)
    base = np.eye(4)
    base[:3, :3], base[:3, 3] = rot_z(0.3), (1, 2, 3)
    art = load_urdf(str(path), base_transform=base)
    assert art.link_mass[0] == 0.0 and not art.link_inertia[0].any() and art.dof_count == 0
    np.testing.assert_allclose(art.base_transform, base)
    assert load_urdf(text).link_name == art.link_name
    with pytest.raises(ModelError, match="base_transform"):
        load_urdf(text, base_transform=np.diag([1.0, 1.0, -1.0, 1.0]))


def test_fit_bounding_primitive_shapes():
    """Points on a long round rod get a capsule, a cube's corners get a box; both enclose the points."""
    rng = np.random.default_rng(0)
    angle = rng.uniform(0.0, 2.0 * np.pi, 400)
    rod = np.c_[0.01 * np.cos(angle), 0.01 * np.sin(angle), rng.uniform(-1.0, 1.0, 400)] @ rot_x(0.4).T + [1, 2, 3]
    cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    for pts, expected in ((rod, GeometryType.CAPSULE), (cube, GeometryType.BOX)):
        kind, transform, size = fit_bounding_primitive(pts)
        assert kind == expected
        assert outside_distance(kind, size, points_in_frame(transform, pts)) <= 1e-9


# -- meshes and package:// ----------------------------------------------------------------------
@needs_panda
def test_scaled_offset_mesh_encloses_vertices(tmp_path):
    """Mesh scale and the <collision> origin are applied: vertices in the link frame are inside the primitive."""
    shutil.copy(os.path.join(PANDA_MESHES, "link3.stl"), tmp_path / "m.stl")
    text = robot(link("a", inertial(), mesh_collision("m.stl", "0.1 -0.2 0.3", "0.3 0.2 0.1", "2 0.5 1.5")))
    (tmp_path / "r.urdf").write_text(text)
    art = load_urdf(str(tmp_path / "r.urdf"))
    vertices = np.asarray(trimesh.load(tmp_path / "m.stl", force="mesh").vertices) * [2, 0.5, 1.5]
    frame = origin_matrix(ET.fromstring('<o xyz="0.1 -0.2 0.3" rpy="0.3 0.2 0.1"/>'))
    in_link = points_in_frame(np.linalg.inv(frame), vertices)
    local = points_in_frame(art.geom_origin[0], in_link)
    gap = outside_distance(GeometryType(art.geom_type[0]), art.geom_size[0], local)
    assert -1e-9 < gap <= 1e-9


@needs_panda
@pytest.mark.parametrize("layout", ["package_folder", "parent_folder"])
def test_package_uri_through_package_dirs(tmp_path, monkeypatch, layout):
    """package://NAME/... resolves in package_dirs given as the package folder or as its parent."""
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    (tmp_path / "ws" / "my_pkg" / "meshes").mkdir(parents=True)
    shutil.copy(os.path.join(PANDA_MESHES, "finger.stl"), tmp_path / "ws" / "my_pkg" / "meshes" / "f.stl")
    text = robot(link("a", inertial(), mesh_collision("package://my_pkg/meshes/f.stl")))
    with pytest.raises(ModelError, match=r"link 'a'.*package://my_pkg/meshes/f\.stl.*not found"):
        load_urdf(text)
    folder = tmp_path / "ws" / ("my_pkg" if layout == "package_folder" else "")
    art = load_urdf(text, package_dirs=[folder])
    assert len(art.geom_type) == 1


@needs_panda
def test_package_uri_through_ament_prefix_path(tmp_path, monkeypatch):
    """package://NAME/... resolves to PREFIX/share/NAME/... for an AMENT_PREFIX_PATH entry."""
    share = tmp_path / "install" / "share" / "my_pkg" / "meshes"
    share.mkdir(parents=True)
    shutil.copy(os.path.join(PANDA_MESHES, "finger.stl"), share / "f.stl")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(tmp_path / "nowhere"), str(tmp_path / "install")]))
    art = load_urdf(robot(link("a", inertial(), mesh_collision("package://my_pkg/meshes/f.stl"))))
    assert len(art.geom_type) == 1


@needs_panda
def test_package_uri_relative_to_urdf_file(monkeypatch, panda_xml):
    """example-robot-data's own package:// URIs resolve from the URDF's location (no package_dirs, no ament)."""
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    meshes = [el.get("name") for el in panda_xml.findall("link") if el.find("collision/geometry/mesh") is not None]
    assert len(meshes) == 9 and all("package://" in m.get("filename") for m in panda_xml.iter("mesh"))
    art = load_urdf(PANDA)
    for name in meshes:  # one primitive per collision mesh
        assert np.sum(art.geom_link == art.link_index(name)) == 1


def test_mesh_primitives_false_skips_meshes():
    """mesh_primitives=False leaves mesh collisions out without opening the files."""
    art = load_urdf(robot(link("a", inertial(), mesh_collision("does/not/exist.stl"))), mesh_primitives=False)
    assert len(art.geom_type) == 0 and art.geom_origin.shape == (0, 4, 4)


# -- malformed input ----------------------------------------------------------------------------
MALFORMED = {
    "missing link": (robot(link("a", inertial()) + joint("j1", "a", "ghost")), r"joint 'j1'.*child link 'ghost'"),
    "cycle": (robot(link("a", inertial()) + link("b", inertial()) + link("c", inertial()) + joint("j1", "a", "b")
                    + joint("j2", "b", "c") + joint("j3", "c", "b")), r"link 'b' has two parent joints, 'j1' and 'j3'"),
    "cycle without root": (robot(link("a", inertial()) + link("b", inertial()) + joint("j1", "a", "b")
                                 + joint("j2", "b", "a")),
                           r"joints 'j2', 'j1' form a cycle: links 'b' -> 'a' -> 'b' \(parent -> child\)"),
    "detached cycle": (robot(link("r", inertial()) + link("a", inertial()) + link("b", inertial())
                             + joint("j1", "a", "b") + joint("j2", "b", "a")), r"'j\d', 'j\d' form a cycle"),
    "non-PD inertia": (robot(link("a", inertial(1.0, (-0.1, 0.1, 0.1)))), r"link 'a'.*not positive semi-definite"),
    "singular inertia with mass": (robot(link("a", inertial(1.0, (0.0, 0.0, 0.0)))), r"link 'a'.*positive definite"),
    "triangle inequality": (robot(link("a", inertial(1.0, (0.1, 0.1, 0.3)))), r"link 'a'.*triangle inequality"),
    "negative mass": (robot(link("a", inertial(-1.0))), r"link 'a'.*<mass value=-1.0> must be a number >= 0"),
    "missing inertia attribute": (robot(link("a", '<inertial><mass value="1"/><inertia ixx="1" iyy="1"/></inertial>')),
                                  r"link 'a'.*ixy, ixz, iyz, izz"),
    "unknown joint type": (chain("slider"), r"joint 'j1'.*unknown joint type 'slider'"),
    "missing mesh": (robot(link("a", inertial(), mesh_collision("meshes/nope.stl"))),
                     r"link 'a'.*mesh file 'meshes/nope\.stl' not found"),
    "lower > upper": (chain(extra='<axis xyz="0 0 1"/><limit lower="1" upper="-1" effort="1" velocity="1"/>'),
                      r"joint 'j1'.*lower limit 1.0 > upper limit -1.0"),
    "zero axis": (chain(extra='<axis xyz="0 0 0"/>'), r"joint 'j1'.*axis \[0.0, 0.0, 0.0\] has zero length"),
    "bad axis": (chain(extra='<axis xyz="0 1"/>'), r"joint 'j1'.*<axis xyz='0 1'>.*must be 3 finite numbers"),
    "two roots": (robot(link("a", inertial()) + link("b", inertial()) + link("c", inertial()) + joint("j1", "a", "b")),
                  r"2 root links.*'a', 'c'"),
    "mimic of unknown joint": (chain(extra='<axis xyz="0 0 1"/><mimic joint="nope"/>'),
                               r"joint 'j1'.*cannot mimic joint 'nope': it is not defined"),
    "mimic of mimic": (robot(link("a", inertial()) + link("b", inertial()) + link("c", inertial())
                             + joint("j1", "a", "b", extra='<axis xyz="0 0 1"/><mimic joint="j2"/>')
                             + joint("j2", "a", "c", extra='<axis xyz="0 0 1"/><mimic joint="j1"/>')),
                       r"cannot mimic joint 'j\d': it is a mimic joint itself"),
    "mimic of fixed": (robot(link("a", inertial()) + link("b", inertial()) + link("c", inertial())
                             + joint("j1", "a", "b", extra='<axis xyz="0 0 1"/><mimic joint="j2"/>')
                             + joint("j2", "a", "c", "fixed", extra="")), r"joint 'j1'.*'j2': it is fixed"),
    "XML syntax error": ('<robot name="r">\n<link name="a">\n</robot>\n', r"XML syntax error at line 3"),
    "floating joint": (chain("floating", ""), r"floating joint 'j1' .*is not supported yet \(robots are fixed-base\)"),
    "duplicate link": (robot(link("a", inertial()) + link("a", inertial())),
                       r"link 'a' is defined twice \(lines 3 and 3\)"),
    "bad number": (chain(extra='<axis xyz="0 0 1"/><limit lower="low" upper="1"/>'),
                   r"joint 'j1'.*cannot parse <joint>: ValueError.*'low'"),
    "negative effort": (chain(extra='<axis xyz="0 0 1"/><limit effort="-1"/>'),
                        r"joint 'j1'.*<limit effort=-1.0> must be a number >= 0"),
    "bad damping": (chain(extra='<axis xyz="0 0 1"/><dynamics damping="lots"/>'),
                    r"joint 'j1'.*<dynamics damping='lots'> is not a number"),
    "missing parent tag": (robot(link("a", inertial()) + link("b", inertial())
                                 + '<joint name="j1" type="fixed"><child link="b"/></joint>'),
                           r"joint 'j1'.*missing <parent link=...>"),
    "bad mesh scale": (robot(link("a", inertial(), mesh_collision("m.stl", scale="1 2"))),
                       r"link 'a'.*<mesh scale='1 2'>.*must be 1 or 3 finite numbers"),
    "bad box": (robot(link("a", inertial(), '<collision><geometry><box size="1 0 1"/></geometry></collision>')),
                r"link 'a'.*<box> dimensions must be finite and positive"),
    "unknown geometry": (robot(link("a", inertial(), '<collision><geometry><cone r="1"/></geometry></collision>')),
                         r"link 'a'.*unknown geometry <cone>"),
    "empty geometry": (robot(link("a", inertial(), '<collision><geometry/></collision>')),
                       r"link 'a'.*exactly one shape"),
    "not a robot": ('<model name="x"/>', r"root element must be <robot name=...>"),
    "no links": (robot(""), r"no <link> elements"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_urdf_raises_model_error_naming_element(case):
    """Each malformed URDF raises ModelError (never a raw lxml/yourdfpy/trimesh error) naming the element."""
    text, pattern = MALFORMED[case]
    with pytest.raises(ModelError, match=pattern):
        load_urdf(text)


def test_error_names_the_file(tmp_path):
    """Errors from a file carry the file path; a missing file is a ModelError too."""
    path = tmp_path / "bad.urdf"
    path.write_text(chain("slider"))
    with pytest.raises(ModelError, match=r"bad\.urdf: joint 'j1' \(line \d+\)"):
        load_urdf(str(path))
    with pytest.raises(ModelError, match="not found"):
        load_urdf(str(tmp_path / "missing.urdf"))


def test_unreadable_mesh_is_model_error(tmp_path):
    """A mesh file trimesh cannot read gives a ModelError naming the link and the path."""
    (tmp_path / "junk.stl").write_bytes(b"not a mesh")
    (tmp_path / "r.urdf").write_text(robot(link("a", inertial(), mesh_collision("junk.stl"))))
    with pytest.raises(ModelError, match=r"link 'a'.*junk\.stl"):
        load_urdf(str(tmp_path / "r.urdf"))
