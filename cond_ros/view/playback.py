"""``cond-ros view RUN.csv|BAG``: play a recorded run or bag back in the viewer, with a timeline to scrub and
the F/T plot beside the 3D view; with ``--real``, a robot's recorded F/T beside the simulated one.

A run's CSV (``cond-ros run --out``) and a bag hold the robot's joints and the F/T readings, not the cable's
or an FEM body's state: the robot is drawn from ``--scene`` at the recorded joint positions, with the static
colliders; cables and FEM bodies are left out, and the page says so.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time

import numpy as np

from .layout import Frame, FrameSampler, scene_layout
from .viewer import SceneViewer, announce

NS_PER_S = 1_000_000_000


class PlaybackError(ValueError):
    """A recording that cannot be played back: the message names the file and what is wrong."""


@dataclasses.dataclass(frozen=True)
class Recording:
    """What a playback shows: joint positions over time and the F/T force (world axes) over time."""

    source: str
    times: np.ndarray  # [s from the start], (n,)
    robot_q: np.ndarray  # (n, robot DOFs)
    ft_times: np.ndarray  # (m,)
    ft_world: np.ndarray  # (m, 6): force [N], torque [N m], world axes
    ft_label: str
    real: tuple | None = None  # (label, times [s], force (k, 3) world axes)


def _dof_names(model) -> list:
    return [name for art in model.robots for name in art.dof_name]


def recording_from_csv(path: str, scene) -> Recording:
    """A run's per-step CSV (``cond-ros run --out``) of ``scene``."""
    model = scene.simulator.model
    try:
        with open(path) as fh:
            header = fh.readline().strip().split(",")
        rows = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except (OSError, ValueError) as exc:
        raise PlaybackError(f"{path}: cannot be read as a run's CSV: {exc}") from None
    if len(rows) == 0 or "time_s" not in header or rows.shape[1] != len(header):
        raise PlaybackError(f"{path}: not a run's per-step CSV (cond-ros run --out): no rows, no time_s column, or "
                            "rows of another length than the header")
    missing = [f"q_{name}" for name in _dof_names(model) if f"q_{name}" not in header]
    if missing:
        raise PlaybackError(f"{path}: no column {missing[0]} ({len(missing)} joints of the scene missing): was it "
                            "written by this scene? (give the one that wrote it with --scene)")
    q = np.stack([rows[:, header.index(f"q_{name}")] for name in _dof_names(model)], axis=1)
    times = rows[:, header.index("time_s")]
    ft_world, label = np.zeros((0, 6)), ""
    if scene.sensors and f"{scene.sensors[0].spec.name}_base_fx" in header:
        sensor = scene.sensors[0]
        label = sensor.spec.name
        base = np.stack([rows[:, header.index(f"{label}_base_{a}")] for a in ("fx", "fy", "fz", "tx", "ty", "tz")],
                        axis=1)
        rot = sensor.base_rotation
        ft_world = np.hstack([base[:, :3] @ rot.T, base[:, 3:] @ rot.T])
    return Recording(path, times, q, times if len(ft_world) else np.zeros(0), ft_world, label)


def _joint_positions(reader, topic: str, model, path: str) -> tuple:
    names = _dof_names(model)
    index = {name: i for i, name in enumerate(names)}
    q0 = model.state().robot_q
    stamps, rows = [], []
    for _, log_ns, msg in reader.messages([topic]):
        row = rows[-1].copy() if rows else q0.copy()
        for name, value in zip(msg.name, msg.position):
            if name in index:
                row[index[name]] = value
        stamp = msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec
        stamps.append(stamp or log_ns)
        rows.append(row)
    if not rows:
        raise PlaybackError(f"{path}: {topic} has no messages")
    return np.array(stamps, np.int64), np.array(rows)


def _first_wrench_topic(reader) -> str | None:
    """The bag's F/T topic: the first WrenchStamped topic with ``/ft/`` in its name, else the first one."""
    wrenches = sorted(t for t, (kind, _) in reader.topics.items() if kind == "geometry_msgs/msg/WrenchStamped")
    preferred = [t for t in wrenches if "/ft/" in t]
    return (preferred or wrenches or [None])[0]


