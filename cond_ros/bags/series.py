"""A wrench topic of a bag as a time series: stamps, six values per stamp, the frame they are in."""
from __future__ import annotations

import dataclasses

import numpy as np

from . import messages
from .io import BagError, BagReader

STAMP_SOURCES = ("header", "log")  # header.stamp (the sensor's time) or the bag's log (receive) time


@dataclasses.dataclass(frozen=True)
class WrenchSeries:
    """geometry_msgs/WrenchStamped messages of one topic, sorted by stamp.

    Attributes:
        bag, topic: where they come from.
        stamps_ns: stamps [ns], strictly increasing, shape (n,).
        values: fx fy fz [N], tx ty tz [N m], shape (n, 6).
        frame_id: the frame of every message ('' if unset).
        dropped: messages dropped because their stamp repeated an earlier one.
    """

    bag: str
    topic: str
    stamps_ns: np.ndarray
    values: np.ndarray
    frame_id: str
    dropped: int = 0

    @property
    def name(self) -> str:
        return f"{self.bag} [{self.topic}]"

    def period_s(self) -> float:
        """Median time between messages [s]."""
        return float(np.median(np.diff(self.stamps_ns))) * 1e-9

    def span_ns(self) -> tuple[int, int]:
        return int(self.stamps_ns[0]), int(self.stamps_ns[-1])


def series_from_arrays(bag: str, topic: str, stamps_ns, values, frame_id: str) -> WrenchSeries:
    """A :class:`WrenchSeries` from unsorted stamps and values; raises BagError for unusable data."""
    stamps = np.asarray(stamps_ns, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64).reshape(-1, 6)
    if len(stamps) == 0:
        raise BagError(bag, "has no messages", topic)
    bad = np.flatnonzero(~np.all(np.isfinite(values), axis=1))
    if len(bad):
        raise BagError(bag, f"message {bad[0]} (stamp {stamps[bad[0]]} ns) has a non-finite value; "
                            f"{len(bad)} such messages", topic)
    order = np.argsort(stamps, kind="stable")
    stamps, values = stamps[order], values[order]
    keep = np.concatenate([[True], np.diff(stamps) > 0])
    stamps, values = stamps[keep], values[keep]
    if len(stamps) < 2:
        raise BagError(bag, f"has {len(stamps)} distinct stamp(s); at least 2 are needed", topic)
    return WrenchSeries(bag, topic, stamps, values, frame_id, int((~keep).sum()))


def read_wrench_series(bag, topic: str, *, stamps: str = "header", progress: bool = False) -> WrenchSeries:
    """The WrenchStamped messages of ``topic`` in ``bag``, stamped by ``header.stamp`` or the log time.

    Raises BagError (naming bag and topic) for: no such bag or topic, another message type, no messages,
    a non-finite value, frame_id changing between messages, header stamps all zero (unset: use ``log``).
    """
    if stamps not in STAMP_SOURCES:
        raise ValueError(f"stamps: expected one of {STAMP_SOURCES}, got {stamps!r}")
    bag = str(bag)
    times, rows, frames = [], [], set()
    with BagReader(bag) as reader:
        reader.require(topic, (messages.WRENCH_STAMPED,))
        for _, log_ns, msg in reader.messages([topic], progress=progress, desc=f"read {topic}"):
            times.append(messages.stamp_ns(msg.header.stamp) if stamps == "header" else log_ns)
            rows.append(messages.wrench_values(msg))
            frames.add(msg.header.frame_id)
    if not rows:
        raise BagError(bag, "has no messages", topic)
    if len(frames) > 1:
        raise BagError(bag, f"frame_id changes between messages ({', '.join(sorted(map(repr, frames)))}); "
                            "one static frame is expected", topic)
    if stamps == "header":
        zero = sum(1 for t in times if t == 0)
        if zero == len(times):
            raise BagError(bag, "every header.stamp is zero (not set by the publisher); use the log time "
                                "(--stamps log)", topic)
        if zero:
            raise BagError(bag, f"{zero} of {len(times)} messages have a zero header.stamp", topic)
    return series_from_arrays(bag, topic, times, rows, frames.pop())
