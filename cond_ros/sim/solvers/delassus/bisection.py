"""The per-contact bisection solver of Hwangbo, Lee & Hutter (RA-L 2018, ``shared/papers``), Alg. 1-2.

Nonlinear block Gauss-Seidel over contacts (their Alg. 2) on our contact problem u = G lambda + u_free.
With the other contacts frozen, contact i sees u_i = c_i + W lambda_i, W = G_ii (their M^-1_ii, the
inverse apparent inertia) and c_i = u_i - W lambda_i (their tau*_i plus the frozen coupling); u is kept
up to date incrementally, one 3-column update of G per contact update. Every contact is solved exactly
in its own 3 x 3 problem:

- opening (c_n > 0): lambda* = 0;
- sticking (lambda^{v=0} = -W^-1 c inside the exact cone, mu lambda^{v=0}_n >= ||lambda^{v=0}_t||):
  lambda* = lambda^{v=0} (u_i = 0);
- slipping: lambda* is the point of the conic section C = {u_n = 0, ||lambda_t|| = mu lambda_n} nearest
  to lambda^{v=0} in the metric W, their (12): E = 1/2 (W^-1 c + lambda)^T W (W^-1 c + lambda)
  = 1/2 u^T W^-1 u, with dE/dlambda = u. Their Alg. 1: C is parametrized
  by the polar angle theta of lambda_t, r(theta) = -c_n / (W_nn/mu + W_nt1 cos + W_nt2 sin) (14),
  lambda_n = r/mu (equal to (13) on C); the start theta^0 = atan2(lambda^{v=0}_t2, lambda^{v=0}_t1)
  (their E_C projection); steps of beta1 rad against the sign of dE/dtheta, shrunk by beta2 and undone
  when a trial point leaves the line of sight of lambda^{v=0} or has r < 0, grown by beta3 while the
  sign is unchanged; then bisection on theta until the impulse interval ||lambda^p - lambda|| <= gamma
  ||lambda||. The sign of dE/dtheta uses their hybrid form (15)-(16): u on C has u_n = 0 and
  u_t = Mbar lambda_t + cbar, and eta (oriented along increasing theta) has the tangential part
  D e_theta - D' e_r, D = W_nn/mu + W_nt . e_r (a positive multiple of d lambda_t / d theta).

Each contact then moves lambda_i <- alpha lambda* + (1 - alpha) lambda_i, and after each sweep
alpha <- alpha_min + decay (alpha - alpha_min) (their "over-relaxation": alpha <= 1, under-relaxation).

How the paper's method maps onto our contact model:

- Friction model. Their model (8) is Preclik's maximal dissipation per contact: in the slipping case
  lambda minimizes the post-step kinetic energy ||u||^2_{W^-1} on C. Its stationarity condition gives
  u_t = -2b (lambda_t + mu^2 lambda_n W_tn / W_nn) (b >= 0), so u_t is exactly opposite to lambda_t (the
  Coulomb law lambda_t = -mu lambda_n u_t/||u_t|| of our Signorini-Coulomb conditions) only when the
  normal-tangent coupling W_tn of the contact vanishes. The paper says the two models differ (their
  Fig. 6: < 1 % in 99.6 % of samples on ANYmal; on a sliding box here the total friction comes out
  0.3 % below mu m g, with a spurious yaw). ``friction_model="coulomb"`` (default, so that the solver
  solves the same problem as the others: our Signorini-Coulomb model) runs Alg. 1 for the model-(8)
  angle and then the same bracketing-and-bisection on theta with the sign of the Coulomb
  misalignment g(theta) = e_r x u_t instead of dE/dtheta, started there (u_t is nearly antiparallel
  to lambda_t at that angle): at convergence the iterate satisfies the Signorini-Coulomb conditions
  exactly. ``friction_model="max_dissipation"`` is the paper's model (8) as published (one bisection).
- Line of sight: Alg. 1 line 13 prints grad h2 . (lambda - lambda^{v=0}) < 0 as the rejection test;
  with grad h2 the outward cone normal that rejects the always-visible start point, so the sign is
  flipped here (see :func:`_visible`). The Coulomb stage has no such globality test: where the
  single-contact Coulomb problem has several solutions on C it returns the one reached from the
  model-(8) angle.
- mu = 0 (C is one point, (14) divides by mu) and c_n = 0 (C is the apex) are solved in closed form.
- Friction is isotropic: mu = mu1 (a ModelError for mu1 != mu2).
- lambda is a force [N] (the mean over the step), not an impulse [N s]; so gamma is relative.
- Stopping rule. The paper stops when the summed "exact violations of the physical constraints" fall
  below 1e-6 (N s or m/s). Because every local solve is exact, a contact violates its conditions at the
  current iterate only through the coupling that moved since its last solve, i.e. through
  lambda*_i - lambda_i, which is the sweep's update divided by alpha. We use the shared residual
  ||X (lambda^{l+1} - lambda^l)|| (X = A^-1 J_c^T, COND's theta): the velocity that update makes, so the
  same violation measured in velocity space with COND's tolerance.
- Degenerate W (their footnote 2: a point locked in some direction). If W has no positive eigenvalue
  above LOCKED_RELATIVE of the largest diagonal entry of G, the contact cannot act on anything and keeps
  lambda = 0. If W is rank deficient (lambda_min <= SINGULAR_RELATIVE lambda_max), the local problem
  uses W + SINGULAR_RELATIVE lambda_max I: the locked direction gets the force of a very stiff spring,
  finite and without NaN; the global u is still updated with the true G.

Choices not given in the paper (documented defaults): beta1 = 0.05 rad (the start is usually close,
"converges in just two steps"), beta2 = 0.5 (halve a rejected step), beta3 = 2 (double an accepted step
without a sign change), |step| <= pi/4 (a step cannot jump across the invisible arc), and
gamma = 1e-13 relative (far below the outer tolerance; bisection also stops when theta is exhausted in
double precision or after MAX_BISECTION halvings).
"""
from __future__ import annotations

