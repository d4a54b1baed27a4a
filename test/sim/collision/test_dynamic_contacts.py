"""D-contacts against moving volumes: the cheap speed-bound prefilter drops only points that cannot touch."""
import numpy as np
import pytest

from cond_ros.sim import ModelBuilder
from cond_ros.sim.builder import box_inertia
from cond_ros.sim.collision.colliders import collider_signed_distance
from cond_ros.sim.collision.nodalization import SOURCE_PARTICLE, build_contact_set
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.kinematics.rigid import quat_to_matrix
from cond_ros.sim.model import ColliderType

HALF = np.array([0.03, 0.02, 0.01])
MARGIN, DT = 0.002, 0.01


def touching_by_definition(model, state):
    """Particles the exact test accepts: gap < margin + 2 dt max(0, -(v_i - v_surface) . n)."""
    rot, com = quat_to_matrix(state.body_quat[0]), state.body_q[0]
    v, w = state.body_qd[0, :3], state.body_qd[0, 3:]
    normal, out = np.zeros(3), []
    for i, p in enumerate(state.particle_q):
        sd = collider_signed_distance(int(ColliderType.BOX), com, rot, HALF, p, normal)
        surface = p - sd * normal
        rel = state.particle_qd[i] - (v + np.cross(w, surface - com))
        if sd - model.particle_radius[i] < MARGIN + 2 * DT * max(0.0, -float(rel @ normal)):
            out.append(i)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_points_near_a_fast_spinning_box_are_found_exactly_as_the_exact_test_says(seed):
    rng = np.random.default_rng(seed)
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    spin = rng.normal(0.0, 40.0, 3)  # up to ~100 rad/s: corners move ~3 m/s, far beyond the margin / dt
    body = b.add_body([0.0, 0.0, 0.0], mass=0.2, inertia=box_inertia(0.2, HALF), velocity=rng.normal(0, 0.5, 3),
                      angular_velocity=spin)
    b.add_shape_box(body, HALF, mu=0.3)
    for _ in range(400):
        b.add_particle(rng.uniform(-0.06, 0.06, 3), mass=0.01, radius=1e-3, velocity=rng.normal(0.0, 0.3, 3), mu=0.3)
    model = b.finalize(contact_margin=MARGIN)
    state = model.state()
    contacts = build_contact_set(model, build_pattern(model), state, DT)
    found = sorted(contacts.source_index[(contacts.collider < 0) & (contacts.source_kind == SOURCE_PARTICLE)])
    expected = touching_by_definition(model, state)
    assert len(expected) > 20
    assert found == expected



def test_moving_volumes_follow_their_bodies_and_links_as_finite_differences_say():
    """Each volume's world pose against the rotation or link pose it hangs from (scipy's quaternion, numpy's
    4 x 4 products), and its twist against the rigid-body formula or a central difference of those poses
    along the state's velocity."""
    import pathlib

    from scipy.spatial.transform import Rotation

    from cond_ros.sim import load_urdf
    from cond_ros.sim.collision.dynamic_contacts import moving_volumes
    from cond_ros.sim.dynamics.robots import robot_kinematics

    urdf = pathlib.Path(__file__).resolve().parents[3] / "urdf" / "panda.urdf"
    builder = ModelBuilder()
    for k in range(2):
        body = builder.add_body((0.5, 0.1 * k, 0.3), mass=0.4, inertia=box_inertia(0.4, HALF))
        builder.add_shape_box(body, HALF, center=(0.01, -0.02, 0.03 * k))
    builder.add_articulation(load_urdf(str(urdf), mesh_primitives=False))
    model = builder.finalize()
    rng = np.random.default_rng(3)
    state = model.state()
    state.robot_q[:] += rng.uniform(-0.3, 0.3, state.robot_q.shape)
    state.robot_qd[:] = rng.normal(0.0, 1.0, state.robot_qd.shape)
    state.body_qd[:] = rng.normal(0.0, 1.0, state.body_qd.shape)
    state.body_quat[:] = Rotation.random(len(state.body_quat), random_state=4).as_quat(scalar_first=True)
    volumes = moving_volumes(model, state, robot_kinematics(model, state))
    n_s = len(model.shape_body)
    assert n_s == 2 and volumes.count > n_s
    for k, body in enumerate(model.shape_body):
        rot = Rotation.from_quat(state.body_quat[body], scalar_first=True).as_matrix()
        arm = rot @ model.shape_pos[k]
        np.testing.assert_allclose(volumes.pos[k], state.body_q[body] + arm, atol=1e-14)
        np.testing.assert_allclose(volumes.rot[k], rot @ model.shape_rot[k], atol=1e-14)
        w = state.body_qd[body, 3:]
        np.testing.assert_allclose(volumes.twist[k, :3], state.body_qd[body, :3] + np.cross(w, arm), atol=1e-13)
        np.testing.assert_array_equal(volumes.twist[k, 3:], w)

    art = model.robots[0]
    geoms = [g for g in range(len(art.geom_link)) if np.any(volumes.link[n_s:] == art.geom_link[g])]

    def poses(q):
        moved = model.state()
        moved.robot_q[:] = q
        kin = robot_kinematics(model, moved)[0]
        return np.array([kin.link_pose[art.geom_link[g]] @ art.geom_origin[g] for g in geoms])

    eps = 1e-6
    now, ahead, behind = (poses(state.robot_q + s * eps * state.robot_qd) for s in (0.0, 1.0, -1.0))
    assert len(now) == volumes.count - n_s
    np.testing.assert_allclose(volumes.pos[n_s:], now[:, :3, 3], atol=1e-14)
    np.testing.assert_allclose(volumes.rot[n_s:], now[:, :3, :3], atol=1e-14)
    np.testing.assert_allclose(volumes.twist[n_s:, :3], (ahead[:, :3, 3] - behind[:, :3, 3]) / (2 * eps), atol=1e-7)
    turn = (ahead[:, :3, :3] - behind[:, :3, :3]) / (2 * eps) @ np.transpose(now[:, :3, :3], (0, 2, 1))  # [w]x
    np.testing.assert_allclose(volumes.twist[n_s:, 3:], np.stack([turn[:, 2, 1], turn[:, 0, 2], turn[:, 1, 0]], 1),
                               atol=1e-7)



