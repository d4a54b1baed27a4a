"""panda_cable's cost per step against its segment count: the scaling table and plot of issue 29.

    python benchmarks/cable_scaling.py [--segments 160 320 640 1280] [--steps 1000] [--repeats 3] [--plot-only]

Runs ``cond-ros bench panda_cable --segments N --steps STEPS`` for every N in turn, ``--repeats`` rounds
(interleaved, so every size sees the same machine load), each in its own process, and takes medians per
size: the stage times per step (collision, dynamics, solver), the wall time per step (dt over the real-time
factor) and that per segment. A straight line fitted to wall ms per step against segments gives the
per-segment cost and the fixed cost (robot, sensor, Python); "flat" is the spread of ms per segment over
the sizes (max / min - 1; issue 29 asks for <= 20 %), which a fixed cost alone makes uneven, so the
marginal cost of a segment between consecutive sizes (the slope, flat when the scaling is linear) and its
spread are reported beside it. Writes ``results/cable_scaling.json`` and
``results/cable_scaling.png``.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
STAGES = ("collision_ms", "dynamics_ms", "solver_ms")


def _bench(segments: int, steps: int) -> dict:
    cmd = [sys.executable, "-m", "cond_ros.cli", "bench", "panda_cable", "--segments", str(segments), "--steps",
           str(steps), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"cable_scaling: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def _plot(table: list, fit: dict, path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    fig = Figure(figsize=(11, 4.2), dpi=120)
    ax, per = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    segments = np.array([row["segments"] for row in table], float)
    bottom = np.zeros(len(table))
    for stage in STAGES:  # bars a third of an octave wide on a log2 axis
        values = np.array([row[stage] for row in table])
        ax.bar(segments, values, width=segments * 0.25, bottom=bottom, label=stage.replace("_ms", ""))
        bottom += values
    ax.plot(segments, [row["wall_ms_per_step"] for row in table], "ko-", label="wall per step")
    dense = np.geomspace(segments.min(), segments.max(), 50)
    ax.plot(dense, fit["intercept_ms"] + fit["ms_per_segment"] * dense, "k--", lw=0.8,
            label=f"fit: {fit['intercept_ms']:.2f} ms + {1e3 * fit['ms_per_segment']:.2f} us x segments "
                  "(a line; the axis is log2)")
    ax.set_ylabel("ms per step (dt = 10 ms)")
    ax.set_title("panda_cable, whole steps (medians)")
    # the right panel: what a segment costs, on average (the fixed cost shared out) and at the margin
    per.plot(segments, [1e3 * row["wall_ms_per_segment"] for row in table], "o-", label="wall / segments")
    marginal = fit.get("marginal_ms_per_segment")
    if marginal:
        middle = np.sqrt(segments[:-1] * segments[1:])
        per.plot(middle, 1e3 * np.array(marginal), "s-", label="marginal: d wall / d segments")
        mean = 1e3 * float(np.mean(marginal))
        per.axhspan(0.9 * mean, 1.1 * mean, color="0.85", label="marginal mean +-10 % (a 20 % band)")
    per.set_ylim(bottom=0)
    per.set_ylabel("us per segment and step")
    per.set_title("cost of a segment")
    for axis in (ax, per):
        axis.set_xscale("log", base=2)
        axis.set_xticks(segments, [str(int(n)) for n in segments])
        axis.set_xlabel("cable segments")
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, nargs="+", default=[160, 320, 640, 1280])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--plot-only", action="store_true", help="redraw the plot from results/cable_scaling.json")
    args = parser.parse_args()
    if args.plot_only:
        stored = json.loads((RESULTS / "cable_scaling.json").read_text())
        _plot(stored["table"], stored["fit"], RESULTS / "cable_scaling.png")
        return
    if any(n < 2 for n in args.segments) or args.steps < 2 or args.repeats < 1:
        sys.exit("cable_scaling: --segments must be >= 2, --steps >= 2 and --repeats >= 1")
    RESULTS.mkdir(exist_ok=True)
    runs = {n: [] for n in args.segments}
    for round_ in range(args.repeats):
        for n in args.segments:
            result = _bench(n, args.steps)
            result["wall_ms_per_step"] = 1e3 * result["dt_s"] / result["realtime_factor"]
            runs[n].append(result)
            print(f"round {round_ + 1}/{args.repeats}, {n} segments: {result['wall_ms_per_step']:.2f} ms per step, "
                  f"real-time factor {result['realtime_factor']:.3f}")
    table = []
    for n in args.segments:
        row = {"segments": n, "dof": runs[n][0]["dof"]}
        for key in (*STAGES, "wall_ms_per_step", "realtime_factor", "iterations_mean"):
            row[key] = statistics.median(r[key] for r in runs[n])
        row["wall_ms_per_segment"] = row["wall_ms_per_step"] / n
        table.append(row)
    segments = np.array([row["segments"] for row in table], float)
    wall = np.array([row["wall_ms_per_step"] for row in table])
    slope, intercept = np.polyfit(segments, wall, 1)
    predicted = intercept + slope * segments
    r2 = 1.0 - np.sum((wall - predicted) ** 2) / max(np.sum((wall - wall.mean()) ** 2), 1e-300)
    per_segment = wall / segments
    # what one more segment costs between consecutive sizes: flat when the scaling is linear, whatever the
    # fixed cost (which the average above divides among the segments)
    marginal = np.diff(wall) / np.diff(segments)
    fit = {"ms_per_segment": float(slope), "intercept_ms": float(intercept), "r2": float(r2),
           "per_segment_spread": float(per_segment.max() / per_segment.min() - 1.0),
           "marginal_ms_per_segment": marginal.tolist(),
           "marginal_spread": float(marginal.max() / marginal.min() - 1.0) if len(marginal) > 1 else None}
    out = {"steps": args.steps, "repeats": args.repeats, "table": table, "fit": fit,
           "runs": {str(n): [{k: r[k] for k in (*STAGES, "wall_ms_per_step", "realtime_factor")} for r in runs[n]]
                    for n in args.segments}}
    (RESULTS / "cable_scaling.json").write_text(json.dumps(out, indent=1) + "\n")
    _plot(table, fit, RESULTS / "cable_scaling.png")
    print(f"{'segments':>8s} {'dof':>6s} {'collision':>9s} {'dynamics':>9s} {'solver':>7s} {'iter':>6s} {'wall':>7s} "
          f"{'per seg':>8s} {'RTF':>6s}")
    for row in table:
        print(f"{row['segments']:8d} {row['dof']:6d} {row['collision_ms']:9.3f} {row['dynamics_ms']:9.3f} "
              f"{row['solver_ms']:7.3f} {row['iterations_mean']:6.2f} {row['wall_ms_per_step']:7.3f} "
              f"{1e3 * row['wall_ms_per_segment']:6.2f}us {row['realtime_factor']:6.3f}")
    print(f"fit: wall = {intercept:.3f} ms + {1e3 * slope:.3f} us x segments (R^2 {r2:.4f}); ms per segment "
          f"spread {100 * fit['per_segment_spread']:.0f} %")
    print("marginal cost of a segment between consecutive sizes: "
          + ", ".join(f"{1e3 * m:.2f} us" for m in marginal)
          + ("" if fit["marginal_spread"] is None else f" (spread {100 * fit['marginal_spread']:.0f} %)"))
    print(f"wrote {RESULTS / 'cable_scaling.json'} and {RESULTS / 'cable_scaling.png'}")


if __name__ == "__main__":
    main()
