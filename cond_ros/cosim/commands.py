"""Joint commands: validation of what arrives on the command topics, and the command the sim applies.

No ROS import: ``messages`` turns each message into plain names and numbers, the functions here check
them and return :class:`JointTargets` or a :class:`Trajectory`, or raise :class:`CommandError` saying
what is wrong. :class:`CommandState` keeps the last valid command of every joint and turns it into the
simulator's :class:`~cond_ros.sim.model.Control` each step, so a rejected message changes nothing.

Drive modes follow the implicit PD drives of the physics: position (the scene's K_p, K_d, target q and
qd), velocity (K_p = 0: K_d pulls qd to its target) and effort (both 0: the effort alone). An effort
given with a position or velocity command is a feed-forward term.

A joint follows one command topic at a time, as a ros2_control joint follows the one controller that claimed
its command interface: a command from another topic for a joint that a topic commanded less than the handover
timeout ago (a trajectory: before its end plus the timeout) is rejected. Without it, controllers that share
joints switch the drive mode from step to step: a stiff position step on a joint that drifted under a zero
effort kicks it at (error / dt), the next effort step lets it fly, and the arm gains energy until the contact
solve fails (what a soak flooding every command topic at once found after 30 s).
"""
from __future__ import annotations

import dataclasses
import enum

import numpy as np

from ..sim import ArticulationKinematics, Control, Model
from .joint_names import JointNameMap, UnknownJointError

LIMIT_TOLERANCE = 1e-9  # [rad, m, rad/s, N m]: a target on the limit, up to rounding, is inside


class CommandError(ValueError):
    """A command that is rejected; the message says what is wrong with it."""


class DriveMode(enum.IntEnum):
    """How a joint is driven (see the module docstring)."""

    POSITION = 0
    VELOCITY = 1
    EFFORT = 2


# the node's other command topics (relative to its namespace; joint_command is in ``interfaces``) and their
# message types
TRAJECTORY_TOPIC = "joint_trajectory_controller/joint_trajectory"  # trajectory_msgs/JointTrajectory
FORWARD_TOPICS = (("forward_position_controller/commands", DriveMode.POSITION),  # std_msgs/Float64MultiArray
                  ("forward_velocity_controller/commands", DriveMode.VELOCITY),
                  ("forward_effort_controller/commands", DriveMode.EFFORT))


@dataclasses.dataclass(frozen=True)
class JointLimits:
    """Per-DOF limits over all robots, in robot_* order: position [rad or m], |velocity|, |effort|."""

    names: list
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray

    @classmethod
    def from_model(cls, model: Model) -> "JointLimits":
        def cat(field):
            return np.concatenate([getattr(a, field) for a in model.robots]) if model.robots else np.zeros(0)
        return cls([name for a in model.robots for name in a.dof_name], cat("dof_lower"), cat("dof_upper"),
                   cat("dof_velocity_limit"), cat("dof_effort_limit"))

    def check(self, field: str, dofs: np.ndarray, values: np.ndarray) -> None:
        """Raise CommandError naming the first joint whose ``field`` value is out of its limits."""
        if field == "position":
            low, high = self.lower[dofs], self.upper[dofs]
        else:
            high = (self.velocity if field == "velocity" else self.effort)[dofs]
            low = -high
        bad = np.flatnonzero((values < low - LIMIT_TOLERANCE) | (values > high + LIMIT_TOLERANCE))
        if len(bad):
            k = bad[0]
            raise CommandError(f"{field} {float(values[k])!r} of {self.names[dofs[k]]} is outside its limits "
                               f"[{float(low[k])!r}, {float(high[k])!r}]")


@dataclasses.dataclass(frozen=True)
class JointTargets:
    """One valid command for some joints: their DOFs, the drive mode and the given values (or None)."""

    dofs: np.ndarray
    mode: DriveMode
    position: np.ndarray | None = None
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None


