"""The non-smooth Newton solver (Macklin et al. 2019) against the shared references and finite differences."""
import pathlib
import sys

import numpy as np
import pytest

from cond_ros.sim.solvers.delassus.nonsmooth_newton import (SolverNewton, fischer_burmeister, friction_compliance,
                                                            newton_terms, preconditioned_conjugate_residual,
                                                            preconditioner_scales)
from cond_ros.sim.solvers.delassus.operator import build_contact_problem
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import MODEL  # noqa: E402
from solver_problems import (  # noqa: E402
    DT,
    FORCE_TOL,
    VELOCITY_TOL,
    assert_bit_identical_runs,
    assert_box_rests_with_its_weight,
    assert_dynamics,
    assert_signorini_coulomb,
    assert_warm_start_converges_at_once,
    ccp_reference,
    force_scale,
    nodal_problem,
)

#: converged runs: tight tolerance, PCR solves each Newton system to round-off
CONVERGED = dict(tolerance=1e-12, max_iterations=2000, linear_iterations=200, linear_tolerance=1e-12)


def converged_solve(system, contacts, **options):
    solver = SolverNewton(MODEL, **{**CONVERGED, **options})
    v, force, iterations, residual = solver.solve(system, contacts, DT)
    assert iterations < solver.max_iterations and residual <= solver.tolerance
    return solver, v, force


@pytest.mark.parametrize("seed", range(10))
def test_nodal_problems_satisfy_signorini_coulomb(seed):
    system, contacts = nodal_problem(seed)
    solver, v, force = converged_solve(system, contacts)
    assert_signorini_coulomb(contacts, v, force)
    assert_dynamics(system, contacts, v, force)
    assert solver.last_linear_iterations >= 0


@pytest.mark.parametrize("regularization", [0.0, 1e-4])
@pytest.mark.parametrize("seed", range(10))
def test_frictionless_problems_match_the_ccp_reference(seed, regularization):
    """Without friction the (regularized) contact problem is an LCP with a unique solution: the CCP's."""
    system, contacts = nodal_problem(seed, mu=(0.0, 0.0))
    _, v, force = converged_solve(system, contacts, regularization=regularization)
    lam_ref, v_ref = ccp_reference(system, contacts, regularization=regularization)
    np.testing.assert_allclose(force, lam_ref, rtol=0, atol=FORCE_TOL * force_scale(lam_ref))
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))
    assert_dynamics(system, contacts, v, force)


def test_fischer_burmeister_and_its_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    h = 1e-6
    for a, b in rng.normal(size=(200, 2)) * 10.0 ** rng.uniform(-3, 3, (200, 1)):
        if np.hypot(a, b) < 1e-2:
            continue  # the kink at (0, 0)
        phi, alpha, beta = fischer_burmeister(a, b)
        s = np.hypot(a, b)
        assert phi == pytest.approx(a + b - s, rel=1e-12, abs=1e-14 * s)
        step = h * max(1.0, s)
        d_a = (fischer_burmeister(a + step, b)[0] - fischer_burmeister(a - step, b)[0]) / (2 * step)
        d_b = (fischer_burmeister(a, b + step)[0] - fischer_burmeister(a, b - step)[0]) / (2 * step)
        assert alpha == pytest.approx(d_a, abs=1e-6) and beta == pytest.approx(d_b, abs=1e-6)
    assert fischer_burmeister(0.0, 0.0) == (0.0, 0.0, 1.0)  # the paper's choice at the kink (26-27)
    # roots are exactly the complementarity pairs; precision holds for a tiny partner (open contact)
    assert fischer_burmeister(2.0, 0.0)[0] == 0.0 and fischer_burmeister(0.0, 3.0)[0] == 0.0
    assert fischer_burmeister(1.0, 1e-20)[0] == pytest.approx(1e-20, rel=1e-12)
    assert fischer_burmeister(-1.0, 0.0)[0] < 0.0 and fischer_burmeister(1.0, -1.0)[0] < 0.0


