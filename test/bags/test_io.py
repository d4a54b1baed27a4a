"""Bags in and out: both storages round-trip, and every unusable bag is a BagError naming bag and topic."""
import os

import numpy as np
import pytest

from cond_ros.bags import messages
from cond_ros.bags.io import BagError, BagReader, BagWriter


def _write(path, storage, count=20, topic="/ft"):
    with BagWriter(path, storage=storage) as writer:
        for k in range(count):
            writer.write(topic, 1000 + k, messages.wrench(np.arange(6) + k, "sensor", 10_000_000 * k))
            writer.write("/joint_states", 1000 + k, messages.joint_state(["a", "b"], [k, 1.0], [0.5, 0.25],
                                                                         10_000_000 * k))
    return str(path)


def _storage_file(bag):
    return next(os.path.join(bag, f) for f in os.listdir(bag) if f != "metadata.yaml")


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_round_trip_both_storages(tmp_path, storage):
    """What is written reads back unchanged (values, stamps, frame, log times, types), in both storages."""
    bag = _write(tmp_path / "bag", storage)
    with BagReader(bag) as reader:
        assert reader.topics == {"/ft": (messages.WRENCH_STAMPED, 20), "/joint_states": (messages.JOINT_STATE, 20)}
        rows = list(reader.messages(["/ft"]))
        states = list(reader.messages(["/joint_states"]))
    assert [log for _, log, _ in rows] == list(range(1000, 1020))
    assert np.array_equal(messages.wrench_values(rows[3][2]), np.arange(6) + 3.0)
    assert messages.stamp_ns(rows[3][2].header.stamp) == 30_000_000 and rows[3][2].header.frame_id == "sensor"
    assert messages.joint_state_fields(states[2][2]) == (["a", "b"], [2.0, 1.0], [0.5, 0.25], [])


def test_writer_leaves_nothing_on_error_and_refuses_existing(tmp_path):
    """A bag appears only when closed without an error; an existing path is never overwritten."""
    target = tmp_path / "bag"
    with pytest.raises(RuntimeError):
        with BagWriter(target) as writer:
            writer.write("/ft", 1, messages.wrench(np.zeros(6), "s", 1))
            raise RuntimeError("stop")
    assert os.listdir(tmp_path) == []
    _write(target, "mcap")
    with pytest.raises(BagError, match="exists already"):
        BagWriter(target)
    with pytest.raises(BagError, match="does not exist"):
        BagWriter(tmp_path / "missing" / "bag")
    with pytest.raises(BagError, match="negative"), BagWriter(tmp_path / "neg") as writer:
        writer.write("/ft", -5, messages.wrench(np.zeros(6), "s", 0))
    assert sorted(os.listdir(tmp_path)) == ["bag"]


def test_missing_and_empty_paths_name_the_bag(tmp_path):
    """No such path, and a directory that is no bag, are BagErrors naming the path."""
    for path in (tmp_path / "nowhere", tmp_path):
        with pytest.raises(BagError) as err:
            with BagReader(path):
                pass
        assert str(path) in str(err.value)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize("keep", [0.0, 0.3, 0.9])
def test_truncated_file_is_an_error(tmp_path, storage, keep):
    """A storage file cut short (a crashed recorder, a partial copy) fails on open or while reading, with a
    BagError naming the bag; never a silently shorter series."""
    bag = _write(tmp_path / "bag", storage, count=200)
    path = _storage_file(bag)
    with open(path, "r+b") as fh:
        fh.truncate(int(os.path.getsize(path) * keep))
    with pytest.raises(BagError) as err:
        with BagReader(bag) as reader:
            list(reader.messages(["/ft"]))
    assert bag in str(err.value)


def test_corrupt_message_names_the_topic(tmp_path):
    """A message whose bytes do not decode as its type names the bag, the topic and the message."""
    with BagWriter(tmp_path / "bag") as writer:
        writer.write_raw("/ft", messages.WRENCH_STAMPED, 5, b"\x00\x01\x00\x00" + b"\xff" * 7)
    with pytest.raises(BagError) as err:
        with BagReader(tmp_path / "bag") as reader:
            list(reader.messages(["/ft"]))
    text = str(err.value)
    assert "[/ft]" in text and "message 0" in text and "does not decode" in text


