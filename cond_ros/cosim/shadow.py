"""Shadow mode (``mode:=shadow``): the sim follows a real robot's measured joint states, and its predicted F/T is
compared with the real sensor's, live (no ROS import; the node's ``ros/node_shadow.py`` feeds it messages).

Time base: the measurement's. Simulated time 0 is the stamp of the first measured joint state (the anchor), and
step k is stamped anchor + k dt, so the predicted F/T and the real F/T carry stamps of one clock.

When to step: the step to t is made once a measurement at or after t has arrived, and follows the measurement
interpolated at the step (:mod:`.joint_tracking`, as ``cond-ros replay --drive joint_states`` does). When the
stream is late (its newest sample is more than half a sample period overdue on the wall clock, through the
stream's own latency), the sim steps at most one step past the newest sample, extrapolating it with its velocity,
and then waits for the stream: it never simulates a robot that it has not measured. A stream older than
``max_age`` is stale and reported as such. Samples that arrive after a gap are interpolated as usual, so the sim
catches up as fast as it can and loses no measurement.

A stamp more than :data:`RESTART_BACKSTEP_S` behind the newest one starts the stream over (a bag played again,
a robot's driver restarted): the sim is reset to that sample. Smaller steps back are dropped as out of order.

Residuals: each real F/T sample is compared with the prediction interpolated at its stamp, once the sim has got
there (real minus predicted); a running RMSE per axis goes to ``/diagnostics``.
"""
from __future__ import annotations

import collections
import dataclasses
import math

import numpy as np

from .commands import CommandError, JointLimits
from .config import NS_PER_S, ConfigError
from .joint_names import JointNameMap, UnknownJointError
from .joint_tracking import InverseDynamics, clip_to_limits, sample_motion, tracking_targets
from .publication import ft_topics, topic_token

RESTART_BACKSTEP_S = 1.0  # [s] a stamp this far behind the newest starts the stream over
MAX_SAMPLES = 200_000  # per DOF (200 s at 1 kHz): what a sim far behind, or paused, may still catch up on
LATENCY_WINDOW = 200  # samples over which the stream's latency is the smallest (arrival - stamp)
PERIOD_WINDOW = 50  # sample intervals whose median is the stream's period
MAX_PENDING = 100_000  # real F/T samples waiting for the sim to reach their stamp
MAX_PREDICTIONS = 100_000  # predictions kept for real samples still to come (a silent real topic keeps none)
LATE_PERIODS = 1.5  # the newest sample is late when the next is this many periods overdue
_EPS = 1e-9  # [s] stamps within this are one


@dataclasses.dataclass(frozen=True)
class ShadowDecision:
    """Whether the next step is due now (``due``; ``extrapolated``: past the newest sample), else the wall time
    worth waiting before asking again (an arriving sample ends the wait sooner)."""

    due: bool
    wait: float = 0.0
    extrapolated: bool = False


def parse_shadow_ft(entry: str, sensor_names) -> tuple[int, str]:
    """(sensor index, real topic) of one ``shadow_ft_topics`` entry ``TOPIC`` or ``SENSOR=TOPIC``; ConfigError."""
    sensor, sep, topic = entry.rpartition("=")
    if not sep:
        if len(sensor_names) != 1:
            raise ConfigError(f"shadow_ft_topics: {entry!r} names no sensor, and the scene has "
                              f"{len(sensor_names)} ({', '.join(sensor_names) or 'none'}); write SENSOR=TOPIC")
        return 0, topic.strip()
    if sensor.strip() not in sensor_names:
        raise ConfigError(f"shadow_ft_topics: {entry!r}: the scene has no F/T sensor {sensor.strip()!r} "
                          f"(it has {', '.join(sensor_names) or 'none'})")
    return list(sensor_names).index(sensor.strip()), topic.strip()


