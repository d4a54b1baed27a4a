"""Spring-damper penalty contact: the baseline of the COND paper's Table I (ref. [22]).

Normal force f_n = max(0, -k_p g - k_d v_n) on the real contact point; the
stiffness and damping enter A linearly-implicitly (like a potential of form
(7) that is active while the point penetrates), so large normal gains stay stable at
10 ms steps. Friction is regularized Coulomb with a lagged coefficient,
f_t = -c v_t with c = mu f_n / max(|v_t,k|, v_s) from the start-of-step
velocity, applied implicitly (c enters A), so it damps instead of
overshooting; below the slip velocity v_s it acts as a viscous damper.
The result depends on the gains and does not enforce non-penetration, which
is what Table I shows.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..dynamics.assembly import add_point_coupling, assemble
from ..linalg import add_jacobian_force, jacobian_velocity
from ..validate import non_negative, positive
from .base import SolverBase


class SolverPenalty(SolverBase):
    """Penalty contact with a direct sparse solve of A_o v_hat = b_o + J^T f.

    Args:
        stiffness: k_p [N/m].
        damping: k_d [N s/m].
        slip_velocity: v_s [m/s] of the regularized Coulomb law.

    Limitations:
        No virtual nodes and no complementarity: penetration is proportional to
        load / k_p and sticking creeps at up to v_s.
    """

    name = "penalty"

    def __init__(self, model, *, stiffness=1e4, damping=1e2, slip_velocity=1e-2):
        super().__init__(model)
        self.stiffness = positive("stiffness", stiffness)
        self.damping = non_negative("damping", damping)
        self.slip_velocity = positive("slip_velocity", slip_velocity)

    def assemble(self, state, control, contacts, dt):
        model = self.model
        system = assemble(model, contacts.pattern, state, control, dt)
        v_k = state.velocity()
        active = np.flatnonzero(contacts.gap < 0.0)
        gain = np.zeros((contacts.count, 3, 3))
        self._forces = np.zeros((contacts.count, 3))
        self._friction_gain = np.zeros(contacts.count)
        self._h = model.integration_theta * dt
        for m in active:
            normal = contacts.frame[m, 0]
            vel = contacts.frame[m] @ jacobian_velocity(v_k, contacts.point_dof[m], contacts.point_size[m],
                                                        contacts.point_jac[m])
            f_n = -self.stiffness * contacts.gap[m]  # the v_n part is implicit in A
            c_t = contacts.friction[m, 0] * max(f_n - self.damping * vel[0], 0.0) / max(np.hypot(vel[1], vel[2]),
                                                                                       self.slip_velocity)
            gain[m] = (model.integration_theta * dt * self.stiffness + self.damping) * np.outer(normal, normal) \
                + c_t * (np.eye(3) - np.outer(normal, normal))
            self._forces[m, 0] = f_n
            self._friction_gain[m] = c_t
            add_jacobian_force(system.b, contacts.point_dof[m], contacts.point_size[m], contacts.point_jac[m],
                               f_n * normal, 1.0)
        if contacts.count:
            add_point_coupling(contacts.point_size, contacts.point_jac, contacts.point_group, gain,
                               contacts.pattern.diag_pair, contacts.pattern.block_slot, system.data)
        return system

    def solve(self, system, contacts, dt):
        a = sp.csr_matrix((system.data, system.indices, system.indptr), shape=(system.dof_count,) * 2)
        v_hat = spla.spsolve(a.tocsc(), system.b)
        forces = self._forces.copy()
        # report the total forces including the implicit stiffness, damping and friction response
        for m in np.flatnonzero(contacts.gap < 0.0):
            vel = contacts.frame[m] @ jacobian_velocity(v_hat, contacts.point_dof[m], contacts.point_size[m],
                                                        contacts.point_jac[m])
            forces[m, 0] = forces[m, 0] - (self._h * self.stiffness + self.damping) * vel[0]
            forces[m, 1:] = -self._friction_gain[m] * vel[1:]
        return v_hat, forces, 1, 0.0