def test_points_near_a_moving_robot_are_found_by_the_exact_test_with_the_link_jacobian():
    """Particles scattered about a moving Panda's link volumes: the D-contacts found are exactly those the
    exact test accepts, the surface velocity taken from the link Jacobian (``ArticulationKinematics.jacobian``
    and numpy's product with qd); each contact's side b is a virtual node on the robot's DOFs with that
    Jacobian, its normal the volume's, its friction the larger of the two."""
    import pathlib

    from cond_ros.sim import load_urdf
    from cond_ros.sim.collision.dynamic_contacts import moving_volumes
    from cond_ros.sim.dynamics.robots import robot_kinematics

    urdf = pathlib.Path(__file__).resolve().parents[3] / "urdf" / "panda.urdf"
    rng = np.random.default_rng(7)
    robot = load_urdf(str(urdf), mesh_primitives=False)
    probe = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    probe.add_articulation(robot, mu=(0.5, 0.5))
    probe = probe.finalize()
    volumes = moving_volumes(probe, probe.state(), robot_kinematics(probe, probe.state()))
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_articulation(robot, mu=(0.5, 0.5))
    for centre, reach in zip(volumes.pos, volumes.reach):  # about each volume, inside and outside its reach
        for _ in range(12):
            direction = rng.normal(size=3)
            b.add_particle(centre + direction / np.linalg.norm(direction) * reach * rng.uniform(0.3, 1.1), mass=0.01,
                           radius=1e-3, velocity=rng.normal(0.0, 0.3, 3), mu=0.2)
    model = b.finalize(contact_margin=MARGIN)
    state = model.state()
    state.robot_qd[:] = rng.normal(0.0, 2.0, state.robot_qd.shape)
    kinematics = robot_kinematics(model, state)
    volumes = moving_volumes(model, state, kinematics)

    expected, normal = {}, np.zeros(3)
    for v in range(volumes.count):
        for i, p in enumerate(state.particle_q):
            sd = collider_signed_distance(int(volumes.ctype[v]), volumes.pos[v], volumes.rot[v], volumes.size[v], p,
                                          normal)
            surface = p - sd * normal
            jac = kinematics[0].jacobian(int(volumes.link[v]), surface)[:3]
            rel = state.particle_qd[i] - jac @ state.robot_qd
            if sd - model.particle_radius[i] < MARGIN + 2 * DT * max(0.0, -float(rel @ normal)):
                expected[v, i] = (sd - model.particle_radius[i], surface, jac, normal.copy())
    assert len(expected) > 20

    contacts = build_contact_set(model, build_pattern(model), state, DT)
    dynamic = np.flatnonzero((contacts.collider < 0) & (contacts.source_kind == SOURCE_PARTICLE))
    assert len(dynamic) == len(expected)
    n = model.robot_dof_count
    unmatched = dict(expected)
    for m in dynamic:
        i = int(contacts.source_index[m])
        node = (contacts.dof_b[m] - model.dof_count) // 3  # side b: a virtual node on the robot
        assert contacts.dof_b[m] >= model.dof_count and contacts.vn_dof[node] == model.robot_dof_start
        assert contacts.vn_size[node] == n
        np.testing.assert_array_equal(contacts.friction[m], [0.5, 0.5])
        np.testing.assert_allclose(contacts.frame[m] @ contacts.frame[m].T, np.eye(3), atol=1e-14)
        # the volume of the exact test with this contact's point, gap, normal and Jacobian (two volumes of the
        # hand overlap: a particle may touch both)
        match = [key for key, (gap, surface, jac, normal) in unmatched.items()
                 if key[1] == i and np.array_equal(surface, contacts.position[m]) and contacts.gap[m] == gap
                 and np.allclose(contacts.frame[m, 0], normal, atol=1e-15)
                 and np.allclose(contacts.vn_jac[node, :, :n], jac, atol=1e-15)]
        assert match, f"contact {m} of particle {i} is none the exact test accepts"
        del unmatched[match[0]]
    assert not unmatched
