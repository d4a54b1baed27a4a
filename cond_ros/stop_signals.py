"""Ctrl-C (SIGINT), SIGTERM and SIGHUP recorded as a request to stop, instead of killing the process or
raising KeyboardInterrupt in whatever it was doing: a long job then ends at a point of its choosing, with
what it made kept (a bag closed, the launched nodes stopped). Nothing here imports the rest of ``cond_ros``.
"""
from __future__ import annotations

import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """While entered, the first of :data:`STOP_SIGNALS` is kept in :attr:`received` (later ones are ignored);
    on exit the previous handlers are back. Python lets only the main thread set handlers; entered in
    another thread this changes nothing, and signals keep the process's own handlers."""

    def __init__(self):
        self.received = None
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._record)
        return self

    def __call__(self) -> bool:
        """Whether a stop was asked for (a ``stop`` callable for long loops)."""
        return self.received is not None

    def _record(self, signum, frame) -> None:
        if self.received is None:
            self.received = signum

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    @property
    def name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else ""
