"""COND's two-level correction (``coarse_correction``; not in the paper) and its coarse space.

References: polynomial fields written out in numpy (the span), the scipy matrix of eq. (15) (A P), a
plain COND solve converged far past the test tolerance (the fixed point), and the Signorini-Coulomb
conditions (11) and the dynamics (15) checked directly.
"""
import copy
import dataclasses
import pathlib
import sys

import numpy as np
import pytest

from cond_ros.scenes.registry import edited_scene
from cond_ros.sim import SimulationError
from cond_ros.sim.collision.nodalization import SOURCE_JOINT_LIMIT, build_contact_set
from cond_ros.sim.solvers.cond.coarse_space import (ROD_COARSE_POINTS, coarse_basis, coarse_operator,
                                                    has_row_pattern, row_pattern)
from cond_ros.sim.solvers.cond.fixed_point import FACTOR_STALE, coarse_correction, contact_coarse_rows
from cond_ros.sim.solvers.cond.solver import SolverCOND
from cond_ros.sim.validate import ModelError
from cond_ros.tools.fem_benchmarks import ball_stiffness_edit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import MODEL  # noqa: E402
from solver_problems import DT, assert_dynamics, assert_signorini_coulomb  # noqa: E402

GRIP_STEPS = 60  # t = 0.6 s: the fingers hold the ball on the table (contacts through virtual nodes)


@pytest.fixture(scope="module")
def grip():
    """The coarse soft_ball (E = 10 MPa) mid-grip: model, state, contacts and the step's linear system."""
    scene = edited_scene("soft_ball", ball_stiffness_edit(10.0, 4))
    sim = scene.simulator
    for _ in range(GRIP_STEPS):
        sim.step(scene.script.control(sim.state.time))
    contacts = build_contact_set(sim.model, sim.pattern, sim.state, sim.dt)
    system = sim.solver.assemble(sim.state, scene.script.control(sim.state.time), contacts, sim.dt)
    assert system.vn_count > 0 and np.any(contacts.collider >= 0)  # fingers (virtual nodes) and the table
    return sim.model, sim.state, contacts, system


SLIP_STEPS = 155  # t = 1.55 s: the fingers have closed on nothing and the finger joint is at its limit
GRIP_EFFORT = 4.0  # [N]: too little to hold the 0.1 MPa ball


@pytest.fixture(scope="module")
def slip():
    """The coarse 0.1 MPa ball slips out of a 4 N grip and the fingers close onto their joint limit.

    Returns the scene's step stats, the steps with a joint-limit contact, and the last step's
    (model, state, contacts, system).
    """
    ball = ball_stiffness_edit(0.1, 4)

    def edit(data):
        ball(data)
        data["script"]["grip_force"] = GRIP_EFFORT

    scene = edited_scene("soft_ball", edit)
    sim = scene.simulator
    stats, at_limit = [], []
    for step in range(SLIP_STEPS):
        stats.append(sim.step(scene.script.control(sim.state.time)))
        if np.any(sim.contacts.source_kind == SOURCE_JOINT_LIMIT):
            at_limit.append(step)
    contacts = build_contact_set(sim.model, sim.pattern, sim.state, sim.dt)
    system = sim.solver.assemble(sim.state, scene.script.control(sim.state.time), contacts, sim.dt)
    return stats, at_limit, (sim.model, sim.state, contacts, system)


CABLE_SEGMENTS = 40
CABLE_STEPS = 900  # t = 9 s: the cable wraps the post (node contacts, 5 at 40 segments) and the tool pulls it


@pytest.fixture(scope="module")
def cable():
    """panda_cable at 40 segments, taut on the post: node contacts on the rod, the robot holding its end."""
    def edit(data):
        data["cables"][0]["segments"] = CABLE_SEGMENTS
        data["solver"] = {"name": "cond", "tolerance": 1e-6, "max_iterations": 2000, "coarse_correction": True}

    scene = edited_scene("panda_cable", edit)
    sim = scene.simulator
    for _ in range(CABLE_STEPS):
        sim.step(scene.script.control(sim.state.time))
    contacts = build_contact_set(sim.model, sim.pattern, sim.state, sim.dt)
    system = sim.solver.assemble(sim.state, scene.script.control(sim.state.time), contacts, sim.dt)
    assert np.sum(contacts.dof_a < sim.model.dof_count) >= 4  # rod nodes on the post
    return sim.model, sim.state, contacts, system


