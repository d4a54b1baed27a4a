"""``cond-ros replay``: drive the simulator in lockstep from a bag, write the simulated topics to a new bag.

Offline hardware-in-the-loop validation: the robot's recorded motion goes into the sim, and the sim's
joint states, F/T readings and contact wrenches come out, stamped in the recorded bag's time base, so
``compare`` can put them beside the robot's own F/T data.

Two ways to drive it (``drive``):

- ``commands``: the node's command topics as recorded (/joint_command, the joint trajectory and the
  forward controllers' topics), each applied before the first step that starts at or after its log
  (arrival) time, exactly as the node applies a command that arrives while its clock shows that time;
  commands the node would reject are dropped and counted. A bag that ``record`` or the node's
  ``record_bag`` wrote replays bit for bit.
- ``joint_states``: a recorded sensor_msgs/JointState topic (the robot's measured motion) as position
  targets with velocity feed-forward: the step from t to t + dt tracks the recorded positions and
  velocities at t + dt (linear interpolation per joint; velocities by finite differences where the bag
  has none), clipped to the model's joint limits. The sim starts at the first recorded positions.
  Joints the scene does not know are ignored (and listed).

Time base: simulated time 0 is ``start_ns`` (default: the bag's first log time for commands, the first
joint state's stamp for joint states); step k is stamped start_ns + k dt.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ..cosim import (InverseDynamics, SimConfig, UnknownJointError, clip_to_limits, resolve_topic, sample_motion,
                     tracking_targets)
from . import messages
from .io import BagError, BagReader, BagWriter, progress_bar
from .offline_node import COMMAND_TOPICS, OfflineNode
from .record import check_duration, step_and_write, write_all

DRIVES = ("auto", "commands", "joint_states")
DEFAULT_JOINT_STATES = "/joint_states"


@dataclasses.dataclass(frozen=True)
class ReplaySummary:
    """What ``replay`` did: driven by what, how many steps from which stamp, what it wrote."""

    bag: str
    out: str
    drive: str
    topics_in: list
    t0_ns: int
    steps: int
    dt: float
    counts: dict
    rejected: list  # (topic, stamp [ns], reason) of dropped commands
    warnings: list
    wall_s: float


@dataclasses.dataclass(frozen=True)
class JointStateTrack:
    """Recorded joint motion per DOF: times [s after t0], positions, velocities (NaN where not recorded)."""

    dofs: np.ndarray
    times: list
    positions: list
    velocities: list
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray

    @classmethod
    def from_messages(cls, names, limits, samples, t0_ns: int, bag: str, topic: str):
        """``samples``: (stamp [ns], JointState message); raises BagError if no joint is the model's."""
        per_dof: dict = {}
        unknown = set()
        for stamp, msg in samples:
            t = (stamp - t0_ns) / messages.NS_PER_S
            velocity = list(msg.velocity) if len(msg.velocity) == len(msg.name) else None
            if len(msg.position) != len(msg.name):
                raise BagError(bag, f"a message at stamp {stamp} ns has {len(msg.position)} positions for "
                                    f"{len(msg.name)} names", topic)
            for i, name in enumerate(msg.name):
                try:
                    dof = names.dof(name)
                except UnknownJointError:
                    unknown.add(name)
                    continue
                if dof is not None:
                    per_dof.setdefault(dof, []).append((t, msg.position[i], velocity[i] if velocity else math.nan))
        if not per_dof:
            raise BagError(bag, f"names no joint of the scene's robots (it has {', '.join(sorted(unknown))}; "
                                f"the scene has {', '.join(names.dof_names)})", topic)
        dofs = np.array(sorted(per_dof), dtype=np.int64)
        times, positions, velocities = [], [], []
        for dof in dofs:
            rows = np.array(sorted(per_dof[dof], key=lambda row: row[0]), dtype=np.float64)
            keep = np.concatenate([[True], np.diff(rows[:, 0]) > 0])
            rows = rows[keep]
            if not np.all(np.isfinite(rows[:, 1])):
                raise BagError(bag, f"non-finite position of {names.dof_names[dof]}", topic)
            times.append(rows[:, 0])
            positions.append(rows[:, 1])
            velocities.append(rows[:, 2])
        track = cls(dofs, times, positions, velocities, limits.lower[dofs], limits.upper[dofs],
                    limits.velocity[dofs])
        return track, sorted(unknown)

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, int]:
        """(positions, velocities, how many were clipped to the limits) of the track's DOFs at ``t`` [s]."""
        q, qd = np.empty(len(self.dofs)), np.empty(len(self.dofs))
        for j, samples in enumerate(zip(self.times, self.positions, self.velocities)):
            q[j], qd[j] = sample_motion(*samples, t)
        return clip_to_limits(q, qd, self.lower, self.upper, self.velocity_limit)

    @property
    def end_s(self) -> float:
        return max(float(times[-1]) for times in self.times)


