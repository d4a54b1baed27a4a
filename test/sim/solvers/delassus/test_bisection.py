"""The per-contact bisection solver (Hwangbo, Lee & Hutter 2018) against independent references."""
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq

from cond_ros.scenes.registry import BOX_MASS, box_on_plane
from cond_ros.sim import Simulator
from cond_ros.sim.solvers.cond.fixed_point import contact_velocities
from cond_ros.sim.solvers.delassus.bisection import (COULOMB, MAX_DISSIPATION, MODE_SLIP, SolverBisection, _slip_point,
                                                     _visible, solve_contact)
from cond_ros.sim.solvers.delassus.operator import ContactProblem, build_contact_problem
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import MODEL  # noqa: E402
from solver_problems import (  # noqa: E402
    DT,
    FORCE_TOL,
    TIGHT,
    VELOCITY_TOL,
    assert_dynamics,
    assert_signorini_coulomb,
    ccp_reference,
    force_scale,
    nodal_problem,
)
from solver_problems import box_on_plane as solver_problems_box  # noqa: E402

GRAVITY = 9.81
ALG1 = (0.05, 0.5, 2.0, 1e-13)  # beta1, beta2, beta3, gamma: the defaults


def slip_cases(seed, count):
    """Random SPD W = G_ii, c with c_n < 0 and lambda^{v=0} = -W^-1 c outside the cone, mu in [0.1, 1.5]."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        a = rng.normal(size=(3, 3))
        w = a @ a.T + 0.05 * np.eye(3)
        mu = rng.uniform(0.1, 1.5)
        c = rng.normal(size=3)
        c[0] = -abs(c[0])
        lam_v0 = -np.linalg.solve(w, c)
        if mu * lam_v0[0] < np.hypot(lam_v0[1], lam_v0[2]):
            cases.append((w, c, mu, lam_v0))
    return cases


def brute_force_min_energy(w, c, mu):
    """argmin of E = 1/2 (W^-1 c + lambda)^T W (W^-1 c + lambda) on the conic section {u_n = 0} cap cone
    boundary: a dense grid in theta, then the root of a central-difference dE/dtheta by brentq."""
    lam_v0 = -np.linalg.solve(w, c)

    def points(theta):
        theta = np.atleast_1d(theta)
        # u_n = 0 and ||lambda_t|| = mu lambda_n with lambda_t = r (cos, sin): solve W_n . lambda = -c_n for r
        denom = w[0, 0] / mu + w[0, 1] * np.cos(theta) + w[0, 2] * np.sin(theta)
        r = np.where(denom > 0, -c[0] / np.where(denom > 0, denom, 1.0), np.nan)
        return np.stack([r / mu, r * np.cos(theta), r * np.sin(theta)], axis=1)

    def energy(theta):
        d = points(theta) - lam_v0
        e = 0.5 * np.einsum("ki,ij,kj->k", d, w, d)
        return np.where(np.isnan(e), np.inf, e)

    grid = np.linspace(-np.pi, np.pi, 40001)
    k = int(np.argmin(energy(grid)))
    h = 1e-6

    def slope(theta):
        return float((energy(theta + h) - energy(theta - h))[0] / (2 * h))

    step = grid[1] - grid[0]
    lo, hi = grid[k] - step, grid[k] + step
    if slope(lo) * slope(hi) < 0:
        theta = brentq(slope, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    else:
        theta = grid[k]
    return points(theta)[0]


def local_solve(w, c, mu, mode):
    lam = np.empty(3)
    case = solve_contact(w, np.linalg.inv(w), c, mu, mode, *ALG1, lam)
    return case, lam


def test_slip_solve_matches_brute_force_minimum():
    """Alg. 1 (model (8)) returns the minimizer of E on the conic section for random SPD G_ii, with u_n = 0,
    lambda on the cone boundary, and friction dissipative (lambda_t . u_t < 0)."""
    for w, c, mu, _ in slip_cases(0, 60):
        case, lam = local_solve(w, c, mu, MAX_DISSIPATION)
        assert case == MODE_SLIP
        reference = brute_force_min_energy(w, c, mu)
        np.testing.assert_allclose(lam, reference, rtol=0, atol=1e-6 * np.linalg.norm(reference))
        u = w @ lam + c
        assert abs(u[0]) <= 1e-12 * np.linalg.norm(c)
        assert abs(np.hypot(lam[1], lam[2]) - mu * lam[0]) <= 1e-12 * np.linalg.norm(lam)
        assert lam[0] > 0.0 and lam[1:] @ u[1:] < 0.0


def test_max_dissipation_differs_from_coulomb_and_coulomb_mode_is_exact():
    """Model (8) is not the Coulomb law unless W_tn = 0: its u_t deviates from -lambda_t (by tens of degrees
    for random W). The "coulomb" mode returns the point of C where lambda_t = -mu lambda_n u_t/||u_t||."""
    deviation = []
    for w, c, mu, _ in slip_cases(1, 60):
        _, lam8 = local_solve(w, c, mu, MAX_DISSIPATION)
        u8 = w @ lam8 + c
        cosine = -(lam8[1:] @ u8[1:]) / np.linalg.norm(lam8[1:]) / np.linalg.norm(u8[1:])
        deviation.append(np.degrees(np.arccos(cosine)))
        _, lam = local_solve(w, c, mu, COULOMB)
        u = w @ lam + c
        scale = np.linalg.norm(lam)
        assert abs(u[0]) <= 1e-12 * np.linalg.norm(c)
        assert abs(np.hypot(lam[1], lam[2]) - mu * lam[0]) <= 1e-12 * scale
        np.testing.assert_allclose(lam[1:], -mu * lam[0] * u[1:] / np.linalg.norm(u[1:]), rtol=0, atol=1e-8 * scale)
    assert max(deviation) > 5.0  # the two models really differ
    # with no normal-tangential coupling they coincide
    w = np.diag([2.0, 1.0, 3.0])
    c = np.array([-1.0, 4.0, -2.0])
    np.testing.assert_allclose(local_solve(w, c, 0.5, MAX_DISSIPATION)[1], local_solve(w, c, 0.5, COULOMB)[1],
                               rtol=0, atol=1e-10)


def test_line_of_sight_sign():
    """The start point E_C(lambda^{v=0}) is always in sight of lambda^{v=0}; Alg. 1 line 13 as printed,
    grad h2 . (lambda - lambda^{v=0}) < 0, would reject it, so the implemented test has the sign flipped."""
    for w, c, mu, lam_v0 in slip_cases(2, 40):
        start = np.empty(3)
        assert _slip_point(np.arctan2(lam_v0[2], lam_v0[1]), c[0], w, mu, start) > 0.0
        assert _visible(start, lam_v0, mu)
        printed = 2 * (-mu * mu * start[0] * (start[0] - lam_v0[0]) + start[1:] @ (start[1:] - lam_v0[1:]))
        assert printed < 0.0


def test_open_stick_and_frictionless_cases():
    w = np.array([[2.0, 0.3, -0.2], [0.3, 1.0, 0.1], [-0.2, 0.1, 1.5]])
    case, lam = local_solve(w, np.array([0.5, 1.0, -1.0]), 0.5, COULOMB)
    assert case == 0 and np.all(lam == 0.0)
    c = -w @ np.array([1.0, 0.2, -0.1])  # lambda^{v=0} = (1, 0.2, -0.1): inside the cone for mu = 0.5
    case, lam = local_solve(w, c, 0.5, COULOMB)
    assert case == 1
    np.testing.assert_allclose(w @ lam + c, 0.0, atol=1e-14)
    case, lam = local_solve(w, c, 0.0, COULOMB)  # frictionless: u_n = 0 on the normal axis
    np.testing.assert_allclose(lam, [-c[0] / w[0, 0], 0.0, 0.0], rtol=1e-15)


@pytest.mark.parametrize("seed", range(10))
def test_nodal_problems_satisfy_signorini_coulomb(seed):
    system, contacts = nodal_problem(seed)
    v, force, iterations, residual = SolverBisection(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual <= TIGHT["tolerance"] and iterations < TIGHT["max_iterations"]
    assert_signorini_coulomb(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


@pytest.mark.parametrize("seed", range(6))
def test_frictionless_nodal_problems_match_ccp(seed):
    """mu = 0: the problem is a convex QP with a unique solution, which clarabel's CCP solve also finds."""
    system, contacts = nodal_problem(seed, mu=(0.0, 0.0), n_contacts=(3, 6))
    v, force, _, residual = SolverBisection(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual <= TIGHT["tolerance"]
    lam, v_ref = ccp_reference(system, contacts)
    np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * force_scale(lam))
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))


