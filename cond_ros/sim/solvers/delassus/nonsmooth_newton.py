"""Newton: the non-smooth Newton contact solver of Macklin et al. (ACM TOG 38(5) 2019, ``shared/papers``).

The paper solves the implicit step for (velocity, lambda) with a semismooth Newton method: the contact
conditions are written as NCP functions, each Newton step is reduced by a Schur complement to the
"compliance form" [J H^-1 J^T + C] d_lambda = rhs (59), which preconditioned conjugate residual (PCR)
solves matrix-free (Sec. 2.6), and the step is damped by a constant t = 0.75 (Sec. 8.1).

How this maps the paper's method onto our contact model: our step is linear in the velocity, so the
velocity unknowns are eliminated once and for all by the Delassus operator; u = G lambda + u_free with
G = J_c A^-1 J_c^T (+ omega I). The paper's Schur matrix J H^-1 J^T is then exactly our G (H = A: the
step's system matrix, with no geometric stiffness because A does not change within a step), and its
C is the diagonal that the NCP functions contribute. Newton runs on lambda alone:

- normal, per contact (eq. 28, 93-95): phi_n = phi_FB(u_n, r_n lambda_n), phi_FB(a, b) = a + b - sqrt(a^2 + b^2),
  with generalized derivatives alpha = 1 - a/s, beta = 1 - b/s (s = sqrt(a^2 + b^2)) and the paper's
  choice alpha = 0, beta = 1 at the kink (26-27). Its Jacobian row is alpha G_n + r_n beta e_n; dividing
  the row by alpha gives the symmetric row G_n + (r_n beta / alpha) e_n, which is the paper's
  J_n H^-1 J_n^T + S/h^2 up to the row scale (the paper instead scales both J_n and J_n^T by alpha, which
  agrees at solutions). A row with alpha ~ 0 (open, lambda_n ~ 0, or the kink) is the decoupled
  r_n beta d_lambda_n = -phi_n.
- friction, per contact with mu lambda_n > 0 (eq. 31-37, 99-104): phi_f = u_t + W lambda_t with the FB
  friction compliance W = r_t (sqrt(v^2 + r_t^2 s^2) - r_t s) / (v + r_t mu lambda_n - sqrt(v^2 + r_t^2 s^2)),
  v = ||u_t||, s = mu lambda_n - ||lambda_t||, held constant in the Jacobian G_t + W I (37). (104) prints
  v^2 in the denominator; the algebra of (101) gives v (the notes' erratum), used here. The 0/0 at
  v = 0, lambda_t = 0 is W = 0 (stick); outside the cone a vanishing denominator is floored so W stays a
  large finite penalty. A contact with mu lambda_n <= 0 gets the rows phi_f = lambda_t (the paper's
  "W = 1, J_f zeroed"), decoupled. Isotropic friction only: mu = mu1 (mu2 is ignored).
- complementarity preconditioner (Sec. 7, eq. 66): r = the diagonal effective-mass term of the Schur
  matrix. The paper's r = h^2 [J M^-1 J^T]_ii (normal, position level) and h [J M^-1 J^T]_ii (friction,
  velocity level) both become G_ii here, since our normal rows are velocity-level as well and G carries
  the one factor h (A ~ M / h): r_n = G_nn, r_t = (G_t1t1 + G_t2t2) / 2 (one r for the isotropic pair).
  G_ii has the units of u / lambda [m/(N s)], so r lambda_n is a velocity like u_n. (Scaling u_n by
  1 / G_nn instead is the same: phi_FB is positively homogeneous, so only the row's scale differs.)

The Newton direction solves (G_cc + C) d_c = -phi_c / scale_c - G_cd d_d over the coupled rows c, with
the decoupled rows d solved first; the matrix is symmetric positive semidefinite (C >= 0), and PCR with
a Jacobi preconditioner solves it matrix-free with the dense G, after the paper's epsilon shift (Sec. 8.4;
here relative, shift * G_ii, on the matrix only) that keeps redundant contacts from producing huge steps.
Not in the paper: t is halved when the Newton steps stall (a period-2 cycle of the frozen-W friction
iteration; ``damping_patience``). Iterations are Newton iterations; the
residual is ||X (lambda^{l+1} - lambda^l)|| (the shared convention), the total PCR iterations of the last
solve are ``last_linear_iterations``. Fixed points of the iteration satisfy the Signorini-Coulomb
conditions exactly (FB roots are complementarity, W's fixed points are stick or slip on the cone).
"""
from __future__ import annotations

