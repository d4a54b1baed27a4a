"""PGS: the projected Gauss-Seidel impulse-space baseline of the COND paper (Sec. V-C1, ref. [17]).

The update rule is Hwangbo, Lee & Hutter (``shared/papers``, per-contact iteration), eq. (17)-(18),
which the paper compares with its bisection solver:

    lambda_n <- max(0, lambda_n - r_n u_n),                         r_n = alpha / G_ii(nn)
    lambda_t <- proj_disc(mu lambda_n)(lambda_t - r_t u_t),         r_t = alpha / max(G_ii(t1t1), G_ii(t2t2))

contact by contact, with u = G lambda + u_free kept current after every scalar update. A fixed point
satisfies the Signorini-Coulomb conditions (11) exactly: lambda_n = max(0, lambda_n - r_n u_n) is the
normal complementarity, and lambda_t = proj(lambda_t - r_t u_t) puts -u_t in the normal cone of the
friction disc at lambda_t, i.e. maximum dissipation. So PGS solves the Coulomb NCP, not the CCP
relaxation (36) that APGD and COND's proximal operator solve.
"""
from __future__ import annotations

import numpy as np

from ...jit import kernel
from ...validate import ModelError, scalar
from ..friction_cone import project_strict
from .impulse_base import ImpulseSolverBase
from .operator import ContactProblem, contact_velocity_at, velocity_change_norm


@kernel
def _add_column(delassus, column, change, u):
    """u += G[:, column] * change (G is symmetric, so the row is read: contiguous in memory)."""
    if change != 0.0:
        for r in range(u.shape[0]):
            u[r] += delassus[column, r] * change


@kernel
def projected_gauss_seidel(delassus, free_velocity, friction, response, relaxation, tolerance, max_iterations,
                           lam):
    """Sweeps of eq. (17)-(18) over the contacts until ||X (lambda^{l+1} - lambda^l)|| < tolerance.

    ``lam`` (3 m,) is the start and receives the result; returns (sweeps, residual of the last sweep).
    """
    size = lam.shape[0]
    m = size // 3
    u = contact_velocity_at(delassus, free_velocity, lam)
    r_n = np.empty(m)
    r_t = np.empty(m)
    for i in range(m):
        # a zero diagonal is a direction the contact cannot move (a joint limit's tangents): no update there
        d_n = delassus[3 * i, 3 * i]
        d_t = max(delassus[3 * i + 1, 3 * i + 1], delassus[3 * i + 2, 3 * i + 2])
        r_n[i] = relaxation / d_n if d_n > 0.0 else 0.0
        r_t[i] = relaxation / d_t if d_t > 0.0 else 0.0
    before = np.empty(size)
    change = np.empty(size)
    residual = np.inf
    sweeps = 0
    for sweep in range(max_iterations):
        before[:] = lam
        for i in range(m):
            k = 3 * i
            lam_n = max(0.0, lam[k] - r_n[i] * u[k])
            _add_column(delassus, k, lam_n - lam[k], u)
            lam[k] = lam_n
            # the tangential step sees the normal update through u (scalar Gauss-Seidel within the contact)
            _, t1, t2 = project_strict(lam_n, lam[k + 1] - r_t[i] * u[k + 1], lam[k + 2] - r_t[i] * u[k + 2],
                                       friction[i, 0], friction[i, 1])
            _add_column(delassus, k + 1, t1 - lam[k + 1], u)
            _add_column(delassus, k + 2, t2 - lam[k + 2], u)
            lam[k + 1] = t1
            lam[k + 2] = t2
        for j in range(size):
            change[j] = lam[j] - before[j]
        residual = velocity_change_norm(response, change)
        sweeps = sweep + 1
        if residual < tolerance:
            break
    return sweeps, residual


class SolverPGS(ImpulseSolverBase):
    """Projected Gauss-Seidel on the Delassus operator (the paper's PGS baseline, Sec. V-C1).

    One iteration is one sweep over all contacts (normal, then tangential, per contact); the residual is
    the sweep's force change mapped to velocity space, ||X (lambda^{l+1} - lambda^l)||.

    How this maps Hwangbo et al.'s PGS onto our contact model: their v_i is our contact velocity
    u_i = (G lambda + u_free)_i, which includes the offset phi (the Baumgarte-like term of eq. (2)); their
    disc radius mu lambda_z is the cone cross-section, and an anisotropic cone (mu1 != mu2) becomes the
    Euclidean projection onto the ellipse (``project_strict``), whose fixed point is still maximum
    dissipation over that ellipse.

    Args:
        relaxation: alpha in r_n = alpha / G_ii(nn), r_t = alpha / max(G_ii(t1t1), G_ii(t2t2)), in (0, 2).
            Default 1.0: the normal update is then the exact scalar Gauss-Seidel solve of its row (the
            classic PGS of Bullet/ODE), and the tangential step is at most the exact one. Hwangbo et al.
            used a constant 0.6 for robustness on articulated robots; on the nodal test problems 1.0
            converged every time and 0.6 took 1.7 to 4 times as many sweeps.
        tolerance, max_iterations, regularization, warm_start: see :class:`ImpulseSolverBase`.

    Limitations:
        No convergence guarantee with friction (the NCP may have several solutions); iterations grow
        with the condition number of G (the paper's Table IV: a stiff ball gripped from two sides).
    """

    name = "pgs"

    def __init__(self, model, *, relaxation=1.0, tolerance=1e-8, max_iterations=1000, regularization=0.0,
                 warm_start=True):
        self.relaxation = scalar("relaxation", relaxation, low=0.0, low_open=True, high=2.0)
        if self.relaxation >= 2.0:
            raise ModelError(f"relaxation: must be < 2 (Gauss-Seidel diverges beyond), got {self.relaxation}")
        super().__init__(model, tolerance=tolerance, max_iterations=max_iterations, regularization=regularization,
                         warm_start=warm_start)

    def solve_contacts(self, problem: ContactProblem, force: np.ndarray):
        lam = np.ascontiguousarray(force, dtype=float).reshape(-1).copy()
        iterations, residual = projected_gauss_seidel(
            problem.delassus, problem.free_velocity, np.ascontiguousarray(problem.friction, dtype=float),
            np.ascontiguousarray(problem.impulse_response), self.relaxation, self.tolerance, self.max_iterations,
            lam)
        return lam.reshape(-1, 3), int(iterations), float(residual)
