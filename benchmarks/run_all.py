"""Run every ``cond-ros bench`` several times and write the medians to ``benchmarks/results/``.

    python benchmarks/run_all.py [--repeats 3] [--quick]

Each benchmark's numbers are compared inside one run (COND vs penalty,
Chebyshev on vs off, DOF vs DOF); timings are medians over the repeats
because these 2-core machines are noisy.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
NAMES = ("box_sliding", "chebyshev", "scaling", "panda_pick")


def median_of(runs):
    """Element-wise median of numbers (and lists of numbers) across runs; other values from the first run."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: median_of([r[k] for r in runs]) for k in first}
    if isinstance(first, list) and first and all(isinstance(x, (int, float)) for x in first):
        return [statistics.median(col) for col in zip(*runs)]
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return statistics.median(runs)
    return first


def r_squared(x, y):
    """Coefficient of determination of the least-squares line through (x, y)."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    syy = sum((b - my) ** 2 for b in y)
    return sxy * sxy / (sxx * syy)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    for name in NAMES:
        runs = []
        for _ in range(args.repeats):
            cmd = [sys.executable, "-m", "cond_ros.cli", "bench", name, "--json"] + (["--quick"] if args.quick else [])
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            runs.append(json.loads(out))
        result = median_of(runs)
        if "dof" in result and "solver_ms" in result:
            result["r2_linear"] = r_squared(result["dof"], result["solver_ms"])  # of the medians, not a median of fits
        result["repeats"] = args.repeats
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
        print(f"{name}: written {RESULTS / (name + '.json')}")


if __name__ == "__main__":
    main()