def _wrench_world(series, model, q_at) -> np.ndarray:
    """A WrenchSeries in world axes, when its frame_id is a robot link (else as recorded)."""
    from ..sim import ArticulationKinematics
    frames = {name: (r, link) for r, art in enumerate(model.robots) for link, name in enumerate(art.link_name)}
    values = series.values
    if series.frame_id not in frames:
        return values
    r, link = frames[series.frame_id]
    kin = ArticulationKinematics(model.robots[r])
    lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
    out = np.empty_like(values)
    for i, stamp in enumerate(series.stamps_ns):
        kin.update(q_at(stamp)[lo:hi])
        rot = kin.link_pose[link][:3, :3]
        out[i, :3], out[i, 3:] = rot @ values[i, :3], rot @ values[i, 3:]
    return out


def recording_from_bag(path: str, scene, *, topic: str | None = None, joint_states: str = "/joint_states",
                       real: str | None = None, real_topic: str | None = None) -> Recording:
    """A bag of ``scene``'s node (or ``cond-ros record`` / ``replay``): its joint states and F/T topic."""
    from ..bags import BagError, BagReader, read_wrench_series
    model = scene.simulator.model
    try:
        with BagReader(path) as reader:
            if joint_states not in reader.topics:
                raise PlaybackError(f"{path}: no {joint_states} topic (topics: {', '.join(sorted(reader.topics))})")
            stamps, q = _joint_positions(reader, joint_states, model, path)
            topic = topic or _first_wrench_topic(reader)
        t0 = int(stamps[0])

        def q_at(stamp_ns):
            return q[min(np.searchsorted(stamps, stamp_ns), len(q) - 1)]
        ft_times, ft_world, label = np.zeros(0), np.zeros((0, 6)), ""
        if topic is not None:
            series = read_wrench_series(path, topic)
            ft_times, ft_world, label = (series.stamps_ns - t0) / NS_PER_S, _wrench_world(series, model, q_at), topic
        other = None
        if real is not None:
            with BagReader(real) as reader:
                real_topic = real_topic or _first_wrench_topic(reader)
            if real_topic is None:
                raise PlaybackError(f"{real}: no WrenchStamped topic to compare with (give --real-topic)")
            series = read_wrench_series(real, real_topic)
            other = (f"real {real_topic}", (series.stamps_ns - series.stamps_ns[0]) / NS_PER_S,
                     series.values[:, :3])
    except BagError as exc:
        raise PlaybackError(str(exc)) from None
    return Recording(path, (stamps - t0) / NS_PER_S, q, ft_times, ft_world, label, other)


class PlaybackControl:
    """Play, pause, step (one recorded sample), reset (to the start) and speed: the viewer's buttons."""

    def __init__(self, recording: Recording, speed: float, *, paused: bool = False):
        self.recording = recording
        self.paused = paused
        self.real_time_factor = speed
        self.t = float(recording.times[0])
        self._lock = threading.Lock()

    def play(self) -> str:
        with self._lock:
            if not self.paused:
                return "already playing"
            if self.t >= self.recording.times[-1]:
                self.t = float(self.recording.times[0])
            self.paused = False
            return "playing"

    def pause(self) -> str:
        with self._lock:
            if self.paused:
                return "already paused"
            self.paused = True
            return f"paused at t = {self.t:.6f} s"

    def step(self) -> str:
        with self._lock:
            if not self.paused:
                return "the playback is playing; pause it first"
            times = self.recording.times
            k = min(int(np.searchsorted(times, self.t, side="right")), len(times) - 1)
            self.t = float(times[k])
            return f"one sample: t = {self.t:.6f} s"

    def reset(self) -> str:
        with self._lock:
            self.t = float(self.recording.times[0])
            return "back to the start"

    def set_real_time_factor(self, value: float) -> str:
        with self._lock:
            self.real_time_factor = value
        return f"playback speed {value:g}x" if value > 0 else "speed 0: the playback holds still"

    def seek(self, t: float) -> None:
        with self._lock:
            self.t = float(np.clip(t, self.recording.times[0], self.recording.times[-1]))

    def advance(self, wall_s: float) -> float:
        """Move on by ``wall_s`` of wall time at the playback speed (stopping at the end); the time now."""
        with self._lock:
            if not self.paused:
                self.t += wall_s * self.real_time_factor
                if self.t >= self.recording.times[-1]:
                    self.t, self.paused = float(self.recording.times[-1]), True
            return self.t


