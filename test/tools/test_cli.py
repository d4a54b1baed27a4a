"""The ``cond-ros`` command: scripts rely on ``bench --json`` printing exactly one JSON object."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
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


def test_bench_cloth_drape_quick_json(capsys):
    """The README's demo as a benchmark: one JSON object with its real-time factor and Table IX's two counts on
    the same cloth; Chebyshev needs fewer iterations (the paper's 3-5x on its scenes)."""
    code, out = run_cli(capsys, "bench", "cloth_drape", "--json", "--quick")
    assert code == 0
    result = json.loads(out)
    assert result["steps"] == 60 and result["realtime_factor"] > 0.0
    assert result["iterations_mean"] < result["iterations_without_chebyshev_mean"]
    assert result["max_penetration_mm"] < 1.0


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


@pytest.mark.parametrize("value", ["-1", "nan", "1001", "fast"])
def test_bench_real_time_factor_out_of_range_is_a_clear_error(capsys, value):
    """The node benchmark's --real-time-factor takes the node parameter's range, [0, 1000]; anything else
    stops argparse with code 2 and names the option, before the node starts."""
    with pytest.raises(SystemExit) as stop:
        cli.main(["bench", "ros_panda_cable", "--real-time-factor", value])
    assert stop.value.code == 2
    assert "--real-time-factor" in capsys.readouterr().err


def test_bench_real_time_factor_is_for_the_node_benchmark_only(capsys):
    assert cli.main(["bench", "box_sliding", "--real-time-factor", "0"]) == 2
    assert "apply to ros_panda_cable only" in capsys.readouterr().err


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
    (["run", "box_sliding", "--headless", "--dt", "1e9"], "--dt must be in [1e-06, 1] s, got 1e+09"),
    (["run", "panda_pick", "--headless", "--dt", "1e-6"],
     "5000000 steps (the duration over dt): must be in [0, 1000000]"),
    (["run", "box_sliding", "--headless", "--steps", "2000000"], "2000000 steps: must be in [0, 1000000]"),
    (["run", "box_sliding", "--headless", "--out", "/no/such/dir/run.csv"], "--out: the directory /no/such/dir"),
    (["run", "box_sliding", "--headless", "--out", "/tmp"], "--out: /tmp is a directory"),
])
def test_run_bad_input(capsys, argv, message):
    """Bad scene names, physical parameters, step counts and output paths are rejected with a message naming
    them, before any step (issue 32: --dt 1e9 ran, --dt 1e-9 died allocating 179 GiB, and a bad --out lost the
    whole run to a traceback at its end)."""
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_run_panda_cable_writes_the_per_step_columns(tmp_path, capsys):
    out = tmp_path / "run.csv"
    code, text = run_cli(capsys, "run", "panda_cable", "--headless", "--steps", "3", "--out", str(out), "--quiet")
    assert code == 0, text
    import csv
    rows = list(csv.reader(out.open()))
    header = rows[0]
    for column in ("time_s", "iterations", "residual", "max_penetration_m", "dynamics_ms", "solver_ms",
                   "q_panda_joint1", "tool_px", "tool_qw", "wrist_ft_fz", "wrist_ft_true_fz", "wrist_ft_base_fz",
                   "wrist_ft_tool_force_base_fx"):
        assert column in header
    assert len(rows) == 4
    # the tool starts on the recorded trajectory (row 0 of the packaged csv)
    np.testing.assert_allclose([float(rows[1][header.index(c)]) for c in ("tool_px", "tool_py", "tool_pz")],
                               [0.514, 0.197304, 0.100524], atol=2e-3)


def test_bench_panda_cable_json_keys(capsys):
    code, text = run_cli(capsys, "bench", "panda_cable", "--segments", "20", "--steps", "3", "--json")
    assert code == 0
    result = json.loads(text)
    for key in ("steps", "dynamics_ms", "solver_ms", "iterations_mean", "max_penetration_mm", "realtime_factor", "csv"):
        assert key in result
    assert result["steps"] == 3 and result["segments"] == 20
    assert result["solver"] == "cond"  # the scene's
    # the time inside Simulator.step is part of the loop's (the loop adds the sensor, the tool pose, the row)
    loop_ms = 1e3 * result["dt_s"] / result["realtime_factor"]
    assert 0 < result["physics_ms_mean"] < loop_ms