def _command_topics(reader: BagReader) -> dict:
    """{absolute topic: the node's relative name} of the command topics in the bag (types checked)."""
    present = {}
    for relative, msgtype in COMMAND_TOPICS.items():
        topic = resolve_topic(relative)
        if topic in reader.topics:
            reader.require(topic, (msgtype,))
            present[topic] = relative
    return present


def _stamp_or_log(msg, log_ns: int) -> int:
    stamp = messages.stamp_ns(msg.header.stamp)
    return stamp if stamp > 0 else log_ns


@dataclasses.dataclass(frozen=True)
class DrivePlan:
    """What drives a replay, read from its bag once (a fit replays it many times).

    ``drive``: commands or joint_states; ``events``: (log [ns], order, the node's relative topic, message) of
    the commands, sorted; ``samples``: (stamp [ns], JointState) of the recorded joint motion; ``t0_ns``: the
    stamp of simulated time 0; ``end_ns``: the last stamp that drives anything."""

    bag: str
    drive: str
    topics_in: list
    t0_ns: int
    end_ns: int
    events: list
    samples: list

    def steps(self, dt_ns: int, duration_s: float | None) -> int:
        """Steps of ``dt_ns`` over ``duration_s`` (None: up to the end of the drive); BagError if < 1."""
        span = int(round(duration_s * messages.NS_PER_S)) if duration_s is not None else self.end_ns - self.t0_ns
        steps = span // dt_ns
        if steps < 1:
            raise BagError(self.bag, f"spans {(self.end_ns - self.t0_ns) * 1e-9:.6f} s from the start stamp "
                                     f"{self.t0_ns} ns: less than one step of {dt_ns * 1e-9:g} s",
                           ", ".join(self.topics_in))
        return steps


def read_drive(bag, *, drive: str = "auto", joint_states_topic: str = DEFAULT_JOINT_STATES,
               start_ns: int | None = None, progress: bool = True) -> DrivePlan:
    """The :class:`DrivePlan` of ``bag`` (see :func:`replay_bag` for ``drive`` and ``start_ns``); BagError
    naming the bag and topic when it has nothing to drive with."""
    if drive not in DRIVES:
        raise ValueError(f"drive: expected one of {', '.join(DRIVES)}, got {drive!r}")
    bag = str(bag)
    events, samples = [], []
    with BagReader(bag) as reader:
        commands = _command_topics(reader)
        if drive == "auto":
            drive = "commands" if commands else "joint_states"
        if drive == "commands":
            if not commands:
                raise BagError(bag, "has no command topic of the node ("
                                    + ", ".join(resolve_topic(t) for t in COMMAND_TOPICS)
                                    + "); replay recorded joint states with --drive joint_states")
            events = [(log_ns, index, commands[topic], msg) for index, (topic, log_ns, msg) in enumerate(
                reader.messages(list(commands), progress=progress, desc="read commands"))]
            if not events:
                raise BagError(bag, "the command topics hold no messages", ", ".join(commands))
            events.sort(key=lambda e: (e[0], e[1]))
            t0 = reader.start_ns if start_ns is None else int(start_ns)
            end_ns = reader.end_ns
            topics_in = list(commands)
        else:
            reader.require(joint_states_topic, (messages.JOINT_STATE,))
            samples = [(_stamp_or_log(msg, log_ns), msg) for _, log_ns, msg in reader.messages(
                [joint_states_topic], progress=progress, desc=f"read {joint_states_topic}")]
            if not samples:
                raise BagError(bag, "has no messages", joint_states_topic)
            t0 = min(s for s, _ in samples) if start_ns is None else int(start_ns)
            end_ns = max(s for s, _ in samples)
            topics_in = [joint_states_topic]
    return DrivePlan(bag, drive, topics_in, t0, end_ns, events, samples)


