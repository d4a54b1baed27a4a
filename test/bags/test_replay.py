"""``replay``: it reproduces a recording bit for bit and twice alike, a changed friction shows in the report
above the noise floor, recorded joint states drive the robot along their motion, and bad input is named."""
import numpy as np
import pytest
from bag_helpers import FT_TOPIC, FT_TRUTH, MU_CHANGED, MU_NOMINAL, NOISE_STD, read_raw, sim_config

from cond_ros.bags.compare import CompareOptions, compare_bags
from cond_ros.bags.io import BagError, BagReader, BagWriter
from cond_ros.bags import messages
from cond_ros.bags.metrics import AXES
from cond_ros.bags.replay import replay_bag
from cond_ros.bags.report import write_report
from cond_ros.bags.series import read_wrench_series

SLIDE = (1.0, 1.5)  # [s] the fingers slide along x at constant speed


def test_replay_reproduces_the_recording_bit_for_bit(real_nominal, replay_of_nominal):
    """The sim replayed from a recorded bag's commands publishes exactly what was recorded: every topic,
    every message, every log time (the sensor noise included: it is seeded)."""
    recorded, replayed = read_raw(real_nominal), read_raw(replay_of_nominal[0])
    assert set(replayed) == set(recorded) - {"/joint_command"}
    for topic, rows in replayed.items():
        assert rows == recorded[topic], topic
    summary = replay_of_nominal[1]
    assert summary.drive == "commands" and summary.steps == 180 and not summary.rejected and not summary.warnings


def test_replay_twice_is_bit_identical(bag_dir, scenes, real_changed, replay_of_changed):
    """Determinism: replaying the same bag again gives the same messages, byte for byte."""
    again = bag_dir / "replay_changed_again"
    replay_bag(real_changed, again, sim_config(scenes[0]), progress=False)
    assert read_raw(again) == read_raw(replay_of_changed[0])


def _friction_ratio(bag, topic):
    """Tangential over normal contact force at the wrist while sliding (the hand's weight read at rest
    before contact taken off the normal force)."""
    s = read_wrench_series(bag, topic)
    t = s.stamps_ns * 1e-9
    weight = s.values[(t > 0.1) & (t < 0.3), 2].mean()
    pick = (t > SLIDE[0]) & (t < SLIDE[1])
    return float(np.mean(np.hypot(s.values[pick, 0], s.values[pick, 1]) / np.abs(s.values[pick, 2] - weight)))


def test_changed_friction_shows_in_the_report(real_nominal, real_changed, replay_of_nominal, replay_of_changed,
                                              tmp_path):
    """The "real" robot slides with mu = 0.8, the nominal sim with 0.5, both driven by the same recorded
    commands. Against the same-friction recording the RMSE is the sensor noise (the noise floor); against the
    changed one it is many times larger on the friction axes, and the report says so. The ratio of tangential
    to normal force while sliding is each side's mu."""
    options = CompareOptions(real_topic=FT_TOPIC, sim_topic=FT_TRUTH, window_s=0.5)
    floor = compare_bags(real_nominal, replay_of_nominal[0], options)
    changed = compare_bags(real_changed, replay_of_changed[0], options)
    floor_rmse = np.array([floor.overall[a].rmse for a in AXES])
    changed_rmse = np.array([changed.overall[a].rmse for a in AXES])
    print("noise floor RMSE", floor_rmse, "changed friction RMSE", changed_rmse)
    assert np.all(np.abs(floor_rmse / NOISE_STD - 1.0) < 0.2)  # 180 samples: the noise, within 20 %
    assert np.all(changed_rmse[:2] > 20 * floor_rmse[:2])  # fx, fy carry the friction force
    assert np.all(changed_rmse[:5] > 3 * floor_rmse[:5])
    ratios = _friction_ratio(real_changed, FT_TRUTH), _friction_ratio(replay_of_changed[0], FT_TRUTH)
    print("tangential / normal force while sliding: real", ratios[0], "sim", ratios[1])
    assert abs(ratios[0] - MU_CHANGED) < 0.05 and abs(ratios[1] - MU_NOMINAL) < 0.05
    report = write_report(changed, tmp_path / "report", plots=False)
    text = open(report["markdown"]).read()
    assert f"| fx | N | {changed.overall['fx'].rmse:.4g} |" in text


def test_joint_states_drive_follows_the_recorded_motion(bag_dir, scenes, real_nominal):
    """Driven by the recorded /joint_states alone (position targets at the step's drive time, velocity and
    inverse-dynamics feed-forward), the robot retraces the recorded free motion: joints within 0.2 mrad, the
    F/T within 0.05 N and 2 mN m, starting at the first recorded state."""
    out = bag_dir / "replay_joint_states"
    summary = replay_bag(real_nominal, out, sim_config(scenes[0]), drive="joint_states", duration_s=0.4,
                         progress=False)
    assert summary.drive == "joint_states" and summary.steps == 40 and summary.topics_in == ["/joint_states"]

    def positions(bag):
        with BagReader(bag) as reader:
            return np.array([m.position for _, _, m in reader.messages(["/joint_states"])])
    recorded, replayed = positions(real_nominal)[:41], positions(out)
    assert np.abs(replayed - recorded).max() < 2e-4
    a, b = read_wrench_series(real_nominal, FT_TRUTH), read_wrench_series(out, FT_TRUTH)
    error = np.abs(a.values[:40] - b.values)
    assert error[:, :3].max() < 0.05 and error[:, 3:].max() < 2e-3


