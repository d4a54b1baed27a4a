"""Issue 30's chart: each scene's real-time factor before and after, beside its target.

    python benchmarks/realtime_chart.py [--suffix issue30 | --threading]

Reads the interleaved runs of ``ab_commits.py`` (``results/ab_<scene>_<suffix>.json``, medians of their
runs; run them first), or with ``--threading`` those of ``thread_waiting.py --tbb`` (``results/
thread_waiting_<scene>.json``: the same code on numba's OpenMP layer, asleep, against TBB, on an idle machine),
prints the table and writes ``results/realtime.png`` and ``results/realtime.json``. A scene without its file
is left out and named.
"""
import argparse
import json
import pathlib
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"

#: issue 30's targets (real-time factor on 2 cores)
TARGETS = {"panda_pick": 2.0, "cloth_drape": 1.5, "soft_ball": 1.0, "soft_mat": 1.0, "soft_gripper": 0.5}
#: what differs between a scene's before and after besides speed (shown under its name), by run suffix
NOTES = {"issue30": {"panda_pick": "before: dt 10 ms,\nbox slid 4.7 mm"}}
TICKS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]


#: thread_waiting.py's runs the --threading chart compares (before, after), and how the chart names them
THREADING = (("omp asleep, idle", "OpenMP"), ("tbb, idle", "TBB"))


def _rows(suffix: str, threading: bool = False) -> tuple[list, list]:
    rows, missing = [], []
    for scene, target in TARGETS.items():
        path = RESULTS / (f"thread_waiting_{scene}.json" if threading else f"ab_{scene}_{suffix}.json")
        if not path.exists():
            missing.append(path.name)
            continue
        run = json.loads(path.read_text())
        medians = run["medians"]
        if threading:
            (before, before_name), (after, after_name) = THREADING
            if before not in medians or after not in medians:
                missing.append(f"{path.name} (no '{before}' or '{after}' runs: thread_waiting.py --tbb)")
                continue
            before, after = medians[before], medians[after]
        else:
            before_name, after_name = run["before"], run["after"]
            before, after = medians["before"], medians["after"]
        rows.append({"scene": scene, "before_commit": before_name, "after_commit": after_name,
                     "before": before["realtime_factor"], "after": after["realtime_factor"],
                     "target": target, "repeats": run["repeats"],
                     "identical_outputs": not run["deterministic_fields_that_differ"]})
    return rows, missing


def _plot(rows: list, path: pathlib.Path, suffix: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8.0, 4.2), dpi=120)
    ax = fig.subplots()
    x = list(range(len(rows)))
    width = 0.36
    ax.bar([i - width / 2 for i in x], [r["before"] for r in rows], width, label="before", color="#9aa5b1")
    ax.bar([i + width / 2 for i in x], [r["after"] for r in rows], width, label="after", color="#1f77b4")
    for i, r in zip(x, rows):
        ax.plot([i - 0.45, i + 0.45], [r["target"]] * 2, color="#d62728", linewidth=2,
                label="target" if i == 0 else None)
        ax.annotate(f"{r['after']:.2f}x", (i + width / 2, r["after"]), ha="center", va="bottom", fontsize=8)
    ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
    ax.set_yscale("log")
    ax.set_yticks(TICKS, [f"{t:g}x" for t in TICKS])
    ax.minorticks_off()
    # room above the tallest bar for its label
    ax.set_ylim(0.1, max(12.0, 1.4 * max(max(r["before"], r["after"]) for r in rows)))
    notes = NOTES.get(suffix, {})
    commits = sorted({(r["before_commit"], r["after_commit"]) for r in rows})
    span = f" ({commits[0][0]} -> {commits[0][1]})" if len(commits) == 1 else ""
    labels = []
    for r in rows:  # each scene's commits under its name when the runs compared different ones
        label = r["scene"] + (f"\n{r['before_commit']} -> {r['after_commit']}" if not span else "")
        labels.append(label + ("\n" + notes[r["scene"]] if r["scene"] in notes else ""))
    ax.set_xticks(x, labels, fontsize=7 if not span else 8)
    ax.set_ylabel("real-time factor (log scale)")
    ax.set_title(f"Real-time factor per scene, 2 cores, medians of interleaved runs{span}")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suffix", default="issue30", help="the ab_commits.py --name suffix")
    parser.add_argument("--threading", action="store_true",
                        help="chart thread_waiting.py --tbb's runs (OpenMP asleep against TBB) instead")
    args = parser.parse_args()
    rows, missing = _rows(args.suffix, args.threading)
    if missing:
        print("realtime_chart: left out (no file): " + ", ".join(missing), file=sys.stderr)
    if not rows:
        sys.exit("realtime_chart: no results to chart; run " + ("benchmarks/thread_waiting.py --tbb --bench <scene>"
                 if args.threading else f"benchmarks/ab_commits.py --name <scene>_{args.suffix}") + " first")
    print(f"{'scene':14s} {'before':>8s} {'after':>8s} {'target':>7s}  met")
    for r in rows:
        print(f"{r['scene']:14s} {r['before']:8.3f} {r['after']:8.3f} {r['target']:7.2f}  "
              f"{'yes' if r['after'] >= r['target'] else 'no'}")
    (RESULTS / "realtime.json").write_text(json.dumps(rows, indent=1) + "\n")
    _plot(rows, RESULTS / "realtime.png", None if args.threading else args.suffix)
    print(f"wrote {RESULTS / 'realtime.png'} and realtime.json")


if __name__ == "__main__":
    main()
