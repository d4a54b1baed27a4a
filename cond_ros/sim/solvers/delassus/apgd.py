"""APGD: the accelerated projected gradient descent baseline of the COND paper (Sec. V-C1, ref. [28]).

Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate multibody dynamics with friction
and contact", ACM TOG 34(3), 2015, Algorithm APGD: Nesterov's accelerated projected gradient on the
cone complementarity problem (the paper's CCP (36))

    min_lambda  f(lambda) = 1/2 lambda^T G lambda + lambda^T u_free,   lambda_m in the cone K_m,

with a backtracking estimate of the Lipschitz constant L of grad f = G lambda + u_free (doubled until
the quadratic upper bound holds, shrunk by 0.9 after every iteration) and the adaptive (gradient)
restart of O'Donoghue & Candes. The projection is the Euclidean one onto the isotropic Coulomb cone
(``project_proximal``), so the fixed point is the KKT point of the CCP: the relaxed Signorini-Coulomb
conditions (28), the same answer as COND with the proximal operator.
"""
from __future__ import annotations

import numpy as np

from ...jit import kernel
from ...linalg import dot
from ...validate import ModelError, scalar
from ..base import require_isotropic_friction
from ..friction_cone import project_proximal
from .impulse_base import ImpulseSolverBase
from .operator import ContactProblem, velocity_change_norm

MAX_BACKTRACKS = 64  # doublings of L per iteration: 2^64 covers any scale of G from a positive start


@kernel
def _matvec(matrix, x, out):
    """out = matrix @ x in a fixed summation order (bit-reproducible)."""
    n = matrix.shape[0]
    for r in range(n):
        acc = 0.0
        for c in range(x.shape[0]):
            acc += matrix[r, c] * x[c]
        out[r] = acc


DEFAULT_STEP_DECAY = 0.9  # Mazhar et al.'s L <- 0.9 L after each iteration


@kernel
def _project(x, mu, out):
    """out = Pi_K(x): each contact's triple onto its isotropic cone (Euclidean)."""
    for i in range(mu.shape[0]):
        k = 3 * i
        out[k], out[k + 1], out[k + 2] = project_proximal(x[k], x[k + 1], x[k + 2], mu[i])


@kernel
def accelerated_projected_gradient(delassus, free_velocity, mu, response, step_decay, restart, tolerance,
                                   max_iterations, lam):
    """Algorithm APGD of Mazhar et al. (2015) until ||X (lambda^{l+1} - lambda^l)|| < tolerance.

    ``lam`` (3 m,) is the start (projected onto the cones first) and receives the result; returns
    (iterations, residual of the last iteration).
    """
    size = lam.shape[0]
    gamma = np.empty(size)
    _project(lam, mu, gamma)
    g_gamma = np.empty(size)  # G gamma, kept exact: recomputed from gamma every iteration
    _matvec(delassus, gamma, g_gamma)
    y = gamma.copy()
    g_y = g_gamma.copy()  # G y, a linear combination of fresh products (no drift)
    new = np.empty(size)
    g_new = np.empty(size)
    trial = np.empty(size)
    grad = np.empty(size)
    step = np.empty(size)
    # L_0 = ||G d|| / ||d|| along d = (1, ..., 1) (their initial guess; a lower estimate of the
    # largest eigenvalue, raised by backtracking where it is too small)
    ones = np.ones(size)
    _matvec(delassus, ones, trial)
    lipschitz = np.sqrt(dot(trial, trial) / size)
    if not lipschitz > 0.0:
        lipschitz = 0.0
        for j in range(size):
            lipschitz = max(lipschitz, delassus[j, j])
        if not lipschitz > 0.0:
            lipschitz = 1.0
    theta = 1.0
    residual = np.inf
    iterations = 0
    for it in range(max_iterations):
        for j in range(size):
            grad[j] = g_y[j] + free_velocity[j]
        for _ in range(MAX_BACKTRACKS):
            t = 1.0 / lipschitz
            for j in range(size):
                trial[j] = y[j] - t * grad[j]
            _project(trial, mu, new)
            _matvec(delassus, new, g_new)
            # f(new) <= f(y) + grad.(new - y) + L/2 ||new - y||^2, written exactly for the quadratic f
            # as (new - y)^T G (new - y) <= L ||new - y||^2, which round-off cannot break near the solution
            curvature = 0.0
            length = 0.0
            for j in range(size):
                d = new[j] - y[j]
                curvature += d * (g_new[j] - g_y[j])
                length += d * d
            if curvature <= lipschitz * length:
                break
            lipschitz *= 2.0
        theta_next = 0.5 * (-theta * theta + theta * np.sqrt(theta * theta + 4.0))
        beta = theta * (1.0 - theta) / (theta * theta + theta_next)
        for j in range(size):
            step[j] = new[j] - gamma[j]
        residual = velocity_change_norm(response, step)
        # gradient restart: the step goes uphill along grad f(y), so the momentum is dropped
        if restart and dot(grad, step) > 0.0:
            beta = 0.0
            theta_next = 1.0
        for j in range(size):
            y[j] = new[j] + beta * step[j]
            g_y[j] = g_new[j] + beta * (g_new[j] - g_gamma[j])
            gamma[j] = new[j]
            g_gamma[j] = g_new[j]
        theta = theta_next
        lipschitz *= step_decay
        iterations = it + 1
        if residual < tolerance:
            break
    lam[:] = gamma
    return iterations, residual