def test_max_dissipation_model_converges_on_nodal_problems():
    """The paper's model (8) converges too, with every force in its cone and u_n >= 0, lambda_n u_n = 0."""
    for seed in range(10):
        system, contacts = nodal_problem(seed)
        solver = SolverBisection(MODEL, friction_model="max_dissipation", **TIGHT)
        v, force, _, residual = solver.solve(system, contacts, DT)
        assert residual <= TIGHT["tolerance"]
        assert_dynamics(system, contacts, v, force)
        u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v)
        scale = force_scale(force)
        assert np.all(force[:, 0] >= 0.0) and np.all(u[:, 0] >= -1e-8)
        assert np.all(np.abs(force[:, 0] * u[:, 0]) <= 1e-8 * scale)
        assert np.all(np.hypot(force[:, 1], force[:, 2]) <= contacts.friction[:, 0] * force[:, 0] + 1e-9 * scale)


@pytest.mark.parametrize("n_points,mu", [(2, 0.3), (3, 1.0), (4, 0.3), (4, 1.0)])
def test_rigid_box_contacts_satisfy_signorini_coulomb(n_points, mu):
    """A sliding, spinning box through virtual-node contacts (J_c on the body, strong normal-tangential
    coupling in G_ii): the default Coulomb mode meets the conditions on u = G lambda + u_free."""
    model, state, contacts, _ = solver_problems_box(n_points, mu)
    solver = SolverBisection(model, **TIGHT)
    system = solver.assemble(state, model.control(), contacts, DT)
    v, force, _, residual = solver.solve(system, contacts, DT)
    assert residual <= TIGHT["tolerance"]
    problem = build_contact_problem(system, contacts)
    np.testing.assert_allclose(v, problem.velocity(force.ravel()), rtol=0, atol=1e-12)
    u = (problem.delassus @ force.ravel() + problem.free_velocity).reshape(-1, 3)
    scale = force_scale(force)
    assert np.all(force[:, 0] >= 0.0) and np.all(u[:, 0] >= -1e-10)
    assert np.all(np.abs(force[:, 0] * u[:, 0]) <= 1e-10 * scale)
    assert np.all(np.hypot(force[:, 1], force[:, 2]) <= mu * force[:, 0] + 1e-10 * scale)
    slide = np.hypot(u[:, 1], u[:, 2]) > 1e-6
    assert slide.any()
    coulomb = -mu * force[slide, :1] * u[slide, 1:] / np.hypot(u[slide, 1], u[slide, 2])[:, None]
    np.testing.assert_allclose(force[slide, 1:], coulomb, rtol=0, atol=1e-9 * scale)


