"""Lag, resampling and tare on synthetic signals whose answers are known."""
import numpy as np
import pytest

from cond_ros.bags import align


def _signal(t):
    return np.column_stack([np.sin(2 * np.pi * 0.7 * t), np.tanh(5 * (t - 1.3)), np.cos(3.1 * t) * np.exp(-t / 3),
                            np.zeros_like(t), 0.1 * t ** 2, np.sin(2 * np.pi * 2.3 * t + 0.3)])


@pytest.mark.parametrize("lag", [0.0, 0.0123, -0.0371, 0.2])
def test_lag_within_a_fraction_of_a_sample(lag):
    """real(t) = sim(t - lag), sim at 100 Hz, real at 250 Hz with noise: the cross-correlation finds the lag
    within half a grid sample, and the maximum-likelihood refinement within 0.1 ms."""
    rng = np.random.default_rng(1)
    sim_t = np.arange(0, 4, 0.01)
    real_t = np.arange(0.05, 3.9, 0.004)
    real_v = _signal(real_t - lag) + rng.normal(scale=0.01, size=(len(real_t), 6))
    estimate = align.estimate_lag(real_t, real_v, sim_t, _signal(sim_t), max_lag_s=0.5)
    assert abs(estimate.lag_s - lag) < 0.5 * estimate.grid_period_s and estimate.reliable
    assert 3 not in estimate.axes  # a constant axis says nothing about the lag
    refined = align.refine_lag(real_t, real_v, sim_t, _signal(sim_t), estimate.lag_s, estimate.grid_period_s)
    assert abs(refined - lag) < 1e-4


def test_lag_of_unrelated_signals_is_flagged():
    """Noise against noise: the peak correlation is low and the estimate says it is unreliable."""
    rng = np.random.default_rng(2)
    t = np.arange(0, 3, 0.01)
    estimate = align.estimate_lag(t, rng.normal(size=(len(t), 6)), t, rng.normal(size=(len(t), 6)), max_lag_s=0.3)
    assert not estimate.reliable


def test_lag_needs_overlap_and_variation():
    t = np.arange(0, 1, 0.01)
    with pytest.raises(ValueError, match="do not overlap"):
        align.estimate_lag(t, _signal(t), t + 5, _signal(t), max_lag_s=0.1)
    with pytest.raises(ValueError, match="no axis varies"):
        align.estimate_lag(t, np.ones((len(t), 6)), t, _signal(t), max_lag_s=0.1)


def test_resample_masks_gaps_and_outside():
    """Linear inside, exact at the samples, masked outside the span and inside a gap longer than the limit."""
    times = np.array([0.0, 1.0, 2.0, 10.0, 11.0])
    values = times[:, None] * 2.0
    grid = np.array([-0.5, 0.0, 0.5, 2.0, 5.0, 10.5, 11.0, 11.5])
    out, valid = align.resample(times, values, grid, max_gap=align.max_gap(times))
    assert valid.tolist() == [False, True, True, True, False, True, True, False]
    assert np.allclose(out[valid, 0], 2.0 * grid[valid])


def test_tare_window():
    grid = np.arange(0, 3, 0.1)
    real, sim = np.ones((len(grid), 6)) * 3.0, np.ones((len(grid), 6))
    real[grid > 1.0] = 100.0  # outside the window: not in the means
    r, s = align.tare_offsets(grid, np.ones(len(grid), bool), real, sim, 1.0)
    assert np.allclose(r, 3.0) and np.allclose(s, 1.0)
    with pytest.raises(ValueError, match="at least 2"):
        align.tare_offsets(grid, np.zeros(len(grid), bool), real, sim, 1.0)
