"""Metrics against a direct (loop) computation, and windows that partition the samples."""
import math

import numpy as np

from cond_ros.bags.metrics import AXES, axis_metrics, windowed_metrics


def _reference(real, sim):
    out = {}
    for j, axis in enumerate(AXES):
        e = [s - r for r, s in zip(real[:, j], sim[:, j])]
        n = len(e)
        mr, ms = sum(real[:, j]) / n, sum(sim[:, j]) / n
        cov = sum((r - mr) * (s - ms) for r, s in zip(real[:, j], sim[:, j]))
        vr = sum((r - mr) ** 2 for r in real[:, j])
        vs = sum((s - ms) ** 2 for s in sim[:, j])
        out[axis] = (math.sqrt(sum(x * x for x in e) / n), sum(abs(x) for x in e) / n, max(abs(x) for x in e),
                     sum(e) / n, cov / math.sqrt(vr * vs) if vr > 0 and vs > 0 else None)
    return out


def test_against_reference():
    rng = np.random.default_rng(3)
    real = rng.normal(size=(50, 6))
    sim = real * 0.9 + rng.normal(scale=0.3, size=(50, 6)) + 0.2
    sim[:, 5] = 1.0  # constant: correlation undefined
    got, want = axis_metrics(real, sim), _reference(real, sim)
    for axis in AXES:
        m = got[axis]
        assert np.allclose([m.rmse, m.mae, m.max_error, m.bias], want[axis][:4], rtol=1e-12)
        assert (m.correlation is None) == (want[axis][4] is None)
        if m.correlation is not None:
            assert abs(m.correlation - want[axis][4]) < 1e-12


def test_identical_is_exactly_zero():
    real = np.random.default_rng(4).normal(size=(20, 6))
    for m in axis_metrics(real, real.copy()).values():
        assert (m.rmse, m.mae, m.max_error, m.bias) == (0.0, 0.0, 0.0, 0.0) and abs(m.correlation - 1) < 1e-12


def test_windows_partition_the_samples():
    t = np.arange(0, 12.3, 0.1)
    real = np.zeros((len(t), 6))
    sim = np.zeros((len(t), 6))
    sim[t >= 5.0, 0] = 1.0  # an error only in the second window on
    windows = windowed_metrics(t, real, sim, 5.0)
    assert [(w.start_s, w.samples) for w in windows] == [(0.0, 50), (5.0, 50), (10.0, len(t) - 100)]
    assert windows[0].metrics["fx"].rmse == 0.0 and windows[1].metrics["fx"].rmse == 1.0
    assert abs(windows[2].end_s - 12.2) < 1e-9
