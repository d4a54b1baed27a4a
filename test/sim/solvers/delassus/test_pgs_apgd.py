"""The PGS and APGD impulse-space baselines (Sec. V-C1) against independent references.

APGD solves the CCP (36), so it must match clarabel's CCP solution; PGS solves the Coulomb NCP (11),
so it must satisfy the Signorini-Coulomb conditions, and both must agree with clarabel where the
solution is unique (frictionless).
"""
import pathlib
import sys

import numpy as np
import pytest

from cond_ros.scenes.registry import BOX_HALF, BOX_MASS
from cond_ros.scenes.registry import box_on_plane as box_scene
from cond_ros.sim.builder import ModelBuilder, particle
from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.simulator import Simulator
from cond_ros.sim.solvers.delassus.apgd import SolverAPGD
from cond_ros.sim.solvers.delassus.operator import contact_jacobian
from cond_ros.sim.solvers.delassus.pgs import SolverPGS
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import MODEL  # noqa: E402
from solver_problems import (  # noqa: E402
    COULOMB_TOL,
    DT,
    DYNAMICS_TOL,
    FORCE_TOL,
    SCC_TOL,
    SLIDE_THRESHOLD,
    TIGHT,
    VELOCITY_TOL,
    assert_ccp_optimality,
    assert_dynamics,
    assert_signorini_coulomb,
    box_on_plane,
    ccp_reference,
    force_scale,
    make_contacts,
    nodal_problem,
    ref,
)

SOLVERS = (SolverPGS, SolverAPGD)


def assert_close_to_reference(v, force, lam, v_ref):
    np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * force_scale(lam))
    np.testing.assert_allclose(v, v_ref, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ref).max()))


