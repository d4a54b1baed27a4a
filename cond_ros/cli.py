"""The ``cond-ros`` command: run scenes headless and run benchmarks.

    cond-ros run SCENE --headless [--steps N] [--solver cond] [--out run.csv]
    cond-ros bench NAME [--json] [--quick] [--out FILE]
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


def _cmd_bench(args) -> int:
    from .tools.benchmarks import BENCHMARKS
    if _unknown("bench", "benchmark", args.name, BENCHMARKS):
        return 2
    extra = {k: getattr(args, k) for k in ("segments", "steps", "csv") if getattr(args, k) is not None}
    if extra and args.name != "panda_cable":
        print(f"cond-ros bench: --segments/--steps/--csv apply to panda_cable only, not {args.name!r}", file=sys.stderr)
        return 2
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
    bench = sub.add_parser("bench", help="run a benchmark (box_sliding, chebyshev, scaling, panda_pick, panda_cable)")
    bench.add_argument("name")
    bench.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes (CI)")
    bench.add_argument("--out", help="also write the JSON to this file")
    bench.add_argument("--segments", type=int, default=None, help="panda_cable: cable segments (default 320)")
    bench.add_argument("--steps", type=int, default=None, help="panda_cable: steps (default: the whole 55 s)")
    bench.add_argument("--csv", default=None, help="panda_cable: per-step CSV path (default: in the temp dir)")
    bench.set_defaults(func=_cmd_bench)
    scenes = sub.add_parser("scenes", help="list built-in scenes")
    scenes.set_defaults(func=_cmd_scenes)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
