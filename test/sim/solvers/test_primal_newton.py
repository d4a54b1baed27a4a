"""The primal Newton solver against the shared references: clarabel's CCP, the Signorini-Coulomb
conditions, a dense Hessian, and a box that must carry its weight."""
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from cond_ros.sim.solvers.cond.fixed_point import contact_velocities
from cond_ros.sim.solvers.cond.solver import SolverCOND
from cond_ros.sim.solvers.delassus.operator import contact_jacobian
from cond_ros.sim.solvers.primal_newton import SolverPrimalNewton, contact_columns, fill_hessian, hessian_pattern
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from solver_problems import MODEL  # noqa: E402
from solver_problems import (  # noqa: E402
    DT,
    FORCE_TOL,
    VELOCITY_TOL,
    assert_bit_identical_runs,
    assert_box_rests_with_its_weight,
    assert_dynamics,
    assert_warm_start_converges_at_once,
    ccp_reference,
    dense,
    force_scale,
    nodal_problem,
)

CONVERGED = dict(tolerance=1e-11, max_iterations=300)


def converged_solve(system, contacts, **options):
    solver = SolverPrimalNewton(MODEL, **{**CONVERGED, **options})
    v, force, iterations, residual = solver.solve(system, contacts, DT)
    assert iterations < solver.max_iterations and residual <= solver.tolerance
    return v, force, iterations


def strict_law(u, friction, omega):
    """lambda = project_strict(-u / omega) written out: lambda_n = max(0, -u_n / omega), lambda_t = -u_t / omega
    clipped to the disk of radius mu lambda_n."""
    y = -u / omega
    normal = np.maximum(y[:, 0], 0.0)
    norm_t = np.hypot(y[:, 1], y[:, 2])
    scale = np.minimum(1.0, friction[:, 0] * normal / np.maximum(norm_t, 1e-300))
    return np.column_stack([normal, y[:, 1:] * scale[:, None]])


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("omega", [1e-4, 1e-6])
def test_strict_solves_the_compliant_signorini_coulomb_law_and_the_dynamics(seed, omega):
    """Both halves of the step: A v = b + J^T lambda, and lambda is the strict law at the solved velocity. The
    same problem is COND's with ``regularization`` omega, which V-FPI solves by a different route."""
    system, contacts = nodal_problem(seed)
    v, force, _ = converged_solve(system, contacts, regularization=omega, relative_regularization=0.0,
                                  relative_friction_regularization=0.0)
    assert_dynamics(system, contacts, v, force)
    u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v)
    # the solver's u and this one are k-term sums rounded differently, each within k eps (|J| |v| + |phi|) of
    # the exact u, which the law divides by omega; the disk radius mu lambda_n passes a normal error on
    _, _, j = dense(system, contacts)
    terms = np.count_nonzero(j, axis=1) + 1
    rounding = terms * np.finfo(float).eps * (np.abs(j) @ np.abs(v) + np.abs(contacts.offset.ravel())) / omega
    bound = 2 * (1.0 + contacts.friction[:, :1]) * rounding.reshape(-1, 3).max(axis=1, keepdims=True)
    assert np.all(np.abs(force - strict_law(u, contacts.friction, omega)) <= bound)
    scale = force_scale(force)
    cond_v, cond_force, _, _ = SolverCOND(MODEL, tolerance=1e-12, max_iterations=200_000,
                                          regularization=omega).solve(system, contacts, DT)
    np.testing.assert_allclose(force, cond_force, rtol=0, atol=FORCE_TOL * scale)
    np.testing.assert_allclose(v, cond_v, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(v).max()))


@pytest.mark.parametrize("seed", range(4))
def test_the_default_compliance_approaches_the_hard_law(seed):
    """With omega one millionth of each contact's Jacobi Delassus estimate, the hard Signorini-Coulomb
    conditions hold to omega lambda (~1e-6 m/s here)."""
    system, contacts = nodal_problem(seed)
    v, force, _ = converged_solve(system, contacts, tolerance=1e-9)  # omega ~ 1e-9: steps have a round-off floor
    u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v)
    assert np.all(u[:, 0] >= -1e-5)
    assert np.all(np.hypot(force[:, 1], force[:, 2]) <= contacts.friction[:, 0] * force[:, 0] * (1 + 1e-12) + 1e-12)
    assert np.all(np.abs(force[:, 0] * u[:, 0]) <= 1e-5 * force_scale(force))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("omega", [1e-6, 1e-3])
def test_proximal_solves_the_regularized_ccp_of_clarabel(seed, omega):
    """projection='proximal' with an absolute omega is problem (37); clarabel solves it on the dense G."""
    system, contacts = nodal_problem(seed)
    v, force, _ = converged_solve(system, contacts, projection="proximal", regularization=omega,
                                  relative_regularization=0.0)
    ref_force, ref_v = ccp_reference(system, contacts, regularization=omega)
    scale = force_scale(ref_force)
    np.testing.assert_allclose(force, ref_force, rtol=0, atol=FORCE_TOL * scale)
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=VELOCITY_TOL * max(1.0, np.abs(ref_v).max()))