import numpy as np

from ...jit import kernel
from ...validate import ModelError, non_negative, scalar
from ..friction_cone import project_strict
from .impulse_base import ImpulseSolverBase
from .operator import ContactProblem, velocity_change_norm

#: a normal row with alpha below this is decoupled (its coupling to G is below round-off of its diagonal)
ALPHA_MIN = 1e-12
#: the friction compliance's denominator (r times the fixed-point friction magnitude) is at least this
#: fraction of r mu lambda_n: outside the cone (99-104) can make it vanish or turn negative
W_DENOMINATOR_FLOOR = 1e-6


@kernel
def fischer_burmeister(a, b):
    """(phi, alpha, beta): phi_FB(a, b) = a + b - sqrt(a^2 + b^2) (23) and its derivatives (24-27).

    The cancelling forms are rewritten (a + b - s = 2ab / (a + b + s), 1 - a/s = b^2 / (s (s + a))) so that
    phi keeps full relative precision when one argument is much smaller than the other: an open contact
    with lambda_n = 1e-20 must still see phi ~ r lambda_n, not 0. At (0, 0): alpha = 0, beta = 1 (26-27).
    """
    s = np.hypot(a, b)
    if s == 0.0:
        return 0.0, 0.0, 1.0
    if a + b > 0.0:
        phi = 2.0 * a * b / (a + b + s)
    else:
        phi = a + b - s
    alpha = b * b / (s * (s + a)) if a > 0.0 else 1.0 - a / s
    beta = a * a / (s * (s + b)) if b > 0.0 else 1.0 - b / s
    return phi, alpha, beta


@kernel
def friction_compliance(v, lam_t, mu_lam_n, r):
    """W_FB of (103-104) for slip speed v = ||u_t||, friction magnitude lam_t = ||lambda_t||, bound mu lambda_n > 0.

    W = v' / |lambda_f|' with the FB fixed-point targets v' = sqrt(v^2 + r^2 s^2) - r s and
    r |lambda_f|' = v + r mu lambda_n - sqrt(v^2 + r^2 s^2), s = mu lambda_n - lam_t. Inside the cone (s >= 0)
    v' = v^2 / (sqrt(..) + r s) avoids cancellation and r |lambda_f|' = v - v' + r lam_t >= 0; v = 0 gives
    W = 0 (stick, the 0/0 guard). Outside the cone the denominator is floored (W_DENOMINATOR_FLOOR).
    """
    s = mu_lam_n - lam_t
    root = np.hypot(v, r * s)
    if s >= 0.0:
        if v == 0.0:
            return 0.0
        speed = v * v / (root + r * s)
        numerator = r * speed
        denominator = v - speed + r * lam_t
    else:
        numerator = r * (root - r * s)
        denominator = v + r * mu_lam_n - root
    denominator = max(denominator, W_DENOMINATOR_FLOOR * r * mu_lam_n)
    return numerator / denominator


@kernel
def newton_terms(u, lam, mu, r_n, r_t, residual, scale, compliance, coupled):
    """The NCP residual F(lambda) and its generalized Jacobian, per contact (the FB Jacobian assembly).

    Row k of the generalized Jacobian dF/dlambda is scale_k (coupled_k G_k + compliance_k e_k^T), G_k the row of
    G (compliance_k = 1 on a decoupled row, coupled_k = 0). Dividing the coupled rows by their scale and
    keeping the coupled columns gives the symmetric Newton matrix G_cc + diag(compliance_c).
    Writes ``residual``, ``scale``, ``compliance``, ``coupled`` (all (3 m,)).
    """
    for i in range(mu.shape[0]):
        k = 3 * i
        phi, alpha, beta = fischer_burmeister(u[k], r_n[i] * lam[k])
        residual[k] = phi
        if alpha > ALPHA_MIN:
            scale[k] = alpha
            compliance[k] = r_n[i] * beta / alpha
            coupled[k] = 1.0
        else:
            scale[k] = r_n[i] * beta  # beta ~ 1 here: alpha ~ 0 means r_n lambda_n << u_n or the kink
            compliance[k] = 1.0
            coupled[k] = 0.0
        bound = mu[i] * lam[k]
        if bound > 0.0:
            w = friction_compliance(np.hypot(u[k + 1], u[k + 2]), np.hypot(lam[k + 1], lam[k + 2]), bound, r_t[i])
            for j in range(k + 1, k + 3):
                residual[j] = u[j] + w * lam[j]
                scale[j] = 1.0
                compliance[j] = w
                coupled[j] = 1.0
        else:  # inactive friction: phi_f = lambda_t drives the friction force to zero
            for j in range(k + 1, k + 3):
                residual[j] = lam[j]
                scale[j] = 1.0
                compliance[j] = 1.0
                coupled[j] = 0.0


