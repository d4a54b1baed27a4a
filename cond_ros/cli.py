"""The ``cond-ros`` command: run scenes headless and run benchmarks.

    cond-ros run SCENE --headless [--steps N] [--solver cond] [--out run.csv]
    cond-ros bench NAME [--json] [--quick] [--out FILE]
    cond-ros scenes
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time


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
    result = BENCHMARKS[args.name](quick=args.quick, quiet=args.json)
    text = json.dumps(result, indent=None if args.json else 2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")
    print(text)
    return 0


def _cmd_run(args) -> int:
    import numpy as np
    from tqdm import tqdm

    from .sim import ModelError, SimulationError
    from .tools.scenes import SCENES, load_named_scene
    if _unknown("run", "scene", args.scene, SCENES):
        return 2
    if not args.headless:
        print("cond-ros run: only --headless is available until the ROS node exists (issue 6)", file=sys.stderr)
        return 2
    try:
        sim, script, duration = load_named_scene(args.scene, dt=args.dt, solver=args.solver)
    except ModelError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 2
    steps = args.steps if args.steps is not None else int(round(duration / sim.dt))
    rows = []
    t0 = time.perf_counter()
    try:
        for _ in tqdm(range(steps), desc=args.scene, unit="step", disable=args.quiet):
            st = sim.step(script.control(sim.state.time) if script else None)
            rows.append((sim.state.time, st.iterations, st.residual, st.contact_count, st.max_penetration,
                         st.collision_ms, st.dynamics_ms, st.solver_ms))
    except SimulationError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    if args.out:
        with open(args.out, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["time_s", "iterations", "residual", "contacts", "max_penetration_m", "collision_ms",
                             "dynamics_ms", "solver_ms"])
            writer.writerows(rows)
    arr = np.array(rows) if rows else np.zeros((0, 8))
    sim_time = steps * sim.dt
    print(f"{args.scene}: {steps} steps ({sim_time:.2f} s simulated) in {wall:.2f} s wall "
          f"(real-time factor {sim_time / wall:.2f}, first step includes JIT compile)")
    if len(arr):
        print(f"  iterations mean {arr[:, 1].mean():.1f}, max {arr[:, 1].max():.0f}; "
              f"max penetration {1e3 * arr[:, 4].max():.4f} mm; contacts mean {arr[:, 3].mean():.1f}")
        print(f"  median ms per step: collision {np.median(arr[:, 5]):.3f}, dynamics {np.median(arr[:, 6]):.3f}, "
              f"solver {np.median(arr[:, 7]):.3f}")
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
    run.add_argument("--out", help="write per-step statistics to this CSV file")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_cmd_run)
    bench = sub.add_parser("bench", help="run a benchmark (box_sliding, chebyshev, scaling)")
    bench.add_argument("name")
    bench.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes (CI)")
    bench.add_argument("--out", help="also write the JSON to this file")
    bench.set_defaults(func=_cmd_bench)
    scenes = sub.add_parser("scenes", help="list built-in scenes")
    scenes.set_defaults(func=_cmd_scenes)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