@pytest.mark.parametrize("seed", range(4))
def test_hessian_pattern_and_values_match_a_dense_assembly(seed):
    """A + J^T D J from the kernels (upper CSC) against numpy on the dense matrices, D-contacts included (their
    node-node blocks lie outside A's pattern)."""
    system, contacts = nodal_problem(seed, d_fraction=0.8, n_contacts=(4, 6))
    n = system.dof_count
    jac = contact_jacobian(n, contacts)
    ptr, columns, rows = contact_columns(contacts.count, n, jac.indptr.astype(np.int64),
                                         jac.indices.astype(np.int64), jac.data)
    indptr, indices, a_slot, c_ptr, c_slot = hessian_pattern(n, system.indptr, system.indices, ptr, columns)
    rng = np.random.default_rng(seed)
    blocks = rng.normal(size=(contacts.count, 3, 3))
    blocks = blocks @ blocks.transpose(0, 2, 1)  # symmetric PSD, as the solver's
    blocks[0] = 0.0  # an open contact
    data = np.empty(len(indices))
    fill_hessian(system.data, a_slot, ptr, rows, c_ptr, c_slot, blocks, data)
    upper = sp.csc_matrix((data, indices, indptr), shape=(n, n)).toarray()
    a = sp.csr_matrix((system.data, system.indices, system.indptr), shape=(n, n)).toarray()
    j = jac.toarray()
    expected = a + j.T @ sp.block_diag(list(blocks)).toarray() @ j
    np.testing.assert_allclose(upper, np.triu(expected), rtol=0, atol=1e-12 * np.abs(expected).max())


def test_resting_box_carries_its_weight_on_four_redundant_corners():
    assert_box_rests_with_its_weight(lambda model: SolverPrimalNewton(model, tolerance=1e-12))


def test_warm_start_converges_at_once():
    """lambda_n = -u_n / omega_n with omega_n ~3e-9 m/s/N here, so the two solves' forces agree only to the
    roundings of u_n = J_n v + phi_n (a k-term sum: one in each final evaluation and one per iteration of the
    first solve, which updates u instead of recomputing it) over omega_n, ~1e-6 N each; a sliding contact's
    tangential force moves by mu times its normal one."""
    system, contacts = nodal_problem(7)
    solver = SolverPrimalNewton(MODEL, tolerance=1e-8, max_iterations=300)  # above the round-off floor (~1e-9 here)
    # sized on a fresh solver's run: the same bits as the helper's first solve, and ``solver`` stays cold
    v, force, iterations, _ = SolverPrimalNewton(MODEL, tolerance=1e-8, max_iterations=300).solve(system, contacts, DT)
    a, _, j = dense(system, contacts)
    normal = j[0::3]
    omega = solver.regularization + solver.relative_regularization * (normal ** 2 @ (1.0 / np.diag(a)))
    terms = np.count_nonzero(normal, axis=1) + 1
    rounding = terms * np.finfo(float).eps * (np.abs(normal) @ np.abs(v) + np.abs(contacts.offset[:, 0])) / omega
    bound = (iterations + 2) * (1.0 + contacts.friction[:, 0]) * rounding
    assert_warm_start_converges_at_once(solver, system, contacts, force_tol=bound.max() / force_scale(force))


def test_same_input_gives_bit_identical_output():
    assert_bit_identical_runs(lambda: SolverPrimalNewton(MODEL, tolerance=1e-10), *nodal_problem(3))


def test_anisotropic_friction_is_refused_by_name():
    system, contacts = nodal_problem(1, anisotropic=True)
    with pytest.raises(ModelError, match="anisotropic"):
        SolverPrimalNewton(MODEL).solve(system, contacts, DT)


@pytest.mark.parametrize("option, value", [
    ("projection", "exact"), ("tolerance", 0.0), ("max_iterations", 0), ("regularization", -1.0),
    ("relative_regularization", -1e-6), ("relative_friction_regularization", -1.0), ("min_bound_relaxation", 0.0),
    ("min_bound_relaxation", 1.5),
])
def test_bad_options_raise_model_error_naming_the_option(option, value):
    with pytest.raises(ModelError, match=option):
        SolverPrimalNewton(MODEL, **{option: value})


def test_zero_compliance_is_refused_with_the_reason():
    with pytest.raises(ModelError, match="Hessian"):
        SolverPrimalNewton(MODEL, regularization=0.0, relative_regularization=0.0)
    with pytest.raises(ModelError, match="Hessian"):
        SolverPrimalNewton(MODEL, regularization=0.0, relative_friction_regularization=0.0)
