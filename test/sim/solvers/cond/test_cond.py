"""SolverCOND (Alg. 1-3) against independent references.

Solver-level problems are built directly: particle systems (springs from
``ModelBuilder``, assembled by ``cond_ros.sim.dynamics.assembly.assemble``) with
hand-made contact sets, plus one rigid body on a plane whose contacts go
through virtual nodes (eq. 15). References: the CCP (36) / regularized CCP
(37) solved by clarabel on the dense Delassus operator (``test/reference.py``),
and the Signorini-Coulomb conditions (11) and dynamics (1), (17), (18)
checked directly.
"""
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from cond_ros.sim.builder import ModelBuilder
from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.simulator import Simulator
from cond_ros.sim.solvers.cond import fixed_point as cond_kernels
from cond_ros.sim.solvers.cond.solver import SolverCOND
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import MODEL  # noqa: E402
from solver_problems import (  # noqa: E402
    AGREE_TOL,
    DT,
    DYNAMICS_TOL,
    FORCE_TOL,
    MODE_TOL,
    SCC_TOL,
    TIGHT,
    VELOCITY_TOL,
    WEIGHT_TOL,
    assert_ccp_optimality,
    assert_dynamics,
    assert_signorini_coulomb,
    box_on_plane,
    ccp_reference,
    contact_modes,
    dense,
    force_scale,
    make_contacts,
    nodal_problem,
    solve,
)

# --------------------------------------------------------------------------- 1. proximal = CCP
CCP_SEEDS = range(20)


def ccp_problem(seed):
    """Seeds 0-16: k = 1e5 N/m, 0.1-1 kg; seeds 17-19: stiffer, k = 3e5 N/m, 0.03-1 kg."""
    if seed >= 17:
        return nodal_problem(seed, stiffness=3e5, mass=(0.03, 1.0))
    return nodal_problem(seed)


@pytest.mark.parametrize("chebyshev", [False, True])
@pytest.mark.parametrize("seed", CCP_SEEDS)
def test_proximal_converges_to_ccp_solution(seed, chebyshev):
    """Proximal COND at convergence equals the CCP (36) solved by clarabel on A_c = J A^-1 J^T,
    b_c = J A^-1 b (Sec. III-D2), forces and v = A^-1 (b + J^T lambda), with and without Chebyshev.

    The last few seeds use a stiffer class (k = 3e5 N/m, masses down to 30 g) for a slower V-FPI.
    """
    system, contacts = ccp_problem(seed)
    lam, v_ref = ccp_reference(system, contacts)
    v, force, iterations, residual = solve(system, contacts, projection="proximal", chebyshev=chebyshev, **TIGHT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * force_scale(lam))
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))


def test_ccp_problems_cover_all_contact_modes():
    """The random CCP problems above exercise open, sticking and sliding contacts (several of each)."""
    totals = np.zeros(3, int)
    for seed in CCP_SEEDS:
        system, contacts = ccp_problem(seed)
        lam, _ = ccp_reference(system, contacts)
        totals += contact_modes(contacts, lam, MODE_TOL * force_scale(lam))
    assert np.all(totals >= 5), f"(open, stick, slide) = {totals}"