@pytest.fixture(params=["grip", "cable"])
def problem(request):
    return request.getfixturevalue(request.param)


def _grip_basis(grip):
    """The coarse space P of the grip fixture's step."""
    model, state, contacts, _ = grip
    return coarse_basis(model, state, contacts.vn_dof, contacts.vn_size, contacts.vn_jac)


def test_has_row_pattern_tells_a_changed_nonzero_from_none():
    """How SolverCOND.prepare keeps the last step's pattern of P: against numpy's nonzero columns."""
    rng = np.random.default_rng(4)
    matrix = rng.normal(size=(40, 12)) * (rng.random((40, 12)) < 0.3)
    ptr, columns = row_pattern(matrix, 0)
    np.testing.assert_array_equal(columns, np.nonzero(matrix)[1])
    assert has_row_pattern(matrix, ptr, columns)
    zeros, nonzeros = np.argwhere(matrix == 0.0), np.argwhere(matrix != 0.0)
    for (r, c), value in ((zeros[7], 1.0), (nonzeros[5], 0.0), (zeros[-1], -2.0), (nonzeros[-1], 0.0)):
        changed = matrix.copy()
        changed[r, c] = value
        assert not has_row_pattern(changed, ptr, columns), (r, c, value)
    assert not has_row_pattern(matrix[:-1], ptr, columns)


def test_a_basis_built_into_an_earlier_steps_array_is_the_fresh_basis(grip):
    """coarse_basis reuses the array of an earlier step's basis (in place, or its original rows when the virtual
    node count differs) and rewrites only its blocks' rows: the result must be the fresh basis, bit for bit."""
    model, state, contacts, _ = grip
    fresh = _grip_basis(grip)
    moved = copy.deepcopy(state)
    moved.particle_q = state.particle_q + np.random.default_rng(2).normal(scale=1e-3, size=state.particle_q.shape)
    vn = (contacts.vn_dof, contacts.vn_size, contacts.vn_jac)
    for count in (len(contacts.vn_dof), len(contacts.vn_dof) - 1):  # as many virtual nodes, then one fewer
        earlier = coarse_basis(model, moved, *(a[:count] for a in vn))
        assert not np.array_equal(earlier[:model.dof_count], fresh[:model.dof_count])
        again = coarse_basis(model, state, *vn, previous=earlier)
        assert (again is earlier) == (count == len(contacts.vn_dof))
        np.testing.assert_array_equal(again, fresh)


def _ball_rows(model):
    nodes = np.flatnonzero(model.particle_object == 0)
    return nodes, (3 * nodes[:, None] + np.arange(3)).ravel()


def test_basis_spans_the_quadratic_fields_of_the_ball_and_every_robot_joint(grip):
    model, state, contacts, system = grip
    basis = _grip_basis(grip)
    nodes, rows = _ball_rows(model)
    robot_dofs = model.robot_dof_count
    assert basis.shape == (system.size, 30 + robot_dofs)
    rng = np.random.default_rng(0)
    x = state.particle_q[nodes] - state.particle_q[nodes].mean(axis=0)
    fields = {
        "rotation": np.cross([0.3, -1.0, 0.5], x),
        "squeeze": x * [1.0, -0.4, -0.4],
        "quadratic": np.column_stack([x[:, 0] * x[:, 1], x[:, 2] ** 2, x[:, 0] ** 2 - x[:, 1] * x[:, 2]]),
        "random quadratic": sum(rng.normal(size=3) * (x[:, [i]] * x[:, [j]]) for i in range(3) for j in range(3)),
    }
    ball = basis[rows]
    for name, field in fields.items():
        coefficients = np.linalg.lstsq(ball, field.ravel(), rcond=None)[0]
        assert np.abs(ball @ coefficients - field.ravel()).max() < 1e-10 * np.abs(field).max(), name
    cubic = (x[:, 0] ** 3)[:, None] * [1.0, 0.0, 0.0]  # degree 3 is outside the space
    coefficients = np.linalg.lstsq(ball, cubic.ravel(), rcond=None)[0]
    assert np.abs(ball @ coefficients - cubic.ravel()).max() > 1e-3 * np.abs(cubic).max()
    np.testing.assert_allclose(ball[:, :30].T @ ball[:, :30], np.eye(30), rtol=0, atol=1e-12)  # orthonormal
    assert not ball[:, 30:].any()  # the robot columns do not move the ball
    robot = basis[model.dof_count - robot_dofs:model.dof_count]
    np.testing.assert_array_equal(robot[:, 30:], np.eye(robot_dofs))


