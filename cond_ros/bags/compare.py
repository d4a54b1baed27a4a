"""``cond-ros compare``: a real and a simulated wrench topic, aligned and compared axis by axis.

The steps, in order: read both topics (``series``); check their frames and transform the sim's into the
real sensor's frame when asked (``frames``); put the sim on the real's clock, shifted by a constant lag
given or estimated (``align``); resample onto the common time base (the real's own stamps by default,
or a uniform grid at ``rate_hz``), masking gaps; tare both (optional); compute the metrics over the
whole overlap and over windows (``metrics``). Nothing is written here (see ``report``).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import align, messages
from .frames import WrenchTransform
from .io import BagError, BagReader
from .metrics import AXES, AxisMetrics, axis_metrics, windowed_metrics
from .series import WrenchSeries, read_wrench_series

ANTI_CORRELATED = -0.5  # an axis below this correlation gets a sign-convention warning


@dataclasses.dataclass(frozen=True)
class CompareOptions:
    """What to compare and how (the ``cond-ros compare`` options).

    Attributes:
        real_topic: WrenchStamped topic of the real bag.
        sim_topic: WrenchStamped topic of the sim bag; None: its only ``.../ground_truth`` F/T topic.
        lag: ``"none"``, ``"auto"`` (cross-correlation) or a lag in seconds (real(t) = sim(t - lag)).
        max_lag_s: the largest lag ``auto`` considers [s].
        tare_s: tare both over this many seconds from the start of the overlap; None: no tare.
        window_s: length of the metric windows [s].
        transform: pose of the sim's wrench frame in the real sensor's frame; None: frames must match.
        rate_hz: resample both onto a uniform grid at this rate; None: onto the real's stamps.
        stamps: ``header`` (header.stamp) or ``log`` (the bags' receive times).
        preset: a real robot's recording layout (:data:`~cond_ros.bags.presets.PRESETS`), converted into the
            sim sensor's meaning before the comparison; ``real_topic`` may then be None (the preset's topic).
    """

    real_topic: str | None
    sim_topic: str | None = None
    lag: object = "none"
    max_lag_s: float = 1.0
    tare_s: float | None = None
    window_s: float = 5.0
    transform: WrenchTransform | None = None
    rate_hz: float | None = None
    stamps: str = "header"
    preset: str | None = None
    joint_states_topic: str = "/joint_states"

    def check(self) -> None:
        """Raise ValueError naming the first bad option."""
        from .presets import PRESETS
        if self.preset is not None and self.preset not in PRESETS:
            raise ValueError(f"preset: expected one of {', '.join(PRESETS)}, got {self.preset!r}")
        if self.preset is None and not self.real_topic:
            raise ValueError("real_topic: give the real bag's WrenchStamped topic (or a --preset)")
        if self.preset is not None and PRESETS[self.preset].franka and self.transform is not None:
            raise ValueError(f"transform: --preset {self.preset} moves the real wrench into the sim's sensor frame "
                             "with the scene's URDF; a --transform would move it twice")
        if not (self.lag in ("none", "auto") or (isinstance(self.lag, (int, float)) and np.isfinite(self.lag))):
            raise ValueError(f"lag: expected none, auto or seconds, got {self.lag!r}")
        for name in ("max_lag_s", "window_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: must be > 0, got {getattr(self, name)!r}")
        if self.tare_s is not None and not self.tare_s > 0:
            raise ValueError(f"tare: must be > 0 s, got {self.tare_s!r}")
        if self.rate_hz is not None and not self.rate_hz > 0:
            raise ValueError(f"rate: must be > 0 Hz, got {self.rate_hz!r}")


@dataclasses.dataclass
class Comparison:
    """The aligned series and their metrics (everything the report shows).

    Attributes:
        real, sim: the series as read (sim values before transform, lag and tare).
        ref_ns: the stamp that ``t`` counts from (the real series' first) [ns].
        t: the common time base, valid samples only [s after ref_ns], shape (n,).
        real_values, sim_values: both on ``t``, transformed and tared, shape (n, 6).
        lag_s, lag_source: the lag removed [s] and where it came from (none, given, estimated).
        lag_estimate: the cross-correlation result when estimated.
        tare: {"real": (6,), "sim": (6,)} means removed, or None.
        masked: common time base samples left out (in a gap of either series).
        overall, windows: metrics (``metrics``).
        warnings: things the reader of the report must know.
    """

    options: CompareOptions
    real: WrenchSeries
    sim: WrenchSeries
    ref_ns: int
    t: np.ndarray
    real_values: np.ndarray
    sim_values: np.ndarray
    lag_s: float
    lag_source: str
    lag_estimate: align.LagEstimate | None
    tare: dict | None
    masked: int
    overall: dict
    windows: list
    warnings: list

    @property
    def error(self) -> np.ndarray:
        """sim - real, shape (n, 6)."""
        return self.sim_values - self.real_values

    def to_dict(self) -> dict:
        """Everything but the samples, as JSON-ready values."""
        def series(s: WrenchSeries) -> dict:
            return dict(bag=s.bag, topic=s.topic, frame_id=s.frame_id, messages=len(s.stamps_ns),
                        first_stamp_ns=int(s.stamps_ns[0]), last_stamp_ns=int(s.stamps_ns[-1]),
                        period_s=s.period_s(), dropped_duplicate_stamps=s.dropped)
        o = self.options
        estimate = self.lag_estimate
        return dict(
            valid=True, axes=list(AXES), real=series(self.real), sim=series(self.sim),
            alignment=dict(
                stamps=o.stamps, ref_stamp_ns=int(self.ref_ns), start_s=float(self.t[0]), end_s=float(self.t[-1]),
                samples=len(self.t), masked_samples=self.masked,
                time_base="real stamps" if o.rate_hz is None else f"uniform {o.rate_hz:g} Hz",
                lag_s=self.lag_s, lag_source=self.lag_source,
                lag_correlation=None if estimate is None else estimate.correlation,
                lag_grid_period_s=None if estimate is None else estimate.grid_period_s,
                transform=None if o.transform is None else o.transform.to_dict(),
                tare_s=o.tare_s,
                tare_real={a: float(v) for a, v in zip(AXES, self.tare["real"])} if self.tare else None,
                tare_sim={a: float(v) for a, v in zip(AXES, self.tare["sim"])} if self.tare else None,
                bias_removed={a: float(v) for a, v in zip(AXES, self.tare["real"] - self.tare["sim"])}
                if self.tare else None),
            overall={axis: m.to_dict() for axis, m in self.overall.items()},
            window_s=o.window_s, windows=[w.to_dict() for w in self.windows], warnings=list(self.warnings))


def default_sim_topic(bag) -> str:
    """The only F/T ground-truth topic (``.../ft/<sensor>/ground_truth``) of a sim bag; else BagError."""
    with BagReader(bag) as reader:
        topics = reader.topics
    candidates = sorted(t for t, (msgtype, _) in topics.items()
                        if msgtype == messages.WRENCH_STAMPED and "/ft/" in t and t.endswith("/ground_truth"))
    if len(candidates) != 1:
        wrenches = sorted(t for t, (m, _) in topics.items() if m == messages.WRENCH_STAMPED)
        raise BagError(bag, f"{'no' if not candidates else 'more than one'} F/T ground-truth topic; give "
                            f"--sim-topic (wrench topics: {', '.join(wrenches) or 'none'})")
    return candidates[0]


def _span(s: WrenchSeries, t: np.ndarray) -> str:
    return f"{s.name} spans {t[0]:.6f} .. {t[-1]:.6f} s"


def compare_series(real: WrenchSeries, sim: WrenchSeries, options: CompareOptions) -> Comparison:
    """Align ``sim`` to ``real`` and compute the metrics; raises BagError (naming both) when they cannot be
    compared: frames that differ without a transform, no overlap in time, too few samples."""
    options.check()
    warnings = []
    for s in (real, sim):
        if s.dropped:
            warnings.append(f"{s.name}: {s.dropped} messages repeated an earlier stamp and were dropped")
    sim_values = sim.values
    if options.transform is not None:
        sim_values = options.transform.apply(sim_values)
    elif real.frame_id != sim.frame_id:
        if real.frame_id and sim.frame_id:
            raise BagError(sim.bag, f"the sim's frame {sim.frame_id!r} differs from the real sensor's frame "
                                    f"{real.frame_id!r} ({real.name}); give the sim frame's pose in the real "
                                    f"one (--transform X Y Z ROLL PITCH YAW)", sim.topic)
        warnings.append(f"frame_id is unset on one side (real {real.frame_id!r}, sim {sim.frame_id!r}); "
                        "the frames are assumed to be the same")
    ref = int(real.stamps_ns[0])
    real_t, sim_t = align.seconds(real.stamps_ns, ref), align.seconds(sim.stamps_ns, ref)

    def no_overlap(what):
        return BagError(real.bag, f"no overlap in time{what} with {sim.name}: the real topic spans "
                                  f"{real_t[0]:.6f} .. {real_t[-1]:.6f} s, the sim topic "
                                  f"{sim_t[0]:.6f} .. {sim_t[-1]:.6f} s (from stamp {ref} ns)", real.topic)

    if max(real_t[0], sim_t[0]) >= min(real_t[-1], sim_t[-1]):
        raise no_overlap("")
    estimate = None
    if options.lag == "none":
        lag, source = 0.0, "none"
    elif options.lag == "auto":
        try:
            estimate = align.estimate_lag(real_t, real.values, sim_t, sim_values, max_lag_s=options.max_lag_s)
        except ValueError as exc:
            raise BagError(real.bag, f"lag against {sim.name}: {exc}", real.topic) from None
        lag = align.refine_lag(real_t, real.values, sim_t, sim_values, estimate.lag_s, estimate.grid_period_s)
        source = "estimated"
        if not estimate.reliable:
            warnings.append(f"the lag estimate is unreliable: peak correlation {estimate.correlation:.2f} "
                            f"(< {align.WEAK_CORRELATION})")
        if abs(lag) > 0.95 * options.max_lag_s:
            warnings.append(f"the estimated lag {lag:.4f} s is at the edge of the search range "
                            f"(--max-lag {options.max_lag_s:g} s)")
    else:
        lag, source = float(options.lag), "given"
    lag_ns = int(round(lag * 1e9))  # stamps are whole nanoseconds; so is the shift
    lag = lag_ns * 1e-9
    sim_t = align.seconds(sim.stamps_ns + np.int64(lag_ns), ref)
    lo, hi = max(real_t[0], sim_t[0]), min(real_t[-1], sim_t[-1])
    if lo >= hi:
        raise no_overlap(f" after removing the lag of {lag:.6f} s")
    if options.rate_hz is None:
        pick = (real_t >= lo) & (real_t <= hi)
        grid, real_on, real_ok = real_t[pick], real.values[pick], np.ones(int(pick.sum()), bool)
    else:
        grid = lo + np.arange(int(np.floor((hi - lo) * options.rate_hz)) + 1) / options.rate_hz
        real_on, real_ok = align.resample(real_t, real.values, grid, max_gap=align.max_gap(real_t))
    sim_on, sim_ok = align.resample(sim_t, sim_values, grid, max_gap=align.max_gap(sim_t))
    valid = real_ok & sim_ok
    masked = int((~valid).sum())
    if valid.sum() < 2:
        raise BagError(real.bag, f"only {int(valid.sum())} samples overlap with {sim.name} outside gaps; "
                                 "at least 2 are needed", real.topic)
    if masked:
        warnings.append(f"{masked} of {len(grid)} samples fall in a gap of either series and are left out")
    t, real_on, sim_on = grid[valid], real_on[valid], sim_on[valid]
    tare = None
    if options.tare_s is not None:
        try:
            real_mean, sim_mean = align.tare_offsets(t, np.ones(len(t), bool), real_on, sim_on, options.tare_s)
        except ValueError as exc:
            raise BagError(real.bag, f"tare against {sim.name}: {exc}", real.topic) from None
        real_on, sim_on = real_on - real_mean, sim_on - sim_mean
        tare = dict(real=real_mean, sim=sim_mean)
    overall = axis_metrics(real_on, sim_on)
    try:
        windows = windowed_metrics(t, real_on, sim_on, options.window_s)
    except ValueError as exc:
        raise BagError(real.bag, str(exc), real.topic) from None
    for axis, m in overall.items():
        if m.correlation is not None and m.correlation < ANTI_CORRELATED:
            warnings.append(f"{axis}: real and sim are anti-correlated (r = {m.correlation:.2f}): opposite sign "
                            "conventions (measure_direction) or a wrong --transform?")
    if t[-1] - t[0] < options.window_s:
        warnings.append(f"the overlap ({t[-1] - t[0]:.3f} s) is shorter than one window ({options.window_s:g} s)")
    return Comparison(options, real, sim, ref, t, real_on, sim_on, float(lag), source, estimate, tare, masked,
                      overall, windows, warnings)


def compare_bags(real_bag, sim_bag, options: CompareOptions, *, progress: bool = False,
                 convention=None) -> Comparison:
    """Read ``options.real_topic`` of ``real_bag`` and the sim topic of ``sim_bag`` and compare them.

    With ``options.preset``, ``convention`` (:func:`~cond_ros.bags.presets.sensor_convention` of the sim's
    scene) says what the sim's topic means, and the real recording is converted into it first."""
    options.check()
    if options.sim_topic is None:
        options = dataclasses.replace(options, sim_topic=default_sim_topic(sim_bag))
    real, options = read_real_series(real_bag, options, progress=progress, convention=convention)
    sim = read_wrench_series(sim_bag, options.sim_topic, stamps=options.stamps, progress=progress)
    return compare_series(real, sim, options)


def read_real_series(real_bag, options: CompareOptions, *, progress: bool = False,
                     convention=None) -> tuple[WrenchSeries, CompareOptions]:
    """The real recording's wrench series as ``options`` say (a topic, or a preset's, converted with the sim's
    ``convention``), and the options with the topic it read."""
    from .presets import read_preset_series
    if options.preset is None:
        return read_wrench_series(real_bag, options.real_topic, stamps=options.stamps, progress=progress), options
    if convention is None:
        raise ValueError(f"--preset {options.preset} needs the sim's scene (--scene): its sensor's frame, "
                         "direction and tool")
    real = read_preset_series(real_bag, options.preset, convention, topic=options.real_topic, stamps=options.stamps,
                              progress=progress, joint_states_topic=options.joint_states_topic)
    return real, dataclasses.replace(options, real_topic=real.topic)


__all__ = ["AxisMetrics", "CompareOptions", "Comparison", "compare_bags", "compare_series", "default_sim_topic",
           "read_real_series"]
