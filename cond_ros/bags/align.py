"""Putting two wrench series on one time base: a constant lag, resampling with gaps masked, taring.

Times here are float seconds relative to a reference stamp (the real series' first), so that epoch
stamps (~1.7e9 s) keep nanosecond resolution. Conventions:

- **Lag** L > 0 means the real signal comes L later than the sim's: real(t) = sim(t - L). It is removed
  by shifting the sim's stamps by +L (a whole number of nanoseconds, as stamps are). It is estimated by
  cross-correlation on a uniform grid, then refined below the grid's spacing by maximum likelihood.
- **Resampling** is linear between a series' own samples. A time that falls in a gap of a series (two
  samples further apart than ``GAP_FACTOR`` times its median period) is masked out, not interpolated.
- **Tare** subtracts from each series its mean over the first ``tare`` seconds of the common time base,
  as a user zeroes a sensor before a run; the difference of the two means is the real sensor's bias.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy import signal

GAP_FACTOR = 5.0  # a gap longer than this many median periods is not interpolated over
LAG_GRID_MAX = 1 << 21  # samples of the uniform grid the lag is estimated on, at most
MIN_LAG_OVERLAP = 0.5  # the shortest overlap the correlation may use, as a fraction of the grid
WEAK_CORRELATION = 0.5  # a lag whose peak correlation is below this is reported as unreliable


def seconds(stamps_ns: np.ndarray, ref_ns: int) -> np.ndarray:
    """Stamps [ns] as float seconds after ``ref_ns`` (integer subtraction first: no precision loss)."""
    return (np.asarray(stamps_ns, dtype=np.int64) - np.int64(ref_ns)).astype(np.float64) * 1e-9


def resample(times: np.ndarray, values: np.ndarray, grid: np.ndarray, *, max_gap: float):
    """``values`` (n, k) at ``times`` (n,), linearly at ``grid`` (m,) -> (values (m, k), valid (m,)).

    A grid time is valid if it lies within [times[0], times[-1]] and the two samples around it are at
    most ``max_gap`` apart (or it is one of the samples).
    """
    times = np.asarray(times, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64).reshape(len(times), -1)
    out = np.column_stack([np.interp(grid, times, values[:, j]) for j in range(values.shape[1])])
    inside = (grid >= times[0]) & (grid <= times[-1])
    right = np.clip(np.searchsorted(times, grid, side="left"), 1, len(times) - 1)
    exact = times[right] == grid
    bracket = times[right] - times[right - 1]
    valid = inside & ((bracket <= max_gap) | exact | (times[right - 1] == grid))
    return out, valid


def max_gap(times: np.ndarray) -> float:
    """The longest step of ``times`` that still counts as continuous data [s]."""
    return GAP_FACTOR * float(np.median(np.diff(times)))


@dataclasses.dataclass(frozen=True)
class LagEstimate:
    """Result of :func:`estimate_lag`.

    Attributes:
        lag_s: real(t) = sim(t - lag_s) [s] (sub-sample, from a parabola through the peak).
        correlation: mean over the axes used of the Pearson correlation at the peak.
        grid_period_s: spacing of the grid the correlation was computed on [s].
        axes: indices of the axes used (those that vary in both series).
    """

    lag_s: float
    correlation: float
    grid_period_s: float
    axes: tuple

    @property
    def reliable(self) -> bool:
        return self.correlation >= WEAK_CORRELATION


def _pearson_by_lag(r: np.ndarray, s: np.ndarray, max_shift: int):
    """Pearson correlation of r[n] with s[n + k] over their overlap, for k = -max_shift..max_shift.

    Uses the exact means and variances of each overlapping part (not the whole signals), so a lag near the
    end of the range is not favoured or penalized by the shrinking overlap.
    """
    n = len(r)
    shifts = np.arange(-max_shift, max_shift + 1)
    full = signal.correlate(s, r, mode="full", method="fft")  # full[k + n - 1] = sum_i s[i + k] r[i]
    sums = full[shifts + n - 1]
    cr, cr2 = np.concatenate([[0.0], np.cumsum(r)]), np.concatenate([[0.0], np.cumsum(r * r)])
    cs, cs2 = np.concatenate([[0.0], np.cumsum(s)]), np.concatenate([[0.0], np.cumsum(s * s)])
    # overlap for shift k >= 0: r[0:n-k], s[k:n]; for k < 0: r[-k:n], s[0:n+k]
    r_lo, r_hi = np.maximum(-shifts, 0), n - np.maximum(shifts, 0)
    s_lo, s_hi = np.maximum(shifts, 0), n + np.minimum(shifts, 0)
    count = (r_hi - r_lo).astype(np.float64)
    sr, sr2 = cr[r_hi] - cr[r_lo], cr2[r_hi] - cr2[r_lo]
    ss, ss2 = cs[s_hi] - cs[s_lo], cs2[s_hi] - cs2[s_lo]
    cov = sums - sr * ss / count
    var = np.maximum(sr2 - sr * sr / count, 0.0) * np.maximum(ss2 - ss * ss / count, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        pearson = np.where(var > 0, cov / np.sqrt(var), 0.0)
    return shifts, pearson


def estimate_lag(real_t, real_v, sim_t, sim_v, *, max_lag_s: float) -> LagEstimate:
    """The constant lag between two series by cross-correlation, within +-``max_lag_s``.

    Both are resampled onto a uniform grid over their overlap, at the finer of their median periods
    (coarser if that grid would exceed ``LAG_GRID_MAX`` samples); the per-axis Pearson correlations by
    shift are averaged over the axes that vary in both, and a parabola through the peak and its
    neighbours gives a sub-sample lag. Raises ValueError if the overlap is too short or nothing varies.
    """
    lo, hi = max(real_t[0], sim_t[0]), min(real_t[-1], sim_t[-1])
    period = min(np.median(np.diff(real_t)), np.median(np.diff(sim_t)))
    if hi <= lo:
        raise ValueError("the two series do not overlap in time")
    period = max(period, (hi - lo) / LAG_GRID_MAX)
    n = int(np.floor((hi - lo) / period)) + 1
    max_shift = min(int(np.ceil(max_lag_s / period)), int((1.0 - MIN_LAG_OVERLAP) * n))
    if n < 8 or max_shift < 1:
        raise ValueError(f"the overlap ({hi - lo:.3f} s) is too short to estimate a lag")
    grid = lo + period * np.arange(n)
    r, _ = resample(real_t, real_v, grid, max_gap=np.inf)
    s, _ = resample(sim_t, sim_v, grid, max_gap=np.inf)
    curves, axes = [], []
    for j in range(r.shape[1]):
        if np.ptp(r[:, j]) > 0 and np.ptp(s[:, j]) > 0:
            shifts, pearson = _pearson_by_lag(r[:, j] - r[:, j].mean(), s[:, j] - s[:, j].mean(), max_shift)
            curves.append(pearson)
            axes.append(j)
    if not curves:
        raise ValueError("no axis varies in both series; a lag cannot be estimated")
    curve = np.mean(curves, axis=0)
    k = int(np.argmax(curve))
    offset = 0.0
    if 0 < k < len(curve) - 1:
        left, mid, right = curve[k - 1], curve[k], curve[k + 1]
        denominator = left - 2.0 * mid + right
        if denominator < 0:
            offset = float(np.clip(0.5 * (left - right) / denominator, -0.5, 0.5))
    shift = shifts[k] + offset  # s[i + shift] matches r[i]: real(t) = sim(t + shift period)
    return LagEstimate(lag_s=float(-shift * period), correlation=float(curve[k]), grid_period_s=float(period),
                       axes=tuple(axes))


def refine_lag(real_t, real_v, sim_t, sim_v, lag_s: float, half_width_s: float) -> float:
    """The lag within ``lag_s`` +- ``half_width_s`` that maximizes the likelihood of real - sim (shifted by
    the lag, at the real's own stamps) being white noise of unknown variance per axis: it minimizes
    sum over the axes of log(residual variance); a bias does not move it.

    It refines the cross-correlation peak below the correlation grid's spacing, weighting each axis by its
    own noise. Returns ``lag_s`` itself unless a strictly better lag is found.
    """
    from scipy.optimize import minimize_scalar
    tiny = np.finfo(np.float64).tiny  # an axis equal on both sides (e.g. all zeros) adds a constant

    def cost(lag: float) -> float:
        shifted = sim_t + lag
        pick = (real_t >= shifted[0]) & (real_t <= shifted[-1])
        if pick.sum() < 2:
            return np.inf
        sim_on, _ = resample(shifted, sim_v, real_t[pick], max_gap=np.inf)
        return float(np.sum(np.log(np.var(real_v[pick] - sim_on, axis=0) + tiny)))

    best = minimize_scalar(cost, bounds=(lag_s - half_width_s, lag_s + half_width_s), method="bounded",
                           options=dict(xatol=1e-9))
    return float(best.x) if best.fun < cost(lag_s) else float(lag_s)


def tare_offsets(grid: np.ndarray, valid: np.ndarray, real: np.ndarray, sim: np.ndarray, tare_s: float):
    """(real mean, sim mean), each (6,), over the valid grid times of the first ``tare_s`` seconds.

    Raises ValueError when that window holds fewer than two valid samples.
    """
    window = valid & (grid <= grid[0] + tare_s)
    if window.sum() < 2:
        raise ValueError(f"the tare window ({tare_s:g} s from the start of the overlap) holds "
                         f"{int(window.sum())} valid samples; at least 2 are needed")
    return real[window].mean(axis=0), sim[window].mean(axis=0)
