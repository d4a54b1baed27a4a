"""Do two commits simulate the same? The check behind "no behaviour change" (issue 28) and "accuracy does not
move" (issue 29).

    python benchmarks/same_outputs.py BEFORE AFTER [--steps 1000] [--scenes panda_cable panda_pick] [--no-paper]
                                      [--cable 160 320 [--cable-steps 5500]]

BEFORE and AFTER are commits of this repository, each checked out into a temporary worktree and run in its own
processes with that checkout first on ``PYTHONPATH``. For every scene, ``cond-ros run SCENE --headless --steps
N --out`` writes its per-step CSV at both commits, and every column but the timing ones (``*_ms``) is compared
row by row: the result is the number of columns that are bit-identical and, for those that are not, the
largest absolute difference. ``cond-ros bench paper --quick --json`` is compared the same way, value by
value (timings aside). ``--cable N ...`` also runs the whole cable scene (``cond-ros bench panda_cable
--segments N``, 55 s) at both commits and reports what issue 29 bounds where arithmetic was reordered: the
RMS and largest difference per axis of the tool force and the F/T wrench (base frame), and the max
penetration of each. Writes ``results/same_outputs.json``, prints a table, and exits 1 if anything
differs (for ``--cable``: a tool-force RMS over 1e-4 N, or max penetrations more than 1e-9 m apart) or a run failed.
"""
import argparse
import csv
import json
import math
import os
import pathlib
import sys
import tempfile

from ab_commits import RESULTS, ROOT, _checkout, _run  # noqa: E402 (a sibling script)

# timings, and what is computed from them (a fit of ms against DOF, a ratio of solver times)
TIMING_KEYS = ("_ms", "realtime", "wall", "csv", "seconds", "r2_linear", "slope_us", "time_ratio")


def _cli(tree: pathlib.Path, *args: str) -> str:
    return _run([sys.executable, "-m", "cond_ros.cli", *args], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})


def _read_csv(path: pathlib.Path) -> dict:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {key: [row[key] for row in rows] for key in rows[0]} if rows else {}


def _compare_columns(before: dict, after: dict) -> dict:
    """Per non-timing column: identical (as text, i.e. bit for bit as written) or the largest difference."""
    out = {"columns": 0, "identical": 0, "rows": len(next(iter(before.values()), [])), "differ": {},
           "only_before": sorted(set(before) - set(after)), "only_after": sorted(set(after) - set(before))}
    for key in sorted(set(before) & set(after)):
        if key.endswith("_ms"):
            continue
        out["columns"] += 1
        a, b = before[key], after[key]
        if a == b:
            out["identical"] += 1
            continue
        if len(a) != len(b):
            out["differ"][key] = f"{len(a)} rows against {len(b)}"
            continue
        out["differ"][key] = max(abs(float(x) - float(y)) for x, y in zip(a, b))
    return out


def _flatten(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, value


def _compare_values(before: dict, after: dict) -> dict:
    a = {k: v for k, v in _flatten(before) if not any(w in k for w in TIMING_KEYS)}
    b = {k: v for k, v in _flatten(after) if not any(w in k for w in TIMING_KEYS)}
    differ = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, "<missing>"), b.get(key, "<missing>")
        same = x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
        if not same:
            differ[key] = [x, y]
    return {"values": len(set(a) | set(b)), "identical": len(set(a) | set(b)) - len(differ), "differ": differ}


CABLE_AXES = ([f"wrist_ft_tool_force_base_f{a}" for a in "xyz"]
              + [f"wrist_ft_base_{a}" for a in ("fx", "fy", "fz", "tx", "ty", "tz")])


