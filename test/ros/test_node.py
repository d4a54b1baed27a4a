"""cond_sim in its own process, seen from a second process (this one): topics, step N, commands, bad input,
pause, reset, live parameters. One paused node serves the module; each test checks changes it causes."""
import math
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import DT_NS, running_sim, stamp_ns  # noqa: E402

STEPS_PER_TRIGGER = 5


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """(observer, node process): the small scene, paused, 5 steps per ~/step call, every warning logged."""
    with running_sim(tmp_path_factory.mktemp("node"), start_paused=True, steps_per_trigger=STEPS_PER_TRIGGER,
                     warning_period=0.0) as (observer, process):
        assert observer.step().success
        assert observer.spin_until(lambda: observer.messages["joint_states"], 10)
        yield observer, process


def _step(observer, triggers=1):
    for _ in range(triggers):
        response = observer.step()
        assert response.success, response.message
    observer.spin_for(0.3)  # the last messages reach us


def _command_then_step(observer, publish, triggers):
    """Publish a command, give it time to arrive, then step paused (the command applies to those steps)."""
    publish()
    observer.spin_for(0.3)
    before = np.array(observer.latest_positions())
    _step(observer, triggers)
    return before, np.array(observer.latest_positions())


def test_publishes_state_ft_contacts_and_markers(sim):
    """/joint_states (all joints, mimic included), /clock, F/T and its ground truth in the sensor frame,
    the cable-post contact wrench and the markers arrive in another process."""
    observer, _ = sim
    _step(observer)
    joint_state = observer.messages["joint_states"][-1]
    assert list(joint_state.name) == [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1",
                                                                              "panda_finger_joint2"]
    assert stamp_ns(observer.messages["clock"][-1]) == stamp_ns(joint_state)
    ft, ft_true = observer.messages["ft"][-1], observer.messages["ft_true"][-1]
    assert ft.header.frame_id == ft_true.header.frame_id == "ft_sensor_link"
    assert stamp_ns(ft) == stamp_ns(ft_true) == stamp_ns(joint_state)
    assert 5.0 < ft_true.wrench.force.z < 10.0  # the hand's weight and the cable, about 7.5 N
    assert ft.wrench.force.x != ft_true.wrench.force.x  # the measured one is noisy
    assert observer.messages["contact"], "no cable-post contact wrench"
    assert observer.messages["contact"][-1].header.frame_id == "world"
    namespaces = {m.ns for m in observer.messages["markers"][-1].markers}
    assert {"cables", "contacts", "contact_forces", "colliders"} <= namespaces


