"""The launch description as data, its pip launcher's command lines, and the launch file's structure."""
import importlib.util
import os
import sys
import types

import pytest

from cond_ros.ros.launch_config import PANDA_CABLE, parameter_values, parse_bool
from cond_ros.ros.launcher import node_command, run_launch
from cond_ros.resources import packaged_file

LAUNCH_FILE = packaged_file(os.path.join("launch", "panda_cable.launch.py"))


def test_parameter_values():
    """Launch arguments (strings) become typed node parameters."""
    args = dict(PANDA_CABLE.defaults(), real_time_factor="0.5", lockstep="True")
    sim, controller, rviz = PANDA_CABLE.nodes
    assert parameter_values(rviz, args) == {} and not rviz.enabled(args) and rviz.enabled(dict(args, rviz="true"))
    assert parameter_values(sim, args) == {"scene": "panda_cable", "overlay": "", "real_time_factor": 0.5,
                                           "lockstep": True, "view": False}
    assert parameter_values(sim, dict(args, view="true"))["view"] is True
    assert parameter_values(controller, args) == {"scene": "panda_cable", "use_sim_time": True}
    with pytest.raises(ValueError, match="lockstep"):
        parameter_values(sim, dict(args, lockstep="maybe"))
    assert parse_bool(" false ") is False


def test_node_command_line():
    """The pip launcher runs each node's module with the same parameters."""
    command = node_command(PANDA_CABLE.nodes[0], dict(PANDA_CABLE.defaults(), lockstep="true"))
    assert command[:3] == [sys.executable, "-m", "cond_ros.ros.node"]
    assert command[3:] == ["--ros-args", "-r", "__node:=cond_sim", "-p", "scene:=panda_cable", "-p", "overlay:=''",
                           "-p", "real_time_factor:=1.0", "-p", "lockstep:=true", "-p", "view:=false"]


def test_launcher_rejects_bad_arguments(monkeypatch):
    """Unknown or malformed arguments stop the launcher before it starts anything, and so does rviz:=true where
    no rviz2 is installed (the pip path)."""
    with pytest.raises(ValueError, match="unknown launch arguments"):
        run_launch("panda_cable", {"speed": "2"})
    with pytest.raises(ValueError, match="real_time_factor"):
        run_launch("panda_cable", {"real_time_factor": "fast"})
    with pytest.raises(ValueError, match="launch argument rviz: expected true or false"):
        run_launch("panda_cable", {"rviz": "yes please"})
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ValueError, match="rviz:=true starts rviz2 .ROS 2 package rviz2., which is not on PATH: it "
                                         "comes with a ROS 2 distribution"):
        run_launch("panda_cable", {"rviz": "true"})


def test_rviz_command_line(tmp_path, monkeypatch):
    """With an rviz2 on PATH, the launcher runs it on the packaged config/panda_cable.rviz."""
    fake = tmp_path / "rviz2"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    rviz = PANDA_CABLE.nodes[2]
    assert node_command(rviz, dict(PANDA_CABLE.defaults(), rviz="true")) == [
        str(fake), "-d", packaged_file(os.path.join("config", "panda_cable.rviz"))]


def _load_launch_file():
    spec = importlib.util.spec_from_file_location("panda_cable_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_file_without_launch_ros(monkeypatch):
    """Without launch, importing the launch file says what is missing and what to run instead."""
    monkeypatch.setitem(sys.modules, "launch", None)
    with pytest.raises(ImportError, match="needs the ROS 2 package launch .*cond-ros launch panda_cable"):
        _load_launch_file()


def _module(tmp_path, name, source):
    path = tmp_path.joinpath(*name.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_launch_file_names_the_import_that_failed(tmp_path, monkeypatch):
    """launch_ros installed but broken (on a distribution where composition_interfaces was missing): the
    error names the module that is missing, not 'needs launch and launch_ros'."""
    for name in ("launch", "launch.actions", "launch.event_handlers", "launch.substitutions"):
        _module(tmp_path, name if "." in name else name + ".__init__", "")
    _module(tmp_path, "launch_ros.__init__", "")
    _module(tmp_path, "launch_ros.actions", "import composition_interfaces_not_here\n")
    def ours():
        return [m for m in sys.modules if m.split(".")[0] in ("launch", "launch_ros")]
    for name in ours():
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ImportError) as info:
            _load_launch_file()
    finally:
        for name in ours():  # the stand-ins imported from tmp_path; monkeypatch restores the real ones
            del sys.modules[name]
    message = str(info.value)
    assert "launch_ros is installed, but importing launch_ros.actions failed" in message
    assert "composition_interfaces_not_here" in message and "needs the ROS 2 package" not in message


def _stand_ins(monkeypatch):
    """launch and launch_ros as recorders of the calls the launch file makes."""
    def record(kind):
        return lambda *args, **kwargs: (kind, args, kwargs)
    fakes = {"launch": dict(LaunchDescription=record("description")),
             "launch.actions": dict(DeclareLaunchArgument=record("argument"), RegisterEventHandler=record("handler"),
                                    Shutdown=record("shutdown")),
             "launch.event_handlers": dict(OnProcessExit=record("on_exit")),
             "launch.substitutions": dict(LaunchConfiguration=record("configuration")),
             "launch.conditions": dict(IfCondition=record("if")),
             "ament_index_python": dict(),
             "ament_index_python.packages": dict(get_package_share_directory=lambda name: f"/opt/ros/share/{name}"),
             "launch_ros": dict(),
             "launch_ros.actions": dict(Node=record("node")),
             "launch_ros.parameter_descriptions": dict(ParameterValue=record("value"))}
    for name, attributes in fakes.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**attributes))


