"""``cond-ros sweep``: a scene run headless over a grid or a random set of parameter values, with the outputs
of ``cond-ros run`` per sample (the tool force, penetration, iterations, speed) and their spread.

``--param NAME=V1,V2,...`` lists values; ``--param NAME=LOW:HIGH[:log]`` is a range, drawn uniformly (or
log-uniformly) ``--samples`` times with ``--seed``: the paper's 20 randomized trials are
``--param youngs_modulus=4e6:5e6 --param poisson_ratio=0.4:0.49 --param mu=0.5:1.5 --samples 20``. With
lists only, the sweep is their grid. Samples run on the fit's backends (local cores or Ray), results in
sample order. The real-time factor of a sample is measured beside the other workers' samples: with as many
workers as cores it is each sample's own.
"""
from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
import os
import time

import numpy as np

from ..scenes import Overlay, load_named_scene
from ..tools import run_scene
from .parameters import FitError

SWEEP_FILES = ("sweep.csv", "sweep.json", "sweep.md")
DEFAULT_SAMPLES = 20  # the paper's randomized trials per scene


@dataclasses.dataclass(frozen=True)
class SweepParameter:
    """One swept parameter: listed ``values``, or a ``low``..``high`` range (``log``: log-uniform)."""

    name: str
    values: tuple = ()
    low: float | None = None
    high: float | None = None
    log: bool = False

    @classmethod
    def parse(cls, text: str) -> SweepParameter:
        name, sep, rest = str(text).partition("=")
        if not sep or not name:
            raise FitError(f"--param {text!r}: expected NAME=V1,V2,... or NAME=LOW:HIGH[:log]")
        malformed = FitError(f"--param {text!r}: expected NAME=V1,V2,... or NAME=LOW:HIGH[:log] with numbers")
        if ":" in rest:
            parts = rest.split(":")
            if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("log", "linear")):
                raise malformed
            try:
                low, high = float(parts[0]), float(parts[1])
            except ValueError:
                raise malformed from None
            log = len(parts) == 3 and parts[2] == "log"
            if not (math.isfinite(low) and math.isfinite(high) and low < high) or (log and low <= 0):
                raise FitError(f"--param {text!r}: expected finite LOW < HIGH (LOW > 0 for :log)")
            return cls(name, (), low, high, log)
        try:
            values = tuple(float(v) for v in rest.split(","))
        except ValueError:
            raise malformed from None
        if not values or not all(math.isfinite(v) for v in values):
            raise FitError(f"--param {text!r}: the values must be finite numbers")
        return cls(name, values)