import numpy as np

from ...jit import kernel
from ...validate import ModelError, positive, scalar
from ..base import require_isotropic_friction
from .impulse_base import ImpulseSolverBase
from .operator import ContactProblem, contact_velocity_at, velocity_change_norm

FRICTION_MODELS = {"max_dissipation": 0, "coulomb": 1}
MAX_DISSIPATION = 0
COULOMB = 1

MAX_BRACKETING = 200  # bracketing steps of Alg. 1 (each halving or doubling the step)
MAX_BISECTION = 100  # theta intervals below 2^-100 rad are exhausted long before
MAX_STEP = 0.25 * np.pi  # [rad] largest bracketing step
SINGULAR_RELATIVE = 1e-10  # W is treated as rank deficient below this eigenvalue ratio
LOCKED_RELATIVE = 1e-14  # a contact whose W is this small against max diag(G) cannot act

MODE_OPEN = 0
MODE_STICK = 1
MODE_SLIP = 2


@kernel
def _slip_point(theta, c_n, w, mu, out):
    """The point of C at angle theta into ``out`` (n, t1, t2); returns D(theta) (r > 0 needs D > 0)."""
    cos_t = np.cos(theta)
    sin_t = np.sin(theta)
    d = w[0, 0] / mu + w[0, 1] * cos_t + w[0, 2] * sin_t
    if d <= 0.0:
        return d
    r = -c_n / d  # (14)
    out[0] = r / mu  # on C this equals (13)
    out[1] = r * cos_t
    out[2] = r * sin_t
    return d


@kernel
def _slip_sign(theta, d, lam, w, mbar, cbar, mode):
    """dE/dtheta up to a positive factor (mode 0), or the Coulomb misalignment e_r x u_t (mode 1)."""
    cos_t = np.cos(theta)
    sin_t = np.sin(theta)
    u1 = mbar[0, 0] * lam[1] + mbar[0, 1] * lam[2] + cbar[0]  # (15)-(16): u_t on C, u_n = 0
    u2 = mbar[1, 0] * lam[1] + mbar[1, 1] * lam[2] + cbar[1]
    if mode == MAX_DISSIPATION:
        d_prime = -w[0, 1] * sin_t + w[0, 2] * cos_t
        # eta_t = D e_theta - D' e_r, a positive multiple of d lambda_t / d theta
        return u1 * (-d * sin_t - d_prime * cos_t) + u2 * (d * cos_t - d_prime * sin_t)
    return cos_t * u2 - sin_t * u1


