"""When the node steps: the simulated clock, pause and step-N requests, and controller lockstep (no ROS import).

The node's loop asks, in this order: does anyone want a step (:class:`StepRequests`: running, or a
``~/step`` call outstanding)? is it due on the wall clock (``pacing``)? has the controller answered
(:class:`LockstepGate`)? Only then it steps, publishes, and reports back to each of them.
"""
from __future__ import annotations

import collections

from .config import NS_PER_S


class SimClock:
    """Simulated time as a step count, so that N steps advance /clock by exactly N * dt.

    ``steps`` counts the simulator's steps since its state was last reset (its time is steps * dt);
    ``base_ns`` is the /clock stamp of that state's t = 0. A reset of the state alone keeps /clock going on
    from where it was (tf2 buffers break on time going backwards); a reset of the time sets it back to 0.
    ``dt`` must be a whole number of nanoseconds (the config checks it).
    """

    def __init__(self, dt: float):
        self.dt_ns = int(round(dt * NS_PER_S))
        self.steps = 0
        self.base_ns = 0

    @property
    def stamp_ns(self) -> int:
        return self.base_ns + self.steps * self.dt_ns

    def advance(self) -> None:
        self.steps += 1

    def reset(self, *, time: bool = True, state: bool = True) -> None:
        """After a reset of the simulator's state (``state``) and/or of the published time (``time``)."""
        now = self.stamp_ns
        if state:
            self.steps = 0
        self.base_ns = -self.steps * self.dt_ns if time else now - self.steps * self.dt_ns

    def sim_time(self, stamp_s: float) -> float:
        """The simulator's time [s] at the /clock stamp ``stamp_s`` [s]."""
        return stamp_s - self.base_ns / NS_PER_S


class StepRequests:
    """Paused or running, and the ``~/step`` calls still to serve (each: steps left, a token, steps asked)."""

    def __init__(self, paused: bool):
        self.paused = paused
        self._queue: collections.deque = collections.deque()

    def request(self, steps: int, token) -> None:
        """Ask for ``steps`` steps; ``token`` comes back from :meth:`stepped` once they are done."""
        self._queue.append([int(steps), token, int(steps)])

    @property
    def outstanding(self) -> bool:
        return bool(self._queue)

    def wants_step(self) -> bool:
        return not self.paused or self.outstanding

    def stepped(self) -> list:
        """Count one step against the oldest request; the tokens of the requests now done."""
        if not self._queue:
            return []
        self._queue[0][0] -= 1
        done = []
        while self._queue and self._queue[0][0] <= 0:
            done.append(self._queue.popleft()[1])
        return done

    def cancel(self) -> list:
        """Drop every outstanding request (a pause, a reset, a failed step): (token, steps done, steps asked)
        for each, oldest first."""
        dropped = [(token, asked - left, asked) for left, token, asked in self._queue]
        self._queue.clear()
        return dropped


class LockstepGate:
    """In lockstep mode, a step waits for a command that arrived after the previous step was published.

    The wait starts when the step becomes due (not while paused) and ends after ``timeout`` [s] of wall
    time; the step then runs with the last command held, and :attr:`held` counts such steps in a row.
    With ``enabled`` False every step is ready at once.
    """

    def __init__(self, enabled: bool, timeout: float):
        self.enabled = enabled
        self.timeout = timeout
        self._fresh = False
        self._deadline: float | None = None
        self.held = 0  # steps in a row that ran without a fresh command
        self.held_total = 0

    def command(self) -> None:
        """A valid command arrived."""
        self._fresh = True

    def check(self, now: float) -> tuple[bool, float, bool]:
        """(ready, seconds left to wait, timed out) for the next step at wall time ``now``."""
        if not self.enabled or self._fresh:
            return True, 0.0, False
        if self._deadline is None:
            self._deadline = now + self.timeout
        if now >= self._deadline:
            return True, 0.0, True
        return False, self._deadline - now, False

    def stepped(self, timed_out: bool) -> int:
        """The step ran (with a fresh or a held command); returns how many held steps a fresh one ended."""
        ended = 0
        if timed_out:
            self.held += 1
            self.held_total += 1
        else:
            ended, self.held = self.held, 0
        self._fresh = False
        self._deadline = None
        return ended

    def reset(self) -> None:
        self._fresh = False
        self._deadline = None
        self.held = 0
