"""Kinematics and dynamics kernels of articulated robots, against independent references.

References: Franka's published modified-DH parameters (written out here), finite differences of the
kinetic and potential energy (using forward kinematics only), and Pinocchio's RNEA/CRBA.
"""
import os
import site

import numpy as np
import pytest

from cond_ros.sim import ArticulationKinematics, load_urdf
from cond_ros.sim.model import GeometryType

OUR_PANDA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "urdf", "panda.urdf")
ERD_PANDA = os.path.join(site.getsitepackages()[0], "cmeel.prefix", "share", "example-robot-data", "robots",
                         "panda_description", "urdf", "panda.urdf")
FK_TOL = 1e-9  # [m], issue 3 acceptance
FD_STEP = 1e-6
FD_TOL = 1e-6  # relative, central differences of O(h^2) = 1e-12 plus rounding / h
PIN_TOL = 1e-10

# Franka Emika Panda, modified DH (Craig): (a, d, alpha) per joint, then the flange (d = 0.107)
PANDA_MDH = [(0.0, 0.333, 0.0), (0.0, 0.0, -np.pi / 2), (0.0, 0.316, np.pi / 2), (0.0825, 0.0, np.pi / 2),
             (-0.0825, 0.384, -np.pi / 2), (0.0, 0.0, np.pi / 2), (0.088, 0.0, np.pi / 2)]
FLANGE_D = 0.107


def mdh_flange(q):
    """World pose of the flange from the modified-DH table: T = RotX(alpha) TransX(a) RotZ(theta) TransZ(d)."""
    def rot_x(a):
        c, s = np.cos(a), np.sin(a)
        return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])

    def rot_z(a):
        c, s = np.cos(a), np.sin(a)
        return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])

    def trans(x=0.0, z=0.0):
        t = np.eye(4)
        t[0, 3], t[2, 3] = x, z
        return t
    pose = np.eye(4)
    for (a, d, alpha), theta in zip(PANDA_MDH, q):
        pose = pose @ rot_x(alpha) @ trans(x=a) @ rot_z(theta) @ trans(z=d)
    return pose @ trans(z=FLANGE_D)


def panda_models():
    paths = [p for p in (OUR_PANDA, ERD_PANDA) if os.path.isfile(p)]
    return [pytest.param(p, id=os.path.basename(os.path.dirname(os.path.dirname(p)))) for p in paths]


def random_q(art, rng):
    lo = np.where(np.isfinite(art.dof_lower), art.dof_lower, -np.pi)
    hi = np.where(np.isfinite(art.dof_upper), art.dof_upper, np.pi)
    return rng.uniform(lo, hi)


@pytest.mark.parametrize("path", panda_models())
def test_panda_fk_matches_modified_dh(path):
    """The flange (panda_link8) pose at random q equals Franka's modified-DH kinematics to 1e-9."""
    art = load_urdf(path, mesh_primitives=False)
    kin = ArticulationKinematics(art)
    flange = art.link_index("panda_link8")
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = random_q(art, rng)
        kin.update(q)
        expected = mdh_flange(q[:7])
        assert np.max(np.abs(kin.link_pose[flange][:3, 3] - expected[:3, 3])) < FK_TOL
        assert np.max(np.abs(kin.link_pose[flange][:3, :3] - expected[:3, :3])) < FK_TOL


def kinetic_energy_by_positions(art, kin, q, qd, h=1e-6):
    """1/2 sum m |v_com|^2 + 1/2 w^T I w with velocities from central differences of poses (FK only)."""
    kin.update(q + h * qd)
    plus = kin.link_pose.copy()
    kin.update(q - h * qd)
    minus = kin.link_pose.copy()
    kin.update(q)
    energy = 0.0
    for link in range(art.link_count):
        if art.link_mass[link] <= 0:
            continue
        com_p = plus[link, :3, :3] @ art.link_com[link] + plus[link, :3, 3]
        com_m = minus[link, :3, :3] @ art.link_com[link] + minus[link, :3, 3]
        v = (com_p - com_m) / (2 * h)
        rot = kin.link_pose[link, :3, :3]
        skew = (plus[link, :3, :3] - minus[link, :3, :3]) / (2 * h) @ rot.T
        w = np.array([skew[2, 1], skew[0, 2], skew[1, 0]])
        inertia = rot @ art.link_inertia[link] @ rot.T
        energy += 0.5 * art.link_mass[link] * v @ v + 0.5 * w @ inertia @ w
    return energy


@pytest.mark.parametrize("path", panda_models())
def test_panda_mass_matrix_is_spd_and_the_kinetic_energy_hessian(path):
    """M(q) is symmetric positive definite and equals the Hessian of T(qd) built from FK-differenced velocities."""
    art = load_urdf(path, mesh_primitives=False)
    kin = ArticulationKinematics(art)
    rng = np.random.default_rng(2)
    n = art.dof_count
    for _ in range(5):
        q = random_q(art, rng)
        kin.update(q)
        mass = kin.mass_matrix()
        assert np.allclose(mass, mass.T, atol=1e-14)
        assert np.linalg.eigvalsh(mass)[0] > 0
        # T is quadratic in qd, so its Hessian is exactly recovered from T(e_i + e_j) combinations
        hessian = np.empty((n, n))
        unit = np.eye(n)
        t_single = [kinetic_energy_by_positions(art, kin, q, unit[i]) for i in range(n)]
        for i in range(n):
            for j in range(n):
                t_pair = kinetic_energy_by_positions(art, kin, q, unit[i] + unit[j])
                hessian[i, j] = t_pair - t_single[i] - t_single[j]
        assert np.max(np.abs(hessian - mass)) < 1e-6 * np.max(np.abs(mass))