def test_require_names_missing_topic_and_wrong_type(tmp_path):
    """A missing topic lists the bag's topics; a topic of another type says what it is."""
    bag = _write(tmp_path / "bag", "mcap")
    with BagReader(bag) as reader:
        with pytest.raises(BagError, match=r"\[/wrench\]: no such topic; the bag has: /ft"):
            reader.require("/wrench", (messages.WRENCH_STAMPED,))
        with pytest.raises(BagError, match=r"\[/joint_states\]: is sensor_msgs/msg/JointState, expected geometry"):
            reader.require("/joint_states", (messages.WRENCH_STAMPED,))
        assert reader.require("/ft", (messages.WRENCH_STAMPED,)) == messages.WRENCH_STAMPED


def test_single_storage_file_is_a_bag(tmp_path):
    """A bare .mcap file (as ros2 bag's mcap storage writes it) reads like its directory."""
    bag = _write(tmp_path / "bag", "mcap")
    with BagReader(_storage_file(bag)) as reader:
        assert len(list(reader.messages(["/ft"]))) == 20


def test_fast_dds_padding_is_tolerated(tmp_path):
    """Fast DDS (rclpy.serialization, ros2 bag) leaves 4 bytes after a JointState with no efforts; rosbags alone
    rejects that as a size mismatch. The message decodes the same as without them; a short one still fails."""
    from cond_ros.bags.io import decode, typestore
    msg = messages.joint_state(["a", "bb"], [1.0, 2.0], [0.5, 0.25], 7)
    raw = bytes(typestore().serialize_cdr(msg, messages.JOINT_STATE))
    padded = decode(raw + b"\x00\xa1\xf4\x80", messages.JOINT_STATE)
    assert messages.joint_state_fields(padded) == messages.joint_state_fields(msg)
    with pytest.raises(Exception):
        decode(raw[:-6], messages.JOINT_STATE)


def test_offered_qos_of_both_metadata_forms():
    """rosbag2 before metadata version 9 stores the offered QoS as a YAML string of rmw enum numbers, from 9
    on as a list of maps with names; both read as names. A bag without any (rosbags writes none) gives None."""
    from cond_ros.bags.io import _qos_dict
    old = "- history: 1\n  depth: 1\n  reliability: 2\n  durability: 2\n  deadline: {sec: 0, nsec: 0}\n"
    assert _qos_dict(old) == {"history": "keep_last", "depth": 1, "reliability": "best_effort",
                              "durability": "volatile"}
    new = [{"history": "keep_last", "depth": 10, "reliability": "reliable", "durability": "transient_local"}]
    assert _qos_dict(new) == {"history": "keep_last", "depth": 10, "reliability": "reliable",
                              "durability": "transient_local"}
    assert _qos_dict([]) is None and _qos_dict("") is None and _qos_dict(None) is None


def test_a_ros1_bag_reads_as_ros2_messages(tmp_path):
    """A ROS 1 .bag (written by rosbags as rosbag records it): its messages decode to the ROS 2 forms (the
    Header loses its seq), and its raw messages come out as ROS 2 CDR, what `cond-ros play` publishes."""
    from pathlib import Path

    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    from cond_ros.bags.io import typestore
    ros1 = get_typestore(Stores.ROS1_NOETIC)
    T, H = ros1.types["builtin_interfaces/msg/Time"], ros1.types["std_msgs/msg/Header"]
    V, W, WS = (ros1.types[f"geometry_msgs/msg/{n}"] for n in ("Vector3", "Wrench", "WrenchStamped"))
    path = tmp_path / "robot.bag"
    with Writer(Path(path)) as writer:
        connection = writer.add_connection("/ft", WS.__msgtype__, typestore=ros1)
        for k in range(3):
            msg = WS(header=H(seq=k, stamp=T(sec=5, nanosec=k), frame_id="tool0"),
                     wrench=W(force=V(x=1.0 * k, y=2.0, z=3.0), torque=V(x=0.1, y=0.2, z=0.3)))
            writer.write(connection, 5_000_000_000 + k, ros1.serialize_ros1(msg, WS.__msgtype__))
    with BagReader(path) as reader:
        decoded = [msg for _, _, msg in reader.messages(["/ft"])]
        raw = [typestore().deserialize_cdr(data, msgtype) for _, msgtype, _, data in reader.raw_messages(["/ft"])]
    assert [m.wrench.force.x for m in decoded] == [0.0, 1.0, 2.0] and decoded[2].header.stamp.nanosec == 2
    assert not hasattr(decoded[0].header, "seq") and decoded[0].header.frame_id == "tool0"
    assert [(m.header.stamp.nanosec, m.wrench.force.x) for m in raw] == [(0, 0.0), (1, 1.0), (2, 2.0)]
