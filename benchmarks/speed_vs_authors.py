"""Our panda_cable step against the COND authors' own implementation, one core against one core, in one run.

    python benchmarks/speed_vs_authors.py --release DIR --driver RUN_SH [--segments 160 320] [--repeats 3]
                                          [--threads 1] [--steps 5500]

DIR is a checkout of the authors' release (the repository the COND paper names,
INRoL/inrol_sim_cablewinding: ``build/cable_benchmark.dll`` and ``data/``); RUN_SH the script that runs
that Windows DLL under Wine on its published trajectory and times each ``forward()`` call (the team keeps
one beside the checkout, in ``shared/tools/authors_dll/run.sh``; it needs Debian's wine and mingw-w64).
Neither is part of this repository, so this is a benchmark and never a test.

For each repeat and segment count it runs the authors' 5500 steps (``--threads 1``: their OpenMP pinned to
one thread; they ship 4) and then ``cond-ros bench panda_cable --segments N`` (the same 55 s, one
thread), alternating, each in its own process. These machines' speed moves ~2x from day to day: only runs
made together compare. Theirs is ``forward()`` alone. Ours is given twice: the whole loop per step (physics,
the F/T sensor, the tool pose and the CSV row: wall / steps), which leans their way, and the time inside
``Simulator.step`` (collision, dynamics, solve, state update: ``physics_ms_mean``), the like-for-like one.
Writes every run and the medians to ``results/speed_vs_authors.json`` and prints a table.
"""
import argparse
import csv
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DT_MS = 10.0


def _run(cmd, **kwargs) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"speed_vs_authors: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def authors_run(driver: pathlib.Path, release: pathlib.Path, segments: int, steps: int, threads: int) -> dict:
    """Their forward() times per step [ms]: mean and median over the run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "authors.csv"
        _run(["bash", str(driver), str(release), str(segments), str(out), str(steps), str(threads)])
        with open(out) as fh:
            rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    if "forward_ms" not in header or len(body) != steps:
        sys.exit(f"speed_vs_authors: the driver wrote {len(body)} rows with columns {header[:4]}...; expected "
                 f"{steps} rows with a forward_ms column")
    times = [float(r[header.index("forward_ms")]) for r in body]
    return {"mean_ms": statistics.fmean(times), "median_ms": statistics.median(times)}


def our_run(segments: int) -> dict:
    """The whole loop per step [ms] (wall / steps), the mean time inside Simulator.step and the three stages'
    medians."""
    result = json.loads(_run([sys.executable, "-m", "cond_ros.cli", "bench", "panda_cable", "--json",
                              "--segments", str(segments)], cwd=ROOT))
    stages = sum(result[k] for k in ("collision_ms", "dynamics_ms", "solver_ms"))
    return {"mean_ms": DT_MS / result["realtime_factor"], "physics_mean_ms": result["physics_ms_mean"],
            "stage_medians_sum_ms": stages,
            "realtime_factor": result["realtime_factor"], "iterations_mean": result["iterations_mean"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True, type=pathlib.Path, help="the authors' release checkout")
    parser.add_argument("--driver", required=True, type=pathlib.Path, help="authors_dll/run.sh")
    parser.add_argument("--segments", type=int, nargs="+", default=[160, 320])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="the DLL's OpenMP threads (ships with 4)")
    parser.add_argument("--steps", type=int, default=5500, help="the authors' steps (5500: the whole 55 s)")
    args = parser.parse_args()
    for path, what in ((args.release / "build" / "cable_benchmark.dll", "--release"), (args.driver, "--driver")):
        if not path.is_file():
            sys.exit(f"speed_vs_authors: {what}: {path} does not exist")
    if args.repeats < 1 or args.steps < 1 or args.threads < 0:
        sys.exit("speed_vs_authors: --repeats and --steps must be >= 1, --threads >= 0")
    runs = {n: {"authors": [], "ours": []} for n in args.segments}
    for repeat in range(args.repeats):
        for n in args.segments:
            runs[n]["authors"].append(authors_run(args.driver, args.release, n, args.steps, args.threads))
            runs[n]["ours"].append(our_run(n))
            a, o = runs[n]["authors"][-1], runs[n]["ours"][-1]
            print(f"repeat {repeat + 1}/{args.repeats}, {n} segments: authors {a['mean_ms']:.2f} ms "
                  f"(median {a['median_ms']:.2f}), ours {o['mean_ms']:.2f} ms a step, {o['physics_mean_ms']:.2f} "
                  f"in Simulator.step", flush=True)
    table = {}
    for n, r in runs.items():
        authors = statistics.median(x["mean_ms"] for x in r["authors"])
        ours = statistics.median(x["mean_ms"] for x in r["ours"])
        physics = statistics.median(x["physics_mean_ms"] for x in r["ours"])
        table[n] = {"authors_mean_ms": authors, "ours_mean_ms": ours, "ours_faster_by": authors / ours,
                    "ours_physics_mean_ms": physics, "ours_physics_faster_by": authors / physics,
                    "authors_median_ms": statistics.median(x["median_ms"] for x in r["authors"])}
    out = {"segments": args.segments, "repeats": args.repeats, "authors_threads": args.threads,
           "authors_steps": args.steps, "machine_cores": os.cpu_count(), "medians": table, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "speed_vs_authors.json").write_text(json.dumps(out, indent=2))
    print(f"\n{'segments':>8} {'authors ms':>11} {'ours ms':>8} {'faster by':>10} {'ours physics ms':>16} "
          f"{'faster by':>10}   (medians of {args.repeats})")
    for n, row in table.items():
        print(f"{n:>8} {row['authors_mean_ms']:>11.2f} {row['ours_mean_ms']:>8.2f} {row['ours_faster_by']:>9.2f}x "
              f"{row['ours_physics_mean_ms']:>16.2f} {row['ours_physics_faster_by']:>9.2f}x")
    print(f"wrote {RESULTS / 'speed_vs_authors.json'}")


if __name__ == "__main__":
    main()
