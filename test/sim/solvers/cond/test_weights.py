"""The block W: Prop. 3's structure on contact nodes, contraction, and what it buys on a rod."""
import numpy as np

from cond_ros.sim import ModelBuilder
from cond_ros.sim.collision.nodalization import build_contact_set
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.dynamics.rod import RodMaterial, add_rod
from cond_ros.sim.model import DampingPolicy
from cond_ros.sim.solvers import SolverCOND
from cond_ros.sim.solvers.cond.weights import BLOCK_LARGEST_EIGENVALUE, apply_block_weights

MATERIAL = RodMaterial(radius=0.001, density=1e4, youngs_modulus=3.6e5, poisson_ratio=0.3, mu=0.3,
                       damping_time=0.02)


def rope_on_floor(segments=30):
    """A rope sloping up from the floor: about half its segment centres are contact nodes."""
    b = ModelBuilder()
    b.add_collider_plane(mu=0.3)
    add_rod(b, (-0.15, 0.0, 0.0009), (0.15, 0.0, 0.006), segments, MATERIAL)
    model = b.finalize(damping_policy=DampingPolicy.GEOMETRIC, contact_margin=0.002)
    state = model.state()
    pattern = build_pattern(model)
    contacts = build_contact_set(model, pattern, state, 0.01)
    solver = SolverCOND(model, weights="block")
    system = solver.assemble(state, model.control(), contacts, 0.01)
    return solver, system, contacts


def dense_weights(w, blocks):
    n = len(w)
    out = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        apply_block_weights(w, *blocks, e, out[:, j])
    return out


def test_block_weights_keep_prop3_structure_and_contract():
    solver, system, contacts = rope_on_floor()
    assert contacts.count > 5
    w, blocks = solver._weights(system, system.augmented(), contacts)
    weights = dense_weights(w, blocks)
    # Prop. 3: a contact node's rows are w_bar I and couple to nothing else, so Gamma_c = w_bar I
    for node in contacts.dof_a:
        rows = slice(node, node + 3)
        np.testing.assert_array_equal(weights[rows, rows], w[node] * np.eye(3))
        assert np.count_nonzero(weights[rows]) == 3
    np.testing.assert_allclose(weights, weights.T, rtol=1e-12, atol=0)  # symmetric: W A has real eigenvalues
    eigenvalues = np.linalg.eigvals(weights @ system.matrix().toarray()).real
    assert eigenvalues.min() > 0.0
    assert eigenvalues.max() < 2.0  # ||I - W A|| < 1 needs them in (0, 2)
    assert eigenvalues.max() > 0.8 * BLOCK_LARGEST_EIGENVALUE  # alpha is not needlessly small


def test_block_weights_reach_the_frobenius_fixed_point_in_fewer_iterations():
    """On a rod, the Frobenius W starves the segments' rotation rows (see weights.py); the block W does not."""
    runs = {}
    for name in ("frobenius", "block"):
        solver, system, contacts = rope_on_floor()
        solver.weights = name
        solver.tolerance = 1e-11
        solver.max_iterations = 200000
        runs[name] = solver.solve(system, contacts, 0.01)
    (v_f, force_f, it_f, res_f), (v_b, force_b, it_b, res_b) = runs["frobenius"], runs["block"]
    print(f"iterations to 1e-11: frobenius {it_f}, block {it_b}")
    assert res_f < 1e-11 and res_b < 1e-11
    # a segment's spin about its own axis weighs only ~1e-8 in A, so a 1e-11 residual leaves it
    # uncertain by ~1e-6 rad/s; translations and forces are pinned much tighter
    np.testing.assert_allclose(v_b.reshape(-1, 6)[:, :3], v_f.reshape(-1, 6)[:, :3], rtol=0, atol=1e-7)
    np.testing.assert_allclose(v_b.reshape(-1, 6)[:, 3:], v_f.reshape(-1, 6)[:, 3:], rtol=0, atol=1e-4)
    np.testing.assert_allclose(force_b, force_f, rtol=0, atol=1e-5 * np.abs(force_f).max())
    assert it_b < it_f / 5


