"""The scene a configuration asks for: overrides of dt, solver and sensor settings; clear errors."""
import numpy as np
import pytest

from cond_ros.cosim.config import ConfigError, validate_config
from cond_ros.cosim.sim_setup import build_scene, warm_up

SMALL = "panda_cable_small"


def test_overrides_apply():
    """dt, solver tolerance and iteration cap, noise off and a seed replace the scene's."""
    scene = build_scene(validate_config({"scene": SMALL, "dt": 0.005, "solver_tolerance": 1e-5,
                                         "solver_max_iterations": 50, "sensor_noise": False, "sensor_seed": 7}))
    sim = scene.simulator
    assert sim.dt == 0.005 and sim.solver.tolerance == 1e-5 and sim.solver.max_iterations == 50
    spec = scene.sensors[0].spec
    assert spec.seed == 7 and not spec.noise_std.any()


def test_scene_settings_by_default():
    """Without overrides the scene's own dt and solver options stand."""
    scene = build_scene(validate_config({"scene": SMALL}))
    assert scene.simulator.dt == 0.01 and scene.simulator.solver.name == "cond"
    assert scene.simulator.solver.tolerance == 1e-4 and scene.simulator.solver.coarse_correction
    assert scene.sensors[0].spec.noise_std[0] == 0.05


def test_warm_up_leaves_no_trace():
    """The compile step is undone: state, time and sensor noise start from the beginning."""
    scene = build_scene(validate_config({"scene": SMALL}))
    warm_up(scene)
    assert scene.simulator.state.time == 0.0
    np.testing.assert_array_equal(scene.simulator.state.robot_q, scene.simulator.model.robot_q)
    assert scene.sensors[0].last is None


def test_bad_scene_file(tmp_path):
    """A malformed scene file is a ConfigError naming the file and key."""
    path = tmp_path / "bad.yaml"
    path.write_text("robots:\n  - {name: panda}\n")
    with pytest.raises(ConfigError, match="robots"):
        build_scene(validate_config({"scene": str(path)}))
