"""Node parameters: defaults, ranges, types and the scene they name are checked before anything starts."""
import os

import pytest

from cond_ros.cosim.config import (SOLVER_NAMES, PARAMETERS, ConfigError, check_parameter, scene_path,
                                   undeclared_parameter_problems, validate_config)
from cond_ros.resources import config_dir, scene_files
from cond_ros.scenes.registry import BUILT_IN


def test_defaults_are_valid():
    """Every default passes its own check, so an unconfigured node starts."""
    config = validate_config({})
    for spec in PARAMETERS:
        assert check_parameter(spec.name, spec.default) is None
    assert config.scene == "panda_cable" and config.real_time_factor == 1.0 and config.command_joints == ()


def test_every_problem_is_reported_at_once():
    """Bad types, ranges and choices are all named in one error."""
    with pytest.raises(ConfigError) as err:
        validate_config({"dt": -0.01, "real_time_factor": "fast", "lockstep": 1, "steps_per_trigger": 0,
                         "lockstep_timeout": float("nan")})
    text = str(err.value)
    for name in ("dt", "real_time_factor", "lockstep", "steps_per_trigger", "lockstep_timeout"):
        assert f"{name}:" in text


def test_integers_are_accepted_for_floats():
    """real_time_factor:=1 (an integer on the command line) means 1.0."""
    config = validate_config({"real_time_factor": 2, "dt": 0})
    assert config.real_time_factor == 2.0 and isinstance(config.real_time_factor, float)


def test_dt_must_be_whole_nanoseconds():
    """/clock advances by exactly N dt only if dt is a whole number of nanoseconds."""
    assert check_parameter("dt", 0.001) is None
    assert "nanoseconds" in check_parameter("dt", 1e-10 * 3.5)


def test_solver_choices():
    """Unknown solvers and iteration options on the penalty solver are rejected; the node's list of
    solver names is the simulator's registry."""
    from cond_ros.sim.solvers import SOLVERS
    assert set(SOLVER_NAMES) == set(SOLVERS)
    with pytest.raises(ConfigError, match="solver: expected one of"):
        validate_config({"solver": "pgs2"})
    assert validate_config({"solver": "apgd", "solver_tolerance": 1e-5}).solver == "apgd"
    with pytest.raises(ConfigError, match="not penalty"):
        validate_config({"solver": "penalty", "solver_tolerance": 1e-5})
    with pytest.raises(ConfigError, match="repeat"):
        validate_config({"command_joints": ["a", "a"]})


def test_scene_path():
    """A scene is a built-in name, a config/NAME.yaml name, or a YAML path; anything else lists the choices."""
    packaged = scene_files()
    assert scene_path("box_sliding", packaged, BUILT_IN) is None
    assert scene_path("panda_cable_small", packaged, BUILT_IN) == os.path.join(config_dir(), "panda_cable_small.yaml")
    with pytest.raises(ConfigError, match="panda_cable"):
        scene_path("no_such_scene", packaged, BUILT_IN)
    with pytest.raises(ConfigError, match="no such file"):
        scene_path("/nowhere/scene.yaml", packaged, BUILT_IN)


def test_undeclared_parameters_are_named_with_the_closest():
    declared = [spec.name for spec in PARAMETERS]
    assert undeclared_parameter_problems(["real_time_factr", "scene", "zzz"], declared) == [
        "real_time_factr: not a parameter of this node, ignored; did you mean real_time_factor?",
        "zzz: not a parameter of this node, ignored"]
    assert undeclared_parameter_problems(declared, declared) == []
