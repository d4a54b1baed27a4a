"""The ``cond-ros`` command: scripts rely on ``bench --json`` printing exactly one JSON object."""
import json
import subprocess
import sys

import pytest

from cond_ros import cli


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr().out
    return code, out


def test_console_script_help():
    """The installed entry point answers --help (the same parser as cli.main)."""
    proc = subprocess.run([sys.executable, "-m", "cond_ros.cli", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0
    assert "bench" in proc.stdout and "run" in proc.stdout


def test_bench_chebyshev_quick_json(capsys):
    """Chebyshev ablation (Table IX analogue): one JSON object; acceleration needs fewer iterations."""
    code, out = run_cli(capsys, "bench", "chebyshev", "--json", "--quick")
    assert code == 0
    result = json.loads(out)  # exactly one object: json.loads rejects trailing text
    assert result["iters_with"] < result["iters_without"]


def test_bench_scaling_quick_json(capsys):
    """Scaling benchmark reports dof, solver_ms and r2_linear with matching lengths."""
    code, out = run_cli(capsys, "bench", "scaling", "--json", "--quick")
    assert code == 0
    result = json.loads(out)
    assert len(result["dof"]) == len(result["solver_ms"]) >= 3
    assert 0.0 <= result["r2_linear"] <= 1.0


def test_unknown_benchmark_is_a_clear_error(capsys):
    """An unknown benchmark name exits 2 and lists the available ones."""
    assert cli.main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'nope'" in err and "box_sliding" in err


def test_run_headless_writes_csv(tmp_path, capsys):
    """`cond-ros run SCENE --headless --out` writes one CSV row per step and a summary."""
    out_csv = tmp_path / "run.csv"
    code, out = run_cli(capsys, "run", "box_sliding", "--headless", "--steps", "5", "--quiet", "--out", str(out_csv))
    assert code == 0
    lines = out_csv.read_text().strip().splitlines()
    assert lines[0].startswith("time_s,iterations") and len(lines) == 6
    assert "real-time factor" in out


@pytest.mark.parametrize("argv,message", [
    (["run", "nope", "--headless"], "unknown scene 'nope'"),
    (["run", "box_sliding", "--headless", "--dt", "-0.01"], "dt"),
])
def test_run_bad_input(capsys, argv, message):
    """Bad scene names and physical parameters are rejected with a message naming them."""
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err
