"""The ``cond_sim`` node's cycle in-process and without ROS: commands in, one step, the node's topics out.

Everything that decides what the node does is reused, not repeated: the scene and its parameters
(``cosim.sim_setup``), command validation and the held command (``cosim.commands``), joint names
(``cosim.joint_names``), the simulated clock (``cosim.stepping``) and which values go on which topic
(``cosim.publication``). So a bag written from here holds the messages the node would have published for
the same commands, and ``record`` and ``replay`` agree with the node and with each other.
"""
from __future__ import annotations

from ..cosim import (CLOCK_TOPIC, FORWARD_TOPICS, JOINT_COMMAND_TOPIC, TRAJECTORY_TOPIC,
                     CommandState, JointTargets, SimClock, SimConfig, StepOutputs, build_scene, command_mapping,
                     forward_targets, joint_state_targets, joint_trajectory, resolve_topic, restart_scene, warm_up)
from . import messages

NS_PER_S = messages.NS_PER_S
COMMAND_TOPICS = {JOINT_COMMAND_TOPIC: messages.JOINT_STATE, TRAJECTORY_TOPIC: messages.JOINT_TRAJECTORY,
                  **{topic: messages.FLOAT64_MULTI_ARRAY for topic, _ in FORWARD_TOPICS}}
_FORWARD_MODES = dict(FORWARD_TOPICS)


class OfflineNode:
    """The node for one :class:`~cond_ros.cosim.config.SimConfig`, stepped by the caller.

    Messages are ``rosbags`` objects on absolute topic names (node ``cond_sim`` in namespace ``/``),
    stamped ``t0_ns`` + steps * dt.

    ``script=False`` builds the scene without its scripted motion (a replay drives it from a bag: the IK of a
    recorded trajectory is not needed); ``overlay`` (a :class:`~cond_ros.scenes.Overlay`) replaces
    ``config.overlay``.

    Raises :class:`~cond_ros.cosim.config.ConfigError` for a bad scene or parameter.
    """

    def __init__(self, config: SimConfig, *, t0_ns: int = 0, script: bool = True, overlay=None):
        self.config = config
        self.scene = build_scene(config, script=script, overlay=overlay)
        warm_up(self.scene)
        self.sim = self.scene.simulator
        model = self.sim.model
        self.names, self.command_dofs = command_mapping(model, config.command_joints)
        self.commands = CommandState(model, config.command_handover_timeout)
        self.outputs = StepOutputs(self.scene, config)
        self.clock = SimClock(self.sim.dt)
        self.t0_ns = int(t0_ns)
        self.rejected: list = []  # (topic, stamp [ns], reason) of every command the node would have dropped

    @property
    def stamp_ns(self) -> int:
        """The current simulated time in the output's time base [ns]."""
        return self.t0_ns + self.clock.stamp_ns

    def start(self, robot_q=None, robot_qd=None) -> list:
        """Back to t = 0 (the scene's initial state, or the given joint positions and velocities of every
        DOF); returns the messages the node publishes before its first step."""
        restart_scene(self.scene, self.commands, robot_q, robot_qd)
        self.clock.reset()
        return self._published(None)

    def command(self, topic: str, msg) -> bool:
        """Apply a command received on the node's ``topic`` (relative name, see ``COMMAND_TOPICS``) as the
        node does; a command the node would reject is dropped, noted in :attr:`rejected`, and False returned."""
        try:
            apply, targets = self._targets(topic, msg)
            apply(targets, topic, self.sim.state.time)
        except Exception as exc:  # noqa: BLE001 (the node drops any bad command; so does this)
            self.rejected.append((topic, self.stamp_ns, f"{type(exc).__name__}: {exc}"))
            return False
        return True

    def problem(self, topic: str, msg) -> str | None:
        """Why the node would reject this command now (None: it would take it), without applying it."""
        try:
            _, targets = self._targets(topic, msg)
            self.commands.check_claim(targets.dofs, topic, self.sim.state.time)
        except Exception as exc:  # noqa: BLE001 (as in command)
            return f"{type(exc).__name__}: {exc}"
        return None

    def _targets(self, topic: str, msg):
        """(how the command applies, its validated targets); raises what the node's checks raise."""
        limits = self.commands.limits
        if topic == JOINT_COMMAND_TOPIC or topic == self.outputs.interface.joint_commands:
            return self.commands.apply, joint_state_targets(self.names, limits, *messages.joint_state_fields(msg))
        if topic == TRAJECTORY_TOPIC:
            names, _, points = messages.trajectory_fields(msg)
            stamp = messages.stamp_ns(msg.header.stamp)
            now = self.sim.state.time
            start = (stamp - self.t0_ns) / NS_PER_S if stamp > 0 else now
            return self.commands.follow, joint_trajectory(self.names, limits, names, points, start=start, now=now,
                                                          current=self.commands.targets(now)[0])
        if topic in _FORWARD_MODES:
            return self.commands.apply, forward_targets(limits, self.command_dofs, _FORWARD_MODES[topic], msg.data)
        raise ValueError(f"{topic} is not a command topic of the node")

    def hold(self, targets: JointTargets) -> None:
        """Apply already validated targets (a recorded joint state used as a position command)."""
        self.commands.apply(targets)

    def step(self) -> list:
        """One step with the held commands; the (topic, message) pairs the node publishes after it.

        Raises :class:`~cond_ros.sim.SimulationError` (or ModelError) when the step fails.
        """
        sim = self.sim
        control = self.commands.control(sim.state.time, sim.state.robot_q,
                                        gravity_compensation=self.config.gravity_compensation)
        sim.step(control)
        self.clock.advance()
        readings = [sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
                    for sensor in self.scene.sensors]
        return self._published(readings)

    def _published(self, readings) -> list:
        ns, step = self.stamp_ns, self.clock.steps
        out = [(CLOCK_TOPIC, messages.clock(ns))]
        joint_state = self.outputs.joint_state(step, self.sim.state)
        if joint_state is not None:
            out.append((resolve_topic(self.outputs.interface.joint_states), messages.joint_state(*joint_state, ns)))
        for wrench in self.outputs.wrenches(step, readings, self.sim.contacts):
            out.append((resolve_topic(wrench.topic), messages.wrench(wrench.values, wrench.frame_id, ns)))
        return out
