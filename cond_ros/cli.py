"""The ``cond-ros`` command: run scenes headless and run benchmarks.

    cond-ros run SCENE --headless [--steps N] [--solver cond] [--out run.csv]
    cond-ros bench NAME [--json] [--quick] [--out FILE]
    cond-ros launch NAME [--scene S] [--real-time-factor R] [--lockstep] [--use-sim-time true|false]
    cond-ros scenes
"""
from __future__ import annotations

import argparse
import json
import sys


def _unknown(command: str, what: str, name: str, registry) -> bool:
    """Report an unknown name with the available ones; True if ``name`` is unknown."""
    if name in registry:
        return False
    print(f"cond-ros {command}: unknown {what} {name!r}; available: {', '.join(sorted(registry))}", file=sys.stderr)
    return True


def _cmd_scenes(args) -> int:
    from .tools.scenes import SCENES
    for name in sorted(SCENES):
        print(name)
    return 0


ROS_BENCHMARKS = ("ros_panda_cable",)  # need the ros extra; run by cond_ros.ros.bench
ROS_BENCH_DEFAULT_DURATION_S = 60.0  # simulated seconds (about 3 minutes at 320 segments here)


def _cmd_bench(args) -> int:
    from .tools.benchmarks import BENCHMARKS
    if _unknown("bench", "benchmark", args.name, list(BENCHMARKS) + list(ROS_BENCHMARKS)):
        return 2
    ros_only = {k: getattr(args, k) for k in ("duration", "scene") if getattr(args, k) is not None}
    if ros_only and args.name not in ROS_BENCHMARKS:
        print(f"cond-ros bench: --duration/--scene apply to ros_panda_cable only, not {args.name!r}", file=sys.stderr)
        return 2
    extra = {k: getattr(args, k) for k in ("segments", "steps", "csv") if getattr(args, k) is not None}
    if extra and args.name != "panda_cable":
        print(f"cond-ros bench: --segments/--steps/--csv apply to panda_cable only, not {args.name!r}", file=sys.stderr)
        return 2
    if args.name in ROS_BENCHMARKS:
        try:
            from .ros.bench import bench_ros_panda_cable
        except ImportError as exc:
            print(f"cond-ros bench: {args.name} needs rclpy ({exc}); pip install -e '.[ros]'", file=sys.stderr)
            return 2
        result = bench_ros_panda_cable(duration=ros_only.get("duration", ROS_BENCH_DEFAULT_DURATION_S),
                                       scene=ros_only.get("scene", "panda_cable"), quiet=args.json)
    else:
        result = BENCHMARKS[args.name](quick=args.quick, quiet=args.json, **extra)
    text = json.dumps(result, indent=None if args.json else 2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")
    print(text)
    return 0


def _cmd_run(args) -> int:
    from .sim import ModelError, SimulationError
    from .tools.runner import format_summary, run_scene
    from .tools.scenes import SCENES, load_named_scene
    if args.scene_file is None and _unknown("run", "scene", args.scene, SCENES):
        return 2
    if not args.headless:
        print("cond-ros run: only --headless is available until the ROS node exists (issue 6)", file=sys.stderr)
        return 2
    try:
        scene = load_named_scene(args.scene, dt=args.dt, solver=args.solver, path=args.scene_file)
    except ModelError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 2
    sim = scene.simulator
    steps = args.steps if args.steps is not None else int(round(scene.duration / sim.dt))
    if steps < 0:
        print(f"cond-ros run: --steps must be >= 0, got {steps}", file=sys.stderr)
        return 2
    try:
        result = run_scene(scene, steps, progress=not args.quiet, desc=args.scene)
    except SimulationError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 1
    if args.out:
        result.write_csv(args.out)
    print(format_summary(args.scene, result.summary()))
    return 0


def _cmd_launch(args) -> int:
    from .ros.launch_config import LAUNCHES
    from .ros.launcher import run_launch
    if _unknown("launch", "launch", args.name, LAUNCHES):
        return 2
    import importlib.util
    if importlib.util.find_spec("rclpy") is None:
        print("cond-ros launch: rclpy is not installed; pip install -e '.[ros]' (or source a ROS 2 distribution)",
              file=sys.stderr)
        return 2
    overrides = {k: v for k, v in (("scene", args.scene), ("real_time_factor", args.real_time_factor),
                                   ("lockstep", "true" if args.lockstep else None),
                                   ("use_sim_time", args.use_sim_time)) if v is not None}
    try:
        return run_launch(args.name, overrides, duration=args.duration)
    except ValueError as exc:
        print(f"cond-ros launch: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cond-ros", description="COND contact simulation for ROS 2.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a built-in scene")
    run.add_argument("scene", help="scene name (see `cond-ros scenes`)")
    run.add_argument("--headless", action="store_true", help="no viewer (required for now)")
    run.add_argument("--steps", type=int, default=None, help="steps to run (default: the scene's duration)")
    run.add_argument("--dt", type=float, default=None, help="time step [s] (default: the scene's, else 0.01)")
    run.add_argument("--solver", default=None, help="contact solver (cond, penalty; default: the scene's)")
    run.add_argument("--out", help="write one CSV row per step: time, solver statistics, joint positions, tool pose, "
                                   "F/T readings (sensor and base frame)")
    run.add_argument("--scene-file", default=None, help="load this scene YAML instead of config/SCENE.yaml")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)
    bench = sub.add_parser("bench", help="run a benchmark (box_sliding, chebyshev, scaling, panda_pick, panda_cable, "
                                         "ros_panda_cable)")
    bench.add_argument("name")
    bench.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes (CI)")
    bench.add_argument("--out", help="also write the JSON to this file")
    bench.add_argument("--segments", type=int, default=None, help="panda_cable: cable segments (default 320)")
    bench.add_argument("--steps", type=int, default=None, help="panda_cable: steps (default: the whole 55 s)")
    bench.add_argument("--csv", default=None, help="panda_cable: per-step CSV path (default: in the temp dir)")
    bench.add_argument("--duration", type=float, default=None,
                       help=f"ros_panda_cable: simulated seconds (default {ROS_BENCH_DEFAULT_DURATION_S:g})")
    bench.add_argument("--scene", default=None, help="ros_panda_cable: scene (default panda_cable, 320 segments)")
    bench.set_defaults(func=_cmd_bench)
    launch = sub.add_parser("launch", help="start a launch's ROS 2 nodes without launch_ros (panda_cable)")
    launch.add_argument("name", help="launch name (panda_cable: the sim and the winding demo controller)")
    launch.add_argument("--scene", default=None, help="scene name or YAML path (default panda_cable)")
    launch.add_argument("--real-time-factor", default=None, help="target simulated / wall time (default 1.0)")
    launch.add_argument("--lockstep", action="store_true", help="each step waits for the controller's command")
    launch.add_argument("--use-sim-time", default=None, help="true|false: the controller runs on /clock (default true)")
    launch.add_argument("--duration", type=float, default=None, help="stop after this many wall seconds")
    launch.set_defaults(func=_cmd_launch)
    scenes = sub.add_parser("scenes", help="list built-in scenes")
    scenes.set_defaults(func=_cmd_scenes)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