@pytest.mark.parametrize("seed", range(5))
def test_proximal_solution_satisfies_relaxed_scc(seed):
    """The proximal fixed point satisfies the relaxed SCC (28) / KKT of (36) directly: u = J v + phi lies
    in the dual cone (u_n >= mu ||u_t||), lambda . u = 0 per contact, and a slipping contact's friction
    opposes u_t (lambda_t = -mu lambda_n u_t / ||u_t||)."""
    system, contacts = nodal_problem(100 + seed)
    v, force, _, residual = solve(system, contacts, projection="proximal", **TIGHT)
    assert residual < TIGHT["tolerance"]
    assert_ccp_optimality(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


# --------------------------------------------------------------------------- 2. strict = SCC (11)
@pytest.mark.parametrize("chebyshev", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_strict_solution_satisfies_signorini_coulomb(seed, chebyshev):
    """Strict COND at convergence satisfies (11)-(12) for u = J v + phi, and A v = b + J^T lambda.

    Signorini: lambda_n >= 0, u_n >= 0, lambda_n u_n = 0. Coulomb: ||lambda_t|| <= mu lambda_n; a sliding
    contact (||u_t|| > threshold) has lambda_t = -mu lambda_n u_t / ||u_t||; a contact strictly inside the
    cone sticks (u_t = 0). Problems are completely-nodal with moderate stiffness, the class for which
    Thm. 1 guarantees convergence of the strict operator (it is not guaranteed in general).
    """
    system, contacts = nodal_problem(200 + seed)
    v, force, iterations, residual = solve(system, contacts, projection="strict", chebyshev=chebyshev, **TIGHT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    assert_signorini_coulomb(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


# --------------------------------------------------------------------------- 3. strict == proximal where they coincide
@pytest.mark.parametrize("seed", range(5))
def test_projections_agree_on_frictionless_problems(seed):
    """With mu = 0 both cones are the ray {lambda_t = 0, lambda_n >= 0}: strict and proximal COND give
    the same solution, which is the frictionless QP solution (clarabel)."""
    system, contacts = nodal_problem(300 + seed, mu=(0.0, 0.0))
    lam, _ = ccp_reference(system, contacts)
    v_s, f_s, _, r_s = solve(system, contacts, projection="strict", **TIGHT)
    v_p, f_p, _, r_p = solve(system, contacts, projection="proximal", **TIGHT)
    assert r_s < TIGHT["tolerance"] and r_p < TIGHT["tolerance"]
    scale = force_scale(lam)
    np.testing.assert_allclose(f_s, f_p, rtol=0, atol=AGREE_TOL * scale)
    np.testing.assert_allclose(v_s, v_p, rtol=0, atol=AGREE_TOL * max(1.0, np.abs(v_s).max()))
    np.testing.assert_allclose(f_s, lam, rtol=0, atol=FORCE_TOL * scale)
    assert np.all(f_s[:, 1:] == 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_projections_agree_when_all_contacts_open(seed):
    """With large separating offsets every contact opens: both projections return zero forces and the
    free velocity v = A^-1 b."""
    system, contacts = nodal_problem(400 + seed, normal_offset=200.0)
    a, b, _ = dense(system, contacts)
    v_free = np.linalg.solve(a, b)
    for projection in ("strict", "proximal"):
        v, force, _, residual = solve(system, contacts, projection=projection, **TIGHT)
        assert residual < TIGHT["tolerance"]
        assert np.all(force == 0.0), projection
        np.testing.assert_allclose(v, v_free, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_free).max()))


def test_proximal_frictionless_separating_particle_leaves_plane():
    """A frictionless particle launched straight up off a plane gets no contact force (the contact opens).

    The contact frame's tangents are exactly horizontal, so the tangential trial force is exactly 0.
    """
    builder = ModelBuilder()
    builder.add_particle((0.0, 0.0, 0.05), mass=1.0, radius=0.05, velocity=(0.0, 0.0, 1.0))
    builder.add_collider_plane()
    sim = Simulator(builder.finalize(), dt=DT, solver="cond", solver_options=dict(projection="proximal"))
    sim.step()
    assert sim.contacts.count == 1
    assert np.all(sim.contacts.force == 0.0), sim.contacts.force
    assert sim.state.particle_qd[0, 2] > 0.5


# --------------------------------------------------------------------------- several contacts on one node
def crease_problem(mu):
    """A free 1 kg particle (no gravity, A = 200 I) sliding at (-1, 2, -1) m/s into the crease of a floor
    (normal +z) and a wall (normal +x): two S-contacts on the same node, phi = 0.

    By symmetry and hand calculation: strict (SCC) v = (0, 2 - 2 mu, 0) with each contact pushing 200 N
    and sliding friction mu 200 N along -y (for mu < 1); frictionless: v = (0, 2, 0).
    """
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_particle((0.0, 0.0, 0.0), mass=1.0, velocity=(-1.0, 2.0, -1.0))
    model = builder.finalize()
    pattern = build_pattern(model)
    system = assemble(model, pattern, model.state(), model.control(), DT)
    floor = [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]  # rows n, t1, t2 (proper rotations)
    wall = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    contacts = make_contacts(pattern, [0, 0], [-1, -1], np.array([floor, wall]), [[mu, mu], [mu, mu]],
                             np.zeros((2, 3)))
    return system, contacts


@pytest.mark.parametrize("projection", ["strict", "proximal"])
def test_crease_frictionless(projection):
    """Frictionless crease: both contacts stop their normal velocity, the particle keeps v_y = 2 m/s."""
    system, contacts = crease_problem(0.0)
    v, force, _, residual = solve(system, contacts, projection=projection, **TIGHT)
    assert residual < TIGHT["tolerance"]
    np.testing.assert_allclose(v, [0.0, 2.0, 0.0], rtol=0, atol=VELOCITY_TOL)
    np.testing.assert_allclose(force, [[200.0, 0.0, 0.0], [200.0, 0.0, 0.0]], rtol=0, atol=FORCE_TOL * 200.0)


def test_crease_with_friction_strict_satisfies_signorini_coulomb():
    """Strict COND on a particle sliding along a floor-wall crease (mu = 0.5) reaches the SCC (11) solution
    v = (0, 1, 0), forces (200, 0, -100) on the floor and (200, -100, 0) on the wall (hand calculation)."""
    system, contacts = crease_problem(0.5)
    v, force, _, residual = solve(system, contacts, projection="strict", **TIGHT)
    assert residual < TIGHT["tolerance"]
    assert_signorini_coulomb(contacts, v, force)
    np.testing.assert_allclose(v, [0.0, 1.0, 0.0], rtol=0, atol=VELOCITY_TOL)
    np.testing.assert_allclose(force, [[200.0, 0.0, -100.0], [200.0, -100.0, 0.0]], rtol=0, atol=FORCE_TOL * 200.0)


@pytest.mark.parametrize("mu", [0.5, 1.0])
def test_crease_with_friction_proximal_is_ccp(mu):
    """Proximal COND on the crease reaches the CCP (36) solution: its KKT conditions hold and v matches
    clarabel's (v is unique although A_c is singular here: 6 constraints on 3 DOF)."""
    system, contacts = crease_problem(mu)
    _, v_ref = ccp_reference(system, contacts)
    v, force, _, residual = solve(system, contacts, projection="proximal", **TIGHT)
    assert residual < TIGHT["tolerance"]
    assert_ccp_optimality(contacts, v, force)
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL)


# --------------------------------------------------------------------------- 4. invertible contact (37)
OMEGA = 1e-3


@pytest.mark.parametrize("seed", range(5))
def test_invertible_contact_forward_and_inverse(seed):
    """Regularized proximal COND (Omega_c = omega I, Sec. III-E1): the forward forces equal the CCP with
    A_c + omega I (clarabel), and inverse_contact_forces(v) = Pi_C(-(J v + phi) / omega) recovers them
    from the velocity alone."""
    system, contacts = nodal_problem(500 + seed)
    solver = SolverCOND(MODEL, projection="proximal", regularization=OMEGA, **TIGHT)
    v, force, iterations, residual = solver.solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    lam, v_ref = ccp_reference(system, contacts, regularization=OMEGA)
    scale = force_scale(lam)
    np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * scale)
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))
    np.testing.assert_allclose(solver.inverse_contact_forces(v, contacts), force, rtol=0, atol=FORCE_TOL * scale)


