"""The install paths the README names, end to end, as a user takes them: a wheel into a fresh venv and a plain
``colcon build`` (no symlinks). Neither has the data files beside the code, so both must find the scenes, URDFs
and the winding trajectory in ``share/cond_ros``. Each runs a scene by name from another directory, headless
and as the ROS node; the wheel's install is read-only, so its kernels must go to the user's cache.

Every install compiles the numba kernels once (its sources have new paths): these tests take minutes.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

from cond_ros.bags.io import BagReader  # noqa: E402
from ros_harness import ros_session  # noqa: E402

pytestmark = pytest.mark.slow

SOURCE = Path(__file__).resolve().parents[2]
NOT_SOURCES = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", "*.nbi", "*.nbc", "build", "install", "log",
                                     "dist", "*.egg-info", ".pytest_cache")
COMMAND_TIMEOUT_S = 400.0  # a cold numba compile took up to 140 s on a busy 2-core machine
SCENE = "panda_cable_small"
READY = f"scene '{SCENE}'"  # cond_sim's log line once its scene is loaded and its kernels are compiled


def _copy_source(dest: Path) -> Path:
    shutil.copytree(SOURCE, dest, ignore=NOT_SOURCES)
    return dest


def _run(command, *, cwd, env=None, timeout=COMMAND_TIMEOUT_S) -> str:
    """Run ``command`` in its own process group (killed whole on timeout); its output, or an assertion that
    shows it."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"{command} did not finish in {timeout:g} s:\n{out}") from None
    assert proc.returncode == 0, f"{command} exited with {proc.returncode}:\n{out}"
    return out


def _read_only(directory: Path, command: list) -> list:
    """``command`` in a mount namespace of its own where ``directory`` is mounted read-only (as a system
    prefix is to a user, even to root here)."""
    mount = f'mount --bind "{directory}" "{directory}" && mount -o remount,ro,bind "{directory}" && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", mount, "sh", *command]


def _can_mount_read_only(tmp_path: Path) -> bool:
    probe = tmp_path / "mount_probe"
    probe.mkdir()
    result = subprocess.run(_read_only(probe, ["touch", str(probe / "file")]), capture_output=True, text=True)
    return result.returncode != 0 and "Read-only" in result.stderr


def _cache_files(directory: Path) -> set:
    return {p for p in directory.rglob("*") if p.suffix in (".nbi", ".nbc")} if directory.exists() else set()


def _run_node(command: list, *, cwd, env, log_path: Path, bag: Path) -> float:
    """Start cond_sim (``command``, with the scene and ``record_bag`` as parameters), let it step as fast as it
    can, stop it with SIGINT; the seconds from start to its ready line. Asserts a clean stop and >= 5 steps."""
    command = [*command, "--ros-args", "-p", f"scene:={SCENE}", "-p", "real_time_factor:=0.0",
               "-p", f"record_bag:={bag}"]
    start = time.monotonic()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        ready_s = None
        while time.monotonic() - start < COMMAND_TIMEOUT_S and proc.poll() is None:
            if READY in log_path.read_text():
                ready_s = time.monotonic() - start
                break
            time.sleep(0.05)
        assert ready_s is not None, f"cond_sim did not get ready:\n{log_path.read_text()}"
        time.sleep(1.0)  # at real-time factor 0: hundreds of 10 ms steps
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = log_path.read_text()
    assert code == 0, log
    assert "record_bag: wrote" in log and "Traceback" not in log, log
    with BagReader(bag) as reader:
        assert reader.topics["/joint_states"][1] >= 5, reader.topics
    return ready_s


