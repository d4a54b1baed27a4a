"""A benchmark at two commits, interleaved in one run: the way to show that a change made something faster.

    python benchmarks/ab_commits.py BEFORE AFTER [--bench panda_cable] [--repeats 3] [--name NAME] [-- ARGS]

(e.g. ``-- --segments 160`` for the cable at 160 segments)

BEFORE and AFTER are commits (anything ``git worktree add`` takes) of this repository. Each is checked out
into a temporary worktree, and ``cond-ros bench BENCH --json ARGS`` alternates between them ``--repeats``
times, each run in its own process with that checkout first on ``PYTHONPATH``. These machines' speed
moves ~2x from day to day, so only numbers taken together compare. Writes every run, the medians and
their ratios to ``results/ab_<NAME>.json`` (NAME defaults to BENCH) and prints a table. The deterministic
fields (iterations, penetration, forces) are checked to be equal in every run; a difference is reported,
not hidden.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TIMING_WORDS = ("_ms", "realtime", "wall", "csv", "overruns", "rss", "latency_samples")  # measured, not simulated


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"ab_commits: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def _checkout(commit: str, where: pathlib.Path) -> pathlib.Path:
    _run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(where), commit])
    return where


def _bench(tree: pathlib.Path, bench: str, extra: list) -> dict:
    cmd = [sys.executable, "-m", "cond_ros.cli", "bench", bench, "--json", *extra]
    return json.loads(_run(cmd, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}))


def _numbers(result: dict, prefix: str = "") -> dict:
    """The numbers of a benchmark's JSON, nested ones as "outer.inner" (the node's latency median and p99)."""
    out = {}
    for k, v in result.items():
        if isinstance(v, dict):
            out.update(_numbers(v, f"{prefix}{k}."))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f"{prefix}{k}"] = v
    return out


def summarize(runs: dict) -> tuple:
    """(timing keys, medians per label, deterministic keys whose value varies) of ``runs`` (label -> the
    :func:`_numbers` of each run), over the keys every label's first run has."""
    keys = sorted(set.intersection(*(set(r[0]) for r in runs.values())))
    timing = [k for k in keys if any(w in k for w in TIMING_WORDS)]
    medians = {label: {k: statistics.median(r[k] for r in rs) for k in keys} for label, rs in runs.items()}
    varying = [k for k in keys if k not in timing and len({r[k] for rs in runs.values() for r in rs}) > 1]
    return timing, medians, varying


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--bench", default="panda_cable")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default=None)
    # what follows "--" goes to cond-ros bench as it is (argparse refused options there: "--segments 160")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.extra = extra
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cond_ros_ab_") as tmp:
        trees = {side: _checkout(commit, pathlib.Path(tmp) / side)
                 for side, commit in (("before", args.before), ("after", args.after))}
        try:  # each bench compiles (or loads) its kernels in its own warm-up, outside its timing
            runs = {"before": [], "after": []}
            for round_ in range(args.repeats):
                for side, tree in trees.items():
                    runs[side].append(_numbers(_bench(tree, args.bench, args.extra)))
                    print(f"round {round_ + 1}/{args.repeats} {side}: "
                          + ", ".join(f"{k} {v:.4g}" for k, v in runs[side][-1].items() if any(w in k for w in
                                                                                              TIMING_WORDS)))
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
    timing, medians, varying = summarize(runs)
    changed = {k: (runs["before"][0][k], runs["after"][0][k]) for k in varying}
    summary = {"bench": args.bench, "args": args.extra, "before": args.before, "after": args.after,
               "repeats": args.repeats, "medians": medians,
               "after_over_before": {k: medians["after"][k] / medians["before"][k] for k in timing
                                     if medians["before"][k]},
               "deterministic_fields_that_differ": changed, "runs": runs}
    out = RESULTS / f"ab_{args.name or args.bench}.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{'measure':24s} {'before':>10s} {'after':>10s} {'after/before':>13s}")
    for k in timing:
        ratio = summary["after_over_before"].get(k, float("nan"))
        print(f"{k:24s} {medians['before'][k]:10.4g} {medians['after'][k]:10.4g} {ratio:13.3f}")
    print("deterministic fields: " + ("all equal in every run" if not changed else f"DIFFER: {changed}"))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
