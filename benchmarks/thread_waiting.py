"""How numba's worker threads wait between parallel regions, measured: OpenMP asleep, OpenMP spinning, and TBB.

    python benchmarks/thread_waiting.py [--bench soft_gripper] [--spin 3000] [--tbb] [--repeats 3] [--busy]
                                        [-- ARGS]

numba runs the ``prange`` kernels on a threading layer. With OpenMP (libgomp), cond_ros sets
``OMP_WAIT_POLICY=PASSIVE`` (``cond_ros/sim/jit.py``): a worker sleeps as soon as a parallel region ends, and the
next region waits for it to wake up. A ``GOMP_SPINCOUNT`` in the environment overrides that: the worker spins
that many rounds first, and a spinning worker takes a core that another process may need. TBB's workers spin
while yielding, then sleep. V-FPI on a large FEM scene runs one parallel A x per iteration with serial work
between them, so the wake-ups add up there. This runs ``cond-ros bench BENCH --json ARGS`` on OpenMP asleep, on
OpenMP with each ``GOMP_SPINCOUNT`` of ``--spin`` and, with ``--tbb``, on TBB (``NUMBA_THREADING_LAYER``; the
``tbb`` package, a dependency on x86-64), alternating, ``--repeats`` times, each in a fresh process; with
``--busy``, each also beside a second process that keeps one core busy (in its own process group, ended with
the run). The layer changes no arithmetic: the deterministic fields (iterations, penetration, forces) must
agree in every run, and a difference is reported. Writes every run and the medians to
``results/thread_waiting_<NAME>.json`` (NAME defaults to BENCH) and prints a table.
"""
import argparse
import contextlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys

from ab_commits import RESULTS, ROOT, TIMING_WORDS, _numbers, summarize

BUSY = "while True:\n    pass"


@contextlib.contextmanager
def _busy_core(on: bool):
    """A second process spinning on one core while the block runs (nothing when ``on`` is False)."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", BUSY], start_new_session=True)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _bench(bench: str, extra: list, env: dict) -> dict:
    cmd = [sys.executable, "-m", "cond_ros.cli", "bench", bench, "--json", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    if proc.returncode != 0:
        sys.exit(f"thread_waiting: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return _numbers(json.loads(proc.stdout))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="soft_gripper")
    parser.add_argument("--spin", type=int, nargs="*", default=[3000],
                        help="GOMP_SPINCOUNT values to compare (none: --spin alone)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tbb", action="store_true", help="also run on numba's TBB layer (the tbb package)")
    parser.add_argument("--busy", action="store_true", help="also run each beside a process that keeps a core busy")
    parser.add_argument("--name", default=None)
    argv = sys.argv[1:]  # what follows "--" goes to cond-ros bench as it is
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    base = {k: v for k, v in os.environ.items()
            if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")}
    omp = {**base, "NUMBA_THREADING_LAYER": "omp"}
    waits = {"omp asleep": omp, **{f"omp spin {n}": {**omp, "GOMP_SPINCOUNT": str(n)} for n in args.spin}}
    if args.tbb:
        try:  # a library, no Python module
            importlib.metadata.version("tbb")
        except importlib.metadata.PackageNotFoundError:
            sys.exit("thread_waiting: --tbb needs the tbb package (x86-64 only): pip install tbb")
        waits["tbb"] = {**base, "NUMBA_THREADING_LAYER": "tbb"}
    loads = ["idle", "busy"] if args.busy else ["idle"]
    runs = {f"{w}, {load}": [] for load in loads for w in waits}
    for round_ in range(args.repeats):
        for load in loads:
            for wait, env in waits.items():
                with _busy_core(load == "busy"):
                    result = _bench(args.bench, extra, env)
                runs[f"{wait}, {load}"].append(result)
                print(f"round {round_ + 1}/{args.repeats} {wait}, {load}: "
                      + ", ".join(f"{k} {v:.4g}" for k, v in result.items() if any(w in k for w in TIMING_WORDS)),
                      flush=True)
    timing, medians, varying = summarize(runs)
    differ = {k: sorted({r[k] for rs in runs.values() for r in rs}) for k in varying}
    summary = {"bench": args.bench, "args": extra, "repeats": args.repeats, "cpus": os.cpu_count(),
               "medians": medians, "deterministic_fields_that_differ": differ, "runs": runs}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"thread_waiting_{args.name or args.bench}.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    shown = [k for k in ("realtime_factor", "solver_ms", "dynamics_ms", "collision_ms") if k in timing]
    print(f"{'waiting, load':24s}" + "".join(f"{k:>18s}" for k in shown))
    for label, m in medians.items():
        print(f"{label:24s}" + "".join(f"{m[k]:18.4g}" for k in shown))
    print("deterministic fields: " + ("all equal in every run" if not differ else f"DIFFER: {differ}"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
