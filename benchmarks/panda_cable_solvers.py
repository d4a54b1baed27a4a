"""panda_cable's solvers side by side: the scene's COND against primal Newton over the whole 55 s.

    python benchmarks/panda_cable_solvers.py [--segments 320] [--repeats 3] [--solvers cond primal_newton]

Runs ``cond-ros bench panda_cable`` for each solver in turn, ``--repeats`` rounds (interleaved, so both see
the same machine load), each in its own process, and writes the medians and every run to
``results/panda_cable_<N>_solvers.json``; the per-step CSV of each solver's last run is kept beside it
(``results/panda_cable_<N>_<solver>.csv``, the input of ``cable_vs_authors.py --csv``; not committed).
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MEDIAN_KEYS = ("realtime_factor", "solver_ms", "dynamics_ms", "collision_ms", "iterations_mean", "iterations_max",
               "max_penetration_mm")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=320)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--solvers", nargs="+", default=["cond", "primal_newton"])
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    runs = {solver: [] for solver in args.solvers}
    for round_ in range(args.repeats):
        for solver in args.solvers:
            csv = RESULTS / f"panda_cable_{args.segments}_{solver}.csv"
            cmd = [sys.executable, "-m", "cond_ros.cli", "bench", "panda_cable", "--segments", str(args.segments),
                   "--solver", solver, "--csv", str(csv), "--json"]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"panda_cable_solvers: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
            result = json.loads(proc.stdout)
            runs[solver].append({k: result[k] for k in MEDIAN_KEYS})
            print(f"round {round_ + 1}/{args.repeats} {solver}: real-time factor {result['realtime_factor']:.3f}, "
                  f"{result['iterations_mean']:.2f} iterations, solver {result['solver_ms']:.2f} ms", flush=True)
    report = {"segments": args.segments, "repeats": args.repeats,
              "medians": {s: {k: statistics.median(r[k] for r in rs) for k in MEDIAN_KEYS} for s, rs in runs.items()},
              "runs": runs}
    path = RESULTS / f"panda_cable_{args.segments}_solvers.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["medians"], indent=2))
    print(f"written {path}")


if __name__ == "__main__":
    main()