@pytest.mark.parametrize("path", panda_models())
def test_panda_bias_forces_match_lagrangian_finite_differences(path):
    """C(q, qd) qd + g(q) = dM/dt qd - dT/dq + dV/dq, every derivative by central differences of M and V."""
    art = load_urdf(path, mesh_primitives=False)
    kin = ArticulationKinematics(art)
    gravity = np.array([0.0, 0.0, -9.81])
    rng = np.random.default_rng(3)
    n = art.dof_count
    h = FD_STEP

    def mass_at(q):
        kin.update(q)
        return kin.mass_matrix()

    def potential_at(q):
        kin.update(q)
        return -sum(art.link_mass[k] * gravity @ (kin.link_pose[k, :3, :3] @ art.link_com[k] + kin.link_pose[k, :3, 3])
                    for k in range(art.link_count))
    for _ in range(5):
        q, qd = random_q(art, rng), rng.normal(size=n)
        m_dot = (mass_at(q + h * qd) - mass_at(q - h * qd)) / (2 * h)
        d_t = np.array([(qd @ mass_at(q + h * e) @ qd - qd @ mass_at(q - h * e) @ qd) / (4 * h) for e in np.eye(n)])
        d_v = np.array([(potential_at(q + h * e) - potential_at(q - h * e)) / (2 * h) for e in np.eye(n)])
        expected = m_dot @ qd - d_t + d_v
        kin.update(q)
        bias = kin.bias_forces(qd, gravity)
        assert np.max(np.abs(bias - expected)) < FD_TOL * max(1.0, np.max(np.abs(expected)))


def test_example_robot_data_panda_matches_pinocchio():
    """Mass matrix, bias forces and frame poses agree with Pinocchio (CRBA, RNEA) on the arm joints."""
    pin = pytest.importorskip("pinocchio")
    if not os.path.isfile(ERD_PANDA):
        pytest.skip("example-robot-data not installed")
    art = load_urdf(ERD_PANDA, mesh_primitives=False)
    model = pin.buildModelFromUrdf(ERD_PANDA)
    data = model.createData()
    kin = ArticulationKinematics(art)
    rng = np.random.default_rng(4)
    # Pinocchio treats the mimic finger as a free joint; compare with both fingers at the same opening
    finger = art.dof_index("panda_finger_joint1")
    for _ in range(5):
        q = random_q(art, rng)
        qd = rng.normal(size=art.dof_count)
        qd[finger] = 0.0
        q_pin = np.concatenate([q, [q[finger]]]) if model.nq == art.dof_count + 1 else q
        v_pin = np.concatenate([qd, [0.0]]) if model.nv == art.dof_count + 1 else qd
        kin.update(q)
        m_pin = pin.crba(model, data, q_pin)
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        arm = slice(0, 7)
        assert np.max(np.abs(kin.mass_matrix()[arm, arm] - m_pin[arm, arm])) < PIN_TOL
        bias = kin.bias_forces(qd, model.gravity.linear)
        tau = pin.rnea(model, data, q_pin, v_pin, np.zeros(model.nv))
        assert np.max(np.abs(bias[arm] - tau[arm])) < PIN_TOL * max(1.0, np.abs(tau).max())


def _primitive_distance(kind, size, point):
    """Signed distance [m] of a point in a primitive's frame, written out here (not the collision kernels')."""
    x, y, z = point
    if kind == GeometryType.BOX:
        q = np.abs(point) - size
        return np.linalg.norm(np.maximum(q, 0.0)) + min(q.max(), 0.0)
    if kind == GeometryType.SPHERE:
        return np.linalg.norm(point) - size[0]
    if kind == GeometryType.CAPSULE:
        return np.linalg.norm([x, y, z - np.clip(z, -size[1], size[1])]) - size[0]
    radial, axial = np.hypot(x, y) - size[0], abs(z) - size[1]
    return np.hypot(max(radial, 0.0), max(axial, 0.0)) + min(max(radial, axial), 0.0)


def test_panda_contact_points_stay_within_their_collision_primitives():
    """Each point that stands for a link's primitive in contact, a ball of its radius, lies within that primitive
    and touches its surface: the representation never reaches beyond the link. A cylinder taken as the capsule
    of its radius did: the F/T sensor's end cap reached 37.7 mm past its flat face, down to the tool point."""
    art = load_urdf(OUR_PANDA)
    geom, local, radius = art.contact_points
    kinds = art.geom_type[geom]
    assert {GeometryType.BOX, GeometryType.CYLINDER} <= set(kinds.tolist())
    for kind, size, point, r in zip(kinds, art.geom_size[geom], local, radius):
        distance = _primitive_distance(kind, size, point)
        assert distance + r <= 1e-12, (GeometryType(kind).name, size, point, r)
        assert abs(distance + r) <= 1e-12, (GeometryType(kind).name, size, point, r)  # touches the surface
    for g in np.flatnonzero(art.geom_type == GeometryType.CYLINDER):  # both rims, all the way round
        rims = local[geom == g]
        assert sorted(set(np.round(rims[:, 2] / art.geom_size[g, 1]).tolist())) == [-1.0, 1.0]
        angles = np.sort(np.arctan2(rims[:, 1], rims[:, 0])[rims[:, 2] > 0])
        assert np.diff(np.concatenate([angles, angles[:1] + 2 * np.pi])).max() <= np.pi / 3 + 1e-12
