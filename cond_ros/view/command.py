"""``cond-ros run --view`` and ``cond-ros view``: the command-line side of the viewer.

    cond-ros run SCENE --view [--real-time-factor R] [--paused] [--linger S] [--host H] [--port P] [--fps F]
    cond-ros view SCENE | RUN.csv | BAG [--scene S] [--real BAG --real-topic T] [--host H] [--port P]
"""
from __future__ import annotations

import math
import sys
import time

from ..stop_signals import StopSignals
from .extra import ViewerUnavailable, viewer_missing
from .viewer import announce

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def add_view_options(parser) -> None:
    """The options every viewer command takes."""
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"viewer: address to serve on (default {DEFAULT_HOST}: this machine only; 0.0.0.0: "
                             "every interface)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"viewer: port (default {DEFAULT_PORT}; 0: any free one)")
    parser.add_argument("--fps", type=float, default=30.0, help="viewer: frames per second it draws (default 30)")


def view_option_problems(args) -> list:
    problems = []
    if not 0 <= args.port <= 65535:
        problems.append(f"--port must be in [0, 65535], got {args.port}")
    if not 0 < args.fps <= 120:
        problems.append(f"--fps must be in (0, 120], got {args.fps:g}")
    return problems


def linger(seconds: float | None, stop) -> None:
    """Keep serving after the run: ``seconds`` (None: until Ctrl-C)."""
    if seconds == 0:
        return
    end = math.inf if seconds is None else time.monotonic() + seconds
    print("the run is over; the viewer stays open " + ("until Ctrl-C" if seconds is None else
                                                        f"for {seconds:g} s (Ctrl-C ends it sooner)"), flush=True)
    while not stop() and time.monotonic() < end:
        time.sleep(0.1)


def run_viewed(scene, steps: int, *, desc: str, progress: bool, real_time_factor: float, paused: bool,
               linger_s: float | None, host: str, port: int, fps: float):
    """Run ``scene`` for ``steps`` steps beside a live viewer whose buttons pause, step and reset it; returns
    the :class:`~cond_ros.tools.RunResult` (None if the viewer could not start: the message is on stderr)."""
    from ..tools import run_scene
    from .live import LiveView
    from .run_control import RunControl
    sim = scene.simulator
    controls = RunControl(sim.dt, real_time_factor, paused=paused)
    try:
        live = LiveView(scene, controls, host=host, port=port, fps=fps, title=desc)
    except OSError as exc:  # the port is taken, the address is not this machine's
        print(f"cond-ros: the viewer cannot serve on {host}:{port}: {exc}", file=sys.stderr)
        return None
    announce(live.url)

    def on_step(step, stats):
        live.latest.set(step, sim.state, sim.contacts, stats, controls.achieved_real_time_factor())

    on_step(0, None)
    try:
        with StopSignals() as stop:
            result = run_scene(scene, steps, progress=progress, desc=desc, control=controls, on_step=on_step,
                               stop=stop)
            if stop():
                print(f"stopped by {stop.name} after {len(result.rows)} of {steps} steps", flush=True)
            else:
                linger(linger_s, stop)
    finally:
        live.close()
    return result


class ReplayView:
    """The viewer of a ``cond-ros replay``: opened once the replay's sim exists; Pause and Step hold and step the
    replay (a reset is refused: a replay follows its bag from the start)."""

    def __init__(self, *, real_time_factor: float, host: str, port: int, fps: float):
        self.options = dict(host=host, port=port, fps=fps)
        self.real_time_factor = real_time_factor
        self.live = self.controls = None
        self._start = 0.0

    def start(self, node) -> None:
        from .live import LiveView
        from .run_control import RunControl
        self.controls = RunControl(node.sim.dt, self.real_time_factor, allow_reset=False)
        self.live = LiveView(node.scene, self.controls, title="replay", **self.options)
        announce(self.live.url)

    def before_step(self) -> None:
        self.controls.next_action()
        self._start = time.perf_counter()

    def after_step(self, node) -> None:
        self.controls.stepped(self._start, time.perf_counter())
        sim = node.sim
        self.live.latest.set(node.clock.steps, sim.state, sim.contacts, None,
                             self.controls.achieved_real_time_factor())

    def close(self) -> None:
        if self.live is not None:
            self.live.close()


