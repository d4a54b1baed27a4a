"""Tests of ``urdf/panda.urdf``: Franka Panda arm, ATI Gamma F/T sensor link, shortened hand, tool point.

Expected values are derived independently: the XML is read with ``xml.etree.ElementTree``, rotations
are explicit Rz Ry Rx products, Franka's modified Denavit-Hartenberg table is implemented here, and
Pinocchio (its own URDF parser) provides forward kinematics. The arm's kinematics and inertials are
compared with example-robot-data's Panda, the file they were copied from. The collision primitives
are checked against fresh surface samples of its collision meshes.
"""
import os
import pathlib
import site
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import trimesh

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[0]))  # test/, home of reference.py
from reference import rot_x, rot_y, rot_z  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, "urdf", "panda.urdf")
ERD_PANDA = os.path.join(site.getsitepackages()[0], "cmeel.prefix", "share", "example-robot-data",
                         "robots", "panda_description")
ERD_URDF = os.path.join(ERD_PANDA, "urdf", "panda.urdf")
needs_erd = pytest.mark.skipif(not os.path.isfile(ERD_URDF), reason="example-robot-data not installed")

ARM_JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
FINGER_JOINTS = ["panda_finger_joint1", "panda_finger_joint2"]
ARM_LINKS = [f"panda_link{i}" for i in range(8)]
TOOL_POINT = 0.1779  # along panda_link7's z (shared/data/README.md)
FLANGE = 0.107
SENSOR_HEIGHT, SENSOR_RADIUS, SENSOR_MASS = 0.0333, 0.0754 / 2, 0.255  # ATI Gamma

# Franka's published limits (datasheet): lower, upper [rad or m], velocity, effort.
LIMITS = {
    "panda_joint1": (-2.8973, 2.8973, 2.1750, 87.0),
    "panda_joint2": (-1.7628, 1.7628, 2.1750, 87.0),
    "panda_joint3": (-2.8973, 2.8973, 2.1750, 87.0),
    "panda_joint4": (-3.0718, -0.0698, 2.1750, 87.0),
    "panda_joint5": (-2.8973, 2.8973, 2.6100, 12.0),
    "panda_joint6": (-0.0175, 3.7525, 2.6100, 12.0),
    "panda_joint7": (-2.8973, 2.8973, 2.6100, 12.0),
    "panda_finger_joint1": (0.0, 0.04, 0.2, 70.0),
    "panda_finger_joint2": (0.0, 0.04, 0.2, 70.0),
}

# Franka's modified DH parameters (Craig): (a_{i-1}, d_i, alpha_{i-1}), then the flange.
DH = [(0.0, 0.333, 0.0), (0.0, 0.0, -np.pi / 2), (0.0, 0.316, np.pi / 2), (0.0825, 0.0, np.pi / 2),
      (-0.0825, 0.384, -np.pi / 2), (0.0, 0.0, np.pi / 2), (0.088, 0.0, np.pi / 2)]
DH_FLANGE = (0.0, 0.107, 0.0)


# -- independent helpers -------------------------------------------------------------------------
def homogeneous(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)):
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = translation
    return out


def floats(text, default="0 0 0"):
    return np.array([float(v) for v in (text or default).split()])


def origin(element):
    """(R, p) of an element's <origin> (URDF rpy about fixed axes: R = Rz(y) Ry(p) Rx(r))."""
    o = element.find("origin")
    r, p, y = floats(None if o is None else o.get("rpy"))
    return rot_z(y) @ rot_y(p) @ rot_x(r), floats(None if o is None else o.get("xyz"))


def dh_transform(a, d, alpha, theta):
    """Craig's modified DH: RotX(alpha) TransX(a) RotZ(theta) TransZ(d)."""
    return (homogeneous(rot_x(alpha)) @ homogeneous(translation=(a, 0, 0))
            @ homogeneous(rot_z(theta)) @ homogeneous(translation=(0, 0, d)))


