"""Shadow mode without ROS: when the shadow steps (interpolated, one step extrapolated, then waiting), what it
follows, how a restarted or malformed stream is handled, the residual's alignment by stamp, and the whole loop
on a recorded bag against ``cond-ros replay --drive joint_states`` (an independent path through the bag)."""
import math

import numpy as np
import pytest

from cond_ros.bags import BagReader, OfflineNode, record_scene, replay_bag
from cond_ros.cosim import CommandError, ConfigError, ShadowMode, restart_scene, validate_config
from cond_ros.cosim.publication import WrenchOutput
from cond_ros.cosim.shadow import LATE_PERIODS, FTResidual, parse_shadow_ft

NS = 1_000_000_000
FT_TOPIC = "/cond_sim/ft/wrist_ft"


@pytest.fixture(scope="module")
def node():
    config = validate_config(dict(scene="panda_cable_small", mode="shadow", shadow_ft_topics=[FT_TOPIC]))
    return OfflineNode(config, script=False)


def shadow(node, max_age=0.1, entries=(FT_TOPIC,)):
    return ShadowMode(node.scene, node.names, node.commands.limits, node.outputs, entries, max_age)


def arm_state(names, t):
    """An analytic motion of the arm's first joint: q = 0.1 + 0.2 t, the others at the scene's start."""
    q = [0.1 + 0.2 * t, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]
    return names[:7], q, [0.2] + [0.0] * 6


def test_interpolates_between_samples_and_extrapolates_past_the_newest(node):
    """Positions and velocities between two samples are linear in time; past the newest the measured velocity
    carries them on (an analytic ramp: exact to rounding)."""
    mode = shadow(node)
    names = node.names.dof_names
    for k in range(3):  # 20 ms apart
        mode.add_joint_state(1_000 * NS + k * 20_000_000, 0.0, *arm_state(names, 0.02 * k))
    for t in (0.0, 0.013, 0.04, 0.047):
        q, qd, clipped = mode.measured.at(t)
        assert q[0] == pytest.approx(0.1 + 0.2 * t, abs=1e-12) and qd[0] == pytest.approx(0.2, abs=1e-12)
        assert clipped == 0
    assert list(mode.measured.dofs) == list(range(7))  # the fingers were not measured: not followed


def test_steps_wait_for_the_measurement_then_extrapolate_one_step_when_it_is_late(node):
    """A 100 Hz stream with 2 ms latency and a 10 ms step: the step to t is due once a sample at t arrived; with
    the next sample more than 1.5 periods overdue, one step past the newest is made (extrapolated), and then the
    shadow waits however late the stream is."""
    mode = shadow(node)
    names = node.names.dof_names
    dt = mode.dt
    assert dt == 0.01
    t0 = 5 * NS
    assert not mode.decide(0.0, 0, 0.1).due  # nothing measured yet
    for k in range(3):
        mode.add_joint_state(t0 + k * 10_000_000, 100.0 + 0.01 * k + 0.002, *arm_state(names, 0.01 * k))
    assert mode.start_due and not mode.decide(100.03, 0, 0.1).due  # the node resets the sim to the anchor first
    mode.start_state()
    assert mode.decide(100.022, 0, 0.1).due and mode.decide(100.022, 1, 0.1).due  # samples at 0.01 and 0.02 are in
    waiting = mode.decide(100.023, 2, 0.1)  # the sample at 0.03 is not: due at 100.032, late after 100.037
    assert not waiting.due and waiting.wait == pytest.approx(0.022 + LATE_PERIODS * 0.01 - 0.023, abs=1e-9)
    late = mode.decide(100.038, 2, 0.1)
    assert late.due and late.extrapolated
    assert not mode.decide(100.5, 3, 0.1).due  # two steps past the newest: wait, however late
    assert mode.status(100.5, 3)[0] == "WARN" and "stale" in mode.status(100.5, 3)[1]
    mode.add_joint_state(t0 + 30_000_000, 100.6, *arm_state(names, 0.03))
    mode.add_joint_state(t0 + 40_000_000, 100.6, *arm_state(names, 0.04))
    assert mode.decide(100.6, 3, 0.1).due  # the stream is back: the sim catches up on what it missed
    level, message, values = mode.status(100.6, 3)  # the newest sample came 0.56 s later than it would have
    assert level == "WARN" and values["measurement_age_s"] == pytest.approx(0.558, abs=1e-9)
    assert values["joint_states_received"] == 5 and values["steps_extrapolated"] == 0  # decide() alone counts none


