"""One rollout: the scene with one parameter set, driven as ``cond-ros replay`` or ``record`` drives it, its
simulated F/T scored against the real recording with ``cond-ros compare``'s alignment.

A :class:`RolloutSpec` is everything a rollout needs besides the parameter values, as plain picklable data
(the drive read from the bag included, so a Ray node needs no copy of the bag): it goes once to each worker
process (or Ray actor), whose :class:`Evaluator` then runs any number of rollouts. A rollout that raises or
gives a non-finite loss is a failed rollout (its error is kept), never an exception: one bad corner of the
search space does not stop a fit.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ..bags import (AXES, BagError, CompareOptions, DrivePlan, OfflineNode, WrenchSeries, compare_series, drive_node,
                    drive_script, series_from_arrays, stamp_ns, wrench_values)
from ..cosim import validate_config
from ..scenes import Overlay
from .parameters import FitError

DRIVES = ("auto", "script", "commands", "joint_states")
SIM_SOURCE = "(rollout)"  # the bag name of a rollout's simulated series in messages


@dataclasses.dataclass(frozen=True)
class Loss:
    """The fit's loss: the weighted sum over the six axes of the RMSE of sim - real on the aligned samples,
    sum_a w_a RMSE_a [N, N m] (weights default 1: forces in N and torques in N m count alike)."""

    weights: tuple = (1.0,) * 6

    @classmethod
    def parse(cls, text: str | None) -> Loss:
        """``fx=1,tz=0.5`` (axes not named keep weight 1); FitError naming a bad entry."""
        weights = dict.fromkeys(AXES, 1.0)
        for entry in filter(None, (text or "").split(",")):
            axis, sep, value = entry.partition("=")
            try:
                weight = float(value)
            except ValueError:
                weight = math.nan
            if not sep or axis.strip() not in weights or not (math.isfinite(weight) and weight >= 0):
                raise FitError(f"--weights {entry!r}: expected AXIS=WEIGHT with AXIS one of {', '.join(AXES)} and "
                               "a weight >= 0")
            weights[axis.strip()] = weight
        if not any(weights.values()):
            raise FitError("--weights: every weight is 0; the loss would be 0 everywhere")
        return cls(tuple(weights[a] for a in AXES))

    def __call__(self, rmse: dict) -> float:
        return float(sum(w * rmse[axis] for w, axis in zip(self.weights, AXES)))

    def residual(self, difference: np.ndarray) -> np.ndarray:
        """sim - real on the aligned samples (n x 6), each axis x its weight / sqrt(n), flattened: its sum of
        squares is sum_a w_a^2 MSE_a, the least-squares twin of this loss (both are 0 only at a perfect fit)."""
        return (np.asarray(difference, dtype=float) * np.asarray(self.weights) / math.sqrt(len(difference))).ravel()

    def to_dict(self) -> dict:
        return dict(zip(AXES, self.weights))


@dataclasses.dataclass(frozen=True)
class RolloutSpec:
    """Everything a rollout needs but its parameter values (picklable; see the module).

    ``config_values``: the node parameters of its sim (``validate_config`` input); ``drive``: script,
    commands or joint_states; ``bag``: the recording; ``plan``: its commands or joint states (None: script);
    ``t0_ns``: the stamp of simulated time 0; ``steps``: how far each rollout runs; ``real``: the real F/T
    series over the loss window; ``sim_topic``: the sim's topic compared with it; ``base``: settings every
    rollout starts from (a rollout's own come on top)."""

    config_values: dict
    drive: str
    bag: str
    plan: DrivePlan | None
    t0_ns: int
    steps: int
    real: WrenchSeries
    sim_topic: str
    compare: CompareOptions
    loss: Loss
    feedforward: bool = True
    base: dict = dataclasses.field(default_factory=dict)  # overlay settings under every rollout's (--overlay)

    def evaluator(self) -> Evaluator:
        return Evaluator(self)


@dataclasses.dataclass
class RolloutResult:
    """A rollout's parameter values, loss, per-axis RMSE, error (None unless it failed), wall time [s], the
    simulated series when asked for, and the weighted residual (what the least-squares polish of
    :mod:`cond_ros.fit.polish` differentiates; the search drops it from all but its best rollout)."""

    settings: dict
    loss: float
    rmse: dict
    error: str | None
    wall_s: float
    sim: WrenchSeries | None = None
    residual: np.ndarray | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    def to_dict(self) -> dict:
        return dict(settings=self.settings, loss=self.loss if math.isfinite(self.loss) else None, rmse=self.rmse,
                    error=self.error, wall_s=self.wall_s)


class WrenchSink:
    """Keeps one WrenchStamped topic of what a sim publishes (a ``write(topic, log_ns, message)`` sink)."""

    def __init__(self, topic: str):
        self.topic, self.stamps, self.values, self.frame_id = topic, [], [], ""

    def write(self, topic: str, log_ns: int, msg) -> None:
        if topic == self.topic:
            self.stamps.append(stamp_ns(msg.header.stamp))
            self.values.append(wrench_values(msg))
            self.frame_id = msg.header.frame_id

    def series(self) -> WrenchSeries:
        if not self.stamps:
            raise BagError(SIM_SOURCE, "the sim published nothing on it", self.topic)
        return series_from_arrays(SIM_SOURCE, self.topic, self.stamps, self.values, self.frame_id)


class Evaluator:
    """Runs rollouts of one :class:`RolloutSpec`."""

    def __init__(self, spec: RolloutSpec):
        self.spec = spec
        self.config = validate_config(spec.config_values)

    def __call__(self, settings: dict, *, keep_series: bool = False) -> RolloutResult:
        spec = self.spec
        start = time.perf_counter()
        try:
            node = OfflineNode(self.config, t0_ns=spec.t0_ns, script=spec.drive == "script",
                               overlay=Overlay({**spec.base, **settings}, "fit"))
            sink = WrenchSink(spec.sim_topic)
            if spec.plan is None:
                drive_script(node, spec.steps, sink, progress=False)
            else:
                drive_node(spec.plan, node, spec.steps, sink, feedforward=spec.feedforward, progress=False)
            sim = sink.series()
            comparison = compare_series(spec.real, sim, spec.compare)
            rmse = {axis: float(m.rmse) for axis, m in comparison.overall.items()}
            loss = spec.loss(rmse)
            error = None if math.isfinite(loss) else f"non-finite loss {loss}"
            residual = spec.loss.residual(comparison.sim_values - comparison.real_values)
        except Exception as exc:  # noqa: BLE001 (any failure of one parameter set is that rollout's result)
            sim, rmse, loss, error = None, {}, math.inf, f"{type(exc).__name__}: {exc}"
        failed = error is not None
        return RolloutResult(dict(settings), math.inf if failed else loss, rmse, error, time.perf_counter() - start,
                             sim if keep_series and not failed else None, None if failed else residual)


def window_series(real: WrenchSeries, window) -> WrenchSeries:
    """``real`` over ``window`` = (T0, T1) [s after its first stamp] (None: all of it); FitError if fewer than 2
    samples are left."""
    if window is None:
        return real
    t0, t1 = window
    ref = int(real.stamps_ns[0])
    keep = (real.stamps_ns >= ref + int(round(t0 * 1e9))) & (real.stamps_ns <= ref + int(round(t1 * 1e9)))
    if keep.sum() < 2:
        span = (real.stamps_ns[-1] - ref) * 1e-9
        raise FitError(f"--window {t0:g}:{t1:g}: holds {int(keep.sum())} samples of {real.name}, which spans "
                       f"0 .. {span:.3f} s")
    return dataclasses.replace(real, stamps_ns=real.stamps_ns[keep], values=real.values[keep])


def parse_window(text: str | None):
    """``T0:T1`` [s] -> (T0, T1), or None; FitError if malformed."""
    if text is None:
        return None
    try:
        t0, t1 = (float(v) for v in text.split(":"))
    except ValueError:
        raise FitError(f"--window {text!r}: expected T0:T1 in seconds after the real topic's first stamp") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and 0 <= t0 < t1):
        raise FitError(f"--window {text!r}: expected 0 <= T0 < T1")
    return t0, t1


def steps_to_cover(real: WrenchSeries, t0_ns: int, dt: float, compare: CompareOptions) -> int:
    """Steps from stamp ``t0_ns`` until past the real series' end (and its largest lag)."""
    lag = compare.max_lag_s if compare.lag == "auto" else (abs(compare.lag) if compare.lag != "none" else 0.0)
    end_ns = int(real.stamps_ns[-1]) + int(round(lag * 1e9))
    if end_ns <= t0_ns:
        raise FitError(f"{real.name} ends at stamp {int(real.stamps_ns[-1])} ns, before the sim starts "
                       f"({t0_ns} ns)")
    return int(np.ceil((end_ns - t0_ns) * 1e-9 / dt)) + 1
