"""Error metrics per force/torque axis, over a whole run and over consecutive windows.

The error is sim - real on the common time base. Per axis: RMSE, MAE, max |error|, bias (mean error)
and the Pearson correlation of real and sim (None where either is constant: it is undefined there).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

AXES = ("fx", "fy", "fz", "tx", "ty", "tz")
UNITS = ("N", "N", "N", "N m", "N m", "N m")
METRICS = ("rmse", "mae", "max_error", "bias", "correlation")


@dataclasses.dataclass(frozen=True)
class AxisMetrics:
    """Metrics of one axis [N or N m; correlation: none]."""

    rmse: float
    mae: float
    max_error: float
    bias: float
    correlation: float | None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    if np.ptp(a) == 0.0 or np.ptp(b) == 0.0:  # on the raw values: a constant stays exactly constant
        return None
    a, b = a - a.mean(), b - b.mean()
    return float(np.clip((a @ b) / math.sqrt(float(a @ a) * float(b @ b)), -1.0, 1.0))


def axis_metrics(real: np.ndarray, sim: np.ndarray) -> dict:
    """{axis: :class:`AxisMetrics`} of samples ``real`` and ``sim`` (n, 6), n >= 1."""
    error = sim - real
    out = {}
    for j, axis in enumerate(AXES):
        e = error[:, j]
        out[axis] = AxisMetrics(rmse=float(np.sqrt(np.mean(e * e))), mae=float(np.mean(np.abs(e))),
                                max_error=float(np.max(np.abs(e))), bias=float(np.mean(e)),
                                correlation=_pearson(real[:, j], sim[:, j]) if len(e) > 1 else None)
    return out


@dataclasses.dataclass(frozen=True)
class Window:
    """Metrics over [start_s, end_s) of the common time base (seconds from its start)."""

    start_s: float
    end_s: float
    samples: int
    metrics: dict  # axis -> AxisMetrics

    def to_dict(self) -> dict:
        return dict(start_s=self.start_s, end_s=self.end_s, samples=self.samples,
                    metrics={axis: m.to_dict() for axis, m in self.metrics.items()})


def windowed_metrics(t: np.ndarray, real: np.ndarray, sim: np.ndarray, window_s: float) -> list:
    """:class:`Window` metrics over consecutive windows of ``window_s`` seconds from t[0] (the last may be
    shorter); windows without samples are left out. ``t`` (n,) are the samples' times [s]."""
    if not window_s > 0:
        raise ValueError(f"window: must be > 0 s, got {window_s!r}")
    index = np.floor((t - t[0]) / window_s).astype(np.int64)
    out = []
    for w in np.unique(index):
        pick = index == w
        out.append(Window(float(w * window_s), float(min((w + 1) * window_s, t[-1] - t[0])), int(pick.sum()),
                          axis_metrics(real[pick], sim[pick])))
    return out