def _values(field: str, values, count: int, *, required=False) -> np.ndarray | None:
    """``values`` as ``count`` finite floats; None where empty and not ``required``; else CommandError."""
    try:
        arr = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise CommandError(f"{field}: expected numbers, got {values!r}") from None
    if len(arr) == 0 and not required:
        return None
    if len(arr) != count:
        raise CommandError(f"{field}: {len(arr)} values for {count} joints")
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise CommandError(f"{field}[{bad[0]}] is {float(arr[bad[0]])!r}; every value must be finite")
    return arr


def _resolve(names_map: JointNameMap, names) -> tuple[np.ndarray, np.ndarray]:
    if len(names) == 0:
        raise CommandError("no joint names")
    try:
        dofs, kept = names_map.dofs(names)
    except (UnknownJointError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if len(dofs) == 0:
        raise CommandError(f"only mimic joints named ({', '.join(names)}); command their leaders")
    return dofs, kept


def _checked(limits: JointLimits, dofs, position=None, velocity=None, effort=None) -> dict:
    for field, values in (("position", position), ("velocity", velocity), ("effort", effort)):
        if values is not None:
            limits.check(field, dofs, values)
    return dict(position=position, velocity=velocity, effort=effort)


def joint_state_targets(names_map: JointNameMap, limits: JointLimits, names, position, velocity,
                        effort) -> JointTargets:
    """A sensor_msgs/JointState used as a target: position mode if positions are given, else velocity,
    else effort; each array empty or one value per name."""
    n = len(names)
    position, velocity, effort = (_values(f, v, n) for f, v in (("position", position), ("velocity", velocity),
                                                                  ("effort", effort)))
    if position is None and velocity is None and effort is None:
        raise CommandError("position, velocity and effort are all empty")
    dofs, kept = _resolve(names_map, names)
    pick = lambda arr: None if arr is None else arr[kept]  # noqa: E731 (drop mimic joints' values)
    position, velocity, effort = pick(position), pick(velocity), pick(effort)
    mode = DriveMode.POSITION if position is not None else (DriveMode.VELOCITY if velocity is not None
                                                            else DriveMode.EFFORT)
    return JointTargets(dofs, mode, **_checked(limits, dofs, position, velocity, effort))


def forward_targets(limits: JointLimits, dofs: np.ndarray, mode: DriveMode, data) -> JointTargets:
    """A std_msgs/Float64MultiArray of the forward_command_controller: one value per commanded joint."""
    values = _values("data", data, len(dofs), required=True)
    field = ("position", "velocity", "effort")[mode]
    return JointTargets(dofs, mode, **_checked(limits, dofs, **{field: values}))


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """Joint positions (and optionally velocities) of some DOFs at absolute simulated times [s].

    Positions are interpolated linearly; the velocity target is the interpolated given velocity, or the
    slope of the current segment when none were given. Before the first time and after the last, the
    end positions hold with zero velocity.
    """

    dofs: np.ndarray
    times: np.ndarray  # (points,)
    positions: np.ndarray  # (points, joints)
    velocities: np.ndarray | None = None  # (points, joints)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        times = self.times
        q = np.array([np.interp(t, times, self.positions[:, j]) for j in range(len(self.dofs))])
        if not times[0] <= t < times[-1]:
            return q, np.zeros(len(self.dofs))
        if self.velocities is not None:
            return q, np.array([np.interp(t, times, self.velocities[:, j]) for j in range(len(self.dofs))])
        k = int(np.searchsorted(times, t, side="right")) - 1
        return q, (self.positions[k + 1] - self.positions[k]) / (times[k + 1] - times[k])


def joint_trajectory(names_map: JointNameMap, limits: JointLimits, names, points, *, start: float, now: float,
                     current: np.ndarray) -> Trajectory:
    """A trajectory_msgs/JointTrajectory as a :class:`Trajectory` (joint_trajectory_controller semantics).

    Args:
        names: the joint names.
        points: (time_from_start [s], positions, velocities) per point; velocities may be empty.
        start: the trajectory's start time [s] (its header stamp; ``now`` when the stamp is zero).
        now: the current simulated time [s].
        current: the current position target of every DOF; the trajectory starts from it when its first
            point lies after ``max(start, now)``.
    """
    if len(points) == 0:
        raise CommandError("the trajectory has no points")
    dofs, kept = _resolve(names_map, names)
    n = len(names)
    times, positions, velocities = [], [], []
    for i, (tfs, pos, vel) in enumerate(points):
        if not np.isfinite(tfs) or tfs < 0 or (times and tfs <= times[-1]):
            raise CommandError(f"points[{i}].time_from_start {tfs!r} must be >= 0 and increase")
        times.append(tfs)
        positions.append(_values(f"points[{i}].positions", pos, n, required=True)[kept])
        given = _values(f"points[{i}].velocities", vel, n)
        velocities.append(None if given is None else given[kept])
        _checked(limits, dofs, positions[-1], velocities[-1])
    if any(v is None for v in velocities) and not all(v is None for v in velocities):
        raise CommandError("velocities must be given for every point or for none")
    times = start + np.array(times)
    if times[-1] < now:
        raise CommandError(f"the trajectory ends at t = {times[-1]:.6f} s, before the current time {now:.6f} s")
    positions = np.array(positions)
    velocities = None if velocities[0] is None else np.array(velocities)
    anchor = max(start, now)
    if times[0] > anchor:  # move there from the current target, as joint_trajectory_controller does
        times = np.concatenate([[anchor], times])
        positions = np.vstack([current[dofs], positions])
        if velocities is not None:
            velocities = np.vstack([np.zeros(len(dofs)), velocities])
    return Trajectory(dofs, times, positions, velocities)


class CommandState:
    """The last valid command of every DOF, and the :class:`Control` it gives at a simulated time.

    At start and after :meth:`reset`, every joint holds the model's initial position with the scene's
    drive gains.
    """

    def __init__(self, model: Model, handover_timeout: float = 0.0):
        self.model = model
        self.limits = JointLimits.from_model(model)
        self.handover_timeout = handover_timeout  # [s] simulated; 0: the last command wins, whatever its topic
        self._kinematics = [ArticulationKinematics(art) for art in model.robots]
        self.reset()

    def reset(self) -> None:
        n = self.model.robot_dof_count
        self.mode = np.full(n, int(DriveMode.POSITION), dtype=np.int64)
        self.position = self.model.robot_q.copy()
        self.velocity = np.zeros(n)
        self.effort = np.zeros(n)
        self.trajectories: list[tuple[Trajectory, np.ndarray]] = []  # (trajectory, which of its DOFs still follow)
        self.source: list = [None] * n  # the topic each DOF follows (None: none yet, or an unnamed source)
        self.source_until = np.full(n, -np.inf)  # [s] simulated time of that topic's last command (its end)

    def check_claim(self, dofs: np.ndarray, source: str | None, now: float) -> None:
        """Raise CommandError when a topic other than ``source`` still holds one of ``dofs`` at simulated time
        ``now`` (see the module docstring); a None ``source`` is never refused."""
        if source is not None and self.handover_timeout > 0:
            held = [d for d in dofs if self.source[d] not in (None, source)
                    and now < self.source_until[d] + self.handover_timeout]
            if held:
                first, names = self.source[held[0]], self.limits.names
                more = f" and {len(held) - 1} more" if len(held) > 1 else ""
                raise CommandError(
                    f"{names[held[0]]}{more} follow {first} (commanded until t = {self.source_until[held[0]]:.6f} s); "
                    f"another topic takes a joint over {self.handover_timeout:g} s after that "
                    f"(parameter command_handover_timeout; 0 lets the last command win)")

    def claim(self, dofs: np.ndarray, source: str | None, now: float, until: float | None = None) -> None:
        """Let ``source`` command ``dofs`` at ``now``, its command lasting until ``until`` (default ``now``);
        raises as :meth:`check_claim` does, changing nothing."""
        self.check_claim(dofs, source, now)
        for d in dofs:
            self.source[d] = source
        self.source_until[dofs] = now if until is None else until

    def _release(self, dofs: np.ndarray) -> None:
        """Trajectories stop driving ``dofs`` (a newer command took them over)."""
        for trajectory, active in self.trajectories:
            active &= ~np.isin(trajectory.dofs, dofs)
        self.trajectories = [(t, a) for t, a in self.trajectories if a.any()]

    def apply(self, targets: JointTargets, source: str | None = None, now: float = 0.0) -> None:
        """Hold ``targets`` from now on; ``source`` (a topic) and ``now`` [s] as in :meth:`claim`."""
        dofs = targets.dofs
        self.claim(dofs, source, now)
        self._release(dofs)
        self.mode[dofs] = int(targets.mode)
        if targets.position is not None:
            self.position[dofs] = targets.position
        self.velocity[dofs] = 0.0 if targets.velocity is None else targets.velocity
        self.effort[dofs] = 0.0 if targets.effort is None else targets.effort

    def follow(self, trajectory: Trajectory, source: str | None = None, now: float = 0.0) -> None:
        """Follow ``trajectory``; ``source`` holds its DOFs until the trajectory's end (see :meth:`claim`)."""
        self.claim(trajectory.dofs, source, now, until=max(now, float(trajectory.times[-1])))
        self._release(trajectory.dofs)
        self.mode[trajectory.dofs] = int(DriveMode.POSITION)
        self.effort[trajectory.dofs] = 0.0
        self.trajectories.append((trajectory, np.ones(len(trajectory.dofs), bool)))

    def targets(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Position and velocity targets of every DOF at simulated time ``t``."""
        position, velocity = self.position.copy(), self.velocity.copy()
        for trajectory, active in self.trajectories:
            q, qd = trajectory.sample(t)
            position[trajectory.dofs[active]] = q[active]
            velocity[trajectory.dofs[active]] = qd[active]
        return position, velocity

    def control(self, t: float, robot_q: np.ndarray, *, gravity_compensation: bool) -> Control:
        """The simulator's input for the step that starts at ``t`` with joint positions ``robot_q``.

        Gravity compensation adds g(q) at the position target of position-driven joints (as the scripted
        scenes do) and at the measured position of the others.
        """
        model = self.model
        control = model.control()
        position, velocity = self.targets(t)
        positional = self.mode == DriveMode.POSITION
        control.robot_q_target[:] = np.where(positional, position, robot_q)
        control.robot_qd_target[:] = velocity
        control.robot_effort[:] = self.effort
        control.robot_drive_stiffness[~positional] = 0.0
        control.robot_drive_damping[self.mode == DriveMode.EFFORT] = 0.0
        if gravity_compensation:
            for r, kin in enumerate(self._kinematics):
                lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
                kin.update(control.robot_q_target[lo:hi])
                control.robot_effort[lo:hi] += kin.bias_forces(np.zeros(hi - lo), model.gravity)
        return control


def script_commands(script, model: Model, t: float) -> list:
    """(names, positions, velocities, efforts) per JointState command that the demo controller sends for a
    scene's script at time ``t``: one for the position-driven joints of the script's robot and one for the
    effort-driven ones (when any); the values not sent are None."""
    control = script.control(t)
    lo, hi = model.robot_dof_offset[script.robot], model.robot_dof_offset[script.robot + 1]
    names = np.array(model.robots[script.robot].dof_name)
    by_effort = control.robot_drive_stiffness[lo:hi] == 0.0
    out = []
    if (~by_effort).any():
        out.append((names[~by_effort].tolist(), control.robot_q_target[lo:hi][~by_effort],
                    control.robot_qd_target[lo:hi][~by_effort], None))
    if by_effort.any():
        out.append((names[by_effort].tolist(), None, None, control.robot_effort[lo:hi][by_effort]))
    return out