@kernel
def _visible(lam, lam_v0, mu):
    """Preclik's line of sight: lambda^{v=0} lies on the outer side of the cone's tangent plane at lambda.

    grad h2 = 2 (-mu^2 lambda_n, lambda_t) is the outward normal, so the test is
    grad h2 . (lambda^{v=0} - lambda) >= 0 (Alg. 1 line 13 prints the opposite sign; with it the
    start point itself, which is always in sight, would be rejected).
    """
    return (-mu * mu * lam[0] * (lam_v0[0] - lam[0]) + lam[1] * (lam_v0[1] - lam[1])
            + lam[2] * (lam_v0[2] - lam[2])) >= 0.0


@kernel
def _distance(a, b):
    return np.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)


@kernel
def _bracket_and_bisect(theta, c_n, w, mu, mbar, cbar, lam_v0, mode, beta1, beta2, beta3, gamma, lam):
    """Alg. 1 from angle ``theta``: bracketing, then bisection. ``lam`` holds C(theta) on entry and the
    solution on exit. Returns the final angle."""
    lam_p = np.empty(3)
    lam_m = np.empty(3)
    d = _slip_point(theta, c_n, w, mu, lam)
    if d <= 0.0:
        return theta
    d0 = _slip_sign(theta, d, lam, w, mbar, cbar, mode)
    if d0 == 0.0:
        return theta
    # against the sign: both dE/dtheta and g grow through their root (g > 0 means -u_t is clockwise
    # of e_r, where lambda_t must turn)
    step = -beta1 if d0 > 0.0 else beta1
    theta_p = theta
    lam_p[:] = lam
    bracketed = False
    for _ in range(MAX_BRACKETING):
        theta_p = theta
        lam_p[:] = lam
        trial = theta + step
        dt = _slip_point(trial, c_n, w, mu, lam_m)
        if dt <= 0.0 or (mode == MAX_DISSIPATION and not _visible(lam_m, lam_v0, mu)):
            step *= beta2  # back to the old angle with a shorter step
            continue
        theta = trial
        lam[:] = lam_m
        if _slip_sign(theta, dt, lam, w, mbar, cbar, mode) * d0 > 0.0:
            step = min(max(step * beta3, -MAX_STEP), MAX_STEP)
        else:
            bracketed = True
            break
    if not bracketed:
        return theta
    scale = np.sqrt(lam[0] ** 2 + lam[1] ** 2 + lam[2] ** 2)
    for _ in range(MAX_BISECTION):
        if _distance(lam_p, lam) <= gamma * scale:
            break
        mid = 0.5 * (theta + theta_p)
        if mid == theta or mid == theta_p:
            break  # theta exhausted in double precision
        dm = _slip_point(mid, c_n, w, mu, lam_m)
        if dm <= 0.0:
            break  # cannot happen between two points with D > 0 (D is a shifted cosine); a guard
        if _slip_sign(mid, dm, lam_m, w, mbar, cbar, mode) * d0 > 0.0:
            theta_p = mid
            lam_p[:] = lam_m
        else:
            theta = mid
            lam[:] = lam_m
    return theta


@kernel
def solve_slip(w, c, lam_v0, mu, mode, beta1, beta2, beta3, gamma, lam):
    """lambda* of a slipping contact (Alg. 1) into ``lam``; c_n < 0, lambda^{v=0} outside the cone.

    Mode 0: the maximal-dissipation point (8) (min E on C). Mode 1: the Coulomb point of C, found by the
    same bracketing and bisection on theta, started at the mode-0 angle.
    """
    mbar = np.empty((2, 2))
    cbar = np.empty(2)
    for a in range(2):
        cbar[a] = c[a + 1] - w[a + 1, 0] * c[0] / w[0, 0]
        for b in range(2):
            mbar[a, b] = w[a + 1, b + 1] - w[a + 1, 0] * w[0, b + 1] / w[0, 0]
    theta0 = np.arctan2(lam_v0[2], lam_v0[1])  # E_C(lambda^{v=0})
    if _slip_point(theta0, c[0], w, mu, lam) <= 0.0:
        # lambda^{v=0} is on the ray of an unbounded section, so inside the cone up to round-off
        lam[:] = lam_v0
        return
    theta = _bracket_and_bisect(theta0, c[0], w, mu, mbar, cbar, lam_v0, MAX_DISSIPATION, beta1, beta2, beta3,
                                gamma, lam)
    if mode == COULOMB:
        _bracket_and_bisect(theta, c[0], w, mu, mbar, cbar, lam_v0, COULOMB, beta1, beta2, beta3, gamma, lam)


