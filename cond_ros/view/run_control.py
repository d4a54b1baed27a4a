"""Play, pause, step and reset for a run that ``cond-ros run`` steps, decided as the node decides them.

The viewer's buttons call :class:`RunControl` from the viewer's thread; the run's loop asks
:meth:`RunControl.next_action` before each step. The decisions are the node's: ``simulation_control`` (a
step only while paused; pausing what is paused is no change) and its step-request queue and pacer
(``cosim.stepping``, ``cosim.pacing``), so a button does what the matching service does to the node.
"""
from __future__ import annotations

import threading
import time

from ..cosim import Pacer, StepRequests, simulation_control as control

IDLE_WAIT_S = 0.1  # longest sleep while paused or early: a button wakes the loop at once anyway


class RunControl:
    """The state of a viewed run; thread-safe. ``real_time_factor`` 0 runs as fast as possible."""

    def __init__(self, dt: float, real_time_factor: float, *, paused: bool = False, allow_reset: bool = True):
        self._cv = threading.Condition()
        self.requests = StepRequests(paused)
        self.pacer = Pacer(dt, real_time_factor)
        self._reset = False
        self.allow_reset = allow_reset
        self.paused_s = 0.0  # wall time spent paused: not part of the run's real-time factor

    @property
    def paused(self) -> bool:
        return self.requests.paused

    @property
    def real_time_factor(self) -> float:
        return self.pacer.real_time_factor

    def _state(self) -> int:
        return control.current_state(self.requests.paused, False)

    def _transition(self, target: int) -> str:
        decision = control.transition(self._state(), target)
        if decision.action == "play":
            self.requests.paused = False
            self.pacer.restart(time.monotonic())
        elif decision.action == "pause":
            self.requests.paused = True
            self.requests.cancel()
        self._cv.notify_all()
        return decision.message or control.STATE_NAMES[target].lower()

    def play(self) -> str:
        with self._cv:
            return self._transition(control.STATE_PLAYING)

    def pause(self) -> str:
        with self._cv:
            return self._transition(control.STATE_PAUSED)

    def step(self) -> str:
        with self._cv:
            decision = control.step_decision(self._state(), 1)
            if decision.action == "step":
                self.requests.request(1, None)
                self._cv.notify_all()
                return "one step"
            return decision.message

    def reset(self) -> str:
        if not self.allow_reset:
            return "a replay cannot start over mid-bag; run it again"
        with self._cv:
            self._reset = True
            self.requests.cancel()
            self._cv.notify_all()
            return f"reset to the initial state; {'paused' if self.requests.paused else 'playing'}"

    def set_real_time_factor(self, value: float) -> str:
        if not value >= 0:
            return f"the real-time factor must be >= 0, got {value}"
        with self._cv:
            self.pacer.set_real_time_factor(value, time.monotonic())
            self._cv.notify_all()
        return "as fast as possible" if value == 0 else f"real-time factor {value:g}"

    # -- the stepping loop's side ----------------------------------------------------------------------

    def next_action(self, stop=lambda: False) -> str:
        """Wait until the next step is due: ``"step"``, ``"reset"`` (reset, then ask again) or ``"stop"``."""
        with self._cv:
            while True:
                if stop():
                    return "stop"
                if self._reset:
                    self._reset = False
                    self.pacer.restart(time.monotonic())
                    return "reset"
                if self.requests.outstanding:
                    return "step"
                wait = IDLE_WAIT_S
                if not self.requests.paused:
                    wait = self.pacer.wait(time.monotonic())
                    if wait <= 0.0:
                        return "step"
                start = time.perf_counter()
                self._cv.wait(min(wait, IDLE_WAIT_S))
                if self.requests.paused:
                    self.paused_s += time.perf_counter() - start

    def stepped(self, start: float, end: float) -> None:
        """One step done, from wall time ``start`` to ``end``."""
        with self._cv:
            self.pacer.stepped(start, end, end)
            self.requests.stepped()

    def achieved_real_time_factor(self) -> float:
        with self._cv:
            return self.pacer.achieved()