def test_newton_jacobian_matches_finite_differences():
    """Row k of the generalized Jacobian is scale_k (coupled_k G_k + compliance_k e_k) against central differences
    of F(lambda) (normal: phi_FB(u_n, r_n lambda_n); friction: u_t + W lambda_t with W frozen, eq. 37)."""
    system, contacts = nodal_problem(4, mu=(0.3, 1.0))
    problem = build_contact_problem(system, contacts)
    g, u_free = problem.delassus, problem.free_velocity
    mu = np.ascontiguousarray(problem.friction[:, 0])
    r_n, r_t = preconditioner_scales(g)
    rng = np.random.default_rng(1)
    lam = rng.normal(size=(contacts.count, 3))
    lam[:, 0] = rng.uniform(0.5, 2.0, contacts.count)  # away from the kink and with active friction
    lam[0, 1:] *= 10.0  # one contact outside its cone
    lam = lam.ravel()
    size = lam.size

    def terms(x):
        out = [np.empty(size) for _ in range(4)]
        newton_terms(g @ x + u_free, x, mu, r_n, r_t, *out)
        return out

    residual, scale, compliance, coupled = terms(lam)
    assert np.all(coupled == 1.0)
    frozen_w = compliance.reshape(-1, 3)[:, 1]

    def f(x):
        value = terms(x)[0].reshape(-1, 3)
        u = (g @ x + u_free).reshape(-1, 3)
        value[:, 1:] = u[:, 1:] + frozen_w[:, None] * x.reshape(-1, 3)[:, 1:]
        return value.ravel()

    jacobian = scale[:, None] * (g + np.diag(compliance))
    step = 1e-6
    fd = np.column_stack([(f(lam + step * e) - f(lam - step * e)) / (2 * step) for e in np.eye(size)])
    np.testing.assert_allclose(jacobian, fd, rtol=0, atol=1e-7 * np.abs(jacobian).max())
    np.testing.assert_allclose(f(lam), residual, rtol=0, atol=1e-14)


def test_friction_compliance_closed_form_and_fixed_points():
    # Fig. 6: u = 0.5 m/s, lambda_n = 10 N, mu = 0.5: at the cone limit W = v / (mu lambda_n), u_t + W lambda_t = 0
    for r in (0.01, 1.0, 100.0):
        w = friction_compliance(0.5, 5.0, 5.0, r)
        assert w == pytest.approx(0.1, rel=1e-14)
        assert 0.5 + w * -5.0 == pytest.approx(0.0, abs=1e-14)
        assert friction_compliance(0.0, 2.0, 5.0, r) == 0.0  # stick inside the cone
        assert friction_compliance(0.0, 0.0, 5.0, r) == 0.0  # the 0/0 guard
        assert friction_compliance(0.5, 6.0, 5.0, r) > w  # outside the cone: W pushes lambda_t back
    rng = np.random.default_rng(2)
    for v, lam_t, bound, r in rng.uniform(0.1, 2.0, (100, 4)):
        s = bound - lam_t
        root = np.sqrt(v * v + r * r * s * s)
        denominator = v + r * bound - root  # (104) with v where the paper prints v^2 (the notes' erratum)
        if denominator > 1e-3:
            assert friction_compliance(v, lam_t, bound, r) == pytest.approx(r * (root - r * s) / denominator,
                                                                             rel=1e-10)


def spd_matrix(n, rank, seed):
    rng = np.random.default_rng(seed)
    basis = rng.normal(size=(n, rank)) * 10.0 ** rng.uniform(-2, 2, (n, 1))  # badly scaled rows: Jacobi helps
    return basis @ basis.T