def box_simulator(**options):
    model = box_on_plane()
    return Simulator(model, dt=0.01, solver=SolverBisection(model, tolerance=1e-12, max_iterations=100_000, **options))


def test_resting_box_normal_forces_carry_its_weight():
    sim = box_simulator()
    for _ in range(20):
        sim.step()
    forces = sim.contacts.world_forces()
    np.testing.assert_allclose(forces[:, 2].sum(), BOX_MASS * GRAVITY, rtol=1e-6)
    assert np.abs(sim.state.body_qd).max() < 1e-9


@pytest.mark.parametrize("push", [0.5, 2.0])
def test_pushed_box_sticks_below_and_slides_above_coulomb_limit(push):
    """A horizontal force push * mu m g at the centre: below the limit the box stays put, above it slides
    with total friction mu m g and acceleration (F - mu m g)/m."""
    mu = 0.2
    sim = box_simulator()
    control = sim.model.control()
    force = push * mu * BOX_MASS * GRAVITY
    control.body_wrench[0, :3] = (force, 0.0, 0.0)
    steps = 20
    for _ in range(steps):
        sim.step(control)
    friction = sim.contacts.world_forces()[:, :2].sum(axis=0)
    if push < 1.0:
        np.testing.assert_allclose(friction, [-force, 0.0], rtol=0, atol=1e-9 * force)
        assert np.abs(sim.state.body_qd).max() < 1e-9
    else:
        limit = mu * BOX_MASS * GRAVITY
        np.testing.assert_allclose(friction[0], -limit, rtol=1e-3)
        assert abs(friction[1]) <= 1e-3 * limit
        np.testing.assert_allclose(sim.state.body_qd[0, 0], steps * 0.01 * (force - limit) / BOX_MASS, rtol=1e-3)


