"""`cond-ros soak` for 60 s in CI (the benchmark runs it for 10 minutes): the node under a flood of commands on
every command topic (1 kHz each, a 10 000-message burst, one bad message in 50) keeps its memory, file
descriptors and threads, holds real time, takes the good commands, rejects every bad kind and every command
for a joint that another topic holds, and no step fails; the CSV, PNG and verdict are written (issue 32)."""
import csv
import json
import uuid

import pytest

pytest.importorskip("rclpy")

from ros_harness import TOKEN_VARIABLE, NodeProcess, kill_token_processes, ros_session  # noqa: E402

DURATION_S = 60


def test_soak_holds_and_writes_its_figures(tmp_path):
    out = tmp_path / "soak"
    token = uuid.uuid4().hex
    with ros_session():
        process = NodeProcess(["-m", "cond_ros.cli", "soak", "--duration", str(DURATION_S), "--burst-period", "25",
                               "--out", str(out)], tmp_path / "soak.log", timeout=DURATION_S + 240,
                              env={TOKEN_VARIABLE: token})
        try:
            process.proc.wait(timeout=DURATION_S + 230)
        finally:
            code = process.stop()
            kill_token_processes(token)
    log = process.log()
    result = json.loads((out / "soak.json").read_text())
    # no step may fail: the flood's topics all command the arm, and before the node gave each joint to one topic
    # (command_handover_timeout) their alternating drive modes threw it around until V-FPI diverged (4 times in
    # one 10-minute run). The verdict's 1 % is for the 10-minute run: the allocator still steps up by 1-3 MB in
    # the first minutes, so 60 s after a 10 s warm-up judge growth at 3 % (CI saw +1.16 % once)
    assert result["faults"] == [], result["faults"]
    assert result["rss_growth_pct"] < 3.0, result["rss_growth_pct"]
    assert code == (0 if result["passed"] else 1), log
    assert result["fds_growth"] <= 0 and result["threads_growth"] <= 0
    assert result["node_exit_code"] == 0 and result["flood_exit_code"] == 0
    # the arm follows /joint_command (1 kHz, bursts of 10 kHz); the other four topics' commands are all refused, and
    # under the bursts many are superseded in the 10-deep queues: the 10-minute run accepted 980 a second
    assert result["commands_sent_per_s"] > 2000 and result["commands_accepted_per_s"] > 500
    assert all(n > 0 for n in result["bad_sent_by_kind"].values()) and result["commands_rejected"] > 100
    assert "rejected: panda_joint1 and 7 more follow joint_command" in (out / "soak_node.log").read_text()
    assert 0.9 < result["real_time_factor_median"] < 1.1
    rows = list(csv.DictReader((out / "soak.csv").open()))
    assert DURATION_S - 2 <= len(rows) <= DURATION_S + 1
    assert (out / "soak.png").stat().st_size > 10_000