def playback_frame(recording: Recording, sampler: FrameSampler, t: float) -> tuple[Frame, np.ndarray]:
    """The frame at ``t`` [s] and the F/T history of the 10 s up to it (rows of t, force, torque)."""
    from .viewer import PLOT_WINDOW_S
    k = max(0, min(int(np.searchsorted(recording.times, t, side="right")) - 1, len(recording.times) - 1))
    poses = sampler.link_poses(recording.robot_q[k])
    ft = []
    if len(recording.ft_times) and sampler.scene.sensors:
        j = max(0, int(np.searchsorted(recording.ft_times, t, side="right")) - 1)
        spec, robot = sampler.scene.sensors[0].spec, sampler.scene.sensors[0].robot
        names = sampler.scene.simulator.model.robots[robot].link_name
        link = spec.parent_link if spec.frame == "parent" else spec.child_link
        pose = poses[robot][names.index(link)]
        pose = pose @ spec.sensor_pose if spec.frame == "sensor" else pose
        ft.append((pose, recording.ft_world[j, :3], recording.ft_world[j, 3:]))
    window = (recording.ft_times > t - PLOT_WINDOW_S) & (recording.ft_times <= t)
    history = np.column_stack([recording.ft_times[window], recording.ft_world[window]])
    frame = Frame(k, float(recording.times[k]), poses, [], [], [], np.zeros((0, 3)), np.zeros((0, 3)), ft)
    return frame, history


def play_back(args) -> int:
    """``cond-ros view`` of a CSV or a bag."""
    from ..scenes import load_named_scene, scene_names
    from ..sim import ModelError
    from ..stop_signals import StopSignals
    if args.scene is None:
        print(f"cond-ros view: {args.source}: give the scene that recorded it with --scene (one of "
              f"{', '.join(scene_names())}, or a scene YAML): a CSV or bag does not name its scene", file=sys.stderr)
        return 2
    path = args.scene if args.scene.endswith((".yaml", ".yml")) else None
    try:
        scene = load_named_scene(os.path.splitext(os.path.basename(args.scene))[0] if path else args.scene,
                                 path=path)
        if args.source.endswith(".csv"):
            recording = recording_from_csv(args.source, scene)
        else:
            recording = recording_from_bag(args.source, scene, topic=args.topic, real=args.real,
                                           real_topic=args.real_topic)
    except (ModelError, PlaybackError, OSError) as exc:
        print(f"cond-ros view: {exc}", file=sys.stderr)
        return 2
    full = scene_layout(scene)
    layout = dataclasses.replace(full, cables=[], soft_bodies=[], bodies=[])
    controls = PlaybackControl(recording, args.real_time_factor, paused=args.paused)
    try:
        viewer = SceneViewer(layout, host=args.host, port=args.port, controls=controls,
                             title=f"playback: {os.path.basename(os.path.normpath(args.source))}",
                             timeline=((float(recording.times[0]), float(recording.times[-1])), controls.seek),
                             plot_series=[recording.real] if recording.real is not None else ())
    except OSError as exc:
        print(f"cond-ros view: the viewer cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    viewer.note("a recording holds the robot's joints and the F/T, not the cable's or the FEM bodies' state: "
                "those are not drawn")
    sampler = FrameSampler(scene, full)
    frame, history = playback_frame(recording, sampler, controls.t)
    viewer.show(frame, history=history)
    announce(viewer.url + viewer.port_note)
    period = 1.0 / args.fps
    with StopSignals() as stop:
        last = time.monotonic()
        while not stop():
            time.sleep(period)
            now = time.monotonic()
            t = controls.advance(now - last)
            last = now
            frame, history = playback_frame(recording, sampler, t)
            viewer.show(frame, history=history)
            viewer.set_timeline(t)
    viewer.close()
    return 0