def test_launch_file_structure(monkeypatch):
    """With stand-ins for launch and launch_ros, the file declares the five arguments, the three nodes (rviz2 on
    the package's config when rviz:=true), and for the sim and the controller an exit handler that stops the
    launch (closing RViz does not)."""
    _stand_ins(monkeypatch)
    module = _load_launch_file()
    kind, (actions,), _ = module.generate_launch_description()
    assert kind == "description"
    arguments = [a[1][0] for a in actions if a[0] == "argument"]
    assert arguments == ["scene", "overlay", "real_time_factor", "lockstep", "use_sim_time", "rviz", "view"]
    nodes = {a[2]["executable"]: a for a in actions if a[0] == "node"}
    assert set(nodes) == {"cond_sim", "cond_demo_controller", "rviz2"}
    rviz = nodes["rviz2"][2]
    assert rviz["package"] == "rviz2" and rviz["arguments"] == ["-d", "/opt/ros/share/cond_ros/config/panda_cable.rviz"]
    assert rviz["condition"] == ("if", (("configuration", ("rviz",), {}),), {}) and "parameters" not in rviz
    assert "condition" not in nodes["cond_sim"][2]
    sim_parameters = nodes["cond_sim"][2]["parameters"][0]
    assert set(sim_parameters) == {"scene", "overlay", "real_time_factor", "lockstep", "view"}
    assert sim_parameters["real_time_factor"][2]["value_type"] is float
    handlers = [a[1][0][2] for a in actions if a[0] == "handler"]
    assert sorted(h["target_action"][2]["executable"] for h in handlers) == ["cond_demo_controller", "cond_sim"]
    assert all(h["on_exit"] is module.stop_launch for h in handlers)


def test_a_node_exit_stops_the_launch(monkeypatch):
    """An error exit raises (what makes LaunchService.run return 1, so ros2 launch exits non-zero); a clean
    exit shuts the launch down; during a shutdown, nothing more happens."""
    _stand_ins(monkeypatch)
    stop = _load_launch_file().stop_launch
    running, stopping = types.SimpleNamespace(is_shutdown=False), types.SimpleNamespace(is_shutdown=True)
    with pytest.raises(RuntimeError, match="cond_sim-1 exited with code 2"):
        stop(types.SimpleNamespace(process_name="cond_sim-1", returncode=2), running)
    (action,) = stop(types.SimpleNamespace(process_name="cond_sim-1", returncode=0), running)
    assert action[0] == "shutdown" and "cond_sim-1" in action[2]["reason"]
    assert stop(types.SimpleNamespace(process_name="cond_sim-1", returncode=-2), stopping) is None


def test_launch_description_with_launch_ros():
    """With the real launch and launch_ros (a ROS 2 distribution): the description has an OnProcessExit handler
    for each node, bound to stop_launch."""
    if importlib.util.find_spec("launch_ros") is None:
        pytest.skip("launch_ros is not importable here (no PyPI wheel; it comes with a ROS 2 distribution)")
    from launch.actions import RegisterEventHandler
    from launch_ros.actions import Node
    module = _load_launch_file()
    entities = module.generate_launch_description().entities
    nodes = [e for e in entities if isinstance(e, Node)]
    handlers = [e.event_handler for e in entities if isinstance(e, RegisterEventHandler)]
    assert len(nodes) == 3 and len(handlers) == 2
    for node in nodes:
        stops = any(h.matches(_exit_event(node)) for h in handlers)
        assert stops == (node.node_executable != "rviz2"), node.node_executable


def _exit_event(action):
    from launch.events.process import ProcessExited
    return ProcessExited(action=action, name="x", cmd=["x"], cwd=None, env=None, pid=1, returncode=2)
