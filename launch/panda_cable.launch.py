"""``ros2 launch cond_ros panda_cable.launch.py [scene:=...] [real_time_factor:=...] [lockstep:=...]
[use_sim_time:=...] [rviz:=true]``: cond_sim on the cable-winding scene and the demo controller that plays the
winding; with ``rviz:=true`` also rviz2 on ``config/panda_cable.rviz`` (closing it does not stop the launch).

The nodes and arguments come from ``cond_ros.ros.launch_config.PANDA_CABLE``, which ``cond-ros launch
panda_cable`` also starts where launch_ros is not installed (pip). When either node exits, the launch
stops the other; if it exited with an error, ``ros2 launch`` exits non-zero.
"""
import importlib

PIP_ALTERNATIVE = ("Without them, run `cond-ros launch panda_cable`, which starts the same nodes.")


def _import(module: str, owner: str):
    """``module``, or an ImportError that names the import that failed, not just the package we wanted."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name in (owner, module):
            raise ImportError(f"panda_cable.launch.py needs the ROS 2 package {owner} ({exc}); launch and launch_ros "
                              f"come with a ROS 2 distribution and have no PyPI wheels. {PIP_ALTERNATIVE}") from exc
        raise ImportError(f"panda_cable.launch.py: {owner} is installed, but importing {module} failed: {exc} "
                          f"(missing module: {exc.name}). Install that package, or run `cond-ros launch "
                          "panda_cable`.") from exc


launch = _import("launch", "launch")
launch_actions = _import("launch.actions", "launch")
launch_handlers = _import("launch.event_handlers", "launch")
launch_substitutions = _import("launch.substitutions", "launch")
launch_ros_actions = _import("launch_ros.actions", "launch_ros")
launch_ros_parameters = _import("launch_ros.parameter_descriptions", "launch_ros")
launch_conditions = _import("launch.conditions", "launch")
ament_index = _import("ament_index_python.packages", "ament_index_python")

from cond_ros.ros.launch_config import PANDA_CABLE, SHARE_PREFIX  # noqa: E402 (after the ROS imports: their error first)


def stop_launch(event, context):
    """When a node exits, stop the launch: raise for an error exit (``LaunchService.run`` returns 1 only when an
    exception reaches it; a ``Shutdown`` action alone would end ``ros2 launch`` with 0), else shut down cleanly."""
    if context.is_shutdown:  # stopped by Ctrl-C or another node's exit: nothing more to say
        return None
    name = event.process_name
    if event.returncode != 0:
        raise RuntimeError(f"{name} exited with code {event.returncode}; stopping the launch")
    return [launch_actions.Shutdown(reason=f"{name} exited")]


def _argument(text: str) -> str:
    if text.startswith(SHARE_PREFIX):
        return f"{ament_index.get_package_share_directory('cond_ros')}/{text[len(SHARE_PREFIX):]}"
    return text


def _node(node):
    """A launch_ros Node for a :class:`~cond_ros.ros.launch_config.NodeLaunch`."""
    value = launch_ros_parameters.ParameterValue
    configuration = launch_substitutions.LaunchConfiguration
    options = dict(package=node.package, executable=node.executable, name=node.name, output="screen")
    if node.parameters:
        options["parameters"] = [{parameter: value(configuration(argument), value_type=kind)
                                  for parameter, argument, kind in node.parameters}]
    if node.arguments:
        options["arguments"] = [_argument(a) for a in node.arguments]
    if node.condition:
        options["condition"] = launch_conditions.IfCondition(configuration(node.condition))
    return launch_ros_actions.Node(**options)


def generate_launch_description():
    arguments = [launch_actions.DeclareLaunchArgument(a.name, default_value=a.default, description=a.description)
                 for a in PANDA_CABLE.arguments]
    nodes = [(_node(node), node.essential) for node in PANDA_CABLE.nodes]
    handlers = [launch_actions.RegisterEventHandler(launch_handlers.OnProcessExit(target_action=action,
                                                                                  on_exit=stop_launch))
                for action, essential in nodes if essential]  # closing RViz leaves the simulation running
    return launch.LaunchDescription(arguments + [action for action, _ in nodes] + handlers)
