"""The viewer's command line: bad options and a missing extra are one clear line and exit 2, before any work;
``cond-ros run --plot`` writes its F/T plot and the summary names the F/T statistics."""
import socket
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "cond_ros.cli"]
# the CLI as it runs where viser is not installed (an import of it fails)
NO_VISER = [sys.executable, "-c", "import sys; sys.modules['viser'] = None; from cond_ros.cli import main; "
                                  "sys.exit(main(sys.argv[1:]))"]


def _run(args, command=CLI, timeout=300):
    return subprocess.run(command + args, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args", [["run", "panda_cable_small", "--view"], ["view", "panda_cable_small"],
                                  ["replay", "bag", "--scene", "panda_cable_small", "--out", "x", "--view"]])
def test_without_viser_the_message_names_the_extra(args):
    result = _run(args, NO_VISER)
    assert result.returncode == 2, result.stderr
    assert "the viewer needs viser; pip install 'cond_ros[view]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "panda_cable_small", "--linger", "3"], "--linger needs --view"),
    (["run", "panda_cable_small", "--paused"], "--paused needs --view"),
    (["run", "panda_cable_small", "--view", "--headless"], "--headless and --view contradict each other"),
    (["run", "panda_cable_small", "--view", "--port", "70000"], "--port must be in [0, 65535], got 70000"),
    (["run", "panda_cable_small", "--view", "--fps", "0"], "--fps must be in (0, 120], got 0"),
    (["run", "panda_cable_small", "--real-time-factor", "-1"], "--real-time-factor must be >= 0, got -1"),
    (["run", "panda_cable_small", "--plot", "/nonexistent/dir/ft.png"], "--plot: "),
    (["view", "no_such_scene"], "'no_such_scene' is neither a scene"),
    (["view", "missing.yaml"], "missing.yaml: no such file"),
    (["view", "run.csv"], "run.csv: give the scene that recorded it with --scene"),
    (["view", "run.csv", "--scene", "panda_cable_small"], "run.csv: cannot be read as a run's CSV"),
    (["view", "run.csv", "--scene", "panda_cable_small", "--real", "bag"], "--real does not apply to a CSV"),
    (["view", "panda_cable_small", "--scene", "soft_ball", "--topic", "/ft"],
     "--scene, --topic do not apply to a scene run live"),
    (["view", "bag.mcap", "--scene", "panda_cable_small", "--linger", "3"], "--linger does not apply to a bag"),
])
def test_bad_options_are_one_line_and_exit_2(args, message, tmp_path):
    result = subprocess.run(CLI + args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_taken_port_is_said(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run(["run", "panda_cable_small", "--view", "--port", str(port), "--steps", "3", "--linger", "0",
                       "--quiet"])
    assert result.returncode == 0, result.stderr
    assert f"(port {port} is taken)" in result.stdout, result.stdout


def test_run_writes_the_ft_plot_and_says_the_ft_statistics(tmp_path):
    plot = tmp_path / "ft.png"
    result = _run(["run", "panda_cable_small", "--steps", "20", "--plot", str(plot), "--quiet"])
    assert result.returncode == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 20_000
    assert "F/T wrist_ft (noise-free): reading |F| mean" in result.stdout
    assert "force on the tool |F| mean" in result.stdout and f"F/T plot: {plot}" in result.stdout