class MeasuredJointStates:
    """The measured joint states of one stream: per DOF, a window of (time [s after the anchor], position,
    velocity or NaN), the stream's latency and period, and counts of what was dropped."""

    def __init__(self, names: JointNameMap, limits: JointLimits):
        self.names, self.limits = names, limits
        self.unknown: set = set()
        self.received = self.out_of_order = self.rejected = self.restarts = 0
        self.clear()

    def clear(self) -> None:
        """Forget the stream: the next sample is a new anchor."""
        self.anchor_ns = None
        self.samples: dict = {}  # dof -> deque of (t, q, qd)
        self.newest = -math.inf  # [s] the newest time every tracked DOF has a sample at
        self._latency: collections.deque = collections.deque(maxlen=LATENCY_WINDOW)
        self._intervals: collections.deque = collections.deque(maxlen=PERIOD_WINDOW)
        self._last_stamp = None

    def add(self, stamp_ns: int, arrival: float, names, positions, velocities) -> str:
        """Buffer one JointState (``arrival``: wall time [s]); returns ``anchor`` (the stream's first sample),
        ``restart`` (its stamps went back: a new stream), ``sample`` or ``dropped``. Raises CommandError for a
        malformed message (nothing is buffered then)."""
        if len(positions) != len(names) or (len(velocities) and len(velocities) != len(names)):
            raise CommandError(f"{len(names)} names, {len(positions)} positions and {len(velocities)} velocities")
        if not all(math.isfinite(v) for v in (*positions, *velocities)):
            raise CommandError("a position or velocity is not finite")
        if stamp_ns < 0 or (stamp_ns == 0 and self.anchor_ns is not None):
            raise CommandError(f"the header stamp is {stamp_ns} ns: the shadow needs the time of each measurement")
        per_dof = []
        for i, name in enumerate(names):
            try:
                dof = self.names.dof(name)
            except UnknownJointError:
                self.unknown.add(name)
                continue
            if dof is not None:
                per_dof.append((dof, positions[i], velocities[i] if len(velocities) else math.nan))
        if not per_dof:
            raise CommandError(f"names no joint of the scene ({', '.join(names) or 'no names'}; the scene has "
                               f"{', '.join(self.names.dof_names)})")
        event = "sample"
        if self.anchor_ns is not None and stamp_ns <= self._last_stamp:
            if (self._last_stamp - stamp_ns) / NS_PER_S < RESTART_BACKSTEP_S:
                self.out_of_order += 1
                return "dropped"
            self.clear()
            self.restarts += 1
            event = "restart"
        if self.anchor_ns is None:
            self.anchor_ns = stamp_ns
            event = "anchor" if event == "sample" else event
        else:  # the joints the shadow follows are the first message's: a step's targets keep their shape
            followed = [row for row in per_dof if row[0] in self.samples]
            if not followed:
                raise CommandError("names none of the joints of the stream's first message ("
                                   + ", ".join(self.names.dof_names[d] for d in self.samples) + ")")
            self.unknown.update(f"{self.names.dof_names[d]} (not in the first message)"
                                for d, _, _ in per_dof if d not in self.samples)
            per_dof = followed
            self._intervals.append((stamp_ns - self._last_stamp) / NS_PER_S)
        self._last_stamp = stamp_ns
        t = (stamp_ns - self.anchor_ns) / NS_PER_S
        for dof, q, qd in per_dof:
            window = self.samples.setdefault(dof, collections.deque(maxlen=MAX_SAMPLES))
            window.append((t, q, qd))
        self.newest = min(window[-1][0] for window in self.samples.values())
        self._latency.append(arrival - t)
        self.received += 1
        return event

    @property
    def dofs(self) -> np.ndarray:
        return np.array(sorted(self.samples), dtype=np.int64)

    @property
    def period(self) -> float:
        """[s] the median interval between samples (0 before two)."""
        return float(np.median(self._intervals)) if self._intervals else 0.0

    def age(self, now: float) -> float:
        """[s] how old the newest sample is at wall time ``now``, in the stream's time: the wall time since it
        would have arrived with the stream's smallest latency (inf before any)."""
        if not self._latency:
            return math.inf
        return now - min(self._latency) - self.newest

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, int]:
        """(positions, velocities, values clipped to the limits) of :attr:`dofs` at ``t`` [s after the anchor]:
        interpolated, or past the newest sample extrapolated with its velocity."""
        dofs = self.dofs
        q, qd = np.empty(len(dofs)), np.empty(len(dofs))
        for j, dof in enumerate(dofs):
            rows = np.array(_up_to(self.samples[dof], t))
            times, positions, velocities = rows[:, 0], rows[:, 1], rows[:, 2]
            if t > times[-1] and len(times) > 1:
                q_end, qd_end = positions[-1], velocities[-1]
                if not math.isfinite(qd_end):
                    qd_end = (positions[-1] - positions[-2]) / (times[-1] - times[-2])
                q[j], qd[j] = q_end + qd_end * (t - times[-1]), qd_end
            else:
                q[j], qd[j] = sample_motion(times, positions, velocities, t)
        return clip_to_limits(q, qd, self.limits.lower[dofs], self.limits.upper[dofs], self.limits.velocity[dofs])

    def forget_before(self, t: float) -> None:
        """Drop the samples that no step from ``t`` on needs (keeping one at or before ``t`` to interpolate)."""
        for window in self.samples.values():
            while len(window) > 2 and window[1][0] <= t:
                window.popleft()


