"""The README's main job as a new user first runs it: how long the compile phase takes, how long the steps.

    python benchmarks/first_run.py [--job main|cloth] [--repeats 3] [--out FILE]

Each repeat runs the job with an empty numba cache of its own (``NUMBA_CACHE_DIR``), as on a fresh clone,
then once more with that cache filled. It reads the compile phase's timer (``compiling kernels ...: MM:SS``,
the last value shown), the summary's wall time and real-time factor (without the compile), and times the
whole command. Writes each run and the medians to ``benchmarks/results/first_run_<job>.json`` (or ``--out``).

Jobs: ``main``, the README's main job since issue 34 (``cond-ros run panda_cable --view ...``: the 320-segment
cable with the viewer, its 55 s at real time; here with ``--linger 0 --port 0``); ``cloth``, the main job
before it (``cond-ros run cloth_drape --headless --steps 300``), whose results are ``first_run.json``.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
CLI = [sys.executable, "-m", "cond_ros.cli"]
JOBS = {"main": ["run", "panda_cable", "--view", "--linger", "0", "--port", "0"],
        "cloth": ["run", "cloth_drape", "--headless", "--steps", "300"]}
COMMAND = CLI + JOBS["cloth"]


def run_once(cache_dir: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(COMMAND, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, NUMBA_CACHE_DIR=cache_dir))
    total = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"first_run: {' '.join(COMMAND)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    phase = re.findall(r"compiling kernels [^:]*: (\d+):(\d+)", proc.stderr)
    summary = re.search(r"in ([\d.]+) s wall \(real-time factor ([\d.]+)", proc.stdout)
    if not phase or summary is None:
        raise SystemExit(f"first_run: no compile phase or summary in the output:\n{proc.stdout}\n{proc.stderr[-2000:]}")
    minutes, seconds = phase[-1]
    return dict(total_s=round(total, 2), compile_phase_s=60 * int(minutes) + int(seconds),
                steps_wall_s=float(summary.group(1)), realtime_factor=float(summary.group(2)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job", choices=sorted(JOBS), default="main")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    global COMMAND
    COMMAND = CLI + JOBS[args.job]
    if args.out is None:
        args.out = str(RESULTS / ("first_run.json" if args.job == "cloth" else f"first_run_{args.job}.json"))
    cold, warm = [], []
    for k in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="cond_ros_numba_") as cache:
            cold.append(run_once(cache))
            warm.append(run_once(cache))
        print(f"run {k + 1}: cold {cold[-1]}, warm {warm[-1]}", flush=True)

    def medians(runs):
        return {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    result = dict(command=" ".join(["cond-ros", *COMMAND[3:]]), machine=f"{os.cpu_count()} cores",
                  date=time.strftime("%Y-%m-%d %H:%M"), cold=cold, warm=warm, cold_median=medians(cold),
                  warm_median=medians(warm))
    pathlib.Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({"cold_median": result["cold_median"], "warm_median": result["warm_median"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
