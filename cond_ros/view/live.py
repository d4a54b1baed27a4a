"""The viewer beside a running simulation: it samples the last step at its own frame rate, on its own thread.

The stepping thread only stores references to what the step made (:meth:`LatestStep.set`: the new state,
its contacts and statistics); it never waits for the viewer. The viewer thread draws the newest step each
frame and skips the ones in between, so a slow browser or a slow frame costs frames, not steps.
"""
from __future__ import annotations

import threading
import time

from .layout import FrameSampler, scene_layout
from .viewer import SceneViewer

DEFAULT_FPS = 30.0


class LatestStep:
    """The last step, as references: (step count, state, contacts, stats, achieved real-time factor)."""

    def __init__(self):
        self.value = None

    def set(self, step: int, state, contacts, stats, real_time_factor: float = 0.0) -> None:
        self.value = (step, state, contacts, stats, real_time_factor)  # one reference swap: no lock needed


class LiveView:
    """A :class:`SceneViewer` of ``scene`` drawing ``latest`` at ``fps`` until :meth:`close`."""

    def __init__(self, scene, controls, *, host: str = "127.0.0.1", port: int = 8080, fps: float = DEFAULT_FPS,
                 title: str = "cond_ros"):
        if not fps > 0:
            raise ValueError(f"the viewer's frame rate must be > 0, got {fps}")
        layout = scene_layout(scene)
        self.viewer = SceneViewer(layout, host=host, port=port, controls=controls, title=title)
        self.url = self.viewer.url + self.viewer.port_note
        self.latest = LatestStep()
        self.sampler = FrameSampler(scene, layout)
        self.viewer.show(self.sampler.frame(0, scene.simulator.state, None))  # the scene and camera before any page
        self.period = 1.0 / fps
        self.frames = 0  # drawn
        self.draw_s = 0.0  # wall time spent drawing them
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cond_ros viewer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        drawn = None
        next_frame = time.monotonic()
        while not self._stop.wait(max(0.0, next_frame - time.monotonic())):
            next_frame += self.period
            now = time.monotonic()
            if next_frame < now:  # a frame took longer than the period: skip ahead instead of catching up
                next_frame = now + self.period
            value = self.latest.value
            try:
                if value is not None and value[1] is not drawn:
                    step, state, contacts, stats, rtf = value
                    start = time.perf_counter()
                    self.viewer.show(self.sampler.frame(step, state, contacts, stats, rtf))
                    self.draw_s += time.perf_counter() - start
                    self.frames += 1
                    drawn = state
                else:
                    self.viewer.refresh_status()
            except Exception as exc:  # noqa: BLE001 (the viewer must never take the run down with it)
                print(f"cond_ros viewer: drawing failed ({type(exc).__name__}: {exc}); the run goes on without it",
                      flush=True)
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.viewer.close()