def _up_to(window, t: float) -> list:
    """The samples of ``window`` up to the first after ``t``: all that interpolating at ``t`` (or differencing
    forward from it) needs, however many a sim behind its stream has buffered after it."""
    rows = []
    for row in window:
        rows.append(row)
        if row[0] > t:
            break
    return rows


class FTResidual:
    """One real F/T topic against the prediction of one sensor output: real minus predicted at each real
    sample's stamp, and the running sums of its squares."""

    def __init__(self, sensor: int, sensor_name: str, output_topic: str, real_topic: str):
        self.sensor, self.sensor_name = sensor, sensor_name
        self.output_topic, self.real_topic = output_topic, real_topic
        self.residual_topic = f"{ft_topics(sensor_name)[0]}/residual"
        self.frame_problem = ""
        self.clear()

    def clear(self) -> None:
        """Forget the predictions, the waiting samples and the RMSE (a new stream)."""
        self._predicted: collections.deque = collections.deque(maxlen=MAX_PREDICTIONS)  # (t, values, frame_id)
        self._pending: collections.deque = collections.deque()  # (t, stamp_ns, values, frame_id)
        self.squares, self.count, self.unmatched = np.zeros(6), 0, 0

    def add_predicted(self, t: float, values, frame_id: str) -> None:
        self._predicted.append((t, np.asarray(values, dtype=np.float64), frame_id))

    def add_real(self, t: float, stamp_ns: int, values, frame_id: str) -> None:
        if len(self._pending) == MAX_PENDING:
            self._pending.popleft()
            self.unmatched += 1
        self._pending.append((t, stamp_ns, np.asarray(values, dtype=np.float64), frame_id))

    def residuals(self) -> list:
        """(stamp [ns], real - predicted, frame_id) of each waiting real sample the sim has now reached, in
        order; a sample from before the oldest prediction kept is unmatched (counted)."""
        out, predicted = [], self._predicted
        while self._pending and predicted and self._pending[0][0] <= predicted[-1][0] + _EPS:
            t, stamp_ns, real, frame = self._pending.popleft()
            if t < predicted[0][0] - _EPS:
                self.unmatched += 1
                continue
            while len(predicted) > 1 and predicted[1][0] <= t:
                predicted.popleft()
            t0, p0, pred_frame = predicted[0]
            if len(predicted) > 1 and t > t0:
                t1, p1, _ = predicted[1]
                p0 = p0 + (p1 - p0) * ((t - t0) / (t1 - t0))
            if frame and pred_frame and frame != pred_frame and not self.frame_problem:
                self.frame_problem = (f"{self.real_topic} is in frame {frame!r}, the prediction of sensor "
                                      f"{self.sensor_name} in {pred_frame!r}: set ft_outputs to the real sensor's "
                                      f"preset, so both are in one convention")
            residual = real - p0
            self.squares += residual * residual
            self.count += 1
            out.append((stamp_ns, residual, frame or pred_frame))
        return out

    @property
    def rmse(self) -> np.ndarray:
        return np.sqrt(self.squares / self.count) if self.count else np.full(6, np.nan)