def _within_ranges(matrix, ranges):
    """Mask of the entries of ``matrix`` inside each row's column range [ranges[r, 0], ranges[r, 1])."""
    columns = np.arange(matrix.shape[1])[None, :]
    return (columns >= ranges[:, :1]) & (columns < ranges[:, 1:2])


def test_a_widened_row_of_a_p_reads_zeros_in_every_column_it_gains():
    """A P is written within its rows' ranges only (np.empty elsewhere): widening a row to a virtual node's
    columns must zero the columns gained, the gap between a range and a disjoint new one included."""
    from cond_ros.sim.solvers.cond.coarse_space import _widen_with_zeros
    out = np.full((2, 10), np.nan)
    out[0, 2:4] = 1.0
    ranges = np.array([[0, 0, 2, 4], [0, 0, 10, 0]], np.int64)  # row 1: empty (k, 0)
    _widen_with_zeros(out, ranges, 0, 6, 8)
    np.testing.assert_array_equal(out[0, 2:8], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    _widen_with_zeros(out, ranges, 0, 0, 1)
    _widen_with_zeros(out, ranges, 1, 3, 5)
    np.testing.assert_array_equal(ranges[:, 2:], [[0, 8], [3, 5]])
    np.testing.assert_array_equal(out[0, :8], [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out[1, 3:5], [0.0, 0.0])
    assert np.isnan(out[0, 8:]).all() and np.isnan(out[1, :3]).all() and np.isnan(out[1, 5:]).all()


def test_virtual_nodes_follow_their_owners_so_coarse_motions_leave_the_kv_springs_unstretched(problem):
    """The rows of A P on the virtual nodes are k_v (P_v - J_v P_owner) = 0 (eq. 15); A P, P^T A P and P^T b
    against scipy's matrix of eq. (15); every nonzero of P and A P inside its row's column range."""
    model, state, contacts, system = problem
    basis = _grip_basis(problem)
    a_basis, galerkin, coarse_b, ranges = coarse_operator(system, basis)
    reference = system.matrix() @ basis
    a_basis = np.where(_within_ranges(a_basis, ranges[:, 2:]), a_basis, 0.0)  # A P is written there only
    np.testing.assert_allclose(a_basis, reference, rtol=0, atol=1e-12 * np.abs(reference).max())
    assert not np.any(basis[~_within_ranges(basis, ranges[:, :2])])
    assert not np.any(reference[~_within_ranges(reference, ranges[:, 2:])])
    assert np.abs(a_basis[system.dof_count:]).max() < 1e-9 * np.abs(a_basis).max()
    np.testing.assert_allclose(galerkin, basis.T @ reference, rtol=1e-12, atol=1e-12 * np.abs(galerkin).max())
    # entries of P^T b cancel to ~1e-14 (rtol alone would demand the same summation order); either product
    # is within n eps |P|^T |b| of the exact one per entry (the inner-product rounding bound)
    rhs = system.rhs()
    rounding = 2 * len(rhs) * np.finfo(float).eps * (np.abs(basis).T @ np.abs(rhs))
    assert np.all(np.abs(coarse_b - basis.T @ rhs) <= rounding)
    assert np.all(np.linalg.eigvalsh(galerkin) > 0.0)  # P has full column rank, A is positive definite


def _contact_jacobian(contacts, size):
    """J_c as a dense (3 m, n) matrix, row 3 m + e = frame_m[e] on side a minus side b."""
    jac = np.zeros((3 * contacts.count, size))
    for m, (a, b) in enumerate(zip(contacts.dof_a, contacts.dof_b)):
        jac[3 * m:3 * m + 3, a:a + 3] += contacts.frame[m]
        if b >= 0:
            jac[3 * m:3 * m + 3, b:b + 3] -= contacts.frame[m]
    return jac


def test_the_correction_kernel_is_its_galerkin_solve_written_out_densely(problem):
    """v_next + P G^-1 P^T (b + J^T lambda - A v_next), G = P^T A P + (J P)^T K (J P) with K the surrogate
    stiffness of the contacts in G (docstring of ``coarse_correction``), built in numpy from a dense J_c and
    solved by numpy's dense solver: a contact in G that let go (lambda = 0), one sticking, one sliding, and
    one outside G."""
    _, _, contacts, system = problem
    basis = _grip_basis(problem)
    a_basis, galerkin, coarse_b, ranges = coarse_operator(system, basis)
    # the kernel gets A P as written (within its ranges only); the dense reference, its zeros outside them
    dense_a_basis = np.where(_within_ranges(a_basis, ranges[:, 2:]), a_basis, 0.0)
    rng = np.random.default_rng(3)
    count, size = contacts.count, system.size
    assert count >= 4
    w = rng.uniform(0.5, 1.5, size) * 1e-3
    v_star, v_next = rng.normal(size=(2, size)) * 1e-2
    jac = _contact_jacobian(contacts, size)
    u = (jac @ v_star).reshape(-1, 3) + contacts.offset
    gamma = w[contacts.dof_a] + np.where(contacts.dof_b >= 0, w[np.maximum(contacts.dof_b, 0)], 0.0)
    trial = np.hypot(u[:, 1], u[:, 2]) / gamma
    force = np.abs(rng.normal(size=(count, 3)))
    force[0] = 0.0  # in G, let go
    force[1, 1:] *= 3.0 * trial[1] / np.hypot(*force[1, 1:])  # sticks
    force[2, 1:] *= 0.3 * trial[2] / np.hypot(*force[2, 1:])  # slides
    in_coarse = np.ones(count, bool)
    in_coarse[-1] = False  # never pushed in this solve: outside G, lambda = 0
    force[-1] = 0.0
    rows = jac @ basis

    def dense(force):
        tangent = np.minimum(1.0, np.hypot(force[:, 1], force[:, 2]) / trial)
        stiffness = (in_coarse / gamma)[:, None] * np.column_stack([np.ones(count), tangent, tangent])
        matrix = galerkin + rows.T @ (stiffness.reshape(-1, 1) * rows)
        rhs = coarse_b + rows.T @ force.ravel() - dense_a_basis.T @ v_next
        return matrix, v_next + basis @ np.linalg.solve(matrix, rhs)

    kernel_rows, span = contact_coarse_rows(basis, ranges, contacts.dof_a, contacts.dof_b, contacts.frame)
    np.testing.assert_allclose(kernel_rows, rows.reshape(count, 3, -1), rtol=0, atol=1e-12)
    matrix, counted = galerkin.copy(), np.full(count, -1.0)
    # the second call, with G kept from the first: the sliding contact slides further, the sticking one sticks
    sliding_further = force.copy()
    sliding_further[2, 1:] *= 0.5
    # and a third with nothing changed: G's factor from the second call serves again
    factor, factor_state = np.empty_like(matrix), np.array([FACTOR_STALE, 0])
    for forces in (force, sliding_further, sliding_further):
        expected_matrix, expected = dense(forces)
        actual = v_next.copy()
        coarse_correction(basis, a_basis, matrix, factor, factor_state, counted, coarse_b, ranges, kernel_rows, span,
                          contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, 0.0, w, forces, in_coarse,
                          v_star, actual)
        np.testing.assert_allclose(matrix, expected_matrix, rtol=1e-12, atol=1e-12 * np.abs(expected_matrix).max())
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9 * np.abs(expected - v_next).max())


def test_the_correction_skips_a_blown_up_iterate(grip):
    """A non-finite v_next gets no correction (np.linalg.solve would raise LinAlgError on it): it is left as
    it is, for velocity_fixed_point's theta to stop the iteration."""
    _, _, contacts, system = grip
    basis = _grip_basis(grip)
    a_basis, galerkin, coarse_b, ranges = coarse_operator(system, basis)
    rows, span = contact_coarse_rows(basis, ranges, contacts.dof_a, contacts.dof_b, contacts.frame)
    force = np.ones((contacts.count, 3))
    for bad in (np.inf, np.nan):
        v_next = np.zeros(system.size)
        v_next[0] = bad
        actual = v_next.copy()
        coarse_correction(basis, a_basis, galerkin.copy(), np.empty_like(galerkin), np.array([FACTOR_STALE, 0]),
                          np.full(contacts.count, -1.0), coarse_b, ranges, rows, span, contacts.dof_a, contacts.dof_b,
                          contacts.frame, contacts.offset, 0.0, np.full(system.size, 1e-3), force,
                          np.ones(contacts.count, bool), np.zeros(system.size), actual)
        np.testing.assert_array_equal(actual, v_next)


def test_a_diverged_two_level_step_is_a_simulation_error_and_keeps_the_state():
    """A 1e308 N push on one ball node overflows theta in the first iteration: SimulationError naming the
    solver (it used to escape as numpy's LinAlgError from the coarse solve), the state is kept, and the
    next step with a sane control runs."""
    scene = edited_scene("soft_ball", ball_stiffness_edit(10.0, 4))
    sim = scene.simulator
    control = scene.script.control(sim.state.time)
    push = np.zeros_like(control.particle_force)
    push[0, 2] = 1e308
    before = sim.state
    with pytest.raises(SimulationError, match="SolverCOND: V-FPI diverged"):
        sim.step(dataclasses.replace(control, particle_force=push))
    assert sim.state is before
    stats = sim.step(control)
    assert stats.residual < sim.solver.tolerance and np.all(np.isfinite(sim.state.particle_q))


@pytest.mark.parametrize("weights", ["bb1", "bb2", "bb"])
def test_the_correction_needs_a_fixed_w(weights):
    """G's contact rows are 1 / Gamma of one W; with a Barzilai-Borwein W (new every iteration) V-FPI
    diverged or stalled on the grip, so the combination is refused, from the scene file too."""
    with pytest.raises(ModelError, match="coarse_correction: needs weights 'frobenius' or 'block'"):
        SolverCOND(MODEL, weights=weights, coarse_correction=True)
    with pytest.raises(ModelError, match="coarse_correction"):
        edited_scene("soft_ball", ball_stiffness_edit(None, 4, solver={"weights": weights}))
    SolverCOND(MODEL, weights=weights)
    SolverCOND(MODEL, weights="block", coarse_correction=True)


def _solve(grip, tolerance, **options):
    model, state, contacts, system = grip
    solver = SolverCOND(model, tolerance=tolerance, max_iterations=100_000, **options)
    solver.prepare(state, contacts)
    return solver.solve(system, contacts, DT)


def test_the_correction_leaves_the_solution_unchanged_and_converges_in_fewer_iterations(problem):
    """Both variants converge to the same v and forces, which satisfy (11) and (15); the plain V-FPI is
    run 100x tighter as the reference."""
    _, _, contacts, system = problem
    v_ref, force_ref, _, _ = _solve(problem, 1e-12)
    v, force, iterations, residual = _solve(problem, 1e-10, coarse_correction=True)
    assert residual < 1e-10
    assert contacts.count and force_ref[:, 0].max() > 0.2  # the contacts carry real forces
    np.testing.assert_allclose(force, force_ref, rtol=0, atol=1e-6 * np.abs(force_ref).max())
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=1e-8)
    assert_dynamics(system, contacts, v, force)
    assert_signorini_coulomb(contacts, v, force)
    _, _, plain_to_same_tolerance, _ = _solve(problem, 1e-10)
    assert iterations < plain_to_same_tolerance / 2, (iterations, plain_to_same_tolerance)