def test_robot_description_is_latched_for_rviz(sim):
    """RViz's RobotModel (config/panda_cable.rviz) reads the URDF from /cond_sim/robot_description/panda with a
    transient-local, depth-1 subscription: a subscriber that comes late still gets the scene's URDF file."""
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String

    from cond_ros.resources import packaged_file
    observer, _ = sim
    received = []
    subscription = observer.node.create_subscription(
        String, "/cond_sim/robot_description/panda", received.append,
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    try:
        assert observer.spin_until(lambda: received, 10), "no robot description"
    finally:
        observer.node.destroy_subscription(subscription)
    with open(packaged_file("urdf/panda.urdf")) as fh:
        assert received[0].data == fh.read()


def test_step_n_advances_clock_by_n_dt_and_publishes_n_joint_states(sim):
    """~/step with steps_per_trigger N: /clock moves by exactly N dt, and N joint states come, one per step."""
    observer, _ = sim
    observer.spin_for(0.3)
    start = stamp_ns(observer.messages["clock"][-1])
    seen = len(observer.messages["joint_states"])
    _step(observer)
    observer.spin_for(0.5)
    new = observer.messages["joint_states"][seen:]
    assert [stamp_ns(m) for m in new] == [start + k * DT_NS for k in range(1, STEPS_PER_TRIGGER + 1)]
    assert stamp_ns(observer.messages["clock"][-1]) == start + STEPS_PER_TRIGGER * DT_NS


def test_forward_position_command_moves_the_robot(sim):
    """A Float64MultiArray on forward_position_controller/commands drives joint 1 to its new target."""
    observer, _ = sim
    target = observer.latest_positions()[:8]
    target[0] += 0.1
    before, after = _command_then_step(observer, lambda: observer.publish_forward("position", target), 12)
    assert after[0] - before[0] > 0.07


def test_fer_joint_state_and_trajectory_commands(sim):
    """A JointState target with fer_ names and a JointTrajectory both move their joints."""
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    observer, _ = sim
    q = observer.latest_positions()

    def publish():
        observer.publishers["joint_command"].publish(JointState(name=["fer_joint2"], position=[q[1] - 0.08]))
        point = JointTrajectoryPoint(positions=[q[2] + 0.08])
        point.time_from_start.nanosec = 200_000_000
        observer.publishers["trajectory"].publish(JointTrajectory(joint_names=["panda_joint3"], points=[point]))
    before, after = _command_then_step(observer, publish, 12)
    assert after[1] - before[1] < -0.05
    assert after[2] - before[2] > 0.05


BAD_INPUTS = [  # (publisher, message builder, text the warning must contain)
    ("position", lambda q: dict(data=[float("nan")] + q[1:8]), "data[0] is nan"),
    ("velocity", lambda q: dict(data=[0.0] * 3), "3 values for 8 joints"),
    ("effort", lambda q: dict(data=[float("inf")] * 8), "data[0] is inf"),
    ("joint_command", lambda q: dict(name=["wrist_joint"], position=[0.0]), "unknown joint 'wrist_joint'"),
    ("joint_command", lambda q: dict(name=["panda_joint4"], position=[1.0]), "position 1.0 of panda_joint4"),
    ("joint_command", lambda q: dict(name=["panda_joint1", "panda_joint2"], position=[0.0]),
     "1 values for 2 joints"),
    ("trajectory", lambda q: dict(joint_names=["panda_joint1"], points=[]), "no points"),
]


def _message(publisher, fields):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory
    kind = {"joint_command": JointState, "trajectory": JointTrajectory}.get(publisher, Float64MultiArray)
    return kind(**fields)


def test_bad_input_is_rejected_and_the_last_command_holds(sim):
    """NaN/Inf, wrong lengths, unknown names, out-of-limit targets and empty trajectories are each rejected
    with a warning naming the problem; the robot keeps tracking the last valid command."""
    observer, process = sim
    hold = observer.latest_positions()[:8]
    observer.publish_forward("position", hold)
    observer.spin_for(0.3)
    for publisher, build, _ in BAD_INPUTS:
        observer.publishers[publisher].publish(_message(publisher, build(hold)))
    observer.spin_for(0.5)
    _step(observer, 8)
    after = observer.latest_positions()[:8]
    assert max(abs(a - b) for a, b in zip(after, hold)) < 0.02
    log = process.log()
    for publisher, _, text in BAD_INPUTS:
        assert text in log, f"no warning saying {text!r}"
    assert process.alive()


def test_pause_resume_and_step_while_running(sim):
    """Resumed, the clock runs by itself; ~/step is refused while running; paused, the clock stops."""
    observer, _ = sim
    assert observer.pause(False).success
    start = stamp_ns(observer.messages["clock"][-1])
    assert observer.spin_until(lambda: stamp_ns(observer.messages["clock"][-1]) > start + 20 * DT_NS, 20)
    response = observer.step()
    assert not response.success and "pause it first" in response.message
    assert observer.pause(True).success
    observer.spin_for(0.3)
    stopped = stamp_ns(observer.messages["clock"][-1])
    observer.spin_for(0.5)
    assert stamp_ns(observer.messages["clock"][-1]) == stopped


def test_live_parameters(sim):
    """steps_per_trigger changes live; read-only parameters (dt) refuse changes; bad values are refused."""
    observer, _ = sim
    assert observer.set_parameter("steps_per_trigger", 3).successful
    try:
        start = stamp_ns(observer.messages["clock"][-1])
        _step(observer)
        assert stamp_ns(observer.messages["clock"][-1]) == start + 3 * DT_NS
    finally:
        assert observer.set_parameter("steps_per_trigger", STEPS_PER_TRIGGER).successful
    assert not observer.set_parameter("dt", 0.02).successful
    result = observer.set_parameter("real_time_factor", -1.0)
    assert not result.successful
    assert not observer.set_parameter("real_time_factor", float("nan")).successful
    assert not observer.set_parameter("steps_per_trigger", "many").successful


def test_reset(sim):
    """~/reset: the robot returns to the start and /clock goes on from where it was (never backwards, so
    tf2 buffers survive); stepping goes on from there."""
    from std_srvs.srv import Trigger
    observer, _ = sim
    observer.spin_for(0.3)
    before = stamp_ns(observer.messages["joint_states"][-1])  # reliable, unlike /clock
    assert before > 0
    seen = len(observer.messages["joint_states"])
    assert observer.call(Trigger, "/cond_sim/reset").success
    assert observer.spin_until(lambda: len(observer.messages["joint_states"]) > seen, 10)
    assert stamp_ns(observer.messages["joint_states"][-1]) == before  # republished at reset, same time
    initial = observer.latest_positions()
    _step(observer)
    assert stamp_ns(observer.messages["joint_states"][-1]) == before + STEPS_PER_TRIGGER * DT_NS
    stamps = [stamp_ns(m) for m in observer.messages["clock"]]
    assert stamps == sorted(stamps)
    assert all(math.isclose(a, b, abs_tol=0.01) for a, b in zip(observer.latest_positions(), initial))


def test_a_long_step_leaves_the_services_free_and_pause_or_reset_ends_it(sim):
    """~/step with the largest steps_per_trigger (65535, ~15 min of stepping) runs between the callbacks: a
    parameter read, a pause and a reset are each answered within seconds while it runs, and the pause or
    the reset ends it at the next step boundary, its reply saying how far it got."""
    from rcl_interfaces.srv import GetParameters
    from std_srvs.srv import Trigger
    observer, _ = sim
    assert observer.set_parameter("steps_per_trigger", 65535).successful
    client = observer.node.create_client(Trigger, "/cond_sim/step")
    try:
        for stop in ("pause", "reset"):
            seen = len(observer.messages["joint_states"])
            future = client.call_async(Trigger.Request())
            assert observer.spin_until(lambda: len(observer.messages["joint_states"]) > seen + 20, 30)
            start = time.monotonic()
            values = observer.call(GetParameters, "/cond_sim/get_parameters",
                                   GetParameters.Request(names=["steps_per_trigger"]), timeout=10).values
            assert values[0].integer_value == 65535
            reply = (observer.pause(True) if stop == "pause"
                     else observer.call(Trigger, "/cond_sim/reset", timeout=10))
            assert reply.success and "stopped a step request after" in reply.message, reply.message
            assert observer.spin_until(future.done, 10) and time.monotonic() - start < 10
            result = future.result()
            said = {"pause": "paused after ", "reset": "reset after "}[stop]
            assert not result.success and result.message.startswith(said) and "of 65535 steps" in result.message
            observer.spin_for(0.5)
            # the steps made, from the stamps: on a loaded machine some of the ~1000 messages a second are still
            # in flight when the reply comes, or overwritten in the publisher's history (a reset republishes the
            # state; its stamp is not past the last step's)
            states = observer.messages["joint_states"]
            done = (max(stamp_ns(m) for m in states[seen:]) - stamp_ns(states[seen - 1])) // DT_NS
            assert int(result.message.split(" after ")[1].split(" of ")[0]) == pytest.approx(done, abs=1)
            after = len(observer.messages["joint_states"])
            observer.spin_for(0.5)
            assert len(observer.messages["joint_states"]) == after  # stopped, not still stepping
    finally:
        observer.node.destroy_client(client)
        assert observer.set_parameter("steps_per_trigger", STEPS_PER_TRIGGER).successful


def test_observer_outputs_wait_after_the_controllers_inputs(tmp_path):
    """Each step's /joint_states and F/T go out at once; its contact wrench waits observer_output_delay. At
    real-time factor 0.1 (a 100 ms budget) and a 50 ms delay the order shows far above the ~1 ms of
    scheduling noise: what is tested is the order, not a speed. At the delay's default (1.5 ms) it took the
    /joint_states latency's p99 from 2.8 to under 2 ms on 2 cores (benchmarks, issue 29)."""
    with running_sim(tmp_path, "cond_sim_held", real_time_factor=0.1, observer_output_delay=0.05) as (observer, _):
        def arrived(key):
            return {stamp_ns(m): t for m, t in zip(observer.messages[key], observer.arrivals[key])}

        def complete():
            return set(arrived("joint_states")) & set(arrived("ft")) & set(arrived("contact"))
        assert observer.spin_until(lambda: len(complete()) >= 10, 60), "no contact wrench in 60 s"
        state, ft, contact = arrived("joint_states"), arrived("ft"), arrived("contact")
        for stamp in sorted(complete())[-10:]:
            assert abs(ft[stamp] - state[stamp]) < 0.025, "the F/T waited with the observer outputs"
            assert contact[stamp] - state[stamp] > 0.035, "the contact wrench did not wait"