def test_a_stamp_far_back_starts_over_and_a_small_step_back_is_dropped(node):
    """A bag played again (stamps back by more than a second) is a new stream: a new anchor, the residuals
    cleared; a sample out of order by less is dropped and counted; malformed ones are rejected with a reason."""
    mode = shadow(node)
    names = node.names.dof_names
    assert mode.add_joint_state(0, 0.0, *arm_state(names, 0.0)) == "anchor"  # a bag's time may start at 0
    assert mode.add_joint_state(2 * NS, 0.0, *arm_state(names, 2.0)) == "sample"
    mode.start_state()
    assert mode.add_joint_state(2 * NS - 5_000_000, 0.0, *arm_state(names, 1.995)) == "dropped"
    assert mode.measured.out_of_order == 1
    assert mode.add_joint_state(NS // 2, 0.0, *arm_state(names, 0.5)) == "restart"
    assert mode.start_due and mode.measured.anchor_ns == NS // 2 and mode.measured.restarts == 1
    bad = {"names no joint": (["gripper"], [0.0], []), "not finite": (names[:1], [math.nan], []),
           "1 names, 2 positions": (names[:1], [0.0, 1.0], []), "header stamp is 0": None}
    for reason, message in bad.items():
        stamp = 0 if message is None else 3 * NS
        with pytest.raises(CommandError, match=reason):
            mode.add_joint_state(stamp, 0.0, *(message or arm_state(names, 0.0)))
    assert mode.measured.rejected == len(bad)
    # the joints followed are the first message's: one more later is noted, not followed (the targets keep their
    # shape), and a message with none of them is rejected
    assert mode.add_joint_state(4 * NS, 0.0, names[:8], [0.0] * 8, []) == "sample"
    assert list(mode.measured.dofs) == list(range(7)) and "panda_finger_joint1 (not in the first message)" in \
        mode.status(0.0, 0)[2]["unknown_joints"]
    with pytest.raises(CommandError, match="names none of the joints of the stream's first message"):
        mode.add_joint_state(5 * NS, 0.0, names[7:8], [0.0], [])
    with pytest.raises(CommandError, match="not finite"):
        mode.add_real_ft(0, 3 * NS, [0, 0, math.inf, 0, 0, 0], "")


def test_the_residual_is_aligned_by_stamp():
    """Real samples at stamps between the predictions (every 3 ms against a 10 ms step) are compared with the
    prediction interpolated there: a linear force plus a known offset gives that offset exactly; a sample from
    before the predictions kept is unmatched, and one ahead of the sim waits until the sim gets there."""
    residual = FTResidual(0, "wrist ft", "~/ft/wrist_ft", FT_TOPIC)
    assert residual.residual_topic == "~/ft/wrist_ft/residual"

    def force(t):
        return np.array([1.0, -2.0, 3.0, 0.1, 0.2, 0.3]) * (1.0 + 10.0 * t)
    offset = np.array([0.05, -0.05, 0.02, 0.0, 0.001, -0.002])
    for k in range(11):
        residual.add_real(0.003 * k, 3_000_000 * k, force(0.003 * k) + offset, "ft_sensor_link")
    for k in range(1, 3):
        residual.add_predicted(0.01 * k, force(0.01 * k), "ft_sensor_link")
    out = residual.residuals()
    assert [stamp for stamp, _, _ in out] == [12_000_000, 15_000_000, 18_000_000]
    assert residual.unmatched == 4  # 0, 3, 6 and 9 ms: before the first prediction kept (10 ms)
    for _, values, frame in out:
        assert np.allclose(values, offset, atol=1e-12) and frame == "ft_sensor_link"
    residual.add_predicted(0.03, force(0.03), "tool")  # the waiting real samples are reached now
    assert len(residual.residuals()) == 4 and residual.count == 7  # 21, 24, 27 and 30 ms
    assert np.allclose(residual.rmse, np.abs(offset), atol=1e-12)
    assert "frame 'ft_sensor_link'" in residual.frame_problem and "'tool'" in residual.frame_problem


def test_shadow_topics_and_parameters_are_checked(node):
    assert parse_shadow_ft("/robot/ft", ["wrist_ft"]) == (0, "/robot/ft")
    assert parse_shadow_ft("b=/robot/ft", ["a", "b"]) == (1, "/robot/ft")
    with pytest.raises(ConfigError, match="names no sensor, and the scene has 2"):
        parse_shadow_ft("/robot/ft", ["a", "b"])
    with pytest.raises(ConfigError, match="no F/T sensor 'c'"):
        shadow(node, entries=("c=/robot/ft",))
    problems = {"mode": "mode: expected one of command, shadow", "lockstep": "lockstep: a shadow follows",
                "shadow_ft_topics": "'/bad topic' is not a valid topic name",
                "shadow_joint_states_topic": "shadow_joint_states_topic: '/a//b'"}
    values = dict(mode="shadow", lockstep=True)
    with pytest.raises(ConfigError, match=problems["lockstep"]):
        validate_config(values)
    with pytest.raises(ConfigError) as err:
        validate_config(dict(mode="shadwo", shadow_ft_topics=["/bad topic"], shadow_joint_states_topic="/a//b"))
    for name in ("mode", "shadow_ft_topics", "shadow_joint_states_topic"):
        assert problems[name] in str(err.value)
    with pytest.raises(ConfigError) as err:
        validate_config(dict(shadow_joint_states_topic="", shadow_ft_topics=["/a/{sensor}", "b=/c", "d=/c"]))
    assert "shadow_joint_states_topic: must name" in str(err.value)
    assert "shadow_ft_topics: {sensor} is for ft_outputs only" in str(err.value)
    with pytest.raises(ConfigError, match="a topic repeats"):
        validate_config(dict(shadow_ft_topics=["b=/c", "d=/c"]))
    assert validate_config(dict(mode="shadow")).joint_states_topic == "~/joint_states"  # not the robot's topic
    assert validate_config(dict(mode="shadow", joint_states_topic="/sim_js")).joint_states_topic == "/sim_js"


def test_the_shadow_of_a_recorded_run_is_its_replay_bit_for_bit(node, tmp_path):
    """A recorded run's joint states and noisy F/T fed to the shadow as a live stream: each predicted F/T equals
    what ``cond-ros replay --drive joint_states`` of the same bag writes, bit for bit (both follow the measurement
    the same way), and the residual's RMSE is the replay's own error against the recording, which is within the
    sensor's noise (0.05 N) of the recorded forces."""
    bag, replayed = tmp_path / "recorded", tmp_path / "replayed"
    record_scene(validate_config(dict(scene="panda_cable_small")), bag, duration_s=2.0, progress=False)
    replay_bag(bag, replayed, validate_config(dict(scene="panda_cable_small")), drive="joint_states", progress=False)

    def read(path, topic):
        with BagReader(path) as reader:
            return [(m.header.stamp.sec * NS + m.header.stamp.nanosec, m) for _, _, m in reader.messages([topic])]

    def values(msg):
        w = msg.wrench
        return np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])
    mode = shadow(node)
    for stamp, msg in read(bag, "/joint_states"):
        mode.add_joint_state(stamp, stamp / NS, list(msg.name), list(msg.position), list(msg.velocity))
    for stamp, msg in read(bag, FT_TOPIC):
        mode.add_real_ft(0, stamp, values(msg), msg.header.frame_id)
    restart_scene(node.scene, node.commands, *mode.start_state())
    node.clock.reset()
    predicted, residuals = [], []
    step = 0
    while (decision := mode.decide(1e9, step, 0.1)).due and not decision.extrapolated:
        node.hold(mode.targets(step, node.commands.position, decision.extrapolated))
        wrench = [(topic, msg) for topic, msg in node.step() if topic == FT_TOPIC]
        step += 1
        outputs = [WrenchOutput("~/ft/wrist_ft", values(msg), msg.header.frame_id) for _, msg in wrench]
        predicted += [values(msg) for _, msg in wrench]
        residuals += mode.stepped(step, outputs)
    expected = [values(msg) for _, msg in read(replayed, FT_TOPIC)]
    assert step == 200 and len(predicted) == len(expected) == 200
    assert all(np.array_equal(a, b) for a, b in zip(predicted, expected))
    real = {stamp: values(msg) for stamp, msg in read(bag, FT_TOPIC)}
    assert len(residuals) == 200
    for _, stamp, residual, _ in residuals:
        assert np.allclose(residual, real[stamp] - expected[stamp // 10_000_000 - 1], atol=1e-12)
    rmse = mode.residuals[0].rmse
    assert np.all(rmse[:3] < 0.05) and np.all(rmse[3:] < 0.002)


def test_a_sim_far_behind_its_stream_interpolates_from_a_few_samples():
    """A sim 10 s behind a 1 kHz stream has 10 000 samples buffered per joint: each step reads only the ones up
    to the first after its time, and gets what the whole buffer gives (positions without velocities: the
    velocity is the forward difference, also at a sample's own time)."""
    import collections
    from cond_ros.cosim import sample_motion
    from cond_ros.cosim.shadow import _up_to
    window = collections.deque((0.001 * k, math.sin(0.001 * k), math.nan) for k in range(10_000))
    full = np.array(window)
    for t in (0.0, 0.0005, 0.001, 0.0123, 0.5, 9.999, 10.5):
        rows = _up_to(window, t)
        assert len(rows) <= int(t / 0.001) + 2
        part = np.array(rows)
        assert sample_motion(*part.T, t) == sample_motion(*full.T, t)
