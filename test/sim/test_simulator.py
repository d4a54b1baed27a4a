"""Simulator.step's failures: a singular system inside a solver's kernel is a SimulationError that names the
solver and the time, and the state stays the last good one (issue 32: the node died of a LinAlgError raised
by numba's matrix inverse inside V-FPI, under cond-ros soak's command flood)."""
import numpy as np
import pytest

from cond_ros.scenes.registry import box_on_plane
from cond_ros.sim import SimulationError, Simulator


def test_a_singular_system_is_a_simulation_error_and_keeps_the_state(monkeypatch):
    sim = Simulator(box_on_plane())
    sim.step()
    before = sim.state

    def singular(*args, **kwargs):
        return np.linalg.inv(np.zeros((2, 2)))  # what numba's inverse raises on a singular block
    monkeypatch.setattr(sim.solver, "step", singular)
    with pytest.raises(SimulationError, match=r"Singular matrix \(a singular system\) in the step from t = 0.0100"):
        sim.step()
    assert sim.state is before
    monkeypatch.undo()
    sim.step()  # and it goes on
    assert sim.state.time > before.time