@kernel
def newton_matvec(delassus, coupled, compliance, x, out):
    """out = (Mask G Mask + diag(compliance)) x, Mask = diag(coupled): the Newton matrix, symmetric PSD."""
    n = x.shape[0]
    for i in range(n):
        acc = 0.0
        if coupled[i] != 0.0:
            for j in range(n):
                if coupled[j] != 0.0:
                    acc += delassus[i, j] * x[j]
        out[i] = acc + compliance[i] * x[i]


@kernel
def preconditioned_conjugate_residual(delassus, coupled, compliance, b, x, iterations, tolerance, history):
    """PCR (Saad 2003) with a Jacobi preconditioner P: the paper's linear solver (Sec. 2.6).

    Solves (Mask G Mask + diag(compliance)) x = b from the start ``x`` (updated in place). It minimizes
    ||b - A x||_{P^-1} over the Krylov space, so sqrt(r . P^-1 r), written to ``history[0..]`` (length
    >= iterations + 1 or 0 to skip), never increases; it copes with singular consistent systems (redundant
    contacts). Stops after ``iterations`` steps, when the preconditioned residual has fallen below
    ``tolerance`` times its start (tolerance 0: a fixed count), or on breakdown. Returns the steps taken.
    """
    n = b.shape[0]
    precond = np.empty(n)
    for i in range(n):
        d = coupled[i] * delassus[i, i] + compliance[i]
        precond[i] = d if d > 0.0 else 1.0
    r = np.empty(n)
    newton_matvec(delassus, coupled, compliance, x, r)
    for i in range(n):
        r[i] = b[i] - r[i]
    z = r / precond
    az = np.empty(n)
    newton_matvec(delassus, coupled, compliance, z, az)
    p = z.copy()
    ap = az.copy()
    z_az = 0.0
    r_z = 0.0
    for i in range(n):
        z_az += z[i] * az[i]
        r_z += r[i] * z[i]
    start = np.sqrt(max(r_z, 0.0))
    record = history.shape[0] > 0
    if record:
        history[0] = start
    steps = 0
    for it in range(iterations):
        if z_az <= 0.0 or start == 0.0:
            break  # converged exactly, or z in the null space of A (nothing left to reduce)
        q = ap / precond  # P^-1 A p
        ap_q = 0.0
        for i in range(n):
            ap_q += ap[i] * q[i]
        if ap_q <= 0.0:
            break
        alpha = z_az / ap_q
        for i in range(n):
            x[i] += alpha * p[i]
            r[i] -= alpha * ap[i]
            z[i] -= alpha * q[i]
        newton_matvec(delassus, coupled, compliance, z, az)
        z_az_new = 0.0
        r_z = 0.0
        for i in range(n):
            z_az_new += z[i] * az[i]
            r_z += r[i] * z[i]
        beta = z_az_new / z_az
        z_az = z_az_new
        for i in range(n):
            p[i] = z[i] + beta * p[i]
            ap[i] = az[i] + beta * ap[i]
        steps = it + 1
        norm = np.sqrt(max(r_z, 0.0))
        if record:
            history[steps] = norm
        if norm <= tolerance * start:
            break
    return steps