def test_replay_in_the_bags_time_base(bag_dir, scenes, tmp_path):
    """A robot's bag is stamped in epoch time: the replay's stamps are that time base plus k dt."""
    epoch = 1_700_000_000_123_456_789
    bag = tmp_path / "robot"
    with BagWriter(bag) as writer:
        for k in range(11):
            ns = epoch + k * 20_000_000
            writer.write("/joint_states", ns + 1000, messages.joint_state(
                [f"fer_joint{i}" for i in range(1, 8)] + ["extra_joint"],
                [0.0, -0.3831 - 0.01 * k, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 5.0], [], ns))
    summary = replay_bag(bag, tmp_path / "out", sim_config(scenes[0]), progress=False)
    assert summary.drive == "joint_states" and summary.t0_ns == epoch and summary.steps == 20
    assert summary.warnings == ["joints not in the scene, ignored: extra_joint"]
    with BagReader(tmp_path / "out") as reader:
        stamps = [messages.stamp_ns(m.header.stamp) for _, _, m in reader.messages(["/joint_states"])]
        joint_two = [m.position[1] for _, _, m in reader.messages(["/joint_states"])]
    assert stamps == [epoch + k * 10_000_000 for k in range(21)]
    assert abs(joint_two[-1] - (-0.3831 - 0.1)) < 5e-3  # fer_ names drive panda_ joints


@pytest.mark.parametrize("case", ["no_drive", "unknown_joints", "unknown_command_joints", "too_short", "wrong_type",
                                  "bad_out"])
def test_bad_input_is_named_and_leaves_no_bag(tmp_path, scenes, case):
    """Nothing to drive with, joints the scene lacks (recorded states, or every command: it once exited 0 after
    rejecting them all), less than one step, a command topic of the wrong type, an existing output: BagError
    naming the bag (and topic), and no output bag."""
    bag, out = tmp_path / "in", tmp_path / "out"
    with BagWriter(bag) as writer:
        if case == "no_drive":
            writer.write("/ft", 1, messages.wrench(np.zeros(6), "s", 1))
        elif case == "unknown_joints":
            writer.write("/joint_states", 1, messages.joint_state(["a"], [0.0], [], 1))
            writer.write("/joint_states", 2, messages.joint_state(["a"], [0.0], [], 100_000_000))
        elif case == "unknown_command_joints":
            for k in range(10):
                writer.write("/joint_command", 1 + k * 10_000_000, messages.joint_state(["ur_shoulder"], [0.1], [], 0))
        elif case == "too_short":
            writer.write("/joint_command", 1, messages.joint_state(["panda_joint1"], [0.0], [], 1))
        elif case == "wrong_type":
            writer.write("/joint_command", 1, messages.wrench(np.zeros(6), "s", 1))
        else:
            writer.write("/joint_command", 1, messages.joint_state(["panda_joint1"], [0.0], [], 1))
            out.mkdir()
    expected = {"no_drive": r"\[/joint_states\]: no such topic", "unknown_joints": "names no joint of the scene",
                "unknown_command_joints": r"\[/joint_command\]: the scene would reject every one of its 10 commands; "
                                          "first: .*ur_shoulder",
                "too_short": "less than one step", "wrong_type": r"\[/joint_command\]: is geometry_msgs",
                "bad_out": "exists already"}[case]
    with pytest.raises(BagError, match=expected) as err:
        replay_bag(bag, out, sim_config(scenes[0]), progress=False)
    assert str(bag if case != "bad_out" else out) in str(err.value)
    assert not out.exists() or case == "bad_out"


def test_a_ros1_bag_drives_the_replay(tmp_path):
    """A Panda's joint states recorded with ROS 1 (rosbag, a .bag file) drive the replay like a rosbag2 bag:
    one step per recorded state, joint 1 following the recorded ramp."""
    from pathlib import Path

    import numpy as np
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    from cond_ros.bags import BagReader, replay_bag
    from cond_ros.cosim.config import validate_config
    ros1 = get_typestore(Stores.ROS1_NOETIC)
    JS, H, T = (ros1.types[n] for n in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                        "builtin_interfaces/msg/Time"))
    q0 = np.array([-0.0264, 0.4882, 0.3668, -2.1986, -0.3523, 2.6324, 0.6113, 0.0021])  # panda_cable's start
    names = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1"]
    path = tmp_path / "panda.bag"
    with Writer(Path(path)) as writer:
        connection = writer.add_connection("/joint_states", JS.__msgtype__, typestore=ros1)
        for k in range(40):
            ns = 2_000_000_000 + k * 10_000_000
            q = q0 + np.eye(8)[0] * 0.002 * k
            msg = JS(header=H(seq=k, stamp=T(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""), name=names,
                     position=q, velocity=np.zeros(8), effort=np.zeros(0))
            writer.write(connection, ns, ros1.serialize_ros1(msg, JS.__msgtype__))
    summary = replay_bag(path, tmp_path / "sim", validate_config(dict(scene="panda_cable_small")),
                         drive="joint_states", progress=False)
    assert summary.steps == 39 and summary.drive == "joint_states"
    with BagReader(tmp_path / "sim") as reader:
        states = [msg for _, _, msg in reader.messages(["/joint_states"])]
    # the ramp is 0.2 rad/s; the drive's PD (K_d / K_p = 0.04 s) and the cable's pull lag it by ~0.01 rad
    assert abs(states[-1].position[0] - (q0[0] + 0.002 * 39)) < 0.02
    assert states[-1].position[0] - q0[0] > 0.06
