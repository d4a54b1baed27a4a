"""What each launch starts, as plain data (no ROS import): the launch files and ``cond-ros launch`` both read it.

A launch has arguments (name, default, description) and nodes; each node parameter takes the value of a
launch argument, converted to the parameter's type. ``launch/panda_cable.launch.py`` turns this into
``DeclareLaunchArgument`` and ``launch_ros`` ``Node`` actions; ``launcher`` starts the same nodes as
child processes where launch_ros is not installed (pip).
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class LaunchArgument:
    name: str
    default: str
    description: str


FIRST_STEP_LOG = "first step done"  # what the sim node logs once it has stepped (the launcher waits for it)


SHARE_PREFIX = "share:"  # a node argument naming a file of the package's share folder: share:config/x.rviz


@dataclasses.dataclass(frozen=True)
class NodeLaunch:
    """A node: its executable (``ros2 run PACKAGE EXECUTABLE``), its module (``python -m``; empty for another
    package's executable, run as it is), its name, and its parameters as (parameter, launch argument, type);
    ``simulator``: it logs :data:`FIRST_STEP_LOG`. ``arguments``: its command line (an item starting with
    :data:`SHARE_PREFIX` is a file of this package). ``condition``: the bool launch argument that starts it
    (empty: always). ``essential``: its exit ends the launch (a viewer's does not)."""

    executable: str
    module: str
    name: str
    parameters: tuple
    simulator: bool = False
    package: str = "cond_ros"
    arguments: tuple = ()
    condition: str = ""
    essential: bool = True

    def enabled(self, arguments: dict) -> bool:
        """Whether the launch starts it, given the launch arguments (ValueError for a bad condition value)."""
        if not self.condition:
            return True
        try:
            return parse_bool(arguments[self.condition])
        except ValueError as exc:
            raise ValueError(f"launch argument {self.condition}: {exc}") from None


@dataclasses.dataclass(frozen=True)
class LaunchSpec:
    description: str
    arguments: tuple
    nodes: tuple

    def defaults(self) -> dict:
        return {a.name: a.default for a in self.arguments}


def parse_bool(text: str) -> bool:
    """A launch argument as a bool (true/false, as ``ros2 launch`` writes them), else ValueError."""
    value = {"true": True, "false": False}.get(str(text).strip().lower())
    if value is None:
        raise ValueError(f"expected true or false, got {text!r}")
    return value


def parameter_values(node: NodeLaunch, arguments: dict) -> dict:
    """The node's parameter values from the launch arguments (strings), converted; ValueError names a bad one."""
    values = {}
    for parameter, argument, kind in node.parameters:
        text = arguments[argument]
        try:
            values[parameter] = parse_bool(text) if kind is bool else kind(text)
        except ValueError as exc:
            raise ValueError(f"launch argument {argument}: {exc}") from None
    return values


PANDA_CABLE = LaunchSpec(
    description="the cable-winding demo: cond_sim on a Panda scene and a controller that plays its winding "
                "trajectory",
    arguments=(
        LaunchArgument("scene", "panda_cable", "scene name or YAML path (panda_cable_small: a 20-segment cable)"),
        LaunchArgument("overlay", "", "scene overlay YAML that cond_sim applies (what cond-ros fit writes); empty = "
                                      "none"),
        LaunchArgument("real_time_factor", "1.0", "target simulated / wall time; 0 = as fast as possible"),
        LaunchArgument("lockstep", "false", "each step waits for the controller's command"),
        LaunchArgument("use_sim_time", "true", "the controller runs on /clock"),
        LaunchArgument("rviz", "false", "also start rviz2 with config/panda_cable.rviz (rviz2 comes with a ROS 2 "
                                        "distribution)"),
        LaunchArgument("view", "false", "cond_sim serves the browser 3D view (http://127.0.0.1:8080; needs the view "
                                        "extra)"),
    ),
    nodes=(
        NodeLaunch("cond_sim", "cond_ros.ros.node", "cond_sim",
                   (("scene", "scene", str), ("overlay", "overlay", str),
                    ("real_time_factor", "real_time_factor", float),
                    ("lockstep", "lockstep", bool), ("view", "view", bool)), simulator=True),
        NodeLaunch("cond_demo_controller", "cond_ros.ros.demo_controller", "cond_demo_controller",
                   (("scene", "scene", str), ("use_sim_time", "use_sim_time", bool))),
        NodeLaunch("rviz2", "", "rviz2", (), package="rviz2",
                   arguments=("-d", SHARE_PREFIX + "config/panda_cable.rviz"), condition="rviz", essential=False),
    ),
)
LAUNCHES = {"panda_cable": PANDA_CABLE}
