"""The viewer beside a run never holds a step and never changes what is simulated: a slow frame costs frames,
not steps, and a run with the viewer is bit-identical to one without."""
import time

import numpy as np
import pytest

from cond_ros.tools import run_scene
from cond_ros.view import LiveView, RunControl

pytest.importorskip("viser", reason="the viewer needs viser (the view extra)")
TIMING = ("collision_ms", "dynamics_ms", "solver_ms")


def _run(scene, steps, live=None, real_time_factor=0.0):
    sim = scene.simulator
    sim.reset()
    for sensor in scene.sensors:
        sensor.reset()
    control = RunControl(sim.dt, real_time_factor) if live is not None else None
    on_step = (lambda k, st: live.latest.set(k, sim.state, sim.contacts, st)) if live is not None else None
    return run_scene(scene, steps, progress=False, control=control, on_step=on_step)


def _physics(result) -> np.ndarray:
    keep = [i for i, name in enumerate(result.header) if name not in TIMING]
    return result.rows[:, keep]


def test_a_run_with_the_viewer_simulates_bit_for_bit_the_same(small_scene):
    alone = _run(small_scene, 120)
    live = LiveView(small_scene, RunControl(small_scene.simulator.dt, 0.0), port=0, fps=60)
    try:
        viewed = _run(small_scene, 120, live)
    finally:
        live.close()
    assert live.frames > 0
    assert np.array_equal(_physics(viewed), _physics(alone))


def test_a_slow_frame_costs_frames_not_steps(small_scene, monkeypatch):
    drawn = []

    def slow_show(self, frame, history=None):
        drawn.append(frame.step)
        time.sleep(0.4)  # a frame that takes 12 frame periods
    live = LiveView(small_scene, RunControl(small_scene.simulator.dt, 0.0), port=0, fps=30)
    monkeypatch.setattr(type(live.viewer), "show", slow_show)
    try:
        start = time.perf_counter()
        result = _run(small_scene, 300, live, real_time_factor=2.0)  # 1.5 s of wall time, paced
        wall = time.perf_counter() - start
    finally:
        live.close()
    assert len(result.rows) == 300
    # while a frame took its 0.4 s, the run went on (80 steps at twice real time, fewer on a loaded machine): a
    # viewer that held the steps would draw every one of them in turn
    assert 2 <= len(drawn) <= wall / 0.4 + 2, drawn
    assert np.all(np.diff(drawn) > 10), drawn
