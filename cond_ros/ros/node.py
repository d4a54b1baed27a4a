"""The ``cond_sim`` node: steps the simulator in real time or in lockstep, converts messages, publishes.

Thin by design: parameters are specified and checked in ``config``, commands validated and held in
``commands``, step timing decided by ``stepping`` and ``pacing``, published values computed in
``outputs`` and ``contact_wrenches``, and ``messages`` converts between them and ROS messages. The
node owns one :class:`~cond_ros.sim.Simulator` and never reaches into the physics.

The node runs its own loop on a :class:`SingleThreadedExecutor` (:meth:`SimNode.spin`): step when
due, then serve the callbacks that are ready, waiting at most until the next step is due. The
MultiThreadedExecutor of the rclpy wheels starves timer-to-subscription traffic, so it is not used.
"""
from __future__ import annotations

import sys
import time
import traceback

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from ..cosim import (CLOCK_TOPIC, FORWARD_TOPICS, PARAMETERS, SPECS,
                     TRAJECTORY_TOPIC, CommandError, CommandState, ConfigError, LockstepGate, Pacer, SimClock,
                     StepOutputs, StepRequests, WarningThrottle, build_scene, cable_polyline, check_parameter,
                     contact_force_segments, soft_body_surface,
                     collider_shapes, command_mapping, forward_targets, joint_state_targets, joint_trajectory,
                     link_frames, robot_kinematics, simulation_control, undeclared_parameter_problems, validate_config,
                     warm_up)
from ..sim import ModelError, SimulationError
from . import messages
from .launch_config import FIRST_STEP_LOG
from .lifetime import is_stop
from .node_process import run_node
from .node_recording import BagRecording
from .node_shadow import ShadowLink
from .sim_services import create_simulation_interfaces

try:  # no PyPI wheel of tf2_msgs: /tf only where ROS 2 comes from a distribution
    from tf2_msgs.msg import TFMessage
except ImportError:
    TFMessage = None

NODE_NAME = "cond_sim"
IDLE_WAIT = 0.1  # [s] longest wait for callbacks while nothing is due (a callback ends it at once)
MAX_CALLBACKS_PER_LOOP = 100  # callbacks served between two steps at most, so a flood cannot stall stepping
CLOCK_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST)
DEFAULT_QOS = 10  # reliable, keep last 10: the RMW default, as the ros2_controllers broadcasters use
DESCRIPTION_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)  # robot_state_publisher's


def _descriptor(spec) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                                     dynamic_typing=spec.type_name == "float")  # so 1 works where 1.0 is meant
    if spec.type_name == "float" and spec.low is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=float(spec.low), to_value=float(spec.high))]
    elif spec.type_name == "int" and spec.low is not None:
        descriptor.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high), step=1)]
    return descriptor


