"""``ros2 launch cond_ros panda_cable.launch.py [scene:=...] [real_time_factor:=...] [lockstep:=...]
[use_sim_time:=...]``: cond_sim on the cable-winding scene and the demo controller that plays the winding.

The nodes and arguments come from ``cond_ros.ros.launch_config.PANDA_CABLE``, which ``cond-ros launch
panda_cable`` also starts where launch_ros is not installed (pip).
"""
try:
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue
except ImportError as exc:
    raise ImportError(
        f"panda_cable.launch.py needs the ROS 2 packages launch and launch_ros ({exc}); they come with a ROS 2 "
        "distribution and have no PyPI wheels. Without them, run `cond-ros launch panda_cable`, which starts "
        "the same nodes.") from exc

from cond_ros.ros.launch_config import PANDA_CABLE


def generate_launch_description():
    arguments = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description)
                 for a in PANDA_CABLE.arguments]
    nodes = [Node(package="cond_ros", executable=node.executable, name=node.name, output="screen",
                  parameters=[{parameter: ParameterValue(LaunchConfiguration(argument), value_type=kind)
                               for parameter, argument, kind in node.parameters}])
             for node in PANDA_CABLE.nodes]
    return LaunchDescription(arguments + nodes)
