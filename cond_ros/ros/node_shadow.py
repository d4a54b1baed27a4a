"""The node's shadow mode on ROS: the measured joint states and real F/T in, the residuals out; the decisions are
:class:`~cond_ros.cosim.shadow.ShadowMode`'s (README, "Shadow your robot live")."""
from __future__ import annotations

import time
import traceback

from geometry_msgs.msg import WrenchStamped
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from ..bags import stamp_ns, wrench_values  # attribute access only: rclpy's messages as rosbags' ones
from ..cosim import CommandError, ConfigError, ShadowMode, restart_scene
from . import messages

# best effort matches a reliable publisher too; deep enough for a 1 kHz stream while the node steps
MEASUREMENT_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)
RESIDUAL_QOS = 10


class ShadowLink:
    """Shadow mode of ``node`` (a :class:`~.node.SimNode` with ``mode`` shadow). The constructor checks the
    topics (ConfigError) before the node creates anything; :meth:`create_interfaces` subscribes and advertises."""

    def __init__(self, node):
        self.node = node
        config = node.config
        self.mode = ShadowMode(node.scene, node.names, node.commands.limits, node.outputs, config.shadow_ft_topics,
                               config.shadow_max_age)
        resolve = node.resolve_topic_name
        published = {resolve(node.outputs.interface.joint_states): "joint_states_topic",
                     **{resolve(topic): "ft_outputs" for topic in node.outputs.ft_topic_names},
                     **{resolve(r.residual_topic): "the residual" for r in self.mode.residuals}}
        for parameter, topic in [("shadow_joint_states_topic", config.shadow_joint_states_topic),
                                 *(("shadow_ft_topics", r.real_topic) for r in self.mode.residuals)]:
            if resolve(topic) in published:
                raise ConfigError(f"{parameter}: {resolve(topic)} is a topic this node publishes "
                                  f"({published[resolve(topic)]}); run the shadow under another node name "
                                  f"(--ros-args -r __node:=shadow) or set {published[resolve(topic)]}")

    def create_interfaces(self) -> None:
        node = self.node
        node.create_subscription(JointState, node.config.shadow_joint_states_topic, self._on_joint_state,
                                 MEASUREMENT_QOS)
        self.residual_pubs = {}  # FTResidual -> its publisher
        for index, residual in enumerate(self.mode.residuals):
            node.create_subscription(WrenchStamped, residual.real_topic,
                                     lambda msg, index=index: self._on_real_ft(index, msg), MEASUREMENT_QOS)
            self.residual_pubs[residual] = node._publisher(WrenchStamped, residual.residual_topic, RESIDUAL_QOS)

    def _on_joint_state(self, msg) -> None:
        node = self.node
        node._callbacks += 1
        topic = node.config.shadow_joint_states_topic
        try:
            event = self.mode.add_joint_state(stamp_ns(msg.header.stamp), time.monotonic(), list(msg.name),
                                              list(msg.position), list(msg.velocity))
        except CommandError as exc:
            node.warn(topic, f"{topic}: measured joint state rejected: {exc}")
            return
        if event == "restart":
            node.get_logger().info(f"{topic}: the stamps went back by more than a second (a bag played again, a "
                                   f"driver restarted): the shadow starts over at {msg.header.stamp.sec}."
                                   f"{msg.header.stamp.nanosec:09d} s")
        elif event == "anchor":
            node.get_logger().info(f"{topic}: first measured joint state; the shadow starts at its stamp")

    def _on_real_ft(self, index: int, msg) -> None:
        node = self.node
        node._callbacks += 1
        try:
            self.mode.add_real_ft(index, stamp_ns(msg.header.stamp), wrench_values(msg),
                                  msg.header.frame_id)
        except CommandError as exc:
            topic = self.mode.residuals[index].real_topic
            node.warn(topic, f"{topic}: real F/T sample rejected: {exc}")

    def step_if_due(self, now: float, idle: float) -> float:
        """Step the node if the measurement allows it; else the seconds to wait."""
        node, mode = self.node, self.mode
        if mode.start_due:
            self._start()
        if node.requests.paused:
            return idle
        step = node.clock.steps
        decision = mode.decide(now, step, idle)
        if not decision.due:
            return decision.wait
        try:
            targets = mode.targets(step, node.commands.position, decision.extrapolated)
        except Exception as exc:  # noqa: BLE001 (a bug of ours on some measurement: pause and say so, never die)
            node.get_logger().error(f"{type(exc).__name__} following the measurement:\n{traceback.format_exc()}")
            node.requests.paused = True
            node.failure = f"following the measured joint states failed at step {step}: {exc}"
            return idle
        node.commands.apply(targets)
        node._step(False)
        return 0.0

    def _start(self) -> None:
        """The sim back to the scene's initial state with the robot where it was measured, at the anchor's time."""
        node = self.node
        robot_q, robot_qd = self.mode.start_state()
        restart_scene(node.scene, node.commands, robot_q, robot_qd)  # a failure stays reported until ~/reset
        node.clock.reset()
        node.clock.base_ns = self.mode.measured.anchor_ns

    def stepped(self, wrenches) -> None:
        """After a step: keep its F/T outputs (WrenchOutput) and publish the residuals now due."""
        for residual, stamp, values, frame_id in self.mode.stepped(self.node.clock.steps, wrenches):
            self.residual_pubs[residual].publish(messages.wrench(values, frame_id, stamp))

    def reset(self) -> None:
        """~/reset: wait for the next joint state and start over there."""
        self.mode.restart()

    def diagnostics(self) -> tuple:
        """(name, level, message, values) of the shadow's status."""
        level, message, values = self.mode.status(time.monotonic(), self.node.clock.steps)
        config = self.node.config
        values = dict(measured_topic=config.shadow_joint_states_topic,
                      real_ft_topics=", ".join(r.real_topic for r in self.mode.residuals) or "none", **values)
        return f"{self.node.get_name()}: shadow", level, message, values