@pytest.mark.parametrize("seed", range(3))
def test_invertible_contact_inverse_with_strict_operator(seed):
    """The inverse map also holds for the strict operator (isotropic and anisotropic): at a fixed point
    of the regularized surrogate problem lambda = Pi(-(J v + phi) / omega)."""
    system, contacts = nodal_problem(550 + seed, anisotropic=seed > 0)
    solver = SolverCOND(MODEL, projection="strict", regularization=OMEGA, **TIGHT)
    v, force, _, residual = solver.solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"]
    np.testing.assert_allclose(solver.inverse_contact_forces(v, contacts), force, rtol=0,
                               atol=FORCE_TOL * force_scale(force))


def test_inverse_contact_forces_needs_regularization():
    """inverse_contact_forces is undefined for the hard contact model (omega = 0): ModelError."""
    system, contacts = nodal_problem(590)
    solver = SolverCOND(MODEL, projection="proximal")
    v, *_ = solver.solve(system, contacts, DT)
    with pytest.raises(ModelError, match="regularization"):
        solver.inverse_contact_forces(v, contacts)


# --------------------------------------------------------------------------- 5. step-size strategies
@pytest.mark.parametrize("seed", range(4))
def test_weight_strategies_reach_the_same_proximal_solution(seed):
    """Frobenius (IV-C1), Barzilai-Borwein bb1, bb2, alternating bb (IV-C2) and block weights only change the
    path: all converge to the CCP solution (clarabel)."""
    system, contacts = nodal_problem(600 + seed)
    lam, _ = ccp_reference(system, contacts)
    for weights in ("frobenius", "bb1", "bb2", "bb", "block"):
        for chebyshev in (False, True):
            _, force, iterations, residual = solve(system, contacts, projection="proximal", weights=weights,
                                                   chebyshev=chebyshev, **TIGHT)
            assert residual < TIGHT["tolerance"], (weights, chebyshev, iterations)
            np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * force_scale(lam),
                                       err_msg=f"{weights}, chebyshev={chebyshev}")