# --------------------------------------------------------------------------- nodal problems
@pytest.mark.parametrize("seed", range(10))
def test_apgd_matches_ccp_reference(seed):
    system, contacts = nodal_problem(seed)
    lam, v_ref = ccp_reference(system, contacts)
    v, force, iterations, residual = SolverAPGD(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    assert_close_to_reference(v, force, lam, v_ref)
    assert_ccp_optimality(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


@pytest.mark.parametrize("seed", range(3))
def test_apgd_matches_regularized_ccp_reference(seed):
    """With omega I added to G, APGD solves the invertible model (37)."""
    system, contacts = nodal_problem(seed)
    lam, v_ref = ccp_reference(system, contacts, regularization=1e-3)
    v, force, _, residual = SolverAPGD(MODEL, regularization=1e-3, **TIGHT).solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"]
    assert_close_to_reference(v, force, lam, v_ref)
    assert_dynamics(system, contacts, v, force)


@pytest.mark.parametrize("seed", range(10))
def test_pgs_satisfies_signorini_coulomb(seed):
    system, contacts = nodal_problem(seed)
    v, force, iterations, residual = SolverPGS(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    assert_signorini_coulomb(contacts, v, force)
    assert_dynamics(system, contacts, v, force)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("solver", SOLVERS)
def test_frictionless_solution_is_unique_and_shared(solver, seed):
    """With mu = 0 the NCP and the CCP coincide (a convex QP on the nonnegative orthant)."""
    system, contacts = nodal_problem(seed, mu=(0.0, 0.0))
    lam, v_ref = ccp_reference(system, contacts)
    v, force, _, residual = solver(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"]
    assert np.all(force[:, 1:] == 0.0)
    assert_close_to_reference(v, force, lam, v_ref)
    assert_signorini_coulomb(contacts, v, force)


# --------------------------------------------------------------------------- rigid box, real contact points
def rigid_box_check(system, contacts, v, force):
    """(u, clarabel's CCP v) for the box on A_o with J_c on the real contact points; asserts A_o v = b + J^T lambda."""
    jac = contact_jacobian(system.dof_count, contacts).toarray()
    a = system.matrix().toarray()
    b = system.rhs()
    jt_lam = jac.T @ force.ravel()
    assert np.abs(a @ v - b - jt_lam).max() <= DYNAMICS_TOL * max(np.abs(b).max(), np.abs(jt_lam).max())
    a_inv_jt = np.linalg.solve(a, jac.T)
    v_free = np.linalg.solve(a, b)
    lam = ref.cone_qp(jac @ a_inv_jt, jac @ v_free + contacts.offset.ravel(), contacts.friction)
    return (jac @ v + contacts.offset.ravel()).reshape(-1, 3), v_free + a_inv_jt @ lam


@pytest.mark.parametrize("solver", SOLVERS)
def test_sliding_spinning_box_on_plane(solver):
    """The box of ``box_on_plane(4)``, with the solver's own A_o (no virtual nodes): APGD's velocity
    equals clarabel's CCP (unique in v; the 12 forces on a 6-DOF body are not), and PGS's contact
    velocities satisfy the Coulomb conditions (it slides with u_n = 0 where the CCP lifts off)."""
    model, state, contacts, _ = box_on_plane(4)
    s = solver(model, **TIGHT)
    system = s.assemble(state, model.control(), contacts, DT)
    assert system.vn_count == 0
    v, force, iterations, residual = s.solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"], f"not converged after {iterations} iterations"
    u, v_ccp = rigid_box_check(system, contacts, v, force)
    mu = contacts.friction[:, 0]
    scale = force_scale(force)
    ut = np.hypot(u[:, 1], u[:, 2])
    assert np.all(force[:, 0] >= 0.0)
    assert np.all(np.hypot(force[:, 1], force[:, 2]) <= mu * force[:, 0] + SCC_TOL * scale)
    assert np.all(ut > SLIDE_THRESHOLD)  # the whole box slides
    np.testing.assert_allclose(force[:, 1:], -(mu * force[:, 0] / ut)[:, None] * u[:, 1:], rtol=0,
                               atol=COULOMB_TOL * scale)
    if solver is SolverAPGD:
        assert np.all(u[:, 0] >= mu * ut - SCC_TOL)
        assert np.all(np.abs(np.einsum("mi,mi->m", force, u)) <= SCC_TOL * scale)  # lambda . u = 0 (28)
        np.testing.assert_allclose(v, v_ccp, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v_ccp).max()))
    else:
        # lambda_n u_n = 0 through u_n = 0: the box stays on the plane, pressing with all four corners
        assert np.all(np.abs(u[:, 0]) <= SCC_TOL)
        assert np.all(force[:, 0] > 0.0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_resting_box_scene_carries_its_weight(solver):
    """The 0.5 kg cube of ``scenes.box_on_plane`` rests for 20 steps: normal forces sum to m g, no sinking."""
    model = box_scene()
    sim = Simulator(model, dt=0.01, solver=solver(model, tolerance=1e-10, max_iterations=10_000))
    weight = BOX_MASS * -float(model.gravity[2])
    for _ in range(20):
        stats = sim.step()
        assert stats.max_penetration < 1e-6
        assert stats.residual < 1e-10
        total = sim.contacts.world_forces()[:, 2].sum()
        assert abs(total - weight) <= 1e-6 * weight, total
    assert np.all(sim.contacts.gap > -1e-6)
    assert abs(sim.state.body_q[0, 2] - BOX_HALF) < 1e-6


# --------------------------------------------------------------------------- conditioning (Table IV)
def gripped_pair(stiffness, mass=0.01, mu=0.5):
    """Two light particles joined by a spring (a "ball"), squeezed by two fixed fingers along x.

    The squeezing mode of the ball has Delassus eigenvalue ~2/(m + 2 dt^2 k), its rigid translation
    ~2/m, so cond(G) ~ 1 + 2 dt^2 k / m grows with the stiffness/mass ratio (the paper's gripped ball).
    """
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_particle((-0.05, 0.0, 0.0), mass=mass)
    builder.add_particle((0.05, 0.0, 0.0), mass=mass)
    builder.add_spring(particle(0), particle(1), stiffness=stiffness, rest_length=0.1, damping=0.0)
    model = builder.finalize()
    pattern = build_pattern(model)
    system = assemble(model, pattern, model.state(), model.control(), DT)
    left = np.eye(3)
    right = np.diag([-1.0, -1.0, 1.0])  # normal -x, a proper rotation
    contacts = make_contacts(pattern, [0, 3], [-1, -1], np.array([left, right]), [[mu, mu], [mu, mu]],
                             np.array([[-0.01, 0.05, 0.0], [-0.01, 0.0, 0.02]]))
    return system, contacts


def test_iterations_grow_with_stiffness_to_mass_ratio():
    """PGS sweeps grow roughly with cond(G) on the gripped pair and stay few when it is well conditioned;
    APGD grows too, but slower (Nesterov: ~sqrt(cond)). A sanity check of Table IV, not a timing."""
    counts = {}
    for stiffness in (10.0, 1e5):
        system, contacts = gripped_pair(stiffness)
        lam, _ = ccp_reference(system, contacts)
        for solver in SOLVERS:
            v, force, iterations, residual = solver(MODEL, **TIGHT).solve(system, contacts, DT)
            assert residual < TIGHT["tolerance"]
            counts[solver.name, stiffness] = iterations
            if solver is SolverAPGD:
                np.testing.assert_allclose(force, lam, rtol=0, atol=FORCE_TOL * force_scale(lam))
            else:
                assert_signorini_coulomb(contacts, v, force)
    assert counts["pgs", 10.0] <= 20
    assert counts["pgs", 1e5] >= 20 * counts["pgs", 10.0]
    assert counts["apgd", 1e5] > counts["apgd", 10.0]
    assert counts["apgd", 1e5] < counts["pgs", 1e5]


# --------------------------------------------------------------------------- options, determinism
@pytest.mark.parametrize("solver, option, value", [
    (SolverPGS, "relaxation", 0.0), (SolverPGS, "relaxation", 2.0), (SolverPGS, "relaxation", "fast"),
    (SolverPGS, "tolerance", -1.0), (SolverAPGD, "step_decay", 0.0), (SolverAPGD, "step_decay", 1.5),
    (SolverAPGD, "restart", "yes"), (SolverAPGD, "max_iterations", 0), (SolverAPGD, "regularization", -1e-3),
])
def test_bad_options_raise_model_error(solver, option, value):
    with pytest.raises(ModelError, match=option):
        solver(MODEL, **{option: value})


def test_apgd_rejects_anisotropic_friction():
    system, contacts = nodal_problem(0, anisotropic=True)
    with pytest.raises(ModelError, match="anisotropic"):
        SolverAPGD(MODEL).solve(system, contacts, DT)


def test_pgs_handles_anisotropic_friction():
    """The disc becomes the ellipse (mu1 lambda_n, mu2 lambda_n): the NCP's sticking/sliding split still holds."""
    system, contacts = nodal_problem(1, anisotropic=True)
    v, force, _, residual = SolverPGS(MODEL, **TIGHT).solve(system, contacts, DT)
    assert residual < TIGHT["tolerance"]
    t1, t2 = force[:, 1] / np.maximum(contacts.friction[:, 0], 1e-300), force[:, 2] / np.maximum(
        contacts.friction[:, 1], 1e-300)
    assert np.all(np.hypot(t1, t2) <= force[:, 0] * (1 + 1e-9) + SCC_TOL)
    assert_dynamics(system, contacts, v, force)


@pytest.mark.parametrize("solver", SOLVERS)
def test_same_input_gives_bit_identical_output(solver):
    system, contacts = nodal_problem(7)
    v1, f1, i1, r1 = solver(MODEL, tolerance=1e-10).solve(system, contacts, DT)
    v2, f2, i2, r2 = solver(MODEL, tolerance=1e-10).solve(system, contacts, DT)
    assert (i1, r1) == (i2, r2)
    assert np.array_equal(v1, v2) and np.array_equal(f1, f2)


@pytest.mark.parametrize("solver", SOLVERS)
def test_warm_start_shortens_the_same_step(solver):
    system, contacts = nodal_problem(4)
    s = solver(MODEL, **TIGHT)
    _, f1, i1, _ = s.solve(system, contacts, DT)
    _, f2, i2, _ = s.solve(system, contacts, DT)
    assert i2 < i1
    np.testing.assert_allclose(f2, f1, rtol=0, atol=FORCE_TOL * force_scale(f1))