def test_wheel_in_a_read_only_venv(tmp_path):
    """A wheel installed non-editable into a fresh venv (``--system-site-packages --no-deps``, reusing the
    installed dependencies), read-only as a system prefix is: from another directory, ``cond-ros compile``
    fills the user cache, ``cond-ros run`` and ``cond_sim`` run a packaged scene by name, and the node's
    start compiles nothing more (its start time is printed)."""
    if not _can_mount_read_only(tmp_path):
        pytest.skip("this machine cannot mount a directory read-only in a mount namespace (unshare --mount)")
    dist, venv, cache, elsewhere = tmp_path / "dist", tmp_path / "venv", tmp_path / "cache", tmp_path / "elsewhere"
    elsewhere.mkdir()
    source = _copy_source(tmp_path / "src")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)], cwd=tmp_path)
    wheel, = dist.glob("cond_ros-*.whl")
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--no-deps", str(wheel)], cwd=tmp_path)
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    env.pop("NUMBA_CACHE_DIR", None)
    where = _run(_read_only(venv, [str(python), "-c", "import cond_ros.resources as r; print(r.PACKAGE_DIR); "
                                   "print(r.share_dir())"]), cwd=elsewhere, env=env).split()
    assert where == [str(venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
                         / "cond_ros"), str(venv / "share" / "cond_ros")]
    out = _run(_read_only(venv, [str(venv / "bin" / "cond-ros"), "compile"]), cwd=elsewhere, env=env)
    assert str(cache / "cond_ros" / "numba") in out, out
    assert _cache_files(cache), "cond-ros compile wrote no cache files"
    out = _run(_read_only(venv, [str(venv / "bin" / "cond-ros"), "run", SCENE, "--headless", "--steps", "5",
                                 "--quiet"]), cwd=elsewhere, env=env)
    assert f"{SCENE}: 5 steps" in out, out
    compiled = _cache_files(cache)
    with ros_session():
        ready_s = _run_node(_read_only(venv, [str(venv / "bin" / "cond_sim")]), cwd=elsewhere,
                            env=dict(os.environ, XDG_CACHE_HOME=str(cache)), log_path=tmp_path / "cond_sim.log",
                            bag=elsewhere / "bag")
    assert _cache_files(cache) == compiled, "cond_sim compiled kernels that cond-ros compile had not cached"
    print(f"cond_sim warm start in a read-only wheel install: ready in {ready_s:.2f} s")


@pytest.fixture(scope="module")
def colcon_install(tmp_path_factory):
    """A workspace with the package built by a plain ``colcon build`` (no ``--symlink-install``); its install
    space."""
    if shutil.which("colcon") is None:
        pytest.skip("colcon is not installed (pip install -e '.[test]' brings colcon-common-extensions)")
    workspace = tmp_path_factory.mktemp("ws")
    _copy_source(workspace / "src" / "cond_ros")
    _run(["colcon", "build", "--packages-select", "cond_ros"], cwd=workspace)
    return workspace / "install"


def _sourced(install: Path) -> list:
    """A command prefix that runs its command with the workspace's ``setup.bash`` sourced."""
    return ["bash", "-c", f'source "{install}/setup.bash" && exec "$@"', "bash"]


def test_colcon_build_without_symlinks(colcon_install, tmp_path):
    """With the workspace sourced, the installed ``cond_sim`` (where ``ros2 run cond_ros cond_sim`` finds it)
    runs a packaged scene by name from another directory."""
    executable = colcon_install / "cond_ros" / "lib" / "cond_ros" / "cond_sim"
    share = colcon_install / "cond_ros" / "share" / "cond_ros"
    assert executable.exists() and (share / "config" / f"{SCENE}.yaml").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([*_sourced(colcon_install), sys.executable, "-c",
                  "import cond_ros.resources as r; print(r.share_dir())"], cwd=elsewhere)
    assert where.split() == [str(share)]
    with ros_session():
        _run_node([*_sourced(colcon_install), str(executable)], cwd=elsewhere, env=None,
                  log_path=tmp_path / "cond_sim.log", bag=elsewhere / "bag")


def test_ros2_launch_fails_when_the_sim_fails(colcon_install, tmp_path):
    """A real ``ros2 launch`` (on a distribution, or launch/launch_ros/ros2cli built from source): a scene that
    does not exist stops both nodes and ``ros2 launch`` exits non-zero, naming the node and its exit code."""
    probe = subprocess.run([*_sourced(colcon_install), "ros2", "launch", "--help"], capture_output=True, text=True,
                           cwd=tmp_path, start_new_session=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("no `ros2 launch` here (launch, launch_ros and ros2cli have no PyPI wheels)")
    with ros_session():
        proc = subprocess.Popen([*_sourced(colcon_install), "ros2", "launch", "cond_ros", "panda_cable.launch.py",
                                 "scene:=no_such_scene"], cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode != 0, out
    assert "unknown scene 'no_such_scene'" in out and "exited with code 2; stopping the launch" in out, out