def drive_node(plan: DrivePlan, node: OfflineNode, steps: int, sink, *, feedforward: bool = True,
               progress: bool = True, observer=None) -> list:
    """Step ``node`` (made with ``t0_ns=plan.t0_ns``) ``steps`` times as ``plan`` drives it, from the start,
    writing what it publishes to ``sink`` (``write(topic, log_ns, message)``: a BagWriter, or what keeps only a
    topic); returns the warnings. Raises BagError naming the bag when the simulation fails, or when the scene
    would reject every command."""
    topics = ", ".join(plan.topics_in)
    warnings = []
    if plan.drive == "commands":  # a bag none of whose commands this scene takes would replay nothing: say so first
        problems = [node.problem(topic, msg) for _, _, topic, msg in plan.events]
        if all(problems):
            raise BagError(plan.bag, f"the scene would reject every one of its {len(plan.events)} commands; first: "
                                     f"{problems[0]}", topics)
        published = node.start()
    else:
        track, unknown = JointStateTrack.from_messages(node.names, node.commands.limits, plan.samples, plan.t0_ns,
                                                       plan.bag, plan.topics_in[0])
        if unknown:
            warnings.append(f"joints not in the scene, ignored: {', '.join(unknown)}")
        q, qd, clipped = track.at(0.0)
        robot_q, robot_qd = node.sim.model.robot_q.copy(), np.zeros(node.sim.model.robot_dof_count)
        robot_q[track.dofs], robot_qd[track.dofs] = q, qd
        published = node.start(robot_q, robot_qd)
        dynamics = InverseDynamics(node.sim.model, track.dofs) if feedforward else None
        dt, theta = node.clock.dt_ns / messages.NS_PER_S, node.sim.model.integration_theta
    write_all(sink, published)
    if observer is not None:
        observer.start(node)
    e, events = 0, plan.events
    for k in progress_bar(range(steps), progress=progress, desc="replay", unit="step"):
        if observer is not None:
            observer.before_step()
        if plan.drive == "commands":
            while e < len(events) and events[e][0] <= node.stamp_ns:
                node.command(events[e][2], events[e][3])
                e += 1
        else:  # the drives act at t + theta dt, where the step evaluates its potentials (robot_dynamics)
            targets, n = tracking_targets(track.at, track.dofs, k * dt, dt, theta, dynamics, node.commands.position)
            clipped += n
            node.hold(targets)
        step_and_write(node, sink, plan.bag, topics)
        if observer is not None:
            observer.after_step(node)
    if plan.drive == "joint_states" and clipped:
        warnings.append(f"{clipped} recorded joint positions or velocities were outside the model's limits and "
                        "were clipped")
    if node.rejected:
        warnings.append(f"{len(node.rejected)} commands were rejected as the node would reject them; first: "
                        f"{node.rejected[0][0]} at {node.rejected[0][1]} ns: {node.rejected[0][2]}")
    return warnings


def replay_bag(bag, out, config: SimConfig, *, drive: str = "auto", joint_states_topic: str = DEFAULT_JOINT_STATES,
               start_ns: int | None = None, duration_s: float | None = None, storage: str = "mcap",
               feedforward: bool = True, progress: bool = True, observer=None) -> ReplaySummary:
    """Replay ``bag`` through the sim of ``config`` and write the sim's topics to the new bag ``out``.

    ``observer`` (a viewer's, or None): ``start(node)`` once the sim exists, ``before_step()`` before each step
    (it may wait: a pause), ``after_step(node)`` after it.

    Raises BagError (naming the bag and topic) for unusable input or a failed simulation, ConfigError for
    a bad scene or parameter; no bag is left at ``out`` then.
    """
    if drive not in DRIVES:
        raise ValueError(f"drive: expected one of {', '.join(DRIVES)}, got {drive!r}")
    check_duration(duration_s)
    writer = BagWriter(out, storage=storage)  # checks the output path before anything is read
    plan = read_drive(bag, drive=drive, joint_states_topic=joint_states_topic, start_ns=start_ns, progress=progress)
    node = OfflineNode(config, t0_ns=plan.t0_ns, script=False)
    steps = plan.steps(node.clock.dt_ns, duration_s)
    start = time.perf_counter()
    with writer:
        warnings = drive_node(plan, node, steps, writer, feedforward=feedforward, progress=progress,
                              observer=observer)
    return ReplaySummary(plan.bag, writer.path, plan.drive, plan.topics_in, plan.t0_ns, steps, node.sim.dt,
                         dict(writer.counts), list(node.rejected), warnings, time.perf_counter() - start)
