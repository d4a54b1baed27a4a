"""``cond_demo_controller``: plays a scene's scripted motion (the cable winding) against ``cond_sim``.

An external controller, as a user would write one: it knows nothing of the simulator's internals. On
each /joint_states at simulated time t it sends the script's targets for t on ``joint_command``
(sensor_msgs/JointState), so it answers every step and also drives the sim in lockstep mode. Joints the
script drives by position get position and velocity targets (the sim adds the gravity feed-forward);
joints it drives by effort (a closed gripper) get efforts.
"""
from __future__ import annotations

import sys

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ..cosim import JOINT_COMMAND_TOPIC, ConfigError, load_scene_parameter, script_commands
from . import messages
from .node import DEFAULT_QOS
from .node_process import run_node

NODE_NAME = "cond_demo_controller"


class DemoController(Node):
    """Answers every /joint_states with the scripted targets for its stamp (parameter ``scene``)."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        scene_name = self.declare_parameter("scene", "panda_cable", ParameterDescriptor(
            description="the scene whose script to play (the sim's scene)", read_only=True)).value
        scene = load_scene_parameter(scene_name)
        if scene.script is None:
            raise ConfigError(f"scene {scene_name!r} has no script to play")
        self.script, self.model = scene.script, scene.simulator.model
        self.command_pub = self.create_publisher(JointState, JOINT_COMMAND_TOPIC, DEFAULT_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_state, DEFAULT_QOS)
        self.get_logger().info(f"playing the script of {scene_name!r} on {JOINT_COMMAND_TOPIC}")

    def _on_joint_state(self, msg: JointState) -> None:
        t = messages.time_s(msg.header.stamp)
        for names, position, velocity, effort in script_commands(self.script, self.model, t):
            command = JointState(name=names)
            command.header.stamp = msg.header.stamp
            if position is not None:
                command.position, command.velocity = position.tolist(), velocity.tolist()
            else:
                command.effort = effort.tolist()
            self.command_pub.publish(command)


def main(args=None) -> int:
    """``ros2 run cond_ros cond_demo_controller`` / the ``cond_demo_controller`` console script."""
    return run_node(DemoController, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