def add_view_parser(sub) -> None:
    view = sub.add_parser("view", help="open the browser 3D view of a scene (live), a run's CSV or a bag (playback)")
    view.add_argument("source", help="a scene name or YAML path (run it live), a CSV from cond-ros run --out, or a "
                                     "rosbag2 bag (directory, .mcap or .db3)")
    view.add_argument("--scene", default=None,
                      help="playback (required): the scene that made the CSV or bag; its robots and colliders are "
                           "drawn from it")
    view.add_argument("--topic", default=None,
                      help="bag playback: the F/T topic (WrenchStamped) to plot (default: the bag's first)")
    view.add_argument("--real", default=None, help="bag playback: a bag recorded on the robot, plotted beside")
    view.add_argument("--real-topic", default=None, help="with --real: its F/T topic (default: its first wrench)")
    view.add_argument("--real-time-factor", type=float, default=1.0,
                      help="live: target simulated / wall time (default 1; 0: as fast as possible); playback: speed")
    view.add_argument("--paused", action="store_true", help="start paused")
    view.add_argument("--linger", type=float, default=None,
                      help="live: seconds to keep serving after the scene's duration (default: until Ctrl-C)")
    add_view_options(view)
    view.set_defaults(func=cmd_view)


def cmd_view(args) -> int:
    import os
    problems = view_option_problems(args)
    if not args.real_time_factor >= 0:
        problems.append(f"--real-time-factor must be >= 0, got {args.real_time_factor:g}")
    if problems:
        print("cond-ros view: " + "; ".join(problems), file=sys.stderr)
        return 2
    if message := viewer_missing():
        print(f"cond-ros view: {message}", file=sys.stderr)
        return 2
    source = args.source
    kind = ("csv" if source.endswith(".csv") else
            "bag" if os.path.isdir(source) or source.endswith((".mcap", ".db3", ".bag")) else "scene")
    given = {option: getattr(args, option.lstrip("-").replace("-", "_")) is not None
             for option in ("--scene", "--topic", "--real", "--real-topic", "--linger")}
    only = {"scene": ("--scene", "--topic", "--real", "--real-topic"), "csv": ("--topic", "--real", "--real-topic",
                                                                               "--linger"),
            "bag": ("--linger",)}[kind]
    if wrong := [option for option in only if given[option]]:
        print(f"cond-ros view: {', '.join(wrong)} do{'es' if len(wrong) == 1 else ''} not apply to a "
              f"{'scene run live' if kind == 'scene' else 'CSV' if kind == 'csv' else 'bag'} ({source})",
              file=sys.stderr)
        return 2
    if kind != "scene":
        from .playback import play_back
        return play_back(args)
    return _view_scene(args)


def _view_scene(args) -> int:
    from ..scenes import load_named_scene, scene_names
    from ..sim import ModelError, SimulationError
    from ..tools import format_summary, warm_up_timed
    import os
    path = args.source if args.source.endswith((".yaml", ".yml")) else None
    if path is None and args.source not in scene_names():
        print(f"cond-ros view: {args.source!r} is neither a scene ({', '.join(scene_names())}), a scene YAML, a "
              ".csv nor a bag", file=sys.stderr)
        return 2
    if path is not None and not os.path.isfile(path):
        print(f"cond-ros view: {path}: no such file", file=sys.stderr)
        return 2
    try:
        scene = load_named_scene(os.path.splitext(os.path.basename(args.source))[0] if path else args.source,
                                 path=path)
        warm_up_timed(scene)
        steps = int(round(scene.duration / scene.simulator.dt))
        result = run_viewed(scene, steps, desc=args.source, progress=True, real_time_factor=args.real_time_factor,
                            paused=args.paused, linger_s=args.linger, host=args.host, port=args.port, fps=args.fps)
    except ModelError as exc:
        print(f"cond-ros view: {exc}", file=sys.stderr)
        return 2
    except (SimulationError, ViewerUnavailable) as exc:
        print(f"cond-ros view: {exc}", file=sys.stderr)
        return 1
    if result is None:
        return 1
    print(format_summary(args.source, result.summary()))
    return 0