def test_a_rod_gets_piecewise_linear_translations_and_no_rotation_columns(cable):
    """Each rod contributes 3 ROD_COARSE_POINTS columns: on its segments' translations, hat functions of the
    segment index that sum to one (a rigid translation of the cable is in the span, and so is a field
    linear along it); its rotations get none; the robot keeps one column per joint."""
    model, _, _, system = cable
    basis = _grip_basis(cable)
    bodies = model.rod_bodies
    assert len(model.rod_body_start) == 2 and len(bodies) == CABLE_SEGMENTS
    dof = model.body_dof_start + 6 * bodies
    rod_columns = 3 * ROD_COARSE_POINTS
    assert basis.shape[1] == rod_columns + model.robot_dof_count
    assert not basis[(dof[:, None] + np.arange(3, 6)).ravel()].any()
    for e in range(3):
        rows = basis[dof + e, :rod_columns]
        np.testing.assert_allclose(rows[:, e::3].sum(axis=1), 1.0, rtol=0, atol=1e-15)
        assert not np.delete(rows, np.arange(e, rod_columns, 3), axis=1).any()
        linear = np.linspace(0.0, 1.0, CABLE_SEGMENTS)
        coefficients = np.linalg.lstsq(rows, linear, rcond=None)[0]
        np.testing.assert_allclose(rows @ coefficients, linear, rtol=0, atol=1e-12)
    robot = basis[model.dof_count - model.robot_dof_count:model.dof_count, rod_columns:]
    np.testing.assert_array_equal(robot, np.eye(model.robot_dof_count))