def test_frobenius_weights_match_dense_formula():
    """The Frobenius W (IV-C1) from the dense augmented A: w_ii = a_ii / ||A_i*||^2 off contact nodes,
    and one w_bar = sum a_ii / sum ||A_i*||^2 over the three rows of each contact node (Prop. 3)."""
    system, contacts = nodal_problem(650)
    a = system.matrix().toarray()
    want = np.diag(a) / np.sum(a * a, axis=1)
    for node in np.concatenate([contacts.dof_a, contacts.dof_b[contacts.dof_b >= 0]]):
        rows = slice(node, node + 3)
        want[rows] = np.trace(a[rows, rows]) / np.sum(a[rows] ** 2)
    got, _ = SolverCOND(MODEL)._weights(system, system.augmented(), contacts)
    np.testing.assert_allclose(got, want, rtol=WEIGHT_TOL, atol=0)


# --------------------------------------------------------------------------- 6. anisotropic + proximal
def test_proximal_rejects_anisotropic_friction():
    """The proximal operator is isotropic only: anisotropic friction raises ModelError pointing to 'strict'."""
    system, contacts = nodal_problem(700, anisotropic=True)
    with pytest.raises(ModelError, match="strict"):
        SolverCOND(MODEL, projection="proximal").solve(system, contacts, DT)


def test_strict_accepts_anisotropic_friction():
    """Anisotropic friction with the strict operator converges and keeps every force in its elliptic cone."""
    system, contacts = nodal_problem(701, anisotropic=True)
    v, force, _, residual = solve(system, contacts, projection="strict", **TIGHT)
    assert residual < TIGHT["tolerance"]
    mu1, mu2 = contacts.friction.T
    assert np.all(force[:, 0] >= 0.0)
    # (t1/mu1)^2 + (t2/mu2)^2 <= l_n^2, multiplied by mu1 mu2 so that no mu is divided by
    lhs = np.hypot(force[:, 1] * mu2, force[:, 2] * mu1)
    assert np.all(lhs <= mu1 * mu2 * force[:, 0] + SCC_TOL * force_scale(force))
    assert_dynamics(system, contacts, v, force)