def test_frobenius_terms_of_a_rod_are_the_dense_diagonal_and_row_norms():
    """The rod's rows come in DOF groups of six read side by side: a_ii and ||A_i*||^2 of the augmented A (with a
    box's virtual nodes) against the dense matrix."""
    from cond_ros.sim.builder import box_inertia
    from cond_ros.sim.solvers.cond.weights import frobenius_terms

    b = ModelBuilder()
    b.add_collider_plane(mu=0.3)
    add_rod(b, (-0.15, 0.0, 0.0009), (0.15, 0.0, 0.006), 20, MATERIAL)
    box = b.add_body((0.3, 0.0, 0.0095), mass=0.2, inertia=box_inertia(0.2, (0.01, 0.01, 0.01)))
    b.add_shape_box(box, (0.01, 0.01, 0.01), mu=0.3)
    for corner in ((-0.01, -0.01, -0.01), (0.01, 0.01, -0.01)):
        b.add_contact_point(box, corner, mu=0.3)
    model = b.finalize(damping_policy=DampingPolicy.GEOMETRIC, contact_margin=0.002)
    state = model.state()
    contacts = build_contact_set(model, build_pattern(model), state, 0.01)
    system = SolverCOND(model).assemble(state, model.control(), contacts, 0.01)
    assert system.vn_count > 0 and np.any(np.diff(system.row_group) == 6)
    diag, norm2 = np.empty(system.size), np.empty(system.size)
    frobenius_terms(system.augmented(), diag, norm2)
    a = system.matrix().toarray()
    np.testing.assert_array_equal(diag, np.diag(a))
    np.testing.assert_allclose(norm2, np.sum(a * a, axis=1), rtol=1e-14, atol=0)


def test_frobenius_terms_of_particle_body_and_robot_rows_match_the_dense_matrix():
    """3-row groups (particles) and the Panda's 8-row group beside a box's 6: a_ii and ||A_i*||^2 against the dense
    matrix, with blocks of every width between them."""
    import os

    from cond_ros import sim
    from cond_ros.sim.solvers.cond.weights import frobenius_terms

    b = ModelBuilder()
    for x in (0.0, 0.3):
        b.add_particle((x, 0.3, 0.1), mass=0.2, radius=0.01)
    box = b.add_body((1.0, 0.5, 0.2), mass=0.8, inertia=sim.box_inertia(0.8, (0.1, 0.1, 0.1)))
    urdf = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "urdf", "panda.urdf")
    robot = b.add_articulation(sim.load_urdf(urdf, mesh_primitives=False))
    b.add_spring(sim.particle(0), sim.body_point(box, (0.2, 0.0, 0.1)), stiffness=200.0, rest_length=0.5)
    b.add_spring(sim.particle(0), sim.particle(1), stiffness=100.0, rest_length=0.3)
    b.add_spring(sim.particle(1), sim.robot_link_point(robot, "panda_hand"), stiffness=50.0, rest_length=0.2)
    b.add_spring(sim.body_point(box), sim.robot_link_point(robot, "panda_link3"), stiffness=50.0, rest_length=0.2)
    model = b.finalize()
    state = model.state()
    contacts = build_contact_set(model, build_pattern(model), state, 0.01)
    system = SolverCOND(model).assemble(state, model.control(), contacts, 0.01)
    assert sorted(set(np.diff(system.row_group).tolist())) == [3, 6, 8]
    diag, norm2 = np.full(system.size, np.nan), np.full(system.size, np.nan)
    frobenius_terms(system.augmented(), diag, norm2)
    a = system.matrix().toarray()
    np.testing.assert_array_equal(diag, np.diag(a))
    np.testing.assert_allclose(norm2, np.sum(a * a, axis=1), rtol=1e-14, atol=0)