class SimNode(Node):
    """The simulator as a ROS 2 node (topics, services and parameters: README, "ROS 2 interface").

    Raises :class:`~cond_ros.cosim.config.ConfigError` from the constructor, before any publisher
    exists, when a parameter or the scene is invalid.
    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self._created = time.monotonic()
        self.config = validate_config(self._declare_parameters())
        self.scene = build_scene(self.config, script=False)  # the controller plays the script, not the sim
        warm_up(self.scene)
        self.sim = self.scene.simulator
        model = self.sim.model
        self.names, self.command_dofs = command_mapping(model, self.config.command_joints)
        self.commands = CommandState(model, self.config.command_handover_timeout)
        self.outputs = StepOutputs(self.scene, self.config)  # what is due on which topic, each step
        self.layout = self.outputs.layout
        self.kinematics = robot_kinematics(model)
        self.colliders = collider_shapes(model)
        self.clock = SimClock(self.sim.dt)
        self.requests = StepRequests(self.config.start_paused)
        self.stopped = False  # simulation_interfaces' STOPPED: paused and reset, not stepped since
        self.lockstep = LockstepGate(self.config.lockstep, self.config.lockstep_timeout)
        self.pacer = Pacer(self.sim.dt, self.config.real_time_factor)
        self.throttle = WarningThrottle(self.config.warning_period)
        self.steps_per_trigger = self.config.steps_per_trigger
        self.rates = self.outputs.rates
        self.on_step = None  # optional callback(stamp_ns, start, stepped, published) (benchmarks)
        self.last_stats = None
        # steps whose solve stopped at the solver's iteration cap, unconverged: in all, and since the last report
        self.iteration_cap = getattr(self.sim.solver, "max_iterations", None)
        # what the solver stops at on this model (COND may widen its tolerance on a large one), not its tolerance
        self.stopping_threshold = getattr(self.sim.solver, "stopping_threshold", 0.0)
        self.capped_steps, self.capped_since_report = 0, 0
        self.failure = None  # why the last step failed, until a reset of the state (/diagnostics says ERROR)
        self.commands_accepted = self.commands_rejected = 0  # since the start (/diagnostics)
        self._callbacks = 0  # callbacks of this node run so far (the loop drains ready ones between steps)
        self._next_diagnostics = 0.0
        self.viewer = self._open_viewer() if self.config.view else None
        self.shadow = ShadowLink(self) if self.config.mode == "shadow" else None
        self._create_interfaces()
        self.add_on_set_parameters_callback(self._check_live_parameters)
        self.add_post_set_parameters_callback(self._apply_live_parameters)
        self._publish_unstepped()
        pace = (f"at real-time factor {self.config.real_time_factor}{', lockstep' if self.config.lockstep else ''}"
                if self.shadow is None else "at the pace of the measurement")
        inputs = (f"commands on {self.outputs.interface.joint_commands}" if self.shadow is None else
                  f"shadow of the measured joint states on {self.config.shadow_joint_states_topic} (no commands "
                  f"taken, no /clock or /tf: the real robot's time and frames)")
        self.get_logger().info(
            f"scene {self.config.scene!r}: {len(self.layout.names)} joints, {len(self.scene.sensors)} F/T sensors, "
            f"dt {self.sim.dt} s, solver {self.sim.solver.name}; {'paused' if self.requests.paused else 'running'} "
            f"{pace}; joint states on {self.outputs.interface.joint_states}, {inputs}")

    def _open_viewer(self):
        """The browser view (``view``); a ConfigError, before any step, when it cannot serve."""
        from ..view import viewer_missing
        from .node_view import NodeViewer
        if message := viewer_missing():
            raise ConfigError(f"view: {message}")
        try:
            viewer = NodeViewer(self)
        except OSError as exc:
            raise ConfigError(f"view: cannot serve on {self.config.view_host}:{self.config.view_port}: {exc}") from None
        self.get_logger().info(f"viewer: {viewer.url}")
        return viewer

    # -- parameters ------------------------------------------------------------------------------------

    def _declare_parameters(self) -> dict:
        values, problems = {}, []
        for spec in PARAMETERS:
            default = Parameter.Type.STRING_ARRAY if spec.type_name == "str[]" else spec.default
            try:
                value = self.declare_parameter(spec.name, default, _descriptor(spec)).value
            except ParameterException as exc:
                problems.append(str(exc))
                continue
            values[spec.name] = spec.default if value is None else value
        if problems:
            raise ConfigError("invalid parameters:\n  " + "\n  ".join(problems))
        declared = [*SPECS, "use_sim_time", *(name for name in self._parameter_overrides if self.has_parameter(name))]
        for problem in undeclared_parameter_problems(self._parameter_overrides, declared):
            self.get_logger().warning(problem)
        return values

    def _check_live_parameters(self, parameters) -> SetParametersResult:
        for p in parameters:
            problem = check_parameter(p.name, p.value) if p.name in SPECS else None
            if problem:
                return SetParametersResult(successful=False, reason=problem)
        return SetParametersResult(successful=True)

    def _apply_live_parameters(self, parameters) -> None:
        for p in parameters:
            if p.name == "real_time_factor":
                self.pacer.set_real_time_factor(float(p.value), time.monotonic())
            elif p.name == "lockstep_timeout":
                self.lockstep.timeout = float(p.value)
            elif p.name == "marker_force_scale":
                self.marker_force_scale = float(p.value)
            elif p.name == "command_handover_timeout":
                self.commands.handover_timeout = float(p.value)
            elif p.name == "steps_per_trigger":
                self.steps_per_trigger = int(p.value)
            elif p.name == "warning_period":
                self.throttle.period = float(p.value)
            elif p.name == "observer_output_delay":
                self.observer_output_delay = float(p.value)

    # -- interfaces ------------------------------------------------------------------------------------

    def _create_interfaces(self) -> None:
        self.recorder = BagRecording(self, self.config.record_bag, self.config.record_storage) \
            if self.config.record_bag else None
        # a shadow is stamped in the real robot's time, whose clock and frames are the robot's own
        self.clock_pub = self._publisher(Clock, CLOCK_TOPIC, CLOCK_QOS) if self.shadow is None else None
        interface = self.outputs.interface
        # reliable: matches the topic-based plugin's sensor-data (best effort) subscription as well as a reliable one
        self.joint_state_pub = self._publisher(JointState, interface.joint_states, DEFAULT_QOS)
        self.wrench_pubs = {}  # topic -> publisher: F/T from the start, contact pairs from their first contact
        for topic in self.outputs.ft_topic_names:
            self.wrench_pubs[topic] = self._publisher(WrenchStamped, topic, DEFAULT_QOS)
        self.marker_pub = self.create_publisher(MarkerArray, "~/markers", DEFAULT_QOS)
        self.marker_force_scale = self.config.marker_force_scale
        self.observer_output_delay = self.config.observer_output_delay
        self.description_pubs = self._publish_robot_descriptions()
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", DEFAULT_QOS)
        self.tf_pub = None
        if self.shadow is not None:
            self.shadow.create_interfaces()
        else:
            self._create_command_subscriptions()
            self.tf_pub = self.create_publisher(TFMessage, "/tf", 100) if TFMessage is not None else None
        # a ~/step call awaits its steps and holds its callback group until they are done: in the node's default
        # (mutually exclusive) group it would keep every other service and every command out until then
        self.step_calls = ReentrantCallbackGroup()
        self.create_service(SetBool, "~/pause", self._on_pause)
        self.create_service(Trigger, "~/step", self._on_step, callback_group=self.step_calls)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.simulation_interfaces = create_simulation_interfaces(self)

    def _create_command_subscriptions(self) -> None:
        interface, limits = self.outputs.interface, self.commands.limits
        commands = interface.joint_commands
        self._subscribe(JointState, commands, lambda msg: self._command(
            commands, lambda: joint_state_targets(self.names, limits, *messages.joint_state_fields(msg)),
            self.commands.apply))
        if interface.native_commands:  # elsewhere the user's controller_manager owns these topics
            self._subscribe(JointTrajectory, TRAJECTORY_TOPIC, lambda msg: self._command(
                TRAJECTORY_TOPIC, lambda: self._trajectory(msg), self.commands.follow))
            for topic, mode in FORWARD_TOPICS:
                self._subscribe(Float64MultiArray, topic, lambda msg, topic=topic, mode=mode: self._command(
                    topic, lambda: forward_targets(limits, self.command_dofs, mode, msg.data), self.commands.apply))

    def _publish_robot_descriptions(self) -> list:
        """Each robot's URDF on ``~/robot_description/NAME``, latched as robot_state_publisher latches its
        /robot_description, for RViz's RobotModel (its links follow /tf). Not on /robot_description: a user's
        ros2_control stack publishes its own there."""
        publishers = []
        for name, path in self.scene.robot_files:
            publisher = self.create_publisher(String, f"~/robot_description/{name}", DESCRIPTION_QOS)
            with open(path) as fh:
                publisher.publish(String(data=fh.read()))
            publishers.append(publisher)
        return publishers

    def _publisher(self, kind, topic: str, qos):
        """A publisher; with ``record_bag`` set, one that also writes what it publishes to the bag."""
        publisher = self.create_publisher(kind, topic, qos)
        return self.recorder.publisher(publisher) if self.recorder is not None else publisher

    def _subscribe(self, kind, topic: str, callback) -> None:
        """A command subscription; with ``record_bag`` set, each message is also written to the bag (at the
        simulated time it arrived, the time from which the sim applies it)."""
        if self.recorder is not None:
            callback = self.recorder.subscription_callback(self.resolve_topic_name(topic), callback)
        self.create_subscription(kind, topic, callback, DEFAULT_QOS)

    def close_recording(self) -> None:
        """Finish the ``record_bag`` bag (it appears at its path only now)."""
        recorder, self.recorder = getattr(self, "recorder", None), None
        if recorder is not None:
            recorder.close()

    def destroy_node(self):
        self.close_recording()
        if self.viewer is not None:
            self.viewer.close()
        return super().destroy_node()

    def _trajectory(self, msg):
        names, stamp, points = messages.trajectory_fields(msg)
        now = self.sim.state.time
        start = self.clock.sim_time(stamp) if stamp > 0 else now  # the stamp is /clock time
        return joint_trajectory(self.names, self.commands.limits, names, points, start=start,
                                now=now, current=self.commands.targets(now)[0])

    def warn(self, kind, text: str) -> None:
        """A warning, at most one of ``kind`` per ``warning_period``."""
        text = self.throttle.filter(kind, text)
        if text is not None:
            self.get_logger().warning(text)

    def _command(self, topic: str, build, apply) -> None:
        """Validate a command message and apply it; a bad one is dropped with a warning (never raises)."""
        self._callbacks += 1
        try:
            apply(build(), topic, self.sim.state.time)
        except CommandError as exc:
            self.commands_rejected += 1
            self.warn(topic, f"{topic}: rejected: {exc}; the sim keeps the last valid command")
            return
        except Exception as exc:  # noqa: BLE001 (input must never stop the node; say what it was)
            self.commands_rejected += 1
            self.warn(topic, f"{topic}: rejected ({type(exc).__name__}: {exc}); the sim keeps the last valid command")
            return
        self.commands_accepted += 1
        self.lockstep.command()

    # -- services (the simulation_interfaces ones call the same three methods) -------------------------

    def pause(self, paused: bool) -> tuple[bool, str]:
        """Run or pause; a pause also ends the ``~/step`` calls still running, at this step boundary."""
        if not paused and self.requests.paused:
            self.pacer.restart(time.monotonic())
            self.stopped = False
        self.requests.paused = paused
        stopped = self._cancel_steps("paused") if paused else ""
        return True, f"{'paused' if paused else 'running'} at t = {self.sim.state.time:.6f} s{stopped}"

    def _cancel_steps(self, why: str) -> str:
        """Answer every outstanding step request as failed (``why`` they stopped); what to add to a reply."""
        dropped = self.requests.cancel()
        for token, done, asked in dropped:
            token.set_result((False, f"{why} after {done} of {asked} steps"))
        return "".join(f"; stopped a step request after {done} of {asked} steps" for _, done, asked in dropped)

    async def run_steps(self, steps: int) -> tuple[bool, str]:
        """Step ``steps`` times (paused only); returns once they are done and published."""
        if self.shadow is not None:
            return False, "a shadow steps as the measured joint states arrive, not on request"
        if not self.requests.paused:
            return False, "the simulation is running; pause it first (~/pause with data: true)"
        done = Future()
        self.requests.request(steps, done)
        return await done

    def reset(self, *, reset_time: bool = False, reset_state: bool = True) -> tuple[bool, str]:
        """Back to the initial state (``reset_state``) and/or /clock back to 0 (``reset_time``); without
        ``reset_time`` /clock goes on from where it was."""
        stopped = self._cancel_steps("reset")
        if reset_state:
            self.failure = None
            self.sim.reset()
            for sensor in self.scene.sensors:
                sensor.reset()
            self.commands.reset()
            self.lockstep.reset()
            if self.shadow is not None:
                self.shadow.reset()
        self.clock.reset(time=reset_time, state=reset_state)
        self.pacer.restart(time.monotonic())
        self._publish_unstepped()
        return True, (f"reset{' the state' if reset_state else ''}{' and' if reset_state and reset_time else ''}"
                      f"{' the time' if reset_time else ''}; /clock at {self.clock.stamp_ns * 1e-9:.6f} s; "
                      f"{'paused' if self.requests.paused else 'running'}{stopped}")

    def simulation_state(self) -> int:
        """The simulation_interfaces state: STOPPED (paused and reset, not stepped since), PAUSED or PLAYING."""
        return simulation_control.current_state(self.requests.paused, self.stopped)

    def apply_state(self, action: str) -> None:
        """A SetSimulationState transition: ``play``, ``pause`` or ``stop`` (pause, then reset the state)."""
        if action == "stop":
            self.pause(True)
            self.reset()
            self.stopped = True
        else:
            self.pause(action == "pause")

    def _on_pause(self, request, response):
        self._callbacks += 1
        response.success, response.message = self.pause(bool(request.data))
        return response

    async def _on_step(self, request, response):
        self._callbacks += 1
        response.success, response.message = await self.run_steps(self.steps_per_trigger)
        return response

    def _on_reset(self, request, response):
        self._callbacks += 1
        response.success, response.message = self.reset()
        return response

    # -- stepping --------------------------------------------------------------------------------------

    def spin(self, executor, *, stop=lambda: False) -> None:
        """The node's loop: step when due, serve callbacks in between, until shutdown or ``stop()``."""
        self.pacer.restart(time.monotonic())
        while self.context.ok() and not stop():
            if self.viewer is not None:
                self.viewer.serve()
            now = time.monotonic()
            wait = self._step_if_due(now)
            if now >= self._next_diagnostics:
                self._next_diagnostics = now + self.config.diagnostics_period
                self._publish_diagnostics()
            self._serve(executor, wait)

    def _serve(self, executor, timeout: float) -> None:
        before = self._callbacks
        executor.spin_once(timeout_sec=timeout)
        for _ in range(MAX_CALLBACKS_PER_LOOP):
            if self._callbacks == before:
                break
            before = self._callbacks
            executor.spin_once(timeout_sec=0.0)

    def _step_if_due(self, now: float) -> float:
        """Step if one is wanted, due and (lockstep) answered; else the seconds to wait."""
        if self.shadow is not None:
            return self.shadow.step_if_due(now, IDLE_WAIT)
        if not self.requests.wants_step():
            return IDLE_WAIT
        if not self.requests.outstanding:  # ~/step calls run as fast as possible
            wait = self.pacer.wait(now)
            if wait > 0.0:
                return min(wait, IDLE_WAIT)
        ready, wait, timed_out = self.lockstep.check(now)
        if not ready:
            return min(wait, IDLE_WAIT)
        self._step(timed_out)
        return 0.0

    def _step(self, timed_out: bool) -> None:
        sim = self.sim
        control = self.commands.control(sim.state.time, sim.state.robot_q,
                                        gravity_compensation=self.config.gravity_compensation)
        start = time.monotonic()
        self.stopped = False
        try:
            self.last_stats = sim.step(control)
        except Exception as exc:  # noqa: BLE001 (the simulator kept its last good state; the node must not die)
            if is_stop(exc, self.context):  # Ctrl-C landed inside a numba call, which wraps it in a SystemError
                raise
            if not isinstance(exc, (SimulationError, ModelError)):  # a bug of ours: say what it was, with the trace
                self.get_logger().error(f"{type(exc).__name__} in the step:\n{traceback.format_exc()}")
                exc = f"{type(exc).__name__}: {exc}"
            self.requests.paused = True
            self._cancel_steps(f"stopped by a failed step ({exc})")
            self.failure = f"the step from t = {sim.state.time:.6f} s failed: {exc}"
            self.get_logger().error(f"{self.failure}; paused (call ~/reset)")
            self._publish_diagnostics()
            return
        stepped = time.monotonic()
        stats = self.last_stats
        if self.iteration_cap is not None and stats.iterations >= self.iteration_cap and \
                not stats.residual < self.stopping_threshold:
            self.capped_steps += 1
            self.capped_since_report += 1
            self.warn("iteration_cap", f"the step from t = {sim.previous_state.time:.6f} s stopped at the solver's "
                                       f"iteration cap ({self.iteration_cap}) with residual {stats.residual:.3g} "
                                       f"(stopping threshold {self.stopping_threshold:g}): its result is not converged "
                                       f"({self.capped_steps} such steps so far)")
        if self._created is not None:
            self.get_logger().info(f"{FIRST_STEP_LOG}, {stepped - self._created:.2f} s after the node started")
            self._created = None
        self.clock.advance()
        # the controller's inputs first (/joint_states ~0.3 ms, F/T ~0.4 ms at 320 segments); then the node
        # sleeps, not spins (an executor's wait costs ~0.25 ms of a core), so the controller and the other
        # subscribers wake up on free cores; then what only observers read (~0.4 ms, markers ~1 ms)
        self._publish_state()
        self._publish_ft([sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
                          for sensor in self.scene.sensors])
        hold = 0.0 if self.requests.paused or self.shadow else self.pacer.observer_hold(start, time.monotonic(),
                                                                          self.observer_output_delay)
        if hold > 0.0:  # not for steps that ~/step asks for: they run as fast as they can
            time.sleep(hold)
        observers = time.monotonic()
        self._publish_observer_outputs()
        published = time.monotonic()
        self.pacer.observed(published - observers)
        self.pacer.stepped(start, stepped, published)
        ended = self.lockstep.stepped(timed_out)
        if timed_out:
            self.warn("lockstep", f"lockstep: no command for the step from t = {sim.previous_state.time:.6f} s "
                                  f"within {self.lockstep.timeout} s; holding the last command "
                                  f"({self.lockstep.held} steps held in a row)")
        elif ended:
            self.get_logger().info(f"lockstep: commands are back after {ended} held steps")
        for token in self.requests.stepped():
            token.set_result((True, f"done; t = {sim.state.time:.6f} s"))
        if self.on_step is not None:
            self.on_step(self.clock.stamp_ns, start, stepped, published)

    # -- publishing ------------------------------------------------------------------------------------

    def _publish_unstepped(self) -> None:
        """What is due where no step was made (the start, a reset): the state, markers and /tf; the F/T and
        contact wrenches come from a step."""
        self._publish_state()
        self._publish_observer_outputs(contact_wrenches=False)

    def _publish_state(self) -> None:
        """/clock, then /joint_states if due: the time and what a controller closes its loop on."""
        ns, step, state = self.clock.stamp_ns, self.clock.steps, self.sim.state
        if self.clock_pub is not None:
            self.clock_pub.publish(messages.clock(ns))
        if self.viewer is not None:
            self.viewer.stepped(self.last_stats)
        joint_state = self.outputs.joint_state(step, state)
        if joint_state is not None:
            self.joint_state_pub.publish(messages.joint_state(*joint_state, ns))

    def _publish_wrenches(self, outputs) -> None:
        for out in outputs:
            if out.topic not in self.wrench_pubs:  # a body pair's first contact
                self.wrench_pubs[out.topic] = self._publisher(WrenchStamped, out.topic, DEFAULT_QOS)
            self.wrench_pubs[out.topic].publish(messages.wrench(out.values, out.frame_id, self.clock.stamp_ns))

    def _publish_ft(self, readings) -> None:
        """The F/T topics due at this step (``readings``: one per sensor)."""
        wrenches = self.outputs.ft_wrenches(self.clock.steps, readings)
        self._publish_wrenches(wrenches)
        if self.shadow is not None:
            self.shadow.stepped(wrenches)

    def _publish_observer_outputs(self, *, contact_wrenches: bool = True) -> None:
        """What only observers read, due at this step: contact wrenches (none before a step), markers, /tf."""
        ns, step, state = self.clock.stamp_ns, self.clock.steps, self.sim.state
        if contact_wrenches:
            self._publish_wrenches(self.outputs.contact_wrenches(step, self.sim.contacts))
        if self.rates["marker"].due(step):
            cables = [(f"cable{i}", cable_polyline(self.sim.model, state, rod), rod.material.radius)
                      for i, rod in enumerate(self.scene.cables)]
            contacts = self.sim.contacts.position if self.sim.contacts is not None else []
            surfaces = [(f"soft_body{i}", soft_body_surface(state, body))
                        for i, body in enumerate(self.scene.soft_bodies)]
            scale = self.marker_force_scale
            forces = contact_force_segments(self.sim.contacts, scale) if scale > 0 else None
            self.marker_pub.publish(messages.markers(cables, contacts, self.colliders, ns, surfaces, forces))
        if self.tf_pub is not None and self.rates["tf"].due(step):
            frames = link_frames(self.sim.model, state, self.kinematics, self.scene.sensors)
            self.tf_pub.publish(TFMessage(transforms=messages.transforms(frames, ns)))

    def _publish_diagnostics(self) -> None:
        summary = self.pacer.summary()
        running = not self.requests.paused
        target, achieved = summary["target_real_time_factor"], summary["achieved_real_time_factor"]
        slow = running and target > 0 and 0 < achieved < 0.9 * target and self.shadow is None
        values = dict(summary, sim_time_s=self.sim.state.time, paused=self.requests.paused,
                      lockstep=self.lockstep.enabled, lockstep_held_in_a_row=self.lockstep.held,
                      lockstep_held_total=self.lockstep.held_total, commands_accepted=self.commands_accepted,
                      commands_rejected=self.commands_rejected, steps_at_iteration_cap=self.capped_steps)
        if self.last_stats is not None:
            values.update(iterations=self.last_stats.iterations, residual=self.last_stats.residual,
                          contacts=self.last_stats.contact_count)
        message = ("paused" if not running else "shadow: paced by the measurement" if self.shadow else
                   f"real-time factor {achieved:.3f} of {target:g}" + (" (slower than the target)" if slow else ""))
        capped, self.capped_since_report = self.capped_since_report, 0
        if capped:
            message += (f"; {capped} steps since the last report stopped at the solver's iteration cap "
                        f"({self.iteration_cap}), unconverged")
        level = "ERROR" if self.failure else "WARN" if slow or self.lockstep.held > 0 or capped else "OK"
        if self.failure:
            message = f"{self.failure}; paused until ~/reset"
        more = [self.shadow.diagnostics()] if self.shadow is not None else []
        self.diagnostics_pub.publish(messages.diagnostics(f"{NODE_NAME}: stepping", level, message, values,
                                                          self.clock.stamp_ns, more))


def spin_until_shutdown(node: SimNode, executor) -> None:
    """``node.spin(executor)``; a signal that stops it mid-step ends it quietly (:func:`.lifetime.is_stop`). The
    ``record_bag`` bag is finished however the loop ends."""
    try:
        node.spin(executor)
    except Exception as exc:
        if not is_stop(exc, node.context):
            raise
    finally:
        node.close_recording()


def main(args=None) -> int:
    """``ros2 run cond_ros cond_sim`` / the ``cond_sim`` console script."""
    return run_node(SimNode, NODE_NAME, args, spin_until_shutdown)


if __name__ == "__main__":
    sys.exit(main())
