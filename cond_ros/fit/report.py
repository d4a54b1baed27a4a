"""What ``cond-ros fit`` writes: the fitted overlay, the whole search as JSON, a markdown report and its plots.

    OUT/fitted.yaml     the best parameters as a scene overlay (run, launch, record, replay: --overlay)
    OUT/fit.json        every rollout (parameters, loss, per-axis RMSE, error), the best, the sensitivity
    OUT/report.md       loss before and after per axis, parameters, sensitivity, failed rollouts, the plots
    OUT/traces.png      the F/T the fit compared, real against the sim before and after
    OUT/loss.png        each rollout's loss and the best so far
    OUT/parameters.png  each parameter's path through the search

The directory is written whole or not at all, and replaces only an earlier fit's.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from ..bags import AXES, UNITS, compare_series
from ..output_paths import report_dir_problem, write_report_dir
from ..scenes import Overlay
from .problem import FitProblem
from .search import FAILED_PENALTY, WEAKLY_DETERMINED, FitResult, weakly_determined

FIT_FILES = ("fitted.yaml", "fit.json", "report.md")
PLOTS = ("traces.png", "loss.png", "parameters.png")


def out_dir_problem(out) -> str | None:
    """Why ``out`` cannot take a fit's outputs (checked before the fit starts), or None."""
    return report_dir_problem(out, FIT_FILES)


def fitted_overlay(problem: FitProblem, result: FitResult) -> Overlay:
    return Overlay(dict(result.best.settings), "fitted.yaml", problem.scene)


def _g(value, digits: int = 4) -> str:
    return "n/a" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.{digits}g}"


def _percent(relative) -> str:
    return "n/a" if relative is None else f"{100 * relative:.3g} %"


def write_fit_report(problem: FitProblem, result: FitResult, out, *, command: str = "", plots: bool = True) -> dict:
    """Write the outputs (module docstring) to the directory ``out``; returns their paths."""
    spec = problem.spec
    traces = None
    if plots:
        def with_series(rollout):  # workers return no series: run that one again here
            return rollout if rollout.sim is not None else problem.evaluator(rollout.settings, keep_series=True)
        try:  # a second Ctrl-C skips only this plot
            traces = (with_series(result.before), with_series(result.best))
        except KeyboardInterrupt:
            pass
    pngs = [p for p in PLOTS if p != "traces.png" or traces is not None] if plots else []
    header = (f"cond-ros fit: {problem.scene} against {spec.real.name}, {len(result.rollouts)} rollouts "
              f"({result.ended})\nloss {_g(result.before.loss)} -> {_g(result.best.loss)}"
              + (f"\n{command}" if command else ""))

    def write(tmp):
        with open(os.path.join(tmp, "fitted.yaml"), "w") as fh:
            fh.write(fitted_overlay(problem, result).to_yaml(header))
        document = result.to_dict()
        document.update(scene=problem.scene, scene_file=problem.scene_file, bag=spec.bag, real_topic=spec.real.topic,
                        sim_topic=spec.sim_topic, drive=spec.drive, steps=spec.steps, loss_weights=spec.loss.to_dict(),
                        window_s=[float((spec.real.stamps_ns[i] - spec.real.stamps_ns[0]) * 1e-9) for i in (0, -1)],
                        command=command)
        with open(os.path.join(tmp, "fit.json"), "w") as fh:
            json.dump(document, fh, indent=2, allow_nan=False)
            fh.write("\n")
        if traces is not None:
            _plot_traces(spec, *traces, os.path.join(tmp, "traces.png"))
        if plots:
            _plot_loss(result, os.path.join(tmp, "loss.png"))
            _plot_parameters(result, os.path.join(tmp, "parameters.png"))
        with open(os.path.join(tmp, "report.md"), "w") as fh:
            fh.write(markdown(problem, result, pngs, command))
    directory = write_report_dir(out, FIT_FILES, write)
    return dict(dir=directory, overlay=os.path.join(directory, "fitted.yaml"),
                json=os.path.join(directory, "fit.json"), markdown=os.path.join(directory, "report.md"),
                plots=[os.path.join(directory, p) for p in pngs])


