"""Compliant contact under implicit integration: Drumwright's L-stable constraint solver.

Drumwright, "An unconditionally stable first-order constraint solver for multibody systems"
(``shared/papers``, digest PART B). Every contact is a spring-damper (normal stiffness k, damping b)
whose force is taken at the *end* of the step, i.e. the constraint oscillator is integrated by
implicit Euler (the paper's (36)-(39)), so the step is stable for any k; the unilateral law (68)
becomes one convex program per step in the contact forces (Sec. 5-6, App. A): a QCQP with the
true (isotropic) Coulomb cone and memoryless friction (K_t = 0).

How this maps the paper's method onto our contact model
--------------------------------------------------------
Our step solves A v_hat = b + J_c^T lambda with v_hat = theta v_{k+1} + (1 - theta) v_k, and the base
class gives u = J_c v_hat + phi = G lambda + u_free, where phi = -((1 - theta) a + theta [L, 0, 0]),
a = J_c v_k (start-of-step contact velocity) and L the hard-contact bound of ``contacts.py``. The
end-of-step contact velocity is therefore

    u_{k+1} = (J_c v_hat - (1 - theta) a) / theta = u / theta + [L, 0, 0].

The compliant law replaces the hard condition u_{k+1,n} >= L by the spring-damper at the end of the
step, x_{k+1} = g + dt u_{k+1,n} (deformation, g = ``contacts.gap``, < 0 = penetration), xdot_{k+1} =
u_{k+1,n}:

    lambda_n = max(0, -(k x_{k+1} + b xdot_{k+1}))
    <=>  0 <= lambda_n  _|_  lambda_n / (k dt + b) + u_{k+1,n} + k g / (k dt + b) >= 0.

Multiplying by theta and substituting u_{k+1,n} (theta L = -phi_n - (1 - theta) a_n) gives, on the
normal row of contact m,

    0 <= lambda_n  _|_  (G lambda + u_free)_n + c lambda_n + s >= 0,
    c = theta / (k dt + b)                                   [m/(N s)], the compliance,
    s = theta k g / (k dt + b) - phi_n - (1 - theta) a_n     [m/s], the spring's bias,

so the step's program (with the friction cone; the cone's dual-cone KKT conditions are exactly the
CCP relaxation (36) used by the hard solvers) is

    min_lambda 1/2 lambda^T (G + C) lambda + lambda^T q   s.t.  ||lambda_t,m|| <= mu1 lambda_n,m,
    C = diag(c_1, 0, 0, c_2, 0, 0, ...)   (tangential rows: only the base ``regularization`` omega),
    q = u_free + [s_1, 0, 0, s_2, 0, 0, ...].

G + C is positive definite whenever G is positive definite on the tangential rows (or omega > 0), so
the program is strictly convex with a unique solution: no indeterminacy for redundant normals (the
paper's "organic" resolution). As k -> inf with b = k tau, c -> 0 and s -> theta g / (dt + tau) - phi_n
- (1 - theta) a_n: the hard CCP of the same step with L replaced by -g / (dt + tau); the force error is
O(c) = O(1 / k).

Static deflection: at rest (u_{k+1} = 0) lambda_n = -k g, so a resting load W sinks by W / k.

Differences from the paper
--------------------------
- We keep the plain spring-damper (the penalty law (18) made implicit), not the DAE law (23) whose
  term -M_hat (Gdot v + G M^-1 f) cancels the external load and makes the steady deformation zero for
  any K: here the deformation is the physical W / k (a Winkler/Hertz-like foundation) and M_hat = W^-1
  (undefined for redundant contacts, the digest's open issue) is never needed.
- Friction is memoryless Coulomb (K_t = 0) enforced as a hard cone, with no tangential damper/slack
  epsilon (the paper's soft B_t and weight w): sticking is exact (no creep), sliding follows the
  maximum-dissipation (CCP) law of the hard solvers. Only isotropic cones: mu = mu1 (mu2 is ignored).
- With theta = 1 (``Model.integration_theta``) positions advance by v_{k+1} and the scheme is exactly
  the paper's implicit Euler ((36)-(38)); with the midpoint rule theta = 1/2 positions advance by
  v_hat while the spring sees x_{k+1} = g + dt u_{k+1,n}. Both are stable for any k: in the limit
  k -> inf the deformation obeys x_{j+1} = (1 - theta)(x_j - x_{j-1}) (spectral radius sqrt(1 - theta)).

Defaults (``stiffness`` k = 1e6 N/m, ``damping`` b = 2e4 N s/m)
-----------------------------------------------------------------
- k: a 0.5 kg box on its 4 corners deflects m g / (4 k) = 1.2 um (a 0.5 kg particle on one contact
  4.9 um), far below the 0.1 mm target, yet G + C stays well conditioned (c = 5e-7 at dt = 10 ms).
- b: at dt = 10 ms the step is far in the stiff regime (k dt = 1e4 >> m_eff / dt <= 50 N s/m), where
  the continuous critical damping 2 sqrt(k m_eff) (~700-1400 N s/m) no longer decides the response:
  the discrete map of one contact (mass m_eff, theta = 1/2) has real, non-negative eigenvalues (no
  overshoot, hence no bounce) from b ~ 1.9 k dt, independently of m_eff, with the fastest decay
  (spectral radius 0.5) near b = 2 k dt = 2e4 N s/m (tau = b / k = 20 ms). This is the discrete
  analogue of critical damping; for other dt or k keep b ~ 2 k dt (theta = 1 needs no damping).
- Measured (dt = 10 ms, theta = 1/2): the resting box sinks 1.2 um; a particle landing at 1 m/s sinks
  5 um and never lifts off. With b = 0 the same landing sinks ~dt |v| / 2 = 5 mm and bounces (decaying
  bounces, ~11 mm first): stable, but not what one wants.
- The linear damper also acts on a closing contact before it touches (x_{k+1} > 0 but b xdot_{k+1} <
  -k x_{k+1}): a landing body is slowed over its last ~tau |v| of travel (a few mm), as the hard model's
  speculative bound L does for g > 0. Hunt-Crossley damping (b proportional to the deformation, the
  paper's B(x)) would avoid this but makes the program non-convex in lambda.

Solver: the program is the APGD baseline's CCP with G + C in place of G and q in place of u_free, so
the same kernel (``apgd.accelerated_projected_gradient``: Nesterov with gradient restart, backtracked
step, ``project_proximal`` onto each cone) solves it; residual ||X (lambda^{l+1} - lambda^l)||.
"""
from __future__ import annotations