@pytest.mark.parametrize("rank", [30, 12])
def test_pcr_solves_spd_and_singular_consistent_systems(rank):
    """rank 30 of 30: SPD; rank 12: singular with b in the range (redundant contacts). The preconditioned
    residual sqrt(r . P^-1 r) never increases (the paper's reason to prefer PCR, Fig. 11)."""
    n, tolerance = 30, 1e-13
    a = spd_matrix(n, rank, rank)
    x_true = np.random.default_rng(3).normal(size=n)
    b = a @ x_true
    x = np.zeros(n)
    history = np.zeros(301)
    steps = preconditioned_conjugate_residual(a, np.ones(n), np.zeros(n), b, x, 300, tolerance, history)
    assert 0 < steps < 300
    curve = history[:steps + 1]
    assert np.all(np.diff(curve) <= 1e-12 * curve[0])
    assert curve[-1] <= tolerance * curve[0]
    # Checked in PCR's own norm, that of P = diag(A): it stops on ||s r|| with s = P^-1/2, and the Jacobi-scaled
    # s A s (cond ~2e6) bounds the error where cond(A) (~1e12, the row scales) bounds nothing. The slack is the
    # rounding of the matvecs (|fl(A y) - A y| <= n eps |A| |y|, for b and for the residual) plus the drift of
    # PCR's recurred residual from the true one, which grows with the steps taken.
    s = 1.0 / np.sqrt(np.diag(a))
    scale = np.linalg.norm(s * b)
    slack = (n + steps) * np.finfo(float).eps * np.linalg.norm(s * (np.abs(a) @ (np.abs(x) + np.abs(x_true))))
    assert np.linalg.norm(s * (b - a @ x)) <= tolerance * scale + slack
    if rank == n:
        # the accuracy that residual buys: ||x - x*|| / ||x*|| <= cond * ||r|| / ||b|| in the variables x / s.
        # x_true is x* up to the rounding of b (in the slack); np.linalg.solve is no reference at this
        # conditioning: its own error is larger than PCR's and its last digits depend on the BLAS kernel
        bound = np.linalg.cond(s[:, None] * a * s) * (tolerance * scale + slack) / (scale - slack)
        assert np.linalg.norm((x - x_true) / s) <= bound * np.linalg.norm(x_true / s)


def test_pcr_fixed_count_and_decoupled_rows():
    """linear_tolerance 0 runs the fixed count; a row with coupled = 0 is the identity and keeps a zero solution."""
    n = 20
    a = spd_matrix(n, n, 5)
    b = np.random.default_rng(6).normal(size=n)
    coupled = np.ones(n)
    coupled[[3, 7]] = 0.0
    compliance = np.where(coupled == 0.0, 1.0, 0.0)
    b[[3, 7]] = 0.0
    x = np.zeros(n)
    assert preconditioned_conjugate_residual(a, coupled, compliance, b, x, 5, 0.0, np.zeros(0)) == 5
    x = np.zeros(n)
    preconditioned_conjugate_residual(a, coupled, compliance, b, x, 200, 1e-13, np.zeros(0))
    keep = coupled == 1.0
    assert np.all(x[~keep] == 0.0)
    np.testing.assert_allclose(a[np.ix_(keep, keep)] @ x[keep], b[keep], rtol=0, atol=1e-9 * np.abs(b).max())


@pytest.mark.parametrize("options", [{}, CONVERGED], ids=["defaults", "converged"])
def test_resting_box_carries_its_weight(options):
    """The 0.5 kg cube on four corners (redundant contacts: G has rank 6 of 12). With the converged options and
    no shift, PCR's steps in the null space of X went unseen by the residual and the box lost its weight."""
    assert_box_rests_with_its_weight(lambda model: SolverNewton(model, **options))


def test_stall_guard_breaks_the_friction_cycle():
    """A 12-contact problem on which the paper's constant t = 0.75 cycles with period 2 (frozen W); halving t
    after 10 stalled iterations converges to the Signorini-Coulomb solution."""
    system, contacts = nodal_problem(16, n_nodes=30, n_contacts=(8, 20))
    paper = SolverNewton(MODEL, **{**CONVERGED, "max_iterations": 300, "damping_patience": 0})
    assert paper.solve(system, contacts, DT)[3] > 1e-3
    _, v, force = converged_solve(system, contacts)
    assert_signorini_coulomb(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


def test_warm_start_converges_at_once():
    assert_warm_start_converges_at_once(SolverNewton(MODEL, **CONVERGED), *nodal_problem(7), force_tol=1e-10)


def test_same_input_gives_bit_identical_output():
    assert_bit_identical_runs(lambda: SolverNewton(MODEL, tolerance=1e-10), *nodal_problem(3))


@pytest.mark.parametrize("option, value", [
    ("damping", 0.0), ("damping", 1.5), ("damping", "fast"), ("linear_iterations", 0),
    ("linear_iterations", 2.5), ("linear_tolerance", -1e-3), ("linear_tolerance", 2.0), ("shift", -1.0),
    ("damping_patience", -1), ("damping_patience", 1.5), ("damping_min", 0.0), ("tolerance", 0.0),
    ("max_iterations", 0), ("regularization", -1.0),
])
def test_bad_options_raise_model_error_naming_the_option(option, value):
    with pytest.raises(ModelError, match=option):
        SolverNewton(MODEL, **{option: value})
