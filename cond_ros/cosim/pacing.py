"""Wall-clock pacing at a target real-time factor, and what was achieved (no ROS import).

Step k after the anchor is due at ``anchor + k dt / rtf``. A step that takes longer than its real-time
budget ``dt / rtf`` is an overrun. When the sim falls more than ``max_lag`` behind its schedule, the
schedule restarts from now: the lost time is dropped instead of being caught up in a burst of steps,
which would starve the subscribers. ``rtf = 0`` runs as fast as possible.

The outputs only observers read (contact wrenches, markers, /tf) may be held back a little after the
controller's inputs (/joint_states, F/T) went out: on 2 cores, a node that goes on building messages
keeps a core while the controller and every other subscriber of /joint_states wake up, and that wake-up
waits. The hold never runs a step past its real-time budget, and there is none at ``rtf = 0``.
"""
from __future__ import annotations

import collections

import numpy as np

OBSERVER_SAMPLES = 100  # steps over which the observer outputs' longest time is taken (markers come every 10)


class Pacer:
    """Schedules steps and measures the achieved real-time factor, overruns and publish latency.

    Args:
        dt: simulated step [s].
        real_time_factor: target simulated / wall time; 0 = as fast as possible.
        max_lag: [s] of wall time behind schedule after which the schedule restarts.
        window: [s] of wall time over which the achieved real-time factor is measured.
    """

    def __init__(self, dt: float, real_time_factor: float, *, max_lag: float = 0.1, window: float = 2.0,
                 samples: int = 1000):
        self.dt = dt
        self.real_time_factor = real_time_factor
        self.max_lag = max_lag
        self.window = window
        self.overruns = 0
        self.steps = 0
        self._recent = collections.deque()  # (wall time at the end of a step, steps until then)
        self.step_ms = collections.deque(maxlen=samples)
        self.publish_ms = collections.deque(maxlen=samples)
        self._anchor: float | None = None
        self._since_anchor = 0
        self._observer_s = collections.deque(maxlen=OBSERVER_SAMPLES)  # [s] the observer outputs took lately

    def restart(self, now: float) -> None:
        """Schedule from ``now`` (at start, on resume, after a reset or a change of the target)."""
        self._anchor = now
        self._since_anchor = 0
        self._recent.clear()

    def set_real_time_factor(self, real_time_factor: float, now: float) -> None:
        self.real_time_factor = real_time_factor
        self.restart(now)

    def wait(self, now: float) -> float:
        """Seconds until the next step is due (0 when due, or with no target)."""
        if self.real_time_factor <= 0:
            return 0.0
        if self._anchor is None:
            self.restart(now)
        due = self._anchor + self._since_anchor * self.dt / self.real_time_factor
        return max(0.0, due - now)

    def observer_hold(self, start: float, now: float, delay: float) -> float:
        """[s] the observer outputs of the step that started at ``start`` may wait from ``now``: ``delay``, or
        less so that they still end within the step's budget (with the longest they took of late, twice
        over); 0 at ``rtf = 0``."""
        if self.real_time_factor <= 0 or delay <= 0:
            return 0.0
        longest = max(self._observer_s) if self._observer_s else 0.0
        room = start + self.dt / self.real_time_factor - now - 2.0 * longest
        return min(delay, max(0.0, room))

    def observed(self, seconds: float) -> None:
        """Record how long one step's observer outputs took to build and publish."""
        self._observer_s.append(seconds)

    def stepped(self, start: float, stepped: float, published: float) -> None:
        """Record one step: wall times when it started, when the physics was done, when it was published."""
        self.steps += 1
        self._since_anchor += 1
        self.step_ms.append(1e3 * (stepped - start))
        self.publish_ms.append(1e3 * (published - stepped))
        if self.real_time_factor > 0:
            budget = self.dt / self.real_time_factor
            if published - start > budget:
                self.overruns += 1
            if self._anchor is not None and published > self._anchor + self._since_anchor * budget + self.max_lag:
                self._anchor, self._since_anchor = published, 0
        self._recent.append((published, self.steps))
        while len(self._recent) > 2 and self._recent[0][0] < published - self.window:
            self._recent.popleft()

    def achieved(self) -> float:
        """Simulated / wall time over the last ``window`` seconds of stepping (0 before two steps)."""
        if len(self._recent) < 2:
            return 0.0
        (t0, k0), (t1, k1) = self._recent[0], self._recent[-1]
        return (k1 - k0) * self.dt / (t1 - t0) if t1 > t0 else 0.0

    def summary(self) -> dict:
        """Medians and 99th percentiles [ms] of the step and step-to-publish times, overruns, achieved RTF."""
        out = dict(steps=self.steps, overruns=self.overruns, achieved_real_time_factor=self.achieved(),
                   target_real_time_factor=self.real_time_factor)
        for name, values in (("step_ms", self.step_ms), ("publish_ms", self.publish_ms)):
            if values:
                out[f"{name}_median"] = float(np.median(values))
                out[f"{name}_p99"] = float(np.percentile(values, 99))
        return out