def test_bench_panda_cable_runs_primal_newton_on_request(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code, text = run_cli(capsys, "bench", "panda_cable", "--segments", "20", "--steps", "3", "--solver",
                         "primal_newton", "--json")
    assert code == 0 and json.loads(text)["solver"] == "primal_newton"
    assert not list(tmp_path.glob("*.yaml"))  # the edited scene's YAML is not left behind


def test_bench_panda_cable_names_an_unknown_solver(capsys):
    assert cli.main(["bench", "panda_cable", "--solver", "gauss", "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "gauss" in err and "primal_newton" in err


def test_bench_options_only_for_panda_cable(capsys):
    assert cli.main(["bench", "chebyshev", "--segments", "3"]) == 2
    assert "panda_cable only" in capsys.readouterr().err


def test_compile_fills_the_cache_and_names_it(capsys):
    """``cond-ros compile`` (the node's step on panda_cable_small) says where the kernels went and how long."""
    from cond_ros.sim import jit
    code, out = run_cli(capsys, "compile")
    assert code == 0, out
    assert (jit.CACHE_DIR or jit.PACKAGE_DIR) in out
    assert "panda_cable_small:" in out and "compiled in" in out


def test_compile_unknown_scene(capsys):
    """An unknown scene stops ``cond-ros compile`` with code 2 before anything compiles."""
    assert cli.main(["compile", "no_such_scene"]) == 2
    err = capsys.readouterr().err
    assert "unknown scene 'no_such_scene'" in err and "panda_cable_small" in err


@pytest.mark.parametrize("scene, steps", [("panda_cable_small", 300), ("soft_ball", 30)])
def test_run_csv_is_bit_identical_also_with_every_core_busy(tmp_path, request, scene, steps):
    """`cond-ros run` twice on the same scene, the second beside a process spinning on every core: every
    column but the three stage timings is the same text, bit for bit (soft_ball: numba's parallel FEM
    kernels on both cores)."""
    import csv

    def run(name):
        out = tmp_path / name
        result = subprocess.run([sys.executable, "-m", "cond_ros.cli", "run", scene, "--headless",
                                 "--steps", str(steps), "--out", str(out), "--quiet"], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stderr
        rows = list(csv.reader(out.open()))
        timings = {rows[0].index(c) for c in ("collision_ms", "dynamics_ms", "solver_ms")}
        return [[v for i, v in enumerate(row) if i not in timings] for row in rows]
    quiet = run("quiet.csv")
    request.getfixturevalue("cpu_hog")
    assert run("busy.csv") == quiet
    assert len(quiet) == steps + 1 and len(quiet[0]) >= 7


def _scene_variant(tmp_path, name, edit):
    import yaml
    from cond_ros.resources import config_dir
    text = (pathlib.Path(config_dir()) / f"{name}.yaml").read_text()
    path = tmp_path / "scene.yaml"
    path.write_text(edit(text, yaml))
    return path


@pytest.mark.parametrize("case, scene, edit, message", [
    ("empty", "soft_ball", lambda t, y: "", "scene must be a mapping"),
    ("not_yaml", "soft_ball", lambda t, y: t + "\n  - [unclosed", "invalid YAML"),
    ("huge", "soft_ball", lambda t, y: t + "".join(f"\nextra_{i}: {i}" for i in range(50_000)),
     "extra_0: unknown key"),
    ("missing_mesh", "soft_ball", lambda t, y: t.replace("mesh: {type: sphere", "mesh: {type: file, "
                                                         "path: /no/such/mesh.msh, x_type: sphere"), "mesh.msh"),
    ("negative_modulus", "soft_ball", lambda t, y: t.replace("youngs_modulus: 1.0e+6", "youngs_modulus: -1.0e+6"),
     "soft_bodies[0].material.youngs_modulus must be > 0"),
    ("missing_urdf", "panda_pick", lambda t, y: t.replace("urdf/panda.urdf", "urdf/nope.urdf"), "nope.urdf"),
    ("negative_mass", "panda_pick", lambda t, y: t.replace("mass: 0.4", "mass: -0.4"), "bodies[0].mass must be > 0"),
])
def test_bad_scene_files_exit_2_naming_the_file_and_leave_no_output(tmp_path, case, scene, edit, message):
    """A fuzz of scene files through `cond-ros run --scene-file`: each ends in one message naming the file and the
    problem, exit code 2, and no output file (issue 32)."""
    path = _scene_variant(tmp_path, scene, edit)
    out = tmp_path / "run.csv"
    result = subprocess.run([sys.executable, "-m", "cond_ros.cli", "run", scene, "--scene-file", str(path),
                             "--headless", "--steps", "2", "--quiet", "--out", str(out)], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert str(path) in result.stderr and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["soak", "--duration", "0"], "--duration must be > 0 s"),
    (["soak", "--scene", "nope"], "unknown scene 'nope'"),
    (["soak", "--rate", "-5"], "--rate must be in (0, 10000] Hz"),
    (["soak", "--out", "/proc/soak"], "--out: the directory /proc is not writable"),
])
def test_soak_bad_input_exits_2_before_any_process(capsys, argv, message):
    pytest.importorskip("rclpy")
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_run_shows_the_compile_phase_and_leaves_it_out_of_the_real_time_factor(capsys):
    """The first run must not sit at step 0 for a minute with a five-hour estimate (issue 34): the compile is a
    phase of its own, shown before the steps' progress bar starts, and the summary's real-time factor is the
    stepping's. The factor is checked against a summary built from the same rows with compile time removed."""
    from cond_ros.tools import COMPILE_PHASE, format_summary
    from cond_ros.tools.runner import RunResult
    code = cli.main(["run", "box_sliding", "--headless", "--steps", "5"])
    captured = capsys.readouterr()
    assert code == 0
    assert COMPILE_PHASE in captured.err and captured.err.index(COMPILE_PHASE) < captured.err.index("box_sliding:")
    assert "real-time factor" in captured.out and "first step includes" not in captured.out
    rows = np.zeros((100, 8))
    result = RunResult(header=["time_s", "iterations", "residual", "contacts", "max_penetration_m", "collision_ms",
                               "dynamics_ms", "solver_ms"], rows=rows, wall_s=3.0, dt=0.01, compile_s=2.5)
    assert result.summary()["realtime_factor"] == pytest.approx(1.0 / 0.5)
    assert "2.5 s of it compiling kernels, not counted" in format_summary("x", result.summary())


def test_ctrl_c_ends_a_headless_run_with_its_steps_written(tmp_path):
    """SIGINT mid-run: the CSV and the summary cover the steps made, and the exit code says it was stopped
    (128 + 2), as cond-ros record's."""
    import re
    import signal
    import threading
    import time
    out = tmp_path / "run.csv"
    proc = subprocess.Popen([sys.executable, "-m", "cond_ros.cli", "run", "panda_cable_small", "--steps", "100000",
                             "--real-time-factor", "1", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    errors = []
    reader = threading.Thread(target=lambda: errors.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while not re.search(r"\b[1-9]\d*/100000", "".join(errors)):  # the progress bar counts a step
            assert proc.poll() is None and time.monotonic() < deadline, "".join(errors)[-2000:]
            time.sleep(0.2)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        stdout = proc.stdout.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=5)
    stderr = "".join(errors)
    assert proc.returncode == 130, stderr[-2000:]
    assert "stopped by SIGINT after" in stderr and "Traceback" not in stderr, stderr[-2000:]
    rows = out.read_text().splitlines()
    assert 1 < len(rows) < 100001 and "panda_cable_small:" in stdout
