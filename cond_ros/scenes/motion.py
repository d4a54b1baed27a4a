"""A scene's scripted robot motion, behind one small protocol (:class:`Motion`): joint-space waypoints with a
gripper (:class:`ScriptedMotion`) or a recorded tool trajectory followed through IK (:class:`TrajectoryMotion`).
``scene.py`` builds them from a scene YAML's ``script`` section."""
from __future__ import annotations

import dataclasses
from typing import Optional, Protocol

import numpy as np

from ..sim import ArticulationKinematics, Control, Model
from .tool_trajectory import IKTrack


class Motion(Protocol):
    """A scene's scripted motion: it drives robot ``robot`` by :meth:`control`, and follows the pose of that
    robot's link ``tool_link`` (a recorded tool trajectory; None for joint-space waypoints)."""

    robot: int
    tool_link: Optional[int]

    def control(self, t: float) -> Control:
        """The drives' targets and efforts at time ``t`` [s]."""


@dataclasses.dataclass
class ScriptedMotion:
    """Joint-space waypoints (from joint or Cartesian targets) and gripper commands of one robot.

    ``control(t)`` interpolates the arm targets linearly in time and switches the gripper between
    position control (open) and a constant closing effort (closed).
    """

    model: Model
    robot: int
    times: np.ndarray
    q: np.ndarray  # (waypoints, robot dofs)
    gripper_closed: np.ndarray  # bool per waypoint
    gripper_dofs: np.ndarray
    grip_force: float
    tool_link: Optional[int] = None  # waypoints drive joints; no tool pose is followed

    def control(self, t: float) -> Control:
        control = self.model.control()
        lo = self.model.robot_dof_offset[self.robot]
        n = self.q.shape[1]
        target = np.array([np.interp(t, self.times, self.q[:, i]) for i in range(n)])
        control.robot_q_target[lo:lo + n] = target
        closed = self.gripper_closed[np.searchsorted(self.times, t, side="right") - 1]
        if closed:
            for dof in self.gripper_dofs:
                control.robot_drive_stiffness[lo + dof] = 0.0
                control.robot_effort[lo + dof] = -self.grip_force
        return control


@dataclasses.dataclass
class TrajectoryMotion:
    """Joint targets that make a robot's tool follow a recorded trajectory (IK solved once at load).

    With ``gravity_compensation`` the joint efforts carry g(q_target) as feed-forward, as a Panda's own
    controller does; without it the PD drives sag by K_p^-1 g(q) (8 mm at the tool in panda_cable).
    With ``velocity_feedforward`` the drives also get the track's joint velocities; without it they damp
    towards rest (a joint PD to position targets, as the authors' cable-winding release drives its arm).
    """

    model: Model
    robot: int
    track: IKTrack
    tool_link: int
    gravity_compensation: bool = True
    velocity_feedforward: bool = True

    def __post_init__(self):
        self._kinematics = ArticulationKinematics(self.model.robots[self.robot])

    def control(self, t: float) -> Control:
        control = self.model.control()
        lo = self.model.robot_dof_offset[self.robot]
        q, qd = self.track.targets(t)
        control.robot_q_target[lo:lo + len(q)] = q
        if self.velocity_feedforward:
            control.robot_qd_target[lo:lo + len(q)] = qd
        if self.gravity_compensation:
            self._kinematics.update(q)
            control.robot_effort[lo:lo + len(q)] = self._kinematics.bias_forces(np.zeros(len(q)), self.model.gravity)
        return control
