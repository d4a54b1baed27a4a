"""The comparison report: ``report.md``, ``report.json`` and one PNG per axis (real, sim and error).

:func:`write_report` writes every file into a hidden temporary directory beside the target and renames
it into place only once all of them are written, so a report directory is never half-written. An
existing directory at the target is replaced only if it is a report itself.
"""
from __future__ import annotations

import json
import os

import numpy as np

from ..output_paths import write_report_dir
from .compare import Comparison
from .metrics import AXES, METRICS, UNITS

REPORT_FILES = ("report.md", "report.json")
PLOT_POINTS = 20_000  # plots show at most about this many samples per line (every k-th)


def _g(value, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


def _series_rows(c: Comparison) -> list:
    rows = []
    for label, getter in (("bag", lambda s: f"`{s.bag}`"), ("topic", lambda s: f"`{s.topic}`"),
                          ("frame_id", lambda s: f"`{s.frame_id}`"), ("messages", lambda s: str(len(s.stamps_ns))),
                          ("median period", lambda s: f"{s.period_s() * 1e3:.4g} ms"),
                          ("stamps", lambda s: f"{(s.stamps_ns[0] - c.ref_ns) * 1e-9:.6f} .. "
                                               f"{(s.stamps_ns[-1] - c.ref_ns) * 1e-9:.6f} s")):
        rows.append(f"| {label} | {getter(c.real)} | {getter(c.sim)} |")
    return rows


def markdown(c: Comparison, plots=()) -> str:
    """The report as markdown; ``plots`` lists the PNG file names to show."""
    o, d = c.options, c.to_dict()["alignment"]
    origin = "header.stamp" if o.stamps == "header" else "log time"
    lines = ["# Wrench comparison: real vs sim", "",
             f"Error = sim - real, on {len(c.t)} samples from {c.t[0]:.6f} to {c.t[-1]:.6f} s after the real "
             f"topic's first {origin} ({c.ref_ns} ns); time base: {d['time_base']}. Forces in N, torques in N m.",
             ""]
    lines += ["| | real | sim |", "| --- | --- | --- |", *_series_rows(c), ""]
    lines += ["## Alignment", ""]
    if c.lag_source == "estimated":
        e = c.lag_estimate
        lines.append(f"- lag: **{c.lag_s:.6f} s** (real(t) = sim(t - lag)), estimated by cross-correlation (peak "
                     f"correlation {e.correlation:.3f} at {e.lag_s:.6f} s on a {e.grid_period_s * 1e3:.4g} ms grid, "
                     f"axes {', '.join(AXES[j] for j in e.axes)}) and refined by maximum likelihood; the sim "
                     "was shifted by it")
    elif c.lag_source == "given":
        lines.append(f"- lag: {c.lag_s:.6f} s (given); the sim was shifted by it")
    else:
        lines.append("- lag: none removed")
    if o.transform is not None:
        t = o.transform.to_dict()
        lines.append(f"- sim wrench transformed into the real sensor's frame: xyz "
                     f"{np.round(t['translation'], 6).tolist()} m, rpy {np.round(t['rpy'], 6).tolist()} rad")
    else:
        lines.append("- frames: the same, no transform")
    if c.tare is not None:
        lines += [f"- tare: the mean of the first {o.tare_s:g} s removed from each; the real sensor's bias "
                  "(real mean - sim mean) was:", "",
                  "| | " + " | ".join(AXES) + " |", "| --- |" + " --- |" * len(AXES),
                  "| real mean | " + " | ".join(_g(v) for v in c.tare["real"]) + " |",
                  "| sim mean | " + " | ".join(_g(v) for v in c.tare["sim"]) + " |",
                  "| bias removed | " + " | ".join(_g(v) for v in c.tare["real"] - c.tare["sim"]) + " |", ""]
    else:
        lines.append("- tare: none (absolute values compared)")
    if c.masked:
        lines.append(f"- {c.masked} samples in gaps of either series left out")
    lines += ["", "## Whole run", "", "| axis | unit | RMSE | MAE | max error | bias | correlation |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for axis, unit in zip(AXES, UNITS):
        m = c.overall[axis]
        lines.append(f"| {axis} | {unit} | {_g(m.rmse)} | {_g(m.mae)} | {_g(m.max_error)} | {_g(m.bias)} | "
                     f"{_g(m.correlation, 3)} |")
    lines += ["", f"## Windows of {o.window_s:g} s: RMSE per axis", "",
              "| window [s after the first sample] | samples | " + " | ".join(AXES) + " |",
              "| --- | --- |" + " --- |" * len(AXES)]
    for w in c.windows:
        lines.append(f"| {w.start_s:.3f} .. {w.end_s:.3f} | {w.samples} | "
                     + " | ".join(_g(w.metrics[a].rmse) for a in AXES) + " |")
    lines += ["", "The JSON report (`report.json`) has every metric of every window.", ""]
    if c.warnings:
        lines += ["## Warnings", ""] + [f"- {w}" for w in c.warnings] + [""]
    if plots:
        lines += ["## Plots", ""] + [f"![{os.path.splitext(p)[0]}]({p})" for p in plots] + [""]
    return "\n".join(lines)


def plot_axis(c: Comparison, j: int, path: str) -> None:
    """Real and sim (top) and their error (bottom) of axis ``j`` over time, as a PNG."""
    from matplotlib.figure import Figure
    step = max(1, len(c.t) // PLOT_POINTS)
    t = c.t[::step]
    fig = Figure(figsize=(10, 5.5), dpi=100)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw=dict(height_ratios=(2, 1)))
    top.plot(t, c.real_values[::step, j], lw=0.8, label=f"real: {c.real.topic}")
    top.plot(t, c.sim_values[::step, j], lw=0.8, label=f"sim: {c.sim.topic}")
    top.set_ylabel(f"{AXES[j]} [{UNITS[j]}]")
    top.legend(loc="upper right", fontsize="small")
    m = c.overall[AXES[j]]
    top.set_title(f"{AXES[j]}: RMSE {_g(m.rmse)} {UNITS[j]}, max error {_g(m.max_error)} {UNITS[j]}, "
                  f"correlation {_g(m.correlation, 3)}" + (f" (every {step}th sample shown)" if step > 1 else ""))
    bottom.plot(t, c.error[::step, j], lw=0.8, color="tab:red")
    bottom.axhline(0.0, color="black", lw=0.5)
    bottom.set_ylabel(f"sim - real [{UNITS[j]}]")
    bottom.set_xlabel(f"time [s] from stamp {c.ref_ns} ns")
    for ax in (top, bottom):
        ax.grid(True, lw=0.3)
    fig.tight_layout()
    fig.savefig(path)


def write_report(c: Comparison, out_dir, *, plots: bool = True) -> dict:
    """Write the report directory ``out_dir``; returns {"dir", "markdown", "json", "plots"} paths.

    Raises FileExistsError if ``out_dir`` exists and is not a comparison report (nothing is written then).
    """
    pngs = [f"{axis}.png" for axis in AXES] if plots else []

    def write(tmp):
        for j, png in enumerate(pngs):
            plot_axis(c, j, os.path.join(tmp, png))
        with open(os.path.join(tmp, "report.md"), "w") as fh:
            fh.write(markdown(c, pngs))
        result = c.to_dict()
        result["files"] = dict(markdown="report.md", json="report.json", plots=pngs)
        with open(os.path.join(tmp, "report.json"), "w") as fh:
            json.dump(result, fh, indent=2, allow_nan=False)
            fh.write("\n")
    try:
        out = write_report_dir(out_dir, REPORT_FILES, write)
    except FileExistsError:
        raise FileExistsError(f"{out_dir} exists and is not a comparison report; choose another --out") from None
    return dict(dir=out, markdown=os.path.join(out, "report.md"), json=os.path.join(out, "report.json"),
                plots=[os.path.join(out, p) for p in pngs])


def summary_text(c: Comparison) -> str:
    """A few lines for the terminal: lag, bias, and RMSE / correlation per axis."""
    lines = [f"compared {len(c.t)} samples over {c.t[-1] - c.t[0]:.3f} s; lag {c.lag_s:.6f} s ({c.lag_source})"]
    if c.tare is not None:
        lines.append("bias removed (real - sim): " + ", ".join(
            f"{a} {_g(v)}" for a, v in zip(AXES, c.tare["real"] - c.tare["sim"])))
    for axis, unit in zip(AXES, UNITS):
        m = c.overall[axis]
        lines.append(f"  {axis}: " + ", ".join(f"{k} {_g(getattr(m, k))}" for k in METRICS) + f" [{unit}]")
    lines += [f"warning: {w}" for w in c.warnings]
    return "\n".join(lines)
