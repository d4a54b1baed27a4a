"""Potentials of form (7) with frames: forces against finite differences of an independently coded energy."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.sim import ModelBuilder, ModelError
from cond_ros.sim.builder import body_point, particle, robot_link_point, world_point
from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.kinematics.articulation import ArticulationKinematics
from cond_ros.sim.kinematics.urdf import load_urdf

INERTIA = np.diag([1e-3, 2e-3, 3e-3])


def generalized_force(model):
    """-dpsi/dv as assembled into b at rest without gravity (b = -Je^T K e)."""
    state = model.state()
    return assemble(model, build_pattern(model), state, model.control(), 0.01).b


def two_bodies(kind, gains, rot_b):
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    rot_a = Rotation.from_rotvec([0.3, -0.2, 0.5])
    qa = np.roll(rot_a.as_quat(), 1)
    a = b.add_body((0.0, 0.0, 0.0), mass=1.0, inertia=INERTIA, quat=qa)
    c = b.add_body((0.1, 0.02, -0.01), mass=1.0, inertia=INERTIA, quat=qa)
    if kind == "rotation":
        b.add_rotation_coupling(body_point(a), body_point(c), stiffness=gains)
    else:
        b.add_coupling(body_point(a, (0.05, 0.0, 0.0)), body_point(c, (-0.05, 0.0, 0.0)), stiffness=gains)
    model_rest = b.finalize()
    # displace body c away from rest: rotate it by rot_b and shift it
    bodies = list(b._bodies)
    pos, _, *rest = bodies[1]
    bodies[1] = (pos + np.array([0.004, -0.003, 0.002]), np.roll((rot_b * rot_a).as_quat(), 1), *rest)
    b._bodies = bodies
    return b.finalize(), model_rest, rot_a


def energy(kind, gains, rot_a, rest_rel, pa, ra, pb, rb):
    """psi of the definitions in the module docstring of potentials, coded with scipy."""
    k = np.asarray(gains)
    if kind == "rotation":
        e = Rotation.from_matrix(rest_rel.T @ ra.T @ rb).as_rotvec()
    else:
        e = ra.T @ ((pa + ra @ [0.05, 0, 0]) - (pb + rb @ [-0.05, 0, 0]))
    return 0.5 * e @ (k * e)


@pytest.mark.parametrize("kind, gains", [("rotation", [2.0, 3.0, 5.0]), ("coupling", [100.0, 300.0, 700.0])])
def test_force_is_minus_energy_gradient(kind, gains):
    model, _, rot_a = two_bodies(kind, gains, Rotation.from_rotvec([0.02, -0.03, 0.04]))
    force = generalized_force(model)
    state = model.state()
    pa, pb = state.body_q
    ra, rb = (Rotation.from_quat(np.roll(q, -1)).as_matrix() for q in state.body_quat)
    rest_rel = model.potential_rest_rotation[0]
    h = 1e-7
    grad = np.zeros(12)
    for body in range(2):
        for d in range(6):
            def psi(sign):
                p = [pa.copy(), pb.copy()]
                r = [ra.copy(), rb.copy()]
                if d < 3:
                    p[body][d] += sign * h
                else:  # world-frame rotation increment, matching angular velocity DOFs
                    r[body] = Rotation.from_rotvec(sign * h * np.eye(3)[d - 3]).as_matrix() @ r[body]
                return energy(kind, gains, rot_a, rest_rel, p[0], r[0], p[1], r[1])
            grad[6 * body + d] = (psi(1) - psi(-1)) / (2 * h)
    # Je is exact at e = 0; at these ~0.05 rad / 5 mm errors the frame terms are second order
    np.testing.assert_allclose(force, -grad, atol=0.03 * np.abs(grad).max())


def test_rotation_rest_defaults_to_the_build_configuration():
    _, model_rest, _ = two_bodies("rotation", [1.0, 2.0, 3.0], Rotation.identity())
    np.testing.assert_allclose(generalized_force(model_rest), 0.0, atol=1e-12)


def test_robot_link_end_force_matches_finite_difference():
    art = load_urdf("urdf/panda.urdf")
    q0 = np.array([0.1, -0.3, 0.2, -1.7, 0.1, 1.3, 0.7, 0.02])
    kin = ArticulationKinematics(art)
    kin.update(q0)
    link = art.link_index("panda_tcp")
    target = kin.link_pose[link][:3, 3] + np.array([0.01, -0.02, 0.005])
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_articulation(art, q=q0)
    k = 50.0
    b.add_coupling(robot_link_point(0, "panda_tcp"), world_point(target), stiffness=k)
    model = b.finalize()
    force = generalized_force(model)
    # b of the robot rows is M qd / h - bias + ... ; at rest without gravity only the potential remains
    h = 1e-7
    grad = np.zeros(art.dof_count)
    for d in range(art.dof_count):
        vals = []
        for sign in (1, -1):
            q = q0.copy()
            q[d] += sign * h
            kin.update(q)
            e = kin.link_pose[link][:3, 3] - target
            vals.append(0.5 * k * e @ e)
        grad[d] = (vals[0] - vals[1]) / (2 * h)
    np.testing.assert_allclose(force, -grad, atol=1e-6 * max(1.0, np.abs(grad).max()))



def test_robot_link_ends_are_the_links_points_and_jacobians():
    """PotentialEnds of ends on robot links (several links, off-origin points, both ends of one potential on the
    robot) against the link pose times the point and ``ArticulationKinematics.jacobian`` there."""
    from cond_ros.sim.dynamics.potentials import PotentialEnds

    art = load_urdf("urdf/panda.urdf")
    q0 = np.array([0.1, -0.3, 0.2, -1.7, 0.1, 1.3, 0.7, 0.02])
    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_particle((0.3, 0.0, 0.4), mass=0.1)
    b.add_articulation(art, q=q0)
    ends = [("panda_tcp", (0.01, -0.02, 0.03)), ("panda_link4", (-0.05, 0.0, 0.02)), ("panda_leftfinger", (0, 0.01, 0))]
    b.add_coupling(robot_link_point(0, ends[0][0], ends[0][1]), particle(0), stiffness=10.0)
    b.add_coupling(particle(0), robot_link_point(0, ends[1][0], ends[1][1]), stiffness=10.0)
    b.add_coupling(robot_link_point(0, ends[2][0], ends[2][1]), robot_link_point(0, ends[0][0]), stiffness=10.0)
    model = b.finalize()
    state = model.state()
    kin = ArticulationKinematics(art)
    kin.update(q0)
    width = build_pattern(model).max_group_size
    got = PotentialEnds(model, state, width)
    n = art.dof_count
    for u, x, (name, local) in ((0, 0, ends[0]), (1, 1, ends[1]), (2, 0, ends[2]), (2, 1, (ends[0][0], (0, 0, 0)))):
        pose = kin.link_pose[art.link_index(name)]
        point = pose[:3, :3] @ np.asarray(local, float) + pose[:3, 3]
        jac = kin.jacobian(art.link_index(name), point)
        np.testing.assert_allclose(got.pos[u, x], point, atol=1e-15)
        np.testing.assert_array_equal(got.rot[u, x], pose[:3, :3])
        np.testing.assert_array_equal(got.jac_lin[u, x, :, :n], jac[:3])
        np.testing.assert_array_equal(got.jac_ang[u, x, :, :n], jac[3:])
        assert not got.jac_lin[u, x, :, n:].any() and not got.jac_ang[u, x, :, n:].any()
        assert (got.dof[u, x], got.size[u, x]) == (model.robot_dof_start, n)
    assert (got.dof[0, 1], got.size[0, 1]) == (0, 3)  # the particle's end

def test_bad_anchors_are_named():
    b = ModelBuilder()
    b.add_particle((0, 0, 0), mass=1.0)
    with pytest.raises(ModelError, match="no robot 0"):
        b.add_coupling(particle(0), robot_link_point(0, "panda_tcp"), stiffness=1.0)
    with pytest.raises(ModelError, match="particle has no orientation"):
        b.add_rotation_coupling(particle(0), world_point((0, 0, 0)), stiffness=1.0)
    with pytest.raises(ModelError, match="stiffness"):
        b.add_coupling(particle(0), world_point((0, 0, 0)), stiffness=[1.0, -1.0, 1.0])


def test_the_body_pair_path_adds_the_same_bits_as_the_general_one():
    """A rod's joints (COUPLING and ROTATION between two bodies) take a written-out path in the assembly kernel,
    their ends' poses made there from the body state; it must add to A and b exactly what the general path adds
    from :class:`PotentialEnds`, bit for bit, in a bent and twisted state. A DISTANCE between two bodies and a
    body-to-world coupling keep the general path in both runs."""
    from cond_ros.sim.dynamics.potentials import PotentialEnds, assemble_potentials
    from cond_ros.sim.dynamics.rod import RodMaterial, add_rod

    b = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=1e8, poisson_ratio=0.3, damping_time=0.02)
    rod = add_rod(b, (0.0, 0.0, 0.5), (0.05, 0.0, 0.5), 8, mat)
    bodies = [int(i) for i in rod.bodies]
    b.add_spring(body_point(bodies[0], (0.001, 0.0, 0.0)), body_point(bodies[-1]), stiffness=50.0)
    b.add_coupling(world_point((0.0, 0.0, 0.5)), body_point(bodies[0]), stiffness=(10.0, 20.0, 30.0))
    model = b.finalize()
    pattern = build_pattern(model)
    rng = np.random.default_rng(3)
    state = model.state()
    state.body_q += rng.normal(scale=1e-3, size=state.body_q.shape)
    state.body_quat = np.roll(Rotation.from_rotvec(rng.normal(scale=0.3, size=(model.body_count, 3))).as_quat(), 1,
                              axis=1)
    ends = PotentialEnds(model, state, pattern.max_group_size)
    kind = ends.kind
    body_pair = (kind[:, 0] == 3) & (kind[:, 1] == 3) & (model.potential_type != 1)
    assert body_pair.sum() >= 14 and not body_pair.all()  # the rod's joints, and the others
    results = []
    for pairs in (body_pair, np.zeros_like(body_pair)):  # the real split, then none taken as a pair: general only
        data, rhs = np.ones(pattern.nnz), np.ones(model.dof_count)
        assemble_potentials(model.potential_type, model.potential_stiffness, model.potential_rest_length,
                            model.potential_damping, model.potential_rest_rotation, True, pattern.potential_pairs,
                            pairs, np.arange(model.potential_count), model.potential_index, model.potential_local,
                            state.body_q, state.body_quat, model.body_dof_start, ends.pos, ends.rot, ends.jac_lin,
                            ends.jac_ang, ends.dof, ends.size, 0.005, pattern.block_slot, data, rhs)
        results.append((data, rhs))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])
    assert np.abs(results[0][0] - 1.0).max() > 1.0  # the rod's blocks were added