@kernel
def nonsmooth_newton(delassus, free_velocity, mu, response, r_n, r_t, damping, damping_patience, damping_min, shift,
                     tolerance, max_iterations, linear_iterations, linear_tolerance, lam):
    """Damped non-smooth Newton on F(lambda) = 0 from the start ``lam`` (3 m,), which receives the result.

    Per iteration: u = G lambda + u_free, the FB terms, the decoupled rows' steps, PCR on the coupled rows
    of (G + C + shift diag(G)) d = rhs (the epsilon shift of Sec. 8.4, on the matrix only: the solution
    F(lambda) = 0 is unchanged), lambda += t d. Stops when ||X t d|| <= tolerance.
    Stall guard (not in the paper; damping_patience 0 turns it off): when the undamped step ||X d|| has not
    set a new minimum for ``damping_patience`` iterations, t is halved (not below ``damping_min``); the
    frozen-W friction rows otherwise can cycle with period 2 for ever at t = 0.75.
    Returns (Newton iterations, residual, PCR iterations).
    """
    size = lam.shape[0]
    u = np.empty(size)
    residual_f = np.empty(size)
    scale = np.empty(size)
    compliance = np.empty(size)
    coupled = np.empty(size)
    fixed = np.empty(size)
    rhs = np.empty(size)
    x = np.empty(size)
    step = np.empty(size)
    no_history = np.empty(0)
    residual = np.inf
    iterations = 0
    linear_total = 0
    t = damping
    best = np.inf
    stalled = 0
    for it in range(max_iterations):
        for i in range(size):
            acc = free_velocity[i]
            for j in range(size):
                acc += delassus[i, j] * lam[j]
            u[i] = acc
        newton_terms(u, lam, mu, r_n, r_t, residual_f, scale, compliance, coupled)
        for k in range(size):
            if coupled[k] != 0.0:
                compliance[k] += shift * delassus[k, k]
        for k in range(size):
            fixed[k] = 0.0 if coupled[k] != 0.0 else -residual_f[k] / scale[k]
        for i in range(size):
            if coupled[i] != 0.0:
                acc = -residual_f[i] / scale[i]
                for j in range(size):
                    if coupled[j] == 0.0:
                        acc -= delassus[i, j] * fixed[j]
                rhs[i] = acc
            else:
                rhs[i] = 0.0
            x[i] = 0.0
        linear_total += preconditioned_conjugate_residual(delassus, coupled, compliance, rhs, x, linear_iterations,
                                                          linear_tolerance, no_history)
        for k in range(size):
            step[k] = t * (x[k] if coupled[k] != 0.0 else fixed[k])
            lam[k] += step[k]
        residual = velocity_change_norm(response, step)
        iterations = it + 1
        if residual <= tolerance:
            break
        if damping_patience > 0:
            full = residual / t
            if full < best:
                best = full
                stalled = 0
            else:
                stalled += 1
                if stalled >= damping_patience and t > damping_min:
                    t = max(damping_min, 0.5 * t)
                    stalled = 0
    return iterations, residual, linear_total


@kernel
def project_forces(lam, mu):
    """Into the isotropic cones (``project_strict``): a converged iterate moves by round-off only, but the
    returned forces then satisfy lambda_n >= 0 and ||lambda_t|| <= mu lambda_n exactly."""
    for i in range(mu.shape[0]):
        k = 3 * i
        lam[k], lam[k + 1], lam[k + 2] = project_strict(lam[k], lam[k + 1], lam[k + 2], mu[i], mu[i])


def preconditioner_scales(delassus: np.ndarray):
    """(r_n, r_t) per contact: r_n = G_nn, r_t = (G_t1t1 + G_t2t2) / 2 (the effective-mass rule (66) in our
    units); a contact with no mobility (G_ii = 0, no regularization) falls back to the largest diagonal."""
    diag = np.diagonal(delassus).reshape(-1, 3)
    fallback = float(diag.max()) if diag.size and diag.max() > 0.0 else 1.0
    r_n = np.where(diag[:, 0] > 0.0, diag[:, 0], fallback)
    r_t = 0.5 * (diag[:, 1] + diag[:, 2])
    r_t = np.where(r_t > 0.0, r_t, fallback)
    return np.ascontiguousarray(r_n), np.ascontiguousarray(r_t)


def _count(name: str, value, low: int) -> int:
    """An integer option >= low (a float must be integral), or ModelError naming it."""
    if isinstance(value, float) and not value.is_integer():
        raise ModelError(f"{name}: expected an integer, got {value!r}")
    return int(scalar(name, value, low=low))


