"""SimOptions, the step size and solver as one value, and override_options, the one way to change them
(the CLI's --dt/--solver, the node's parameters, benchmarks)."""
import dataclasses

import numpy as np
import pytest

from cond_ros.sim import ModelError, Simulator
from cond_ros.sim.options import SimOptions, override_options
from cond_ros.scenes.registry import load_named_scene

SCENE = SimOptions(0.005, "cond", {"tolerance": 1e-4, "max_iterations": 200, "coarse_correction": True})


def test_another_solver_starts_from_its_own_defaults():
    changed = override_options(SCENE, solver="pgs")
    assert (changed.dt, changed.solver, dict(changed.solver_options)) == (0.005, "pgs", {})


def test_the_same_solver_keeps_the_scenes_options_and_takes_the_changes():
    changed = override_options(SCENE, solver="cond", max_iterations=50, dt=0.01)
    assert changed.dt == 0.01 and dict(changed.solver_options) == {"tolerance": 1e-4, "max_iterations": 50,
                                                                   "coarse_correction": True}
    assert override_options(SCENE) == SCENE
    assert dict(SCENE.solver_options)["max_iterations"] == 200  # the original is untouched


def test_options_are_read_only():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SCENE.dt = 0.1
    with pytest.raises(TypeError):
        SCENE.solver_options["tolerance"] = 1.0


@pytest.mark.parametrize("dt", [0.0, -0.01, np.nan])
def test_a_bad_step_names_dt(dt):
    with pytest.raises(ModelError, match=r"^dt: "):
        SimOptions(dt)


def test_an_unknown_solver_names_the_solver_and_the_known_ones():
    with pytest.raises(ModelError, match=r"solver: unknown 'gauss'; available: .*primal_newton"):
        override_options(SCENE, solver="gauss")


def test_a_scene_carries_its_yaml_options_to_its_simulator():
    """config/panda_cable_small.yaml: dt 0.01, COND at the paper's settings; the simulator's solver is made
    from exactly those."""
    sim = load_named_scene("panda_cable_small", script=False).simulator
    assert sim.options == SimOptions(0.01, "cond", {"tolerance": 1e-4, "max_iterations": 200,
                                                    "coarse_correction": True})
    assert (sim.dt, sim.solver.name, sim.solver.tolerance, sim.solver.max_iterations) == (0.01, "cond", 1e-4, 200)
    assert sim.solver.coarse_correction


def test_a_solver_object_is_recorded_by_name_registered_or_not():
    from cond_ros.sim.solvers import SolverBase, SolverPGS
    from cond_ros.scenes.registry import box_on_plane
    model = box_on_plane()
    sim = Simulator(model, dt=0.02, solver=SolverPGS(model, tolerance=1e-6))
    assert sim.options == SimOptions(0.02, "pgs", {}) and sim.solver.tolerance == 1e-6

    class Reference(SolverBase):  # a test's own solver, as test_rod.py's direct solve
        name = "reference"
    sim = Simulator(model, dt=0.02, solver=Reference(model))
    assert (sim.options.dt, sim.options.solver, dict(sim.options.solver_options)) == (0.02, "reference", {})
    with pytest.raises(ModelError, match=r"^dt: "):
        Simulator(model, dt=0.0, solver=Reference(model))
    with pytest.raises(ModelError, match="made for another model"):
        Simulator(box_on_plane(), dt=0.02, solver=Reference(model))
    with pytest.raises(TypeError, match="model"):
        SolverPGS(tolerance=1e-6)
    with pytest.raises(ModelError, match="SolverPGS: the first argument must be the Model it solves, got dict"):
        SolverPGS({"tolerance": 1e-6})