def test_the_correction_is_bit_identical_across_runs(grip):
    first, second = (_solve(grip, 1e-5, coarse_correction=True) for _ in range(2))
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    assert first[2:] == second[2:]


def test_solve_without_the_steps_coarse_space_is_a_clear_error(grip):
    model, state, contacts, system = grip
    solver = SolverCOND(model, coarse_correction=True)
    with pytest.raises(ModelError, match="coarse_correction needs the step's coarse space"):
        solver.solve(system, contacts, DT)
    solver.prepare(state, contacts)  # prepare() then solve(): the space serves that one solve
    solver.solve(system, contacts, DT)
    with pytest.raises(ModelError, match="coarse_correction"):
        solver.solve(system, contacts, DT)


def test_fingers_closing_onto_their_joint_limit_converge_every_step(slip):
    """Regression: a contact at the edge of its active set. When G held only the contacts active in the
    current iteration, the correction drove the finger joint past its limit, the next contact solve pushed
    it back, and V-FPI cycled for all 2000 iterations on 5 of steps 147-154 (residual up to 0.53 m/s)."""
    stats, at_limit, _ = slip
    assert len(at_limit) >= 5, at_limit  # the scenario happened
    unconverged = [(k, s.iterations, s.residual) for k, s in enumerate(stats) if not s.residual < 1e-5]
    assert not unconverged
    assert max(stats[k].iterations for k in at_limit) < 200


