"""Spring-damper penalty contact: the baseline of the COND paper's Table I (ref. [22]).

Normal force f_n = max(0, -k_p g - k_d v_n) on the real contact point; the
stiffness and damping enter A linearly-implicitly (like a potential of form
(7) that is active while the point penetrates), so large gains stay stable at
10 ms steps. Friction is regularized Coulomb, explicit:
f_t = -min(mu f_n, k_t |v_t|) v_t / |v_t| from the start-of-step velocity.
The result depends on the gains and does not enforce non-penetration, which
is what Table I shows.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..dynamics import add_point_coupling, assemble
from ..rigid import add_point_force, point_velocity
from ..validate import non_negative, positive
from .base import SolverBase


class SolverPenalty(SolverBase):
    """Penalty contact with a direct sparse solve of A_o v_hat = b_o + J^T f.

    Args:
        stiffness: k_p [N/m].
        damping: k_d [N s/m].
        friction_damping: k_t [N s/m], the slope of the regularized Coulomb law.

    Limitations:
        No virtual nodes and no complementarity: penetration is proportional to
        load / k_p, and sticking creeps at f_t / k_t.
    """

    name = "penalty"

    def __init__(self, *, stiffness=1e4, damping=1e2, friction_damping=1e3):
        self.stiffness = positive("stiffness", stiffness)
        self.damping = non_negative("damping", damping)
        self.friction_damping = non_negative("friction_damping", friction_damping)
        self._v_k = None

    def assemble(self, model, state, control, contacts, dt):
        system = assemble(model, contacts.pattern, state, control, dt)
        v_k = state.velocity()
        active = contacts.gap < 0.0
        normal = contacts.frame[:, 0, :]
        gain = (0.5 * dt * self.stiffness + self.damping) * np.einsum("mi,mj->mij", normal, normal)
        gain[~active] = 0.0
        if contacts.count:
            add_point_coupling(contacts.point_size, contacts.point_arm, contacts.point_group,
                               np.ascontiguousarray(gain), contacts.pattern.diag_pair, contacts.pattern.block_slot,
                               system.data)
        self._forces = np.zeros((contacts.count, 3))
        for m in np.nonzero(active)[0]:
            vel = contacts.frame[m] @ point_velocity(v_k, contacts.point_dof[m], contacts.point_size[m],
                                                     contacts.point_arm[m])
            f_n = -self.stiffness * contacts.gap[m]  # the v_n part is implicit in A
            f_t = np.zeros(2)
            speed = np.hypot(vel[1], vel[2])
            if speed > 0.0:
                mu = contacts.friction[m, 0]
                f_t = -min(mu * max(f_n - self.damping * vel[0], 0.0), self.friction_damping * speed) * vel[1:] / speed
            self._forces[m] = (f_n, *f_t)
            add_point_force(system.b, contacts.point_dof[m], contacts.point_size[m], contacts.point_arm[m],
                            contacts.frame[m].T @ self._forces[m], 1.0)
        return system

    def solve(self, system, contacts, dt):
        a = sp.csr_matrix((system.data, system.indices, system.indptr), shape=(system.dof_count,) * 2)
        v_hat = spla.spsolve(a.tocsc(), system.b)
        forces = self._forces.copy()
        # report the total normal force including the implicit stiffness/damping response
        for m in np.nonzero(contacts.gap < 0.0)[0]:
            vel = contacts.frame[m] @ point_velocity(v_hat, contacts.point_dof[m], contacts.point_size[m],
                                                     contacts.point_arm[m])
            forces[m, 0] = max(0.0, forces[m, 0] - (0.5 * dt * self.stiffness + self.damping) * vel[0])
        return v_hat, forces, 1, 0.0