# --------------------------------------------------------------------------- 7. determinism
@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("projection", ["strict", "proximal"])
def test_solve_is_bit_deterministic(projection, size):
    """Two fresh solvers on the same problem return bit-identical v and forces: lockstep replays depend
    on it. "large" has more contact groups than the threshold above which the contact kernel is threaded
    (cond_kernels.PARALLEL_MIN_GROUPS, where defined), so the parallel path is covered too."""
    if size == "small":
        system, contacts = nodal_problem(800, n_nodes=20, n_contacts=(8, 10))
    else:
        m = max(2010, getattr(cond_kernels, "PARALLEL_MIN_GROUPS", 0) + 10)
        system, contacts = nodal_problem(801, n_nodes=m + m // 4, n_contacts=(m, m), d_fraction=0.0)
        assert contacts.count == m
    v1, f1, i1, _ = solve(system, contacts, projection=projection)
    v2, f2, i2, _ = solve(system, contacts, projection=projection)
    assert i1 == i2
    assert np.array_equal(v1, v2) and np.array_equal(f1, f2)


# --------------------------------------------------------------------------- 8. rigid body, virtual nodes
@pytest.mark.parametrize("n_points", [2, 3, 4])
def test_rigid_body_virtual_nodes_match_ccp_and_reduced_dynamics(n_points):
    """Rigid box on a plane through virtual nodes: proximal COND equals the CCP of the augmented
    system (15) (clarabel); the virtual-node coupling (17) v_v - J_v v_o = J_cv^T lambda / k_v holds;
    and the reduced dynamics (18) A_o v_o = b_o + sum_m (F_m, r_m x F_m) holds with A_o assembled
    without virtual nodes and the wrench of each world contact force F_m = R_m^T lambda_m at arm r_m.

    Chebyshev acceleration (the default) is needed here: the mode in which body and virtual nodes move
    together contracts by only ~M_hat / k_v per plain iteration. Solving the same step again with the
    same solver (warm-started v and owner forces) must reach the same answer in fewer iterations.
    """
    model, state, contacts, system = box_on_plane(n_points)
    assert contacts.count == n_points and np.all(contacts.dof_a >= system.dof_count)
    lam, v_ref = ccp_reference(system, contacts)
    assert np.sum(lam[:, 0] > 0) >= 2  # a real multi-contact problem
    solver = SolverCOND(MODEL, projection="proximal", chebyshev=True, tolerance=TIGHT["tolerance"],
                        max_iterations=50_000)
    v, force, iterations, residual = solver.solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    scale = force_scale(lam)
    np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * scale)
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))

    # the same step again: velocity and owner-force warm starts only change the path (and shorten it)
    v2, force2, iterations2, residual2 = solver.solve(system, contacts, DT)
    assert residual2 < TIGHT["tolerance"] and iterations2 < iterations
    np.testing.assert_allclose(force2, lam, rtol=0, atol=FORCE_TOL * scale)

    n_o = system.dof_count
    v_o, v_v = v[:n_o], v[n_o:].reshape(-1, 3)
    lin, ang = v_o[:3], v_o[3:6]
    world_force = np.einsum("mij,mi->mj", contacts.frame, force)  # R_m^T lambda_m
    arms = contacts.position - state.body_q[0]  # the contact points have radius 0
    point_velocity = lin + np.cross(ang, arms)  # J_v v_o
    np.testing.assert_allclose(v_v - point_velocity, world_force / model.virtual_node_gain, rtol=0,
                               atol=DYNAMICS_TOL * max(1.0, np.abs(v).max()))
    a_o = assemble(model, build_pattern(model), state, model.control(), DT)
    a_o_dense = sp.csr_matrix((a_o.data, a_o.indices, a_o.indptr), shape=(n_o, n_o)).toarray()
    wrench = np.concatenate([world_force.sum(axis=0), np.cross(arms, world_force).sum(axis=0)])
    lhs = a_o_dense @ v_o
    rhs = a_o.b + wrench
    assert np.abs(lhs - rhs).max() <= DYNAMICS_TOL * max(np.abs(a_o.b).max(), np.abs(wrench).max())


