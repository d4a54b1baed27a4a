"""The launch description as data, its pip launcher's command lines, and the launch file's structure."""
import importlib.util
import os
import sys
import types

import pytest

from cond_ros.ros.launch_config import PANDA_CABLE, parameter_values, parse_bool
from cond_ros.ros.launcher import node_command, run_launch
from cond_ros.sim.scene import PACKAGE_ROOT

LAUNCH_FILE = os.path.join(PACKAGE_ROOT, "launch", "panda_cable.launch.py")


def test_parameter_values():
    """Launch arguments (strings) become typed node parameters."""
    args = dict(PANDA_CABLE.defaults(), real_time_factor="0.5", lockstep="True")
    sim, controller = PANDA_CABLE.nodes
    assert parameter_values(sim, args) == {"scene": "panda_cable", "real_time_factor": 0.5, "lockstep": True}
    assert parameter_values(controller, args) == {"scene": "panda_cable", "use_sim_time": True}
    with pytest.raises(ValueError, match="lockstep"):
        parameter_values(sim, dict(args, lockstep="maybe"))
    assert parse_bool(" false ") is False


def test_node_command_line():
    """The pip launcher runs each node's module with the same parameters."""
    command = node_command(PANDA_CABLE.nodes[0], dict(PANDA_CABLE.defaults(), lockstep="true"))
    assert command[:3] == [sys.executable, "-m", "cond_ros.ros.node"]
    assert command[3:] == ["--ros-args", "-r", "__node:=cond_sim", "-p", "scene:=panda_cable", "-p",
                           "real_time_factor:=1.0", "-p", "lockstep:=true"]


def test_launcher_rejects_bad_arguments():
    """Unknown or malformed arguments stop the launcher before it starts anything."""
    with pytest.raises(ValueError, match="unknown launch arguments"):
        run_launch("panda_cable", {"speed": "2"})
    with pytest.raises(ValueError, match="real_time_factor"):
        run_launch("panda_cable", {"real_time_factor": "fast"})


def _load_launch_file():
    spec = importlib.util.spec_from_file_location("panda_cable_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_file_without_launch_ros(monkeypatch):
    """Without launch_ros, importing the launch file says what is missing and what to run instead."""
    monkeypatch.setitem(sys.modules, "launch", None)
    with pytest.raises(ImportError, match="cond-ros launch panda_cable"):
        _load_launch_file()


def test_launch_file_structure(monkeypatch):
    """With (stand-ins for) launch and launch_ros, the file declares the four arguments and both nodes."""
    def record(kind):
        return lambda *args, **kwargs: (kind, args, kwargs)
    fakes = {"launch": dict(LaunchDescription=record("description")),
             "launch.actions": dict(DeclareLaunchArgument=record("argument")),
             "launch.substitutions": dict(LaunchConfiguration=record("configuration")),
             "launch_ros.actions": dict(Node=record("node")),
             "launch_ros.parameter_descriptions": dict(ParameterValue=record("value"))}
    for name, attributes in fakes.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**attributes))
    monkeypatch.setitem(sys.modules, "launch_ros", types.SimpleNamespace())
    kind, (actions,), _ = _load_launch_file().generate_launch_description()
    assert kind == "description"
    arguments = [a[1][0] for a in actions if a[0] == "argument"]
    assert arguments == ["scene", "real_time_factor", "lockstep", "use_sim_time"]
    nodes = {a[2]["executable"]: a[2] for a in actions if a[0] == "node"}
    assert set(nodes) == {"cond_sim", "cond_demo_controller"}
    sim_parameters = nodes["cond_sim"]["parameters"][0]
    assert set(sim_parameters) == {"scene", "real_time_factor", "lockstep"}
    assert sim_parameters["real_time_factor"][2]["value_type"] is float