import numpy as np

from ...validate import ModelError, non_negative, positive
from .apgd import DEFAULT_STEP_DECAY, accelerated_projected_gradient
from .impulse_base import ImpulseSolverBase
from .operator import contact_jacobian


class SolverCompliant(ImpulseSolverBase):
    """Implicit spring-damper contact solved as one convex QCQP per step (module docstring).

    Args:
        stiffness: k, the normal spring [N/m] (> 0); any value is stable.
        damping: b, the normal damper [N s/m] (>= 0); ~2 k dt avoids overshoot at theta = 1/2.
        tolerance, max_iterations, regularization, warm_start: see :class:`ImpulseSolverBase`;
            ``regularization`` is the only compliance of the tangential rows.

    The start-of-step data the program needs (a = J_c v_k, the gaps, theta) is taken in
    :meth:`assemble`; a caller that builds the system itself sets it with :meth:`set_step_data`.

    Limitations:
        Isotropic friction only (mu1 is used). The resting deformation is W / k, not zero.
    """

    name = "compliant"

    def __init__(self, model, *, stiffness=1e6, damping=2e4, tolerance=1e-8, max_iterations=10000, regularization=0.0,
                 warm_start=True):
        self.stiffness = positive("stiffness", stiffness)
        self.damping = non_negative("damping", damping)
        super().__init__(model, tolerance=tolerance, max_iterations=max_iterations, regularization=regularization,
                         warm_start=warm_start)

    def reset(self) -> None:
        super().reset()
        self._step_data = None  # (a (m, 3), gap (m,), theta)
        self._program = None  # (compliance (m,), bias (m,)) of the step being solved

    def set_step_data(self, contact_velocity, gap, theta) -> None:
        """The start-of-step contact velocities a = J_c v_k (m, 3), gaps g (m,) [m] and theta."""
        self._step_data = (np.asarray(contact_velocity, float).reshape(-1, 3), np.asarray(gap, float).copy(),
                           float(theta))

    def assemble(self, state, control, contacts, dt):
        model = self.model
        system = super().assemble(state, control, contacts, dt)
        jacobian = contact_jacobian(system.dof_count, contacts)
        self.set_step_data((jacobian @ state.velocity()[:system.dof_count]).reshape(-1, 3), contacts.gap,
                           model.integration_theta)
        return system

    def compliance_and_bias(self, contacts, dt: float):
        """(c, s) per contact: the normal rows' compliance [m/(N s)] and bias [m/s] (module docstring)."""
        if self._step_data is None or len(self._step_data[1]) != contacts.count:
            raise ModelError("compliant solver: no start-of-step data for these contacts; call assemble() "
                             "or set_step_data() before solve()")
        a, gap, theta = self._step_data
        k, b = self.stiffness, self.damping
        compliance = np.full(contacts.count, theta / (k * dt + b))
        bias = theta * k * gap / (k * dt + b) - contacts.offset[:, 0] - (1.0 - theta) * a[:, 0]
        return compliance, bias

    def solve(self, system, contacts, dt):
        if contacts.count:
            self._program = self.compliance_and_bias(contacts, dt)
        return super().solve(system, contacts, dt)

    def solve_contacts(self, problem, force):
        compliance, bias = self._program
        m = problem.count
        hessian = problem.delassus.copy()
        q = problem.free_velocity.copy()
        hessian[3 * np.arange(m), 3 * np.arange(m)] += compliance
        q[3 * np.arange(m)] += bias
        lam = np.ascontiguousarray(force, dtype=float).reshape(-1).copy()
        # the program is APGD's with G + C for G and q for u_free: the same kernel solves it
        iterations, residual = accelerated_projected_gradient(
            hessian, q, np.ascontiguousarray(problem.friction[:, 0]), np.ascontiguousarray(problem.impulse_response),
            DEFAULT_STEP_DECAY, True, self.tolerance, self.max_iterations, lam)
        return lam.reshape(m, 3), int(iterations), float(residual)