def _compare_cable(trees: dict, tmp: pathlib.Path, segments: int, steps) -> dict:
    """Issue 29's bounds on the whole cable run: tool force within 1e-4 N RMS, max penetration unchanged (to
    1e-9 m, i.e. reordered rounding)."""
    columns = {}
    for side, tree in trees.items():
        out = tmp / f"cable_{segments}_{side}.csv"
        _cli(tree, "bench", "panda_cable", "--segments", str(segments), "--json", "--csv", str(out),
             *(["--steps", str(steps)] if steps else []))
        columns[side] = _read_csv(out)
    diff = {k: [float(x) - float(y) for x, y in zip(columns["before"][k], columns["after"][k])] for k in CABLE_AXES}
    out = {"rms": {k: math.sqrt(sum(d * d for d in v) / len(v)) for k, v in diff.items()},
           "max_abs": {k: max(abs(d) for d in v) for k, v in diff.items()},
           "max_penetration_m": {side: max(float(x) for x in c["max_penetration_m"]) for side, c in columns.items()}}
    out["within_bounds"] = (max(out["rms"][k] for k in CABLE_AXES[:3]) <= 1e-4
                            and abs(out["max_penetration_m"]["before"] - out["max_penetration_m"]["after"]) <= 1e-9)
    print(f"cable {segments} segments: tool force RMS difference "
          + ", ".join(f"{out['rms'][k]:.2e}" for k in CABLE_AXES[:3]) + " N; max penetration "
          + f"{out['max_penetration_m']['before']:.3e} / {out['max_penetration_m']['after']:.3e} m")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--scenes", nargs="+", default=["panda_cable", "panda_pick"])
    parser.add_argument("--no-paper", action="store_true", help="skip `cond-ros bench paper --quick`")
    parser.add_argument("--cable", type=int, nargs="*", default=[], help="segment counts of the whole cable run")
    parser.add_argument("--cable-steps", type=int, default=None, help="steps of the cable run (default: all)")
    args = parser.parse_args()
    if args.steps < 1:
        sys.exit("same_outputs: --steps must be >= 1")
    RESULTS.mkdir(exist_ok=True)
    summary = {"before": args.before, "after": args.after, "steps": args.steps, "scenes": {}}
    with tempfile.TemporaryDirectory(prefix="cond_ros_same_") as tmp:
        tmp = pathlib.Path(tmp)
        trees = {side: _checkout(commit, tmp / side) for side, commit in (("before", args.before),
                                                                          ("after", args.after))}
        try:
            for scene in args.scenes:
                tables = {}
                for side, tree in trees.items():
                    out = tmp / f"{scene}_{side}.csv"
                    _cli(tree, "run", scene, "--headless", "--quiet", "--steps", str(args.steps), "--out", str(out))
                    tables[side] = _read_csv(out)
                summary["scenes"][scene] = _compare_columns(tables["before"], tables["after"])
                s = summary["scenes"][scene]
                print(f"{scene}: {s['identical']}/{s['columns']} non-timing columns identical over {s['rows']} rows"
                      + (f"; differ: {s['differ']}" if s["differ"] else ""))
            if not args.no_paper:
                papers = {side: json.loads(_cli(tree, "bench", "paper", "--quick", "--json"))
                          for side, tree in trees.items()}
                summary["paper_quick"] = _compare_values(papers["before"], papers["after"])
                p = summary["paper_quick"]
                print(f"bench paper --quick: {p['identical']}/{p['values']} non-timing values identical"
                      + (f"; differ: {p['differ']}" if p["differ"] else ""))
            for segments in args.cable:
                summary.setdefault("cable", {})[str(segments)] = _compare_cable(trees, tmp, segments, args.cable_steps)
        finally:
            for tree in trees.values():
                _run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])
    out = RESULTS / "same_outputs.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {out}")
    differs = any(s["differ"] or s["only_before"] or s["only_after"] for s in summary["scenes"].values())
    differs = differs or bool(summary.get("paper_quick", {}).get("differ"))
    differs = differs or any(not c["within_bounds"] for c in summary.get("cable", {}).values())
    sys.exit(1 if differs else 0)


if __name__ == "__main__":
    main()