def markdown(problem: FitProblem, result: FitResult, pngs: list, command: str) -> str:
    spec, before, best = problem.spec, result.before, result.best
    lines = [f"# Fit of `{problem.scene}` to `{spec.real.bag}`", ""]
    if command:
        lines += [f"`{command}`", ""]
    lines += [f"- real topic `{spec.real.topic}` against the sim's `{spec.sim_topic}`, {len(spec.real.stamps_ns)} "
              f"samples; driven by {spec.drive}, {spec.steps} steps",
              "- loss: sum over the axes of weight x RMSE (weights "
              + ", ".join(f"{a} {w:g}" for a, w in spec.loss.to_dict().items()) + ")",
              f"- {len(result.rollouts)} rollouts on {result.backend} ({result.workers} workers), seed {result.seed}, "
              f"{result.wall_s:.1f} s; the search ended: {result.ended}",
              f"- loss **{_g(before.loss)} -> {_g(best.loss)}** (rollout {result.best_index})", "",
              "| parameter | scene | fitted | bounds | scale |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| `{p.name}` | {p.start:.6g} | {best.settings[p.name]:.6g} | [{p.low:.4g}, {p.high:.4g}] | "
              f"{'log' if p.log else 'linear'} |" for p in result.params]
    lines += ["", "| axis | RMSE before | RMSE after |", "| --- | --- | --- |"]
    lines += [f"| {a} [{u}] | {_g(before.rmse.get(a))} | {_g(best.rmse.get(a))} |" for a, u in zip(AXES, UNITS)]
    if result.sensitivity:
        lines += ["", "Sensitivity at the fit: the loss with one parameter moved down and up by a factor "
                      f"{result.sensitivity[0]['step']:g}, the others fitted; d loss / d ln(value) from the two. "
                      "The standard error is the least-squares one of the F/T traces of those rollouts: what the "
                      "scatter of the residual at the fit leaves of each parameter (white noise assumed; a misfit "
                      "correlated in time leaves more). A parameter whose standard error exceeds "
                      f"{100 * WEAKLY_DETERMINED:g} % of its value is not determined by the recording.",
                  "", "| parameter | loss down | loss up | d loss / d ln(value) | standard error | determined |",
                  "| --- | --- | --- | --- | --- | --- |"]
        lines += [f"| `{r['name']}` | {_g(r['loss_down'])} | {_g(r['loss_up'])} | {_g(r['dloss_dlog'])} | "
                  f"{_percent(r.get('relative_error'))} | "
                  f"{ {True: 'yes', False: '**weakly**', None: 'n/a'}[r['determined']]} |" for r in result.sensitivity]
        lines += [""] + [f"- {line}" for line in weakly_determined(result)]
    failed = result.failed
    if failed:
        lines += ["", f"{len(failed)} rollouts failed (scored as {FAILED_PENALTY:g} x the worst loss):", ""]
        lines += [f"- rollout {i}: {r.error}" for i, r in failed[:10]]
        lines += [f"- and {len(failed) - 10} more (fit.json)"] if len(failed) > 10 else []
    lines += [""] + [f"![{png}]({png})" for png in pngs]
    return "\n".join(lines) + "\n"


def _figure(rows: int, height: float = 2.2):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(10, height * rows), layout="constrained")
    return fig, fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]


def _plot_traces(spec, before, after, path: str) -> None:
    fig, axes = _figure(6)
    real_drawn = False
    for label, rollout, style in (("sim before", before, dict(color="tab:gray", ls="--")),
                                  ("sim fitted", after, dict(color="tab:red"))):
        if rollout.sim is None:
            continue
        c = compare_series(spec.real, rollout.sim, spec.compare)
        for j, ax in enumerate(axes):
            if not real_drawn:
                ax.plot(c.t, c.real_values[:, j], color="black", lw=1.0, label="real")
            ax.plot(c.t, c.sim_values[:, j], lw=1.0, label=label, **style)
        real_drawn = True
    for ax, axis, unit in zip(axes, AXES, UNITS):
        ax.set_ylabel(f"{axis} [{unit}]")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", ncols=3, fontsize=8)
    axes[0].set_title(f"{spec.real.name} against {spec.sim_topic}")
    axes[-1].set_xlabel("time [s] after the real topic's first sample")
    fig.savefig(path, dpi=100)


def _plot_loss(result: FitResult, path: str) -> None:
    fig, (ax,) = _figure(1, 3.5)
    losses = np.array([r.loss for r in result.rollouts])
    ok = np.isfinite(losses)
    index = np.arange(len(losses))
    ax.semilogy(index[ok], losses[ok], ".", color="tab:blue", label="rollout")
    if (~ok).any():
        floor = losses[ok].max() if ok.any() else 1.0
        ax.semilogy(index[~ok], np.full((~ok).sum(), floor), "x", color="tab:red", label="failed")
    best = np.minimum.accumulate(np.where(ok, losses, np.inf))
    ax.semilogy(index, best, color="black", label="best so far")
    ax.set_xlabel("rollout")
    ax.set_ylabel("loss")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=100)


def _plot_parameters(result: FitResult, path: str) -> None:
    fig, axes = _figure(len(result.params))
    losses = np.array([r.loss for r in result.rollouts])
    best_so_far = np.array([int(np.argmin(np.where(np.isfinite(losses[:k + 1]), losses[:k + 1], np.inf)))
                            for k in range(len(losses))])
    for ax, p in zip(axes, result.params):
        values = np.array([r.settings[p.name] for r in result.rollouts])
        ax.plot(values, ".", color="tab:blue", ms=3, label="rollout")
        ax.plot(values[best_so_far], color="black", label="best so far")
        ax.axhline(p.start, color="tab:gray", ls="--", lw=1.0, label="scene")
        if p.log:
            ax.set_yscale("log")
        ax.set_ylabel(p.name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, ncols=3)
    axes[-1].set_xlabel("rollout")
    fig.savefig(path, dpi=100)