@kernel
def solve_contact(w, w_inv, c, mu, mode, beta1, beta2, beta3, gamma, lam):
    """lambda* of one contact with the others frozen (their Sec. III-A) into ``lam``; returns the case."""
    if c[0] > 0.0:
        lam[:] = 0.0
        return MODE_OPEN
    lam_v0 = np.empty(3)
    for a in range(3):
        lam_v0[a] = -(w_inv[a, 0] * c[0] + w_inv[a, 1] * c[1] + w_inv[a, 2] * c[2])
    if mu * lam_v0[0] >= np.sqrt(lam_v0[1] ** 2 + lam_v0[2] ** 2):
        lam[:] = lam_v0
        return MODE_STICK
    if mu == 0.0 or c[0] == 0.0:
        # frictionless: C is the single point u_n = 0 on the normal axis; c_n = 0: C is the apex
        lam[0] = max(0.0, -c[0] / w[0, 0])
        lam[1] = 0.0
        lam[2] = 0.0
        return MODE_SLIP
    solve_slip(w, c, lam_v0, mu, mode, beta1, beta2, beta3, gamma, lam)
    return MODE_SLIP


@kernel
def local_operators(delassus, w, w_inv, active):
    """W_i = G_ii (regularized when singular), its inverse, and whether contact i can act (footnote 2)."""
    m = w.shape[0]
    largest = 0.0
    for k in range(3 * m):
        largest = max(largest, delassus[k, k])
    for i in range(m):
        block = np.ascontiguousarray(delassus[3 * i:3 * i + 3, 3 * i:3 * i + 3])
        eig = np.linalg.eigvalsh(block)
        if eig[2] <= LOCKED_RELATIVE * largest or eig[2] <= 0.0:
            active[i] = False
            w[i] = block
            w_inv[i] = 0.0
            continue
        active[i] = True
        if eig[0] <= SINGULAR_RELATIVE * eig[2]:
            for a in range(3):
                block[a, a] += SINGULAR_RELATIVE * eig[2]
        w[i] = block
        w_inv[i] = np.linalg.inv(block)


@kernel
def bisection_sweeps(delassus, free_velocity, friction, response, mode, alpha, decay, alpha_min, beta1, beta2,
                     beta3, gamma, tolerance, max_iterations, force):
    """Alg. 2 from the start ``force`` (3 m,), updated in place; returns (sweeps, residual).

    The residual of a sweep is ||X (lambda^{l+1} - lambda^l)||.
    """
    m = friction.shape[0]
    n = 3 * m
    w = np.empty((m, 3, 3))
    w_inv = np.empty((m, 3, 3))
    active = np.empty(m, np.bool_)
    local_operators(delassus, w, w_inv, active)
    u = contact_velocity_at(delassus, free_velocity, force)
    start = np.empty(n)
    c = np.empty(3)
    lam_star = np.empty(3)
    dlam = np.empty(3)
    residual = np.inf
    sweeps = 0
    for _ in range(max_iterations):
        start[:] = force
        for i in range(m):
            base = 3 * i
            if active[i]:
                for a in range(3):
                    c[a] = u[base + a]
                    for b in range(3):
                        c[a] -= delassus[base + a, base + b] * force[base + b]
                solve_contact(w[i], w_inv[i], c, friction[i, 0], mode, beta1, beta2, beta3, gamma, lam_star)
                for a in range(3):
                    dlam[a] = alpha * lam_star[a] + (1.0 - alpha) * force[base + a] - force[base + a]
            else:
                for a in range(3):
                    dlam[a] = -force[base + a]
            if dlam[0] == 0.0 and dlam[1] == 0.0 and dlam[2] == 0.0:
                continue
            for a in range(3):
                force[base + a] += dlam[a]
            for k in range(n):
                u[k] += delassus[k, base] * dlam[0] + delassus[k, base + 1] * dlam[1] + delassus[k, base + 2] * dlam[2]
        sweeps += 1
        alpha = alpha_min + decay * (alpha - alpha_min)
        residual = velocity_change_norm(response, force - start)
        if residual <= tolerance:
            break
    return sweeps, residual


