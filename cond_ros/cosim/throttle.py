"""Throttled warnings: at most one message per kind and period, counting the ones held back (no ROS import).

rclpy's own ``throttle_duration_sec`` throttles per call site, so one bad message would hide a different
problem reported from the same line; here each kind (e.g. the topic and what was wrong) has its own
period, and the next message says how many of its kind were suppressed.
"""
from __future__ import annotations

import time


class WarningThrottle:
    """Decides which warnings to emit.

    Args:
        period: minimum wall time [s] between two messages of one kind; 0 emits every message.
        clock: the wall clock (seconds), replaceable in tests.
    """

    def __init__(self, period: float, clock=time.monotonic):
        self.period = period
        self.clock = clock
        self._last: dict = {}  # kind -> time of its last emitted message
        self._suppressed: dict = {}  # kind -> count held back since then

    def filter(self, kind, text: str) -> str | None:
        """``text`` (with the count of suppressed ones of its kind) if it may be emitted now, else None."""
        now = self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.period:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return None
        self._last[kind] = now
        held = self._suppressed.pop(kind, 0)
        return text if not held else f"{text} ({held} similar warnings suppressed)"