def test_at_the_joint_limit_the_correction_leaves_the_solution_unchanged(slip):
    _, _, problem = slip
    _, _, contacts, system = problem
    limit = contacts.source_kind == SOURCE_JOINT_LIMIT
    v_ref, force_ref, _, _ = _solve(problem, 1e-12)
    np.testing.assert_allclose(force_ref[limit, 0], [GRIP_EFFORT], rtol=1e-3)  # static balance with the effort
    v, force, _, residual = _solve(problem, 1e-10, coarse_correction=True)
    assert residual < 1e-10
    np.testing.assert_allclose(force, force_ref, rtol=0, atol=1e-6 * np.abs(force_ref).max())
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=1e-8)
    assert_signorini_coulomb(contacts, v, force)


def test_the_parallel_coarse_product_is_the_serial_one_bit_for_bit(grip, monkeypatch):
    """The FEM-sized path (A_o P by A's rows, P^T A P in two halves of G's rows, on every core) against the serial
    one (A_o P entry by entry over its terms, P^T A P whole): the same sums in the same order, so the same bits,
    with one thread or two."""
    import numba
    from cond_ros.sim.solvers.cond import coarse_space
    _, _, _, system = grip
    basis = _grip_basis(grip)
    monkeypatch.setattr(coarse_space, "coarse_in_parallel", lambda product: False)
    serial = coarse_operator(system, basis)
    monkeypatch.setattr(coarse_space, "coarse_in_parallel", lambda product: True)
    threads = numba.get_num_threads()
    try:
        for count in sorted({1, threads}):
            numba.set_num_threads(count)
            got = coarse_operator(system, basis)
            inside = _within_ranges(serial[0], serial[3][:, 2:])  # A P is written within its ranges only
            assert np.array_equal(got[0][inside], serial[0][inside]), count
            for got_array, expected in zip(got[1:], serial[1:]):
                assert np.array_equal(got_array, expected), count
    finally:
        numba.set_num_threads(threads)