def test_force_warm_start_puts_owners_on_the_reduced_dynamics_of_both_contact_sides():
    """Started from the exact forces, every virtual-node owner starts at the exact velocity.

    A small soft ball held by the two-finger gripper: each finger contact has the FEM node on side a
    and the finger's virtual node on side b, so the finger feels minus the contact force. The owner
    warm start solves the reduced dynamics (18) of each owner with the previous step's forces; given the
    step's converged forces it must return the converged owner and virtual-node velocities (17).
    """
    from cond_ros.scenes.registry import edited_scene
    from cond_ros.sim.collision.nodalization import build_contact_set, contact_keys, forces_to_world

    def small_ball(data):
        data["soft_bodies"][0]["mesh"]["cells"] = 5
    scene = edited_scene("soft_ball", small_ball)
    sim = scene.simulator
    while sim.state.time < 0.8 - 1e-9:  # fingers closed on the ball
        sim.step(scene.script.control(sim.state.time))
    model, dt = sim.model, sim.dt
    contacts = build_contact_set(model, sim.pattern, sim.state, dt)
    solver = SolverCOND(model, tolerance=1e-13, max_iterations=200_000)
    system = solver.assemble(sim.state, scene.script.control(sim.state.time), contacts, dt)
    on_b = contacts.dof_b >= system.dof_count
    assert on_b.sum() >= 2 and np.all(contacts.dof_a[on_b] < system.dof_count)  # nodes press on fingers
    v_exact, force, _, residual = solver.solve(system, contacts, dt)
    assert residual < 1e-13 and np.abs(force[on_b, 0]).sum() > 1.0  # the fingers squeeze (newtons)

    keys = contact_keys(contacts)
    order = np.argsort(keys, kind="stable")
    solver._previous_forces = (keys[order], forces_to_world(contacts.frame, force)[order])
    robot = slice(model.robot_dof_start, model.robot_dof_start + model.robot_dof_count)
    v = v_exact.copy()
    v[robot] = 0.0  # owners and their virtual nodes start away from the answer
    v[system.dof_count:] = 0.0
    solver._warm_start_owners(system, contacts, keys, v)
    scale = np.abs(v_exact[robot]).max() + np.abs(force).max() / model.virtual_node_gain
    np.testing.assert_allclose(v[robot], v_exact[robot], rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(v[system.dof_count:], v_exact[system.dof_count:], rtol=0, atol=1e-6 * scale)


# --------------------------------------------------------------------------- 9. the stopping threshold per DOF
@pytest.mark.parametrize("reference", [1, 2, 3, 300])
def test_a_reference_dof_count_widens_theta_th_to_its_tolerance_per_dof_on_larger_models(reference):
    """With ``tolerance_reference_dofs`` R, V-FPI on a model of n DOFs stops where the paper's absolute rule with
    theta_th = tolerance sqrt(n / R) stops when n > R, and at ``tolerance`` itself, exactly, when n <= R: the same
    iterations and bits, theta below that threshold, and one iteration fewer leaves theta at or above it (the
    loop stopped on the threshold, not on l_max)."""
    system, contacts = nodal_problem(11, n_nodes=20, n_contacts=(8, 10))
    tolerance = 1e-6
    n = MODEL.dof_count
    scaled = SolverCOND(MODEL, tolerance=tolerance, tolerance_reference_dofs=reference)
    if n <= reference:
        assert scaled.stopping_threshold == tolerance
    else:
        assert scaled.stopping_threshold == pytest.approx(tolerance * np.sqrt(n / reference), rel=1e-15)
    threshold = scaled.stopping_threshold
    v, force, iterations, residual = scaled.solve(system, contacts, DT)
    v_abs, force_abs, iterations_abs, residual_abs = solve(system, contacts, tolerance=threshold)
    assert (iterations, residual) == (iterations_abs, residual_abs)
    assert np.array_equal(v, v_abs) and np.array_equal(force, force_abs)
    assert residual < threshold and iterations > 1
    *_, residual_short = solve(system, contacts, tolerance=threshold, max_iterations=iterations - 1)
    assert residual_short >= threshold


def test_the_threshold_follows_a_tolerance_changed_after_the_solver_is_made():
    solver = SolverCOND(MODEL, tolerance=1e-4, tolerance_reference_dofs=1)
    solver.tolerance = 1e-6
    assert solver.stopping_threshold == pytest.approx(1e-6 * np.sqrt(MODEL.dof_count), rel=1e-15)


@pytest.mark.parametrize("bad", [-1, 2.5, float("nan"), True, "many"])
def test_a_reference_dof_count_that_is_not_a_whole_number_of_dofs_is_refused(bad):
    with pytest.raises(ModelError, match="tolerance_reference_dofs"):
        SolverCOND(MODEL, tolerance=1e-6, tolerance_reference_dofs=bad)