class SolverNewton(ImpulseSolverBase):
    """The non-smooth Newton method of Macklin et al. 2019 on the Delassus operator (see the module docstring).

    One iteration is one damped Newton step lambda <- lambda + t d, d from the generalized Jacobian of the
    Fischer-Burmeister normal function and the FB friction compliance (W frozen), solved by Jacobi-PCR
    matrix-free with G (the paper's Schur system [J H^-1 J^T + C], which is G + C here). The residual is
    ||X t d||. Starts from the warm start (the paper starts from zero; the base class gives zeros when
    there is no previous step).

    Args:
        damping: the step length t in (0, 1]; the paper's constant 0.75 (Sec. 8.1; a line search stalled with
            friction there). The iterate then converges at best linearly with rate 1 - t.
        damping_patience: halve t when the undamped step ||X d|| has set no new minimum for this many Newton
            iterations (not in the paper: on random 8-20 contact problems the frozen-W friction iteration
            cycled with period 2 at t = 0.75 in 6 of 50 cases, and this guard made all 50 converge); 0 keeps t
            constant, as in the paper.
        damping_min: the smallest t the guard goes down to.
        linear_iterations: PCR iterations per Newton iteration (cap). The paper uses 10-80 (Table 2).
        linear_tolerance: stop PCR once its preconditioned residual fell by this factor (adaptive, inexact
            Newton); 0 runs exactly ``linear_iterations`` (the paper's fixed count) unless PCR breaks down.
        tolerance: on ||X (lambda^{l+1} - lambda^l)|| [m/s].
        max_iterations: Newton iterations cap per step (the paper: a fixed 4-8 per step, 100 in its studies;
            here a cap: typically 10-50 iterations reach 1e-8).
        shift: the paper's epsilon identity shift of the Newton matrix (Sec. 8.4, epsilon = 1e-6 there), here
            relative to the effective mass, epsilon_i = shift * G_ii, so it is unit-free. It changes only the
            Newton direction, not the solution. Needed with redundant contacts (a box on four corners: G has
            rank 6 of 12): without it PCR amplifies round-off into huge steps in the null space of X = A^-1 J^T,
            which the velocity-space residual cannot see, and the projected result lost the box's weight.
        regularization, warm_start: see :class:`ImpulseSolverBase` (regularization omega changes the contact
            model, G + omega I in the residual too, unlike the shift).

    Attributes:
        last_linear_iterations: PCR iterations summed over the Newton iterations of the last solve.

    Limitations:
        Isotropic friction only (mu1; mu2 is ignored). The frozen-W friction rows make the method a
        quasi-Newton (fixed-point) iteration on friction, so no convergence guarantee with friction; the
        dense G matvec costs O(m^2) per PCR iteration.
    """

    name = "newton"

    def __init__(self, model, *, damping=0.75, damping_patience=10, damping_min=0.1, linear_iterations=50,
                 linear_tolerance=1e-6, shift=1e-6, tolerance=1e-8, max_iterations=500, regularization=0.0,
                 warm_start=True):
        self.damping = scalar("damping", damping, low=0.0, high=1.0, low_open=True)
        self.damping_patience = _count("damping_patience", damping_patience, 0)
        self.damping_min = scalar("damping_min", damping_min, low=0.0, high=1.0, low_open=True)
        self.linear_iterations = _count("linear_iterations", linear_iterations, 1)
        self.linear_tolerance = scalar("linear_tolerance", linear_tolerance, low=0.0, high=1.0)
        self.shift = non_negative("shift", shift)
        self.last_linear_iterations = 0
        super().__init__(model, tolerance=tolerance, max_iterations=max_iterations, regularization=regularization,
                         warm_start=warm_start)

    def solve_contacts(self, problem: ContactProblem, force: np.ndarray):
        delassus = np.ascontiguousarray(problem.delassus)
        mu = np.ascontiguousarray(problem.friction[:, 0], dtype=float)
        r_n, r_t = preconditioner_scales(delassus)
        lam = np.array(force, dtype=float).reshape(-1)
        iterations, residual, linear = nonsmooth_newton(
            delassus, np.ascontiguousarray(problem.free_velocity, dtype=float), mu,
            np.ascontiguousarray(problem.impulse_response), r_n, r_t, self.damping, self.damping_patience,
            min(self.damping_min, self.damping), self.shift, self.tolerance,
            self.max_iterations, self.linear_iterations, self.linear_tolerance, lam)
        self.last_linear_iterations = int(linear)
        project_forces(lam, mu)
        return lam.reshape(-1, 3), int(iterations), float(residual)