def sweep_samples(params: list, samples: int | None, seed: int) -> list:
    """The parameter sets, in order: the grid of listed values, or ``samples`` random draws when any parameter
    is a range (a listed one then draws from its list)."""
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise FitError(f"--param: a parameter repeats: {', '.join(names)}")
    if all(p.values for p in params):
        if samples is not None:
            raise FitError("--samples: applies to ranges (NAME=LOW:HIGH); listed values make a grid")
        return [dict(zip(names, combo)) for combo in itertools.product(*(p.values for p in params))]
    samples = DEFAULT_SAMPLES if samples is None else samples
    if samples < 1:
        raise FitError(f"--samples: must be >= 1, got {samples}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(samples):
        row = {}
        for p in params:
            if p.values:
                row[p.name] = float(p.values[rng.integers(len(p.values))])
            elif p.log:
                row[p.name] = float(math.exp(rng.uniform(math.log(p.low), math.log(p.high))))
            else:
                row[p.name] = float(rng.uniform(p.low, p.high))
        out.append(row)
    return out


def run_outputs(summary: dict) -> dict:
    """The outputs a sweep tabulates, from a run's summary: speed, solver effort, penetration, F/T."""
    out = dict(realtime_factor=summary["realtime_factor"], iterations_mean=summary["iterations_mean"],
               max_penetration_mm=summary["max_penetration_mm"])
    for sensor, ft in summary.get("ft", {}).items():
        for key in ("reading_mean_N", "reading_max_N", "tool_force_mean_N", "tool_force_max_N"):
            out[f"{sensor}_{key}"] = ft[key]
    return out


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    """A sweep's scene, its scene file (None: by name), base overlay settings and steps per sample."""

    scene: str
    path: str | None
    base: dict
    steps: int

    def evaluator(self):
        return SampleRunner(self)


@dataclasses.dataclass
class SampleResult:
    settings: dict
    outputs: dict
    error: str | None
    wall_s: float

    @property
    def failed(self) -> bool:
        return self.error is not None


class SampleRunner:
    """Runs one sample: the scene with the base and the sample's settings, its script, ``steps`` steps."""

    def __init__(self, spec: SweepSpec):
        self.spec = spec

    def __call__(self, settings: dict) -> SampleResult:
        start = time.perf_counter()
        try:
            scene = load_named_scene(self.spec.scene, path=self.spec.path,
                                     overlay=Overlay({**self.spec.base, **settings}, "sweep"))
            scene.warm_up()
            outputs = run_outputs(run_scene(scene, self.spec.steps, progress=False).summary())
            error = None
        except Exception as exc:  # noqa: BLE001 (a sample that fails is that sample's result)
            outputs, error = {}, f"{type(exc).__name__}: {exc}"
        return SampleResult(dict(settings), outputs, error, time.perf_counter() - start)


def spread(results: list) -> dict:
    """{output: {mean, std, min, max}} over the samples that ran."""
    ok = [r.outputs for r in results if not r.failed]
    keys = list(ok[0]) if ok else []
    return {k: dict(mean=float(np.mean(v)), std=float(np.std(v)), min=float(np.min(v)), max=float(np.max(v)))
            for k in keys for v in [[o[k] for o in ok]]}


def write_sweep(out_dir: str, spec: SweepSpec, results: list, *, command: str = "", extra: dict | None = None) -> str:
    """sweep.csv (one row per sample), sweep.json and sweep.md (the table and the spread) in ``out_dir``."""
    from ..output_paths import write_report_dir
    names = list(results[0].settings) if results else []
    outputs = list(next((r.outputs for r in results if not r.failed), {}))
    stats = spread(results)

    def write(tmp):
        with open(os.path.join(tmp, "sweep.csv"), "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["sample", *names, *outputs, "error"])
            for i, r in enumerate(results):
                writer.writerow([i, *(r.settings[n] for n in names), *(r.outputs.get(k, "") for k in outputs),
                                 r.error or ""])
        with open(os.path.join(tmp, "sweep.json"), "w") as fh:
            json.dump(dict(scene=spec.scene, steps=spec.steps, base=spec.base, command=command, **(extra or {}),
                           spread=stats, samples=[dataclasses.asdict(r) for r in results]), fh, indent=2)
            fh.write("\n")
        lines = [f"# Sweep of `{spec.scene}`: {len(results)} samples, {spec.steps} steps each", ""]
        lines += [f"`{command}`", ""] if command else []
        lines += ["| output | mean | std | min | max |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {k} | {s['mean']:.5g} | {s['std']:.3g} | {s['min']:.5g} | {s['max']:.5g} |"
                  for k, s in stats.items()]
        lines += ["", "| sample | " + " | ".join(names + outputs) + " |",
                  "|" + " --- |" * (1 + len(names) + len(outputs))]
        for i, r in enumerate(results):
            cells = [f"{r.settings[n]:.5g}" for n in names]
            cells += [f"{r.outputs[k]:.5g}" for k in outputs] if not r.failed else [f"failed: {r.error}"] + [""] * (
                len(outputs) - 1)
            lines.append(f"| {i} | " + " | ".join(cells) + " |")
        with open(os.path.join(tmp, "sweep.md"), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return write_report_dir(out_dir, SWEEP_FILES, write)
