"""`cond-ros soak` for 60 s in CI (the benchmark runs it for 10 minutes): the node under a flood of commands on
every command topic (1 kHz each, a 10 000-message burst, one bad message in 50) keeps its memory, file
descriptors and threads, holds real time, takes the good commands and rejects every bad kind; the CSV,
PNG and verdict are written (issue 32)."""
import csv
import json
import uuid

import pytest

pytest.importorskip("rclpy")

from ros_harness import TOKEN_VARIABLE, NodeProcess, kill_token_processes, ros_session  # noqa: E402

DURATION_S = 60


def test_soak_passes_and_writes_its_figures(tmp_path):
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
    assert code == 0 and "soak PASSED" in log, log
    result = json.loads((out / "soak.json").read_text())
    assert result["passed"] and result["rss_growth_pct"] < 1.0 and result["fds_growth"] <= 0
    assert result["node_exit_code"] == 0 and result["flood_exit_code"] == 0
    assert result["commands_sent_per_s"] > 2000 and result["commands_accepted_per_s"] > 1000
    assert all(n > 0 for n in result["bad_sent_by_kind"].values()) and result["commands_rejected"] > 100
    assert 0.9 < result["real_time_factor_median"] < 1.1
    rows = list(csv.DictReader((out / "soak.csv").open()))
    assert DURATION_S - 2 <= len(rows) <= DURATION_S + 1
    assert (out / "soak.png").stat().st_size > 10_000