def rotation_angle(r):
    """Angle of a rotation matrix, accurate near 0 (atan2 of sin and cos, not arccos)."""
    sin = np.linalg.norm([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2.0
    return float(np.arctan2(sin, (np.trace(r) - 1.0) / 2.0))


def inertia_tensor(inertial):
    i = {k: float(inertial.find("inertia").get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    return np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])


def random_configurations(n, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.array([LIMITS[j][0] for j in ARM_JOINTS])
    hi = np.array([LIMITS[j][1] for j in ARM_JOINTS])
    return lo + (hi - lo) * rng.random((n, 7))


@pytest.fixture(scope="module")
def root():
    return ET.parse(URDF).getroot()


@pytest.fixture(scope="module")
def links(root):
    return {el.get("name"): el for el in root.findall("link")}


@pytest.fixture(scope="module")
def joints(root):
    return {el.get("name"): el for el in root.findall("joint")}


@pytest.fixture(scope="module")
def erd():
    root = ET.parse(ERD_URDF).getroot()
    return {el.get("name"): el for el in root.findall("link")}, {el.get("name"): el for el in root.findall("joint")}


@pytest.fixture(scope="module")
def model():
    m = pin.buildModelFromUrdf(URDF)
    return m, m.createData()


def frame_pose(m, d, name):
    f = m.getFrameId(name)
    assert f < m.nframes, name
    return d.oMf[f].homogeneous


# -- structure -----------------------------------------------------------------------------------
def test_tree_structure(links, joints):
    """The file is one tree rooted at panda_link0 with the expected links and fixed joints."""
    assert set(links) == set(ARM_LINKS) | {"panda_link8", "ft_sensor_link", "panda_hand", "panda_leftfinger",
                                           "panda_rightfinger", "panda_tcp"}
    children = [j.find("child").get("link") for j in joints.values()]
    assert len(children) == len(set(children)) == len(links) - 1
    assert set(links) - set(children) == {"panda_link0"}
    assert all(j.find("parent").get("link") in links for j in joints.values())
    chain = {name: (j.get("type"), j.find("parent").get("link"), j.find("child").get("link"))
             for name, j in joints.items() if j.get("type") == "fixed"}
    assert chain == {
        "panda_joint8": ("fixed", "panda_link7", "panda_link8"),
        "ft_sensor_joint": ("fixed", "panda_link8", "ft_sensor_link"),
        "panda_hand_joint": ("fixed", "ft_sensor_link", "panda_hand"),
        "panda_tcp_joint": ("fixed", "panda_hand", "panda_tcp"),
    }


def test_actuated_joints_and_mimic(joints):
    """9 moving joints with Franka's names; panda_finger_joint2 mimics panda_finger_joint1 (1, 0)."""
    moving = [n for n, j in joints.items() if j.get("type") != "fixed"]
    assert moving == ARM_JOINTS + FINGER_JOINTS
    assert all(joints[n].get("type") == "revolute" for n in ARM_JOINTS)
    assert all(joints[n].get("type") == "prismatic" for n in FINGER_JOINTS)
    assert [j.find("mimic") is not None for j in joints.values()].count(True) == 1
    mimic = joints["panda_finger_joint2"].find("mimic")
    assert mimic.get("joint") == "panda_finger_joint1"
    assert float(mimic.get("multiplier")) == 1.0 and float(mimic.get("offset")) == 0.0
    a1, a2 = (floats(joints[n].find("axis").get("xyz")) for n in FINGER_JOINTS)
    np.testing.assert_array_equal(a1, -a2)  # symmetric opening
    for n in FINGER_JOINTS:
        assert joints[n].find("parent").get("link") == "panda_hand"


def test_joint_limits_and_dynamics(joints):
    """Position, velocity and effort limits are Franka's numbers; every moving joint has small dynamics."""
    for name, (lower, upper, velocity, effort) in LIMITS.items():
        limit = joints[name].find("limit")
        got = [float(limit.get(k)) for k in ("lower", "upper", "velocity", "effort")]
        assert got == [lower, upper, velocity, effort], name
        dyn = joints[name].find("dynamics")
        assert dyn is not None, name
        assert 0.0 <= float(dyn.get("damping")) <= 0.5 and 0.0 <= float(dyn.get("friction")) <= 0.5, name


@needs_erd
def test_kinematics_match_example_robot_data(joints, erd):
    """Joint origins and axes of panda_joint1..8 are example-robot-data's (Franka's) exactly."""
    _, erd_joints = erd
    for name in ARM_JOINTS + ["panda_joint8"]:
        ours, theirs = joints[name], erd_joints[name]
        for key in ("xyz", "rpy"):
            np.testing.assert_array_equal(floats(ours.find("origin").get(key)),
                                          floats(theirs.find("origin").get(key)), err_msg=f"{name} {key}")
        if name != "panda_joint8":
            np.testing.assert_array_equal(floats(ours.find("axis").get("xyz")),
                                          floats(theirs.find("axis").get("xyz")), err_msg=name)
        assert ours.find("parent").get("link") == theirs.find("parent").get("link")


@needs_erd
def test_arm_inertials_match_example_robot_data(links, erd):
    """Mass, centre of mass and inertia of panda_link0..7 are copied from example-robot-data."""
    erd_links, _ = erd
    for name in ARM_LINKS:
        ours, theirs = links[name].find("inertial"), erd_links[name].find("inertial")
        assert float(ours.find("mass").get("value")) == float(theirs.find("mass").get("value")), name
        np.testing.assert_array_equal(origin(ours)[1], origin(theirs)[1], err_msg=name)
        np.testing.assert_array_equal(inertia_tensor(ours), inertia_tensor(theirs), err_msg=name)


def test_inertias_are_physical(links):
    """Every link with mass has a positive definite inertia satisfying the triangle inequality."""
    massive = 0
    for name, link in links.items():
        inertial = link.find("inertial")
        if inertial is None:
            assert name in ("panda_link8", "panda_tcp"), f"{name} has no <inertial>"
            continue
        mass = float(inertial.find("mass").get("value"))
        assert mass > 0.0, name
        massive += 1
        r, _ = origin(inertial)
        tensor = r @ inertia_tensor(inertial) @ r.T
        moments = np.linalg.eigvalsh(tensor)
        assert moments[0] > 0.0, name
        assert moments[0] + moments[1] >= moments[2] * (1.0 - 1e-9), name
    assert massive == 12


def test_total_mass(links, model):
    """The arm weighs about 18 kg (Franka datasheet); Pinocchio agrees with the XML sum."""
    masses = {name: float(link.find("inertial/mass").get("value")) for name, link in links.items()
              if link.find("inertial") is not None}
    total = sum(masses.values())
    arm = sum(masses[n] for n in ARM_LINKS)
    assert 0.9 * 18.0 <= total <= 1.1 * 18.0, total
    assert 15.0 <= arm <= 18.0, arm
    m, _ = model
    # Pinocchio merges panda_link0 (fixed to the world) into the universe body, which computeTotalMass skips.
    assert abs(pin.computeTotalMass(m) + masses["panda_link0"] - total) < 1e-9


# -- pinocchio -----------------------------------------------------------------------------------
def test_pinocchio_parses_with_and_without_mimic():
    """Pinocchio loads the file: 9 DOFs by default, 8 with mimic support (finger 2 follows finger 1)."""
    m = pin.buildModelFromUrdf(URDF)
    assert list(m.names)[1:] == ARM_JOINTS + FINGER_JOINTS
    assert m.nq == m.nv == 9
    np.testing.assert_array_equal(m.lowerPositionLimit, [LIMITS[j][0] for j in ARM_JOINTS + FINGER_JOINTS])
    np.testing.assert_array_equal(m.upperPositionLimit, [LIMITS[j][1] for j in ARM_JOINTS + FINGER_JOINTS])
    np.testing.assert_array_equal(m.effortLimit, [LIMITS[j][3] for j in ARM_JOINTS + FINGER_JOINTS])

    mm = pin.buildModelFromUrdf(URDF, mimic=True)
    assert mm.nq == mm.nv == 8
    d = mm.createData()
    q = pin.neutral(mm)
    q[7] = 0.03
    pin.framesForwardKinematics(mm, d, q)
    hand = frame_pose(mm, d, "panda_hand")
    left = np.linalg.inv(hand) @ frame_pose(mm, d, "panda_leftfinger")
    right = np.linalg.inv(hand) @ frame_pose(mm, d, "panda_rightfinger")
    np.testing.assert_allclose(left[:3, 3], [0, 0.03, 0.018], atol=1e-12)
    np.testing.assert_allclose(right[:3, 3], [0, -0.03, 0.018], atol=1e-12)


def test_tool_point_is_01779_along_link7_z(model):
    """panda_tcp sits exactly 0.1779 m along panda_link7's z (at q = 0 and at random q)."""
    m, d = model
    for q7 in np.vstack([np.zeros((1, 7)), random_configurations(5, seed=1)]):
        q = np.concatenate([q7, [0.0, 0.0]])
        pin.framesForwardKinematics(m, d, q)
        link7 = frame_pose(m, d, "panda_link7")
        tcp = np.linalg.inv(link7) @ frame_pose(m, d, "panda_tcp")
        np.testing.assert_allclose(tcp[:3, 3], [0.0, 0.0, TOOL_POINT], rtol=0, atol=1e-9)
        np.testing.assert_allclose(tcp[:3, :3], rot_z(-np.pi / 4), rtol=0, atol=1e-12)  # Franka EE yaw
        sensor = np.linalg.inv(link7) @ frame_pose(m, d, "ft_sensor_link")
        np.testing.assert_allclose(sensor[:3, 3], [0.0, 0.0, FLANGE + SENSOR_HEIGHT], rtol=0, atol=1e-12)
        np.testing.assert_allclose(sensor[:3, :3], np.eye(3), rtol=0, atol=1e-12)


def test_flange_matches_franka_modified_dh(model):
    """panda_link8 from Pinocchio equals Franka's modified-DH chain at random q (1e-9 m, 1e-9 rad)."""
    m, d = model
    for q7 in random_configurations(25, seed=2):
        pin.framesForwardKinematics(m, d, np.concatenate([q7, [0.02, 0.02]]))
        expected = np.eye(4)
        for (a, dd, alpha), theta in zip(DH, q7):
            expected = expected @ dh_transform(a, dd, alpha, theta)
        expected = expected @ dh_transform(*DH_FLANGE, 0.0)
        got = frame_pose(m, d, "panda_link8")
        assert np.max(np.abs(got[:3, 3] - expected[:3, 3])) < 1e-9
        assert rotation_angle(expected[:3, :3].T @ got[:3, :3]) < 1e-9


# -- sensor, hand, collision geometry --------------------------------------------------------------
def test_ft_sensor_matches_ati_gamma(links, joints):
    """ft_sensor_link: ATI Gamma mass and size, solid-cylinder inertia, frame on its tool-side face."""
    text = open(URDF, encoding="utf-8").read()
    for quoted in ("75.4 mm", "33.3 mm", "0.255 kg"):
        assert quoted in text
    link = links["ft_sensor_link"]
    inertial = link.find("inertial")
    m = float(inertial.find("mass").get("value"))
    assert m == SENSOR_MASS
    (collision,) = link.findall("collision")
    cyl = collision.find("geometry/cylinder")
    r, h = float(cyl.get("radius")), float(cyl.get("length"))
    assert (r, h) == (SENSOR_RADIUS, SENSOR_HEIGHT)
    np.testing.assert_allclose(origin(collision)[1], [0, 0, -h / 2], atol=1e-12)
    np.testing.assert_allclose(origin(inertial)[1], [0, 0, -h / 2], atol=1e-12)
    expected = np.diag([m * (3 * r * r + h * h) / 12, m * (3 * r * r + h * h) / 12, m * r * r / 2])
    np.testing.assert_allclose(inertia_tensor(inertial), expected, rtol=1e-4, atol=0)
    rot, xyz = origin(joints["ft_sensor_joint"])
    np.testing.assert_array_equal(xyz, [0, 0, SENSOR_HEIGHT])
    np.testing.assert_array_equal(rot, np.eye(3))
    rot, xyz = origin(joints["panda_hand_joint"])
    np.testing.assert_array_equal(xyz, [0, 0, 0])
    np.testing.assert_allclose(rot, rot_z(-np.pi / 4), atol=1e-15)


def test_hand_pads_centre_on_tool_point(links, joints):
    """The fingertip pads' centres are at the tool point's height; palm and fingers stay above the sensor."""
    _, tcp = origin(joints["panda_tcp_joint"])
    fingers = (("panda_leftfinger", "panda_finger_joint1", 1), ("panda_rightfinger", "panda_finger_joint2", -1))
    for finger, joint, sign in fingers:
        _, base = origin(joints[joint])
        pad = next(c for c in links[finger].findall("collision") if c.get("name").endswith("_pad"))
        size = floats(pad.find("geometry/box").get("size"))
        centre = base + origin(pad)[1]
        assert abs(centre[2] - tcp[2]) < 1e-12
        assert abs(abs(centre[1]) - size[1] / 2) < 1e-12 and np.sign(centre[1]) == sign  # inner faces meet at q = 0
        for c in links[finger].findall("collision"):
            s = floats(c.find("geometry/box").get("size"))
            assert base[2] + origin(c)[1][2] - s[2] / 2 >= -1e-12  # not below the palm top
    palm = links["panda_hand"].find("collision")
    assert origin(palm)[1][2] - floats(palm.find("geometry/box").get("size"))[2] / 2 >= 0.0  # not inside the sensor


def collision_primitives(link):
    """[(kind, R, p, dims)] of a link's <collision> elements (kind: box, sphere or cylinder)."""
    out = []
    for c in link.findall("collision"):
        (shape,) = list(c.find("geometry"))
        rot, xyz = origin(c)
        if shape.tag == "box":
            dims = floats(shape.get("size"))
        elif shape.tag == "sphere":
            dims = np.array([float(shape.get("radius"))])
        else:
            assert shape.tag == "cylinder", shape.tag
            dims = np.array([float(shape.get("radius")), float(shape.get("length"))])
        out.append((shape.tag, rot, xyz, dims, c.get("name")))
    return out


def test_collision_primitives_exist_and_capsules_are_consistent(root, links):
    """Every arm link has primitive collisions, no meshes or visuals; each capsule triple is consistent."""
    assert root.find(".//mesh") is None and root.find(".//visual") is None
    for name in ARM_LINKS + ["ft_sensor_link", "panda_hand", "panda_leftfinger", "panda_rightfinger"]:
        assert links[name].findall("collision"), name
    capsules = 0
    for name in ARM_LINKS:
        prims = {p[4]: p for p in collision_primitives(links[name])}
        for pname, (kind, rot, xyz, dims, _) in prims.items():
            if kind != "cylinder" or f"{pname}_end0" not in prims:
                continue
            capsules += 1
            axis = rot[:, 2]
            for end, sign in (("_end0", -1), ("_end1", 1)):
                s_kind, _, s_xyz, s_dims, _ = prims[pname + end]
                assert s_kind == "sphere" and s_dims[0] == dims[0], pname + end
                np.testing.assert_allclose(s_xyz, xyz + sign * axis * dims[1] / 2, atol=1e-4, err_msg=pname + end)
    assert capsules == 13  # two per link for links 1-6, one on link7


def inside_excess(points, prims):
    """max(0, distance outside the union of primitives) per point (a box/cylinder's outside approximated by its
    largest face excess)."""
    excess = np.full(len(points), np.inf)
    for kind, rot, xyz, dims, _ in prims:
        local = (points - xyz) @ rot
        if kind == "sphere":
            e = np.linalg.norm(local, axis=1) - dims[0]
        elif kind == "box":
            e = np.max(np.abs(local) - dims / 2, axis=1)
        else:
            e = np.maximum(np.hypot(local[:, 0], local[:, 1]) - dims[0], np.abs(local[:, 2]) - dims[1] / 2)
        excess = np.minimum(excess, e)
    return np.maximum(excess, 0.0)


@needs_erd
@pytest.mark.parametrize("name", ARM_LINKS)
def test_collision_primitives_bound_the_collision_meshes(links, name):
    """The arm link's primitives enclose example-robot-data's collision mesh (fresh samples, 0.5 mm), not too
    loosely."""
    mesh = trimesh.load(os.path.join(ERD_PANDA, "meshes", "collision", name.replace("panda_", "") + ".stl"))
    samples, _ = trimesh.sample.sample_surface(mesh, 20000, seed=11)
    points = np.vstack([mesh.vertices, samples])
    prims = collision_primitives(links[name])
    assert inside_excess(points, prims).max() < 5e-4
    rng = np.random.default_rng(5)
    lo, hi = mesh.bounds[0] - 0.08, mesh.bounds[1] + 0.08
    probe = lo + (hi - lo) * rng.random((200000, 3))
    union = np.mean(inside_excess(probe, prims) == 0.0) * np.prod(hi - lo)
    assert mesh.volume <= union <= 2.0 * mesh.volume


# -- other parsers -------------------------------------------------------------------------------
def test_project_loader_reads_it():
    """cond_ros's own URDF loader accepts the file: 8 DOFs (the mimic finger shares one), its limits, 48 primitives."""
    from cond_ros.sim.kinematics.urdf import load_urdf

    art = load_urdf(URDF)
    assert art.dof_count == 8
    assert art.dof_name == ARM_JOINTS + ["panda_finger_joint1"]
    np.testing.assert_array_equal(art.dof_effort_limit, [LIMITS[j][3] for j in art.dof_name])
    right = art.link_index("panda_rightfinger")
    assert art.joint_dof[right] == 7 and art.joint_multiplier[right] == 1.0
    assert len(art.geom_type) == 48


def test_yourdfpy_reads_it():
    """yourdfpy parses the file with 8 actuated joints (the mimic joint excluded) and no mesh lookups."""
    import yourdfpy

    robot = yourdfpy.URDF.load(URDF, load_meshes=False, build_scene_graph=True)
    assert robot.actuated_joint_names == ARM_JOINTS + ["panda_finger_joint1"]
    assert robot.base_link == "panda_link0"
