"""``cond-ros compare``, ``replay`` and ``record``: exit 2 with the bag and topic named for every kind of bad
input, and no report that could pass for a valid one."""
import json
import os

import numpy as np
import pytest
from bag_helpers import FT_TOPIC, FT_TRUTH

from cond_ros import cli
from cond_ros.bags import messages
from cond_ros.bags.io import BagWriter


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _wrench_bag(path, stamps, storage="mcap", topic="/ft"):
    with BagWriter(path, storage=storage) as writer:
        for ns in stamps:
            writer.write(topic, ns, messages.wrench(np.sin([ns * 1e-9 * k for k in range(1, 7)]), "ft_sensor_link",
                                                    ns))
    return str(path)


def test_compare_cli_writes_report_and_json(capsys, tmp_path, real_nominal, replay_of_nominal):
    code, out, err = _run(capsys, "compare", real_nominal, replay_of_nominal[0], "--real-topic", FT_TOPIC,
                          "--lag", "auto", "--tare", "--window", "0.5", "--out", tmp_path / "r", "--json")
    assert code == 0, err
    result = json.loads(out)  # exactly one object
    assert result["valid"] and result["sim"]["topic"] == FT_TRUTH and result["alignment"]["tare_s"] == 1.0
    assert len(result["files"]["plots"]) == 6 and os.path.isfile(result["files"]["markdown"])
    code, out, _ = _run(capsys, "compare", real_nominal, replay_of_nominal[0], "--real-topic", FT_TOPIC,
                        "--out", tmp_path / "r", "--no-plots", "--quiet")
    assert code == 0 and "fx: rmse" in out and "report:" in out


def _truncated(path):
    bag = _wrench_bag(path, range(10**8, 2 * 10**8, 10**6), storage="sqlite3")
    data = next(os.path.join(bag, f) for f in os.listdir(bag) if f.endswith(".db3"))
    with open(data, "r+b") as fh:
        fh.truncate(os.path.getsize(data) // 2)
    return bag


@pytest.mark.parametrize("case", ["missing_topic", "empty_bag", "truncated", "wrong_type", "no_overlap",
                                  "not_a_bag"])
def test_compare_bad_input_exits_2_and_writes_nothing(capsys, tmp_path, case, replay_of_nominal):
    """Each bad input: exit code 2, an error naming the bag (and topic where there is one), no report
    directory; with --json one object saying valid: false."""
    sim = replay_of_nominal[0]
    real_topic = "/ft"
    if case == "missing_topic":
        real, real_topic = _wrench_bag(tmp_path / "real", range(10**7, 10**9, 10**7)), "/wrench"
        expected = [real, "[/wrench]", "no such topic"]
    elif case == "empty_bag":
        with BagWriter(tmp_path / "real") as writer:
            writer._connection("/ft", messages.WRENCH_STAMPED)
        real, expected = str(tmp_path / "real"), [str(tmp_path / "real"), "[/ft]", "has no messages"]
    elif case == "truncated":
        real = _truncated(tmp_path / "real")
        expected = [real, "truncated or corrupt"]
    elif case == "wrong_type":
        real, real_topic = sim, "/joint_states"
        expected = [sim, "[/joint_states]", "is sensor_msgs/msg/JointState"]
    elif case == "no_overlap":
        real = _wrench_bag(tmp_path / "real", range(10 * 10**9, 11 * 10**9, 10**7))
        expected = [real, "[/ft]", "no overlap in time", sim, FT_TRUTH]
    else:
        (tmp_path / "real").mkdir()
        real, expected = str(tmp_path / "real"), [str(tmp_path / "real"), "not a rosbag2 bag"]
    out_dir = tmp_path / "report"
    code, out, err = _run(capsys, "compare", real, sim, "--real-topic", real_topic, "--sim-topic", FT_TRUTH,
                          "--out", out_dir, "--json")
    assert code == 2
    for fragment in expected:
        assert fragment in err, (fragment, err)
    assert json.loads(out) == {"valid": False, "error": err.strip().removeprefix("cond-ros compare: ")}
    assert not out_dir.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".report")]


def test_record_and_replay_cli(capsys, tmp_path, scenes):
    code, out, err = _run(capsys, "record", scenes[0], "--out", tmp_path / "rec", "--duration", "0.05",
                          "--storage", "sqlite3", "--quiet", "--sensor-seed", "9")
    assert code == 0 and "recorded 5 steps" in out, err
    code, out, err = _run(capsys, "replay", tmp_path / "rec", "--scene", scenes[0], "--out", tmp_path / "rep",
                          "--quiet", "--sensor-seed", "9")
    assert code == 0 and "replayed 5 steps" in out and "driven by commands (/joint_command)" in out, err
    code, _, err = _run(capsys, "replay", tmp_path / "rec", "--scene", "nowhere_scene", "--out", tmp_path / "x")
    assert code == 2 and "unknown scene 'nowhere_scene'" in err and not (tmp_path / "x").exists()
    code, _, err = _run(capsys, "record", scenes[0], "--out", tmp_path / "rec", "--duration", "0.05")
    assert code == 2 and "exists already" in err
