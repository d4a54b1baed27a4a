"""``record``: the node's topics and the demo controller's commands, stamped in simulated time."""
import contextlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from bag_helpers import FT_TOPIC, FT_TRUTH, sim_config

from cond_ros.bags import messages
from cond_ros.bags.io import BagError, BagReader, progress_bar
from cond_ros.bags.record import record_scene
from cond_ros.cosim.config import ConfigError, validate_config

STEPS = 180


def test_recorded_topics(real_nominal):
    """/clock and /joint_states from t = 0, F/T (measured and ground truth) from the first step, one
    /joint_command per joint state, contact wrenches from each pair's first contact to the end; log time =
    stamp everywhere."""
    with BagReader(real_nominal) as reader:
        topics = reader.topics
        rows = {topic: [(log, m) for _, log, m in reader.messages([topic])] for topic in topics}
    assert topics["/clock"] == (messages.CLOCK, STEPS + 1)
    assert topics["/joint_states"] == (messages.JOINT_STATE, STEPS + 1)
    assert topics["/joint_command"] == (messages.JOINT_STATE, STEPS)
    assert topics[FT_TOPIC] == topics[FT_TRUTH] == (messages.WRENCH_STAMPED, STEPS)
    pairs = {t for t in topics if t.startswith("/cond_sim/contact_wrench/")}
    assert pairs == {f"/cond_sim/contact_wrench/box0/{link}" for link in ("panda_leftfinger", "panda_rightfinger")}
    for topic in pairs:
        stamps = [log for log, _ in rows[topic]]
        assert stamps == list(range(stamps[0], STEPS * 10_000_000 + 1, 10_000_000))  # every step from then on
    for topic, messages_ in rows.items():
        for log, msg in messages_:
            stamp = msg.clock if topic == "/clock" else msg.header.stamp
            assert messages.stamp_ns(stamp) == log
    measured = np.array([messages.wrench_values(m) for _, m in rows[FT_TOPIC]])
    truth = np.array([messages.wrench_values(m) for _, m in rows[FT_TRUTH]])
    assert 0.03 < np.std(measured - truth, axis=0)[0] < 0.07  # the scene's 0.05 N noise
    assert rows["/joint_command"][0][1].name[0] == "panda_joint1" and rows[FT_TOPIC][0][1].header.frame_id == \
        "ft_sensor_link"


def test_noise_off_and_a_scene_without_script(tmp_path, scenes):
    """sensor_noise false: measured = ground truth. A scene without a script or robot records no commands."""
    record_scene(sim_config(scenes[0], sensor_noise=False), tmp_path / "quiet", duration_s=0.05, progress=False)
    with BagReader(tmp_path / "quiet") as reader:
        measured = [messages.wrench_values(m) for _, _, m in reader.messages([FT_TOPIC])]
        truth = [messages.wrench_values(m) for _, _, m in reader.messages([FT_TRUTH])]
    assert np.array_equal(measured, truth) and len(truth) == 5
    summary = record_scene(validate_config(dict(scene="box_sliding")), tmp_path / "box", duration_s=0.05,
                           progress=False)
    assert summary.steps == 5 and "/joint_command" not in summary.counts
    assert "/cond_sim/contact_wrench/body0/plane0" in summary.counts


def test_bad_output_or_scene_before_any_work(tmp_path, scenes):
    (tmp_path / "taken").mkdir()
    with pytest.raises(BagError, match="exists already"):
        record_scene(sim_config(scenes[0]), tmp_path / "taken", duration_s=0.1, progress=False)
    with pytest.raises(ConfigError, match="unknown scene"):
        record_scene(validate_config(dict(scene="no_such_scene")), tmp_path / "x", duration_s=0.1, progress=False)
    with pytest.raises(ValueError, match="duration"):
        record_scene(sim_config(scenes[0]), tmp_path / "y", duration_s=-1.0, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


class _Terminal:
    def isatty(self):
        return True

    def write(self, text):
        pass

    def flush(self):
        pass


def test_progress_bars_follow_the_terminal_and_quiet():
    """A bar shows on a terminal, not when stderr is a file or pipe, and never with --quiet."""
    assert not progress_bar(range(3), progress=True, file=_Terminal()).disable
    assert progress_bar(range(3), progress=False, file=_Terminal()).disable
    with open("/dev/null", "w") as pipe:
        assert progress_bar(range(3), progress=True, file=pipe).disable


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_recording_keeps_what_was_recorded(tmp_path, sig):
    """Ctrl-C or SIGTERM to `cond-ros record` mid-run: the bag is closed at its path with the steps so far
    (one /joint_states more than steps, as for a full run), nothing partial is left, and the exit code is
    128 + N with a line saying how far it got (it was a traceback and a lost bag, or a 0-byte .partial)."""
    out = tmp_path / "bag"
    proc = subprocess.Popen([sys.executable, "-m", "cond_ros.cli", "record", "panda_cable_small", "--out", str(out),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        end = time.monotonic() + 120  # a first start in a fresh clone compiles the kernels
        while not any(p.stat().st_size > 100_000 for p in tmp_path.glob(".bag.*.partial/bag/*")):
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + sig, stderr
    steps = int(stderr.split(f"stopped by {sig.name} after ")[1].split(" of ")[0])
    assert 0 < steps < 5500 and "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]
    with BagReader(out) as reader:
        assert reader.topics["/joint_states"] == (messages.JOINT_STATE, steps + 1)
        assert reader.topics["/joint_command"] == (messages.JOINT_STATE, steps)
    assert f"recorded {steps} steps" in stdout