class SolverAPGD(ImpulseSolverBase):
    """Nesterov-accelerated projected gradient descent on the CCP (the paper's APGD baseline, Sec. V-C1).

    Update per iteration l (Mazhar et al. 2015), from gamma^0 = Pi_K(lambda^0), y^0 = gamma^0, theta_0 = 1:

        g = G y^l + u_free
        gamma^{l+1} = Pi_K(y^l - g / L), doubling L while (gamma - y)^T G (gamma - y) > L ||gamma - y||^2
        theta_{l+1} = (-theta_l^2 + theta_l sqrt(theta_l^2 + 4)) / 2
        beta = theta_l (1 - theta_l) / (theta_l^2 + theta_{l+1})
        y^{l+1} = gamma^{l+1} + beta (gamma^{l+1} - gamma^l)
        restart (beta = 0, theta_{l+1} = 1) when g . (gamma^{l+1} - gamma^l) > 0
        L <- step_decay L

    The residual is ||X (gamma^{l+1} - gamma^l)|| and the last iterate is returned (Mazhar et al.
    return the iterate of least residual in their own measure; with the iterate-change residual the
    last one is the natural answer).

    Args:
        step_decay: the factor shrinking L (growing the step) after each iteration, in (0, 1]; 0.9 as
            in Mazhar et al.; 1.0 keeps L monotone.
        restart: adaptive gradient restart of the momentum.
        tolerance, max_iterations, regularization, warm_start: see :class:`ImpulseSolverBase`.

    Limitations:
        Isotropic friction only (mu1 == mu2): the Euclidean projection onto an elliptic cone is not
        implemented. Solves the convex relaxation: a sliding contact separates at u_n = mu ||u_t|| (28).
    """

    name = "apgd"

    def __init__(self, model, *, step_decay=DEFAULT_STEP_DECAY, restart=True, tolerance=1e-8, max_iterations=1000,
                 regularization=0.0, warm_start=True):
        self.step_decay = scalar("step_decay", step_decay, low=0.0, low_open=True, high=1.0)
        if not isinstance(restart, (bool, np.bool_)):
            raise ModelError(f"restart: expected True or False, got {restart!r}")
        self.restart = bool(restart)
        super().__init__(model, tolerance=tolerance, max_iterations=max_iterations, regularization=regularization,
                         warm_start=warm_start)

    def solve_contacts(self, problem: ContactProblem, force: np.ndarray):
        friction = problem.friction
        require_isotropic_friction(friction, "SolverAPGD", "the projection is onto the isotropic cone only")
        lam = np.ascontiguousarray(force, dtype=float).reshape(-1).copy()
        iterations, residual = accelerated_projected_gradient(
            problem.delassus, problem.free_velocity, np.ascontiguousarray(friction[:, 0], dtype=float),
            np.ascontiguousarray(problem.impulse_response), self.step_decay, self.restart, self.tolerance,
            self.max_iterations, lam)
        return lam.reshape(-1, 3), int(iterations), float(residual)
