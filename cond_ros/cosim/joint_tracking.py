"""The robot following a measured joint motion: position targets with velocity and inverse-dynamics feed-forward.

Shared by ``cond-ros replay --drive joint_states`` (a recorded motion) and the node's shadow mode (a live one):
both hold, for the step from t to t + dt, the measured positions and velocities at t + theta dt (where the step
evaluates its drives) and the efforts M(q) qdd + C(q, qd) qd of the step's mean acceleration, so the simulated
robot retraces the measurement instead of lagging behind it by the PD drives' error.
"""
from __future__ import annotations

import numpy as np

from ..sim import ArticulationKinematics
from .commands import LIMIT_TOLERANCE, DriveMode, JointTargets


def sample_motion(times, positions, velocities, t: float) -> tuple[float, float]:
    """(position, velocity) of one DOF's samples at ``t`` [s]: linear interpolation, held at the ends; the
    velocity is the recorded one where every sample has one, else the finite difference of the positions."""
    q = float(np.interp(t, times, positions))
    if np.all(np.isfinite(velocities)):
        return q, float(np.interp(t, times, velocities))
    if len(times) > 1 and times[0] <= t < times[-1]:
        k = int(np.searchsorted(times, t, side="right")) - 1
        return q, float((positions[k + 1] - positions[k]) / (times[k + 1] - times[k]))
    return q, 0.0


def clip_to_limits(q: np.ndarray, qd: np.ndarray, lower, upper, velocity_limit) -> tuple[np.ndarray, np.ndarray, int]:
    """``q`` and ``qd`` inside the joint limits, and how many values were outside."""
    clipped_q = np.clip(q, lower, upper)
    clipped_qd = np.clip(qd, -velocity_limit, velocity_limit)
    clipped = int(np.sum(np.abs(clipped_q - q) > LIMIT_TOLERANCE) + np.sum(np.abs(clipped_qd - qd) > LIMIT_TOLERANCE))
    return clipped_q, clipped_qd, clipped


class InverseDynamics:
    """The joint efforts (without gravity, which the node's gravity compensation adds) that make the robots
    follow a motion: M(q) qdd + C(q, qd) qd, for the DOFs ``dofs``."""

    def __init__(self, model, dofs: np.ndarray):
        self.model, self.dofs = model, dofs
        self.kinematics = [ArticulationKinematics(art) for art in model.robots]

    def efforts(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, hold_q: np.ndarray) -> np.ndarray:
        """Efforts of the DOFs at their positions, velocities and accelerations ``q``, ``qd``, ``qdd`` (the
        other DOFs at ``hold_q`` with zero velocity and acceleration)."""
        model = self.model
        full_q, full_qd, full_qdd = hold_q.copy(), np.zeros_like(hold_q), np.zeros_like(hold_q)
        full_q[self.dofs], full_qd[self.dofs], full_qdd[self.dofs] = q, qd, qdd
        out = np.zeros_like(hold_q)
        for r, kin in enumerate(self.kinematics):
            lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
            kin.update(full_q[lo:hi])
            out[lo:hi] = kin.mass_matrix() @ full_qdd[lo:hi] + kin.bias_forces(full_qd[lo:hi], np.zeros(3))
        return out[self.dofs]


def tracking_targets(motion_at, dofs: np.ndarray, t: float, dt: float, theta: float,
                     dynamics: InverseDynamics | None, hold_q: np.ndarray) -> tuple[JointTargets, int]:
    """The targets of the step from ``t`` to ``t + dt`` that follow ``motion_at(t) -> (q, qd, clipped)``, and how
    many values ``motion_at`` clipped; without ``dynamics`` no effort feed-forward."""
    q, qd_drive, clipped = motion_at(t + theta * dt)
    effort = None
    if dynamics is not None:  # the step's mean acceleration, from the velocities at its ends
        qd_start, qd_end = motion_at(t)[1], motion_at(t + dt)[1]
        effort = dynamics.efforts(q, qd_drive, (qd_end - qd_start) / dt, hold_q)
    return JointTargets(dofs, DriveMode.POSITION, position=q, velocity=qd_drive, effort=effort), clipped
