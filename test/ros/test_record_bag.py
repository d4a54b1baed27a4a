"""The node's record_bag parameter: cond_sim writes what it publishes and the commands it takes to a bag,
which cond-ros replay turns back into the same F/T readings, bit for bit, without ROS."""
import math

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import DT_NS, running_sim, stamp_ns  # noqa: E402

from cond_ros.bags import messages  # noqa: E402
from cond_ros.bags.io import BagReader  # noqa: E402
from cond_ros.bags.replay import replay_bag  # noqa: E402
from cond_ros.cosim.config import validate_config  # noqa: E402

STEPS = 30
FT = "/cond_sim/ft/wrist_ft"


def _wrenches(bag, topic):
    with BagReader(bag) as reader:
        return [(messages.stamp_ns(m.header.stamp), *messages.wrench_values(m)) for _, _, m in
                reader.messages([topic])]


def _messages(bag, topic):
    with BagReader(bag) as reader:
        return [m for _, _, m in reader.messages([topic])]


def test_node_records_and_replay_reproduces_it(tmp_path):
    """Lockstep run with a forward position command per step, recorded by the node; stopped with SIGINT, the
    bag is complete; replayed offline from its commands, the F/T (noise included) is identical."""
    bag = tmp_path / "node_bag"
    with running_sim(tmp_path, lockstep=True, lockstep_timeout=20.0, start_paused=True, record_bag=str(bag),
                     record_storage="sqlite3") as (observer, process):
        q0 = [0.1304, 0.4648, 0.2197, -2.2060, -0.2092, 2.6521, 1.2980, 0.0021]

        def command(k):
            return [q + (0.05 * math.sin(0.2 * k) if j < 3 else 0.0) for j, q in enumerate(q0)]
        observer.callbacks.append(lambda msg: observer.publish_forward("position", command(stamp_ns(msg) // DT_NS))
                                  if stamp_ns(msg) // DT_NS <= STEPS else None)
        observer.publish_forward("position", command(0))
        observer.spin_for(0.5)
        assert observer.pause(False).success
        assert observer.spin_until(lambda: len(observer.messages["ft_true"]) > STEPS, 60), process.log()
        observer.spin_for(0.5)  # the node now waits for a command that does not come: nothing is mid-publish
        assert not bag.exists()  # written under a temporary name until the node stops
        seen = [(stamp_ns(m), m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x,
                 m.wrench.torque.y, m.wrench.torque.z) for m in observer.messages["ft"][:STEPS]]
    assert "record_bag: wrote" in process.log(), process.log()
    with BagReader(bag) as reader:
        topics = reader.topics
    assert topics["/forward_position_controller/commands"][1] >= STEPS
    assert {"/clock", "/joint_states", FT, FT + "/ground_truth"} <= set(topics)
    recorded = _wrenches(bag, FT)
    assert [tuple(row) for row in recorded[:STEPS]] == seen  # what subscribers got is what was written
    out = tmp_path / "replayed"
    summary = replay_bag(bag, out, validate_config(dict(scene="panda_cable_small")), progress=False)
    assert summary.drive == "commands" and not summary.rejected
    assert summary.steps == STEPS + 1  # up to the last published step (the bag's end)
    for topic in (FT, FT + "/ground_truth", "/joint_states"):
        if topic == "/joint_states":
            replayed, original = (np.array([[m.header.stamp.nanosec, *m.position, *m.velocity] for m in
                                            _messages(b, topic)]) for b in (out, bag))
        else:
            replayed, original = np.array(_wrenches(out, topic)), np.array(_wrenches(bag, topic))
        assert len(replayed) >= STEPS and np.array_equal(replayed, original), topic


def test_record_bag_that_exists_stops_the_node(tmp_path):
    from ros_harness import start_sim
    (tmp_path / "taken").mkdir()
    process = start_sim(tmp_path, record_bag=str(tmp_path / "taken"))
    assert process.proc.wait(timeout=120) == 2
    assert "record_bag: " in process.log() and "exists already" in process.log()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_signalled_recorder_keeps_its_bag(tmp_path, sig):
    """The node recording at real time, stopped by SIGTERM: the bag is complete at its path. Killed by SIGKILL:
    nothing appears at its path, and `cond-ros salvage` recovers all but the last second (issue 32)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from ros_harness import ros_session, start_sim
    bag = tmp_path / "bag"
    with ros_session():
        process = start_sim(tmp_path, record_bag=str(bag), real_time_factor=1.0)
        try:
            end = time.monotonic() + 120
            while "first step done" not in process.log():
                assert process.alive() and time.monotonic() < end, process.log()
                time.sleep(0.1)
            time.sleep(3.0)  # 3 s of simulated time
            os.killpg(process.proc.pid, getattr(signal, sig))
            process.proc.wait(timeout=30)
        finally:
            process.stop()
    if sig == "SIGTERM":
        assert "record_bag: wrote" in process.log(), process.log()
        with BagReader(bag) as reader:
            assert reader.topics["/joint_states"][1] >= 250
        return
    assert not bag.exists()
    partial = next(tmp_path.glob(".bag.*.partial"))
    result = subprocess.run([sys.executable, "-m", "cond_ros.cli", "salvage", str(partial), "--out",
                             str(tmp_path / "salvaged")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with BagReader(tmp_path / "salvaged") as reader:
        states = reader.topics["/joint_states"][1]
        last = reader.end_ns
    assert states >= 150 and last >= 1.5e9, (states, last)  # ~3 s recorded, at most ~1 s lost