def test_degenerate_delassus_blocks_give_finite_forces():
    """Footnote 2: a contact locked in one direction (G_ii singular) and one that cannot act at all
    (G_ii = 0) give finite forces; the acting directions still satisfy the contact conditions."""
    # two DOFs with A = I: contact 0 acts on (n, t1) only, contact 1 on nothing
    jacobian = np.zeros((6, 2))
    jacobian[0, 0] = 1.0
    jacobian[1, 1] = 1.0
    delassus = jacobian @ jacobian.T
    free_velocity = np.array([-1.0, 0.3, 0.0, -1.0, 0.5, 0.0])
    problem = ContactProblem(delassus=delassus, free_velocity=free_velocity, friction=np.array([[0.5, 0.5]] * 2),
                             impulse_response=jacobian.T.copy(), free_dof_velocity=np.zeros(2),
                             jacobian=sp.csr_matrix(jacobian))
    force, _, residual = SolverBisection(MODEL, tolerance=1e-12).solve_contacts(problem, np.zeros((2, 3)))
    assert np.all(np.isfinite(force)) and residual <= 1e-12
    np.testing.assert_allclose(force[1], 0.0)
    u = delassus @ force.ravel() + free_velocity
    assert abs(u[0]) < 1e-9 and force[0, 0] == pytest.approx(1.0, rel=1e-8)
    assert force[0, 1] == pytest.approx(-0.3, rel=1e-6)  # sticks: |lambda_t| = 0.3 <= mu lambda_n = 0.5


@pytest.mark.parametrize("option,value", [("relaxation", 0.0), ("relaxation", 1.5), ("relaxation_decay", -0.1),
                                          ("relaxation_min", 0.0), ("beta1", 0.0), ("beta1", 2.0),
                                          ("beta2", 1.0), ("beta3", 0.5), ("gamma", 0.0), ("gamma", 1.0),
                                          ("friction_model", "anitescu"), ("tolerance", -1.0)])
def test_bad_options_raise_model_error_naming_the_option(option, value):
    with pytest.raises(ModelError, match=option):
        SolverBisection(MODEL, **{option: value})


def test_anisotropic_friction_is_rejected():
    system, contacts = nodal_problem(0, anisotropic=True)
    with pytest.raises(ModelError, match="anisotropic"):
        SolverBisection(MODEL).solve(system, contacts, DT)


@pytest.mark.parametrize("friction_model", ["coulomb", "max_dissipation"])
def test_solve_is_bit_deterministic(friction_model):
    system, contacts = nodal_problem(7, n_nodes=30, n_contacts=(10, 14))
    runs = [SolverBisection(MODEL, friction_model=friction_model, **TIGHT).solve(system, contacts, DT)
            for _ in range(2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == runs[1][2] and runs[0][3] == runs[1][3]