class SolverBisection(ImpulseSolverBase):
    """Hwangbo, Lee & Hutter's per-contact bisection solver (see the module docstring).

    Args:
        friction_model: "coulomb" (Alg. 1 followed by the same bisection on the Coulomb alignment
            condition: our Signorini-Coulomb conditions at convergence) or "max_dissipation" (the
            paper's model (8) exactly, Preclik's per-contact maximal dissipation).
        relaxation: alpha at the first sweep, in (0, 1] (paper: 1).
        relaxation_decay: gamma of their Alg. 2 line 12, alpha <- alpha_min + decay (alpha - alpha_min),
            in [0, 1] (paper: 0.99).
        relaxation_min: alpha_min in (0, 1] (paper: 0.7).
        beta1: first bracketing step of Alg. 1 [rad], in (0, pi/4].
        beta2: factor of a rejected step (out of sight or r < 0), in (0, 1).
        beta3: factor of an accepted step with an unchanged gradient sign, >= 1.
        gamma: bisection stops when ||lambda^p - lambda|| <= gamma ||lambda|| (relative), in (0, 1).
        tolerance, max_iterations, regularization, warm_start: see :class:`ImpulseSolverBase`
            (max_iterations counts sweeps).

    Limitations: isotropic friction only; no convergence proof for the multi-contact iteration (the
    paper has none either); the impulses of redundant contacts are not unique (the velocities are).
    """

    name = "bisection"

    def __init__(self, model, *, friction_model="coulomb", relaxation=1.0, relaxation_decay=0.99,
                 relaxation_min=0.7, beta1=0.05, beta2=0.5, beta3=2.0, gamma=1e-13, tolerance=1e-8,
                 max_iterations=1000, regularization=0.0, warm_start=True):
        if friction_model not in FRICTION_MODELS:
            raise ModelError(f"friction_model: expected one of {sorted(FRICTION_MODELS)}, got {friction_model!r}")
        self.friction_model = friction_model
        self.relaxation = scalar("relaxation", relaxation, low=0.0, high=1.0, low_open=True)
        self.relaxation_decay = scalar("relaxation_decay", relaxation_decay, low=0.0, high=1.0)
        self.relaxation_min = scalar("relaxation_min", relaxation_min, low=0.0, high=1.0, low_open=True)
        self.beta1 = scalar("beta1", beta1, low=0.0, high=MAX_STEP, low_open=True)
        self.beta2 = scalar("beta2", beta2, low=0.0, high=1.0, low_open=True)
        if self.beta2 >= 1.0:
            raise ModelError(f"beta2: must be < 1, got {self.beta2}")
        self.beta3 = scalar("beta3", beta3, low=1.0)
        self.gamma = positive("gamma", gamma)
        if self.gamma >= 1.0:
            raise ModelError(f"gamma: must be < 1, got {self.gamma}")
        super().__init__(model, tolerance=tolerance, max_iterations=max_iterations, regularization=regularization,
                         warm_start=warm_start)

    def solve_contacts(self, problem: ContactProblem, force: np.ndarray):
        friction = np.ascontiguousarray(problem.friction, dtype=float)
        require_isotropic_friction(friction, "SolverBisection",
                                   "the conic section of Alg. 1 assumes the isotropic cone")
        lam = np.ascontiguousarray(force, dtype=float).reshape(-1).copy()
        iterations, residual = bisection_sweeps(
            np.ascontiguousarray(problem.delassus), np.ascontiguousarray(problem.free_velocity), friction,
            np.ascontiguousarray(problem.impulse_response), FRICTION_MODELS[self.friction_model], self.relaxation,
            self.relaxation_decay, self.relaxation_min, self.beta1, self.beta2, self.beta3, self.gamma,
            self.tolerance, self.max_iterations, lam)
        return lam.reshape(-1, 3), int(iterations), float(residual)