class ShadowMode:
    """The shadow of one robot stream: buffers what arrives, says when to step and with which targets, and
    keeps the F/T residuals. The node calls :meth:`add_joint_state` and :meth:`add_real_ft` from its
    subscriptions, :meth:`decide` and :meth:`targets` before a step, :meth:`stepped` after it."""

    def __init__(self, scene, names: JointNameMap, limits: JointLimits, outputs, entries, max_age: float):
        model = scene.simulator.model
        # as the node's clock and replay: dt from its whole nanoseconds
        self.dt = round(scene.simulator.dt * NS_PER_S) / NS_PER_S
        self.theta, self.max_age = model.integration_theta, max_age
        self.model = model
        self.measured = MeasuredJointStates(names, limits)
        sensor_names = [sensor.spec.name for sensor in scene.sensors]
        self.residuals = []
        for entry in entries:
            sensor, topic = parse_shadow_ft(entry, sensor_names)
            output = next(ft.topic for ft in outputs.ft if ft.sensor == sensor)
            self.residuals.append(FTResidual(sensor, sensor_names[sensor], output, topic))
        self.extrapolated_steps = self.interpolated_steps = 0
        self.start_due = False  # an anchor arrived: the node resets the sim to it before the next step
        self.waiting_since = None  # wall time since which the next step has waited for a measurement
        self._dynamics = None

    @property
    def anchored(self) -> bool:
        return self.measured.anchor_ns is not None

    def add_joint_state(self, stamp_ns: int, arrival: float, names, positions, velocities) -> str:
        """See :meth:`MeasuredJointStates.add`; an anchor or a restart makes the next step start over there."""
        try:
            event = self.measured.add(stamp_ns, arrival, names, positions, velocities)
        except CommandError:
            self.measured.rejected += 1
            raise
        if event in ("anchor", "restart"):
            self.start_due = True
            for residual in self.residuals:
                residual.clear()
        return event

    def add_real_ft(self, index: int, stamp_ns: int, values, frame_id: str) -> None:
        """A real F/T sample of ``residuals[index]``'s topic (ignored before the anchor)."""
        values = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise CommandError("a force or torque is not finite")
        if self.anchored:
            self.residuals[index].add_real((stamp_ns - self.measured.anchor_ns) / NS_PER_S, stamp_ns, values,
                                           frame_id)

    def start_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(robot_q, robot_qd) of every DOF at the anchor (the scene's for DOFs not measured); clears
        :attr:`start_due`."""
        self.start_due = False
        dofs = self.measured.dofs
        q, qd, _ = self.measured.at(0.0)
        robot_q, robot_qd = self.model.robot_q.copy(), np.zeros(self.model.robot_dof_count)
        robot_q[dofs], robot_qd[dofs] = q, qd
        self._dynamics = InverseDynamics(self.model, dofs)
        return robot_q, robot_qd

    def decide(self, now: float, step: int, idle: float) -> ShadowDecision:
        """Whether the step from step ``step`` (steps since the anchor) is due at wall time ``now`` (``idle``:
        the longest wait)."""
        decision = self._decide(now, step, idle)
        if decision.due:
            self.waiting_since = None
        elif self.waiting_since is None:
            self.waiting_since = now
        return decision

    def _decide(self, now: float, step: int, idle: float) -> ShadowDecision:
        measured = self.measured
        if not self.anchored or self.start_due:
            return ShadowDecision(False, idle)
        end = (step + 1) * self.dt
        if measured.newest >= end - _EPS:
            return ShadowDecision(True)
        overdue = measured.age(now) - LATE_PERIODS * measured.period
        if overdue > 0.0 and end - measured.newest <= self.dt + _EPS:
            return ShadowDecision(True, extrapolated=True)
        return ShadowDecision(False, min(idle, -overdue) if overdue < 0.0 else idle)

    def targets(self, step: int, hold_q: np.ndarray, extrapolated: bool):
        """The :class:`~.commands.JointTargets` of the step from step ``step``."""
        if extrapolated:
            self.extrapolated_steps += 1
        else:
            self.interpolated_steps += 1
        t = step * self.dt  # as replay's k dt: the same measurement gives the same steps
        self.measured.forget_before(t)
        return tracking_targets(self.measured.at, self.measured.dofs, t, self.dt, self.theta, self._dynamics,
                                hold_q)[0]

    def stepped(self, step: int, wrenches) -> list:
        """After the step to step ``step``: ``wrenches`` are the node's F/T outputs of it (WrenchOutput); returns
        (residual, stamp [ns], values, frame_id) of every real sample the sim has now reached."""
        out = []
        for residual in self.residuals:
            for wrench in wrenches:
                if wrench.topic == residual.output_topic:
                    residual.add_predicted(step * self.dt, wrench.values, wrench.frame_id)
            out.extend((residual, *r) for r in residual.residuals())
        return out

    def restart(self) -> None:
        """Wait for the next joint state and start over there (the node's ~/reset)."""
        self.measured.clear()
        self.start_due = False
        self.waiting_since = None
        for residual in self.residuals:
            residual.clear()

    def status(self, now: float, step: int) -> tuple[str, str, dict]:
        """(level, message, values) of the shadow's diagnostics at wall time ``now``, at step ``step``."""
        measured, sim_time = self.measured, step * self.dt
        values = dict(joint_states_received=measured.received, joint_states_rejected=measured.rejected,
                      joint_states_out_of_order=measured.out_of_order, stream_restarts=measured.restarts,
                      steps_interpolated=self.interpolated_steps, steps_extrapolated=self.extrapolated_steps)
        if measured.unknown:
            values["unknown_joints"] = ", ".join(sorted(measured.unknown))
        if not self.anchored:
            return "WARN", "waiting for the first measured joint state", values
        age = measured.age(now)
        values.update(measurement_age_s=age, sim_behind_measurement_s=measured.newest - sim_time,
                      measurement_period_s=measured.period)
        for residual in self.residuals:
            token = topic_token(residual.sensor_name)
            values[f"{token}_residual_samples"] = residual.count
            values[f"{token}_unmatched_samples"] = residual.unmatched
            for axis, rmse in zip(("fx", "fy", "fz", "tx", "ty", "tz"), residual.rmse):
                values[f"{token}_rmse_{axis}"] = float(rmse)
        if age > self.max_age:
            return "WARN", (f"the measured joint states are stale: the newest is {age:.3f} s old (shadow_max_age "
                            f"{self.max_age:g} s); the sim waits at t = {sim_time:.6f} s"), values
        waited = now - self.waiting_since if self.waiting_since is not None else 0.0
        late = waited > LATE_PERIODS * max(measured.period, self.dt)
        if late:
            return "WARN", f"the measured joint states are late by {age:.3f} s", values
        problems = [r.frame_problem for r in self.residuals if r.frame_problem]
        if problems:
            return "WARN", problems[0], values
        return "OK", f"following the measured joint states, {measured.newest - sim_time:.3f} s behind", values
