"""State update of eq. (4): v_{k+1} = 2 v_hat - v_k and q_{k+1} = update(q_k, v_hat, dt).

With ``Model.integration_theta`` theta != 1/2, v_hat = theta v_{k+1} + (1 - theta) v_k, so
v_{k+1} = (v_hat - (1 - theta) v_k) / theta.
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..kinematics.rigid import quat_integrate_into
from ..model import Model, State


@kernel
def advance(particle_q, particle_qd, body_q, body_quat, body_qd, robot_q, robot_qd, v_hat, robot_start, dt, theta):
    """The next state's arrays (particle_q, particle_qd, body_q, body_quat, body_qd, robot_q, robot_qd), made
    and filled in one kernel; the robot's rows in the order of the numpy expressions they replace."""
    out_pq, out_pqd = np.empty_like(particle_q), np.empty_like(particle_qd)
    out_bq, out_bquat, out_bqd = np.empty_like(body_q), np.empty_like(body_quat), np.empty_like(body_qd)
    out_rq, out_rqd = np.empty_like(robot_q), np.empty_like(robot_qd)
    n_particles = particle_q.shape[0]
    for i in range(n_particles):
        for r in range(3):
            vh = v_hat[3 * i + r]
            out_pq[i, r] = particle_q[i, r] + dt * vh
            out_pqd[i, r] = (vh - (1.0 - theta) * particle_qd[i, r]) / theta
    start = 3 * n_particles
    for j in range(body_q.shape[0]):
        dof = start + 6 * j
        for r in range(3):
            out_bq[j, r] = body_q[j, r] + dt * v_hat[dof + r]
        for r in range(6):
            out_bqd[j, r] = (v_hat[dof + r] - (1.0 - theta) * body_qd[j, r]) / theta
        quat_integrate_into(body_quat[j, 0], body_quat[j, 1], body_quat[j, 2], body_quat[j, 3], v_hat[dof + 3],
                            v_hat[dof + 4], v_hat[dof + 5], dt, out_bquat, j)
    for r in range(robot_q.shape[0]):
        vh = v_hat[robot_start + r]
        out_rq[r] = robot_q[r] + dt * vh
        out_rqd[r] = (vh - (1.0 - theta) * robot_qd[r]) / theta
    return out_pq, out_pqd, out_bq, out_bquat, out_bqd, out_rq, out_rqd


def advance_state(model: Model, state: State, v_hat: np.ndarray, dt: float) -> State:
    """A new :class:`State` one step of ``dt`` after ``state`` with midpoint velocity ``v_hat``."""
    return State(state.time + dt, *advance(state.particle_q, state.particle_qd, state.body_q, state.body_quat,
                                           state.body_qd, state.robot_q, state.robot_qd, np.ascontiguousarray(v_hat),
                                           model.robot_dof_start, dt, model.integration_theta))
