"""`cond-ros launch` never leaves its nodes behind: a stop signal to the launcher stops them, and a killed
launcher's nodes stop on their own (the issue: SIGTERM, then SIGKILL a second later, left both nodes
stepping under init). Every process a test starts carries a token in its environment; a test ends
whatever still carries it, whatever happens.

The tests before the launches need no ROS: they check :mod:`cond_ros.ros.lifetime` and the launcher's stop on plain
Python children."""
import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from cond_ros.ros import lifetime
from ros_harness import (HARD_TIMEOUT_S, TOKEN_VARIABLE, NodeProcess, kill_token_processes, ros_session,
                         token_processes, wait_until_gone)

LAUNCH = ["-m", "cond_ros.cli", "launch", "panda_cable", "--scene", "panda_cable_small", "--real-time-factor", "0"]
UP_TIMEOUT_S = HARD_TIMEOUT_S - 30  # the nodes' first start in a fresh clone compiles the kernels (30-100 s)
GONE_S = 3.0  # every process of a launch is gone this long after the signal (the nodes stop in < 1 s)
SIM_UP, CONTROLLER_UP = "[cond_sim] [INFO]", "playing the script"

# A parent that starts one child, as the launcher does (parent-death signal, and the parent's pid in
# the environment when argv[1] says so), prints the child's pid and sleeps until killed. The child
# ignores SIGINT, so only the watch's os._exit (or the kernel's SIGTERM) can end it; it prints "ready"
# once past its start-up (argv[2]) and then spins.
PARENT = textwrap.dedent("""
    import os, subprocess, sys, time
    from cond_ros.ros import lifetime
    CHILD = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\\n" + sys.argv[2]
             + "\\nprint('ready', flush=True)\\nwhile True:\\n    sum(range(1000))")
    env = dict(os.environ)
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)  # the child re-executes itself, as a fresh interpreter does
    if sys.argv[1] == "watch":
        env[lifetime.PARENT_PID_VARIABLE] = str(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, preexec_fn=lifetime.parent_death_signal())
    print(child.pid, flush=True)
    time.sleep(600)
""")


@contextlib.contextmanager
def _tokened_parent(mode: str, child_code: str):
    token = uuid.uuid4().hex
    parent = subprocess.Popen([sys.executable, "-c", PARENT, mode, child_code], stdout=subprocess.PIPE,
                              env=dict(os.environ, **{TOKEN_VARIABLE: token}), start_new_session=True)
    watchdog = threading.Timer(60.0, os.killpg, (parent.pid, signal.SIGKILL))  # a readline that never ends
    watchdog.start()
    try:
        lines = {parent.stdout.readline().strip() for _ in range(2)}  # the child's pid and its "ready"
        assert b"ready" in lines, lines
        yield parent, int((lines - {b"ready"}).pop()), token
    finally:
        watchdog.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()
        parent.stdout.close()
        kill_token_processes(token)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_parent_death_signal_survives_the_wheels_re_exec():
    """A child that sets up nothing itself (still importing, say) is ended by the kernel when its parent is
    SIGKILLed, also after the ROS wheels' .pth hook re-executed the interpreter (os.execve: same process)."""
    with _tokened_parent("plain", "") as (parent, child, token):
        assert sorted(token_processes(token)) == sorted([parent.pid, child])
        parent.kill()
        parent.wait()
        waited, left = wait_until_gone(token, GONE_S)
    assert not left, f"still running {waited:.1f} s after the parent's SIGKILL: {left}"
    print(f"child gone {waited:.2f} s after its parent's SIGKILL")


def test_parent_watch_ends_a_busy_child():
    """With the launcher's variable, the node's watch ends a child that ignores SIGINT (a long compile)
    within 2 s of its parent's SIGKILL, by os._exit."""
    with _tokened_parent("watch", "from cond_ros.ros import lifetime; lifetime.watch_parent('child')") as (
            parent, child, token):
        parent.kill()
        parent.wait()
        waited, left = wait_until_gone(token, GONE_S)
    assert not left, f"still running {waited:.1f} s after the parent's SIGKILL: {left}"
    print(f"child gone {waited:.2f} s after its parent's SIGKILL")
    assert waited > lifetime.EXIT_GRACE_S - 0.2, "ended before the grace: by the kernel's signal, not the watch"


# Children for the launcher's stop: each prints "ready" once its handlers are set, then waits in a named function.
# One that SIGINT stops; one of ours that ignores SIGINT and SIGTERM (a node deep in a compile) and prints its
# stacks when asked; another program's (rviz2) that ignores SIGINT only, and which the stack request would kill.
STOPPING_CHILDREN = {
    "obedient": "import time\nprint('ready', flush=True)\ntime.sleep(600)",
    "ours_stuck": textwrap.dedent("""
        import signal, time
        from cond_ros.ros import lifetime
        lifetime.dump_stacks_on_request()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        def waiting_in_a_long_call():
            print('ready', flush=True)
            time.sleep(600)
        waiting_in_a_long_call()
    """),
    "foreign_slow": "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                    "time.sleep(600)",
}


def test_stop_escalates_and_asks_our_late_nodes_for_their_stacks(tmp_path, monkeypatch):
    """The launcher's stop: SIGINT, then SIGTERM to the late ones (after asking ours for their Python stacks,
    which land in their output), then SIGKILL; each late one is named. Another program's node gets no stack
    request, whose default action would end it by SIGUSR1 rather than SIGTERM."""
    from cond_ros.ros import launcher
    monkeypatch.setattr(launcher, "GRACE_S", 1.0)
    monkeypatch.setattr(launcher, "KILL_GRACE_S", 1.0)
    children = []
    try:
        for name, code in STOPPING_CHILDREN.items():
            errors = open(tmp_path / f"{name}.err", "wb")
            children.append((name, subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                                    stderr=errors, start_new_session=True), name != "foreign_slow"))
            errors.close()
        for name, proc, _ in children:
            assert proc.stdout.readline().strip() == b"ready", (tmp_path / f"{name}.err").read_text()
        out = io.StringIO()
        started = time.monotonic()
        launcher._stop(children, out)
        took = time.monotonic() - started
    finally:
        for _, proc, _ in children:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
    codes = {name: proc.returncode for name, proc, _ in children}
    assert codes == {"obedient": -signal.SIGINT, "ours_stuck": -signal.SIGKILL, "foreign_slow": -signal.SIGTERM}, codes
    said = out.getvalue()
    assert "[launch] ours_stuck still runs 1 s after SIGINT; its threads' Python stacks follow; SIGTERM" in said, said
    assert "[launch] foreign_slow still runs 1 s after SIGINT; SIGTERM" in said, said
    assert "[launch] ours_stuck did not stop within 2 s of SIGINT; killed" in said, said
    assert "obedient" not in said and "foreign_slow did not stop" not in said, said
    stacks = (tmp_path / "ours_stuck.err").read_text()
    assert "waiting_in_a_long_call" in stacks and "Current thread" in stacks, stacks
    assert 1.9 < took < 4.0, took


def test_no_stack_dumps_without_a_standard_error_file(monkeypatch):
    """A node run inside a program whose standard error has no file descriptor runs on without the stack dump
    (faulthandler would raise io.UnsupportedOperation)."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "__stderr__", None)
    assert lifetime.dump_stacks_on_request() is False


class _Context:
    def __init__(self, ok):
        self._ok = ok

    def ok(self):
        return self._ok


def _raised(cause):
    """The chain numba builds when SIGINT's KeyboardInterrupt lands in its unpickling of a constant (as a
    clean-clone CI run's node printed it): SystemError, caused by SystemError, caused by the interrupt."""
    try:
        try:
            try:
                raise cause
            except BaseException as exc:
                raise SystemError("<function _numba_unpickle> returned a result with an exception set") from exc
        except SystemError as exc:
            raise SystemError("CPUDispatcher(<function subtree_momentum>) returned a result with an exception set") \
                from exc
    except SystemError as exc:
        return exc


def test_an_interrupt_wrapped_by_numba_is_a_stop_not_a_failure():
    """The launcher's SIGINT reached a node inside a numba call before rclpy shut the context down: the node
    printed a traceback and exited 1, and the launch reported a failure. A wrapped interrupt is a stop; a
    real error is not, unless the context is already down."""
    assert lifetime.is_stop(_raised(KeyboardInterrupt()), _Context(ok=True))
    assert not lifetime.is_stop(_raised(ValueError("a real failure")), _Context(ok=True))
    assert lifetime.is_stop(_raised(ValueError("after the shutdown")), _Context(ok=False))


INTERRUPT_REPLACED = textwrap.dedent("""
    import os, signal, sys, time
    from cond_ros.ros import lifetime
    if sys.argv[1] == "noted":
        lifetime.note_interrupts()
    try:  # as rclpy's take_message: the interrupt lands in the message's conversion, pybind11 drops it
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        pass
    replaced = RuntimeError("Unable to convert call argument '0' to Python object")
    class Up:
        def ok(self):
            return True
    print(replaced.__cause__ is None and replaced.__context__ is None, lifetime.is_stop(replaced, Up()))
""")


@pytest.mark.parametrize("noted", [True, False])
def test_an_interrupt_replaced_by_an_error_without_cause_is_a_stop_once_noted(noted):
    """The launcher's SIGINT reached the demo controller inside rclpy's conversion of a message, and pybind11
    raised its own RuntimeError with no cause while the context was still up: the controller exited 1 and a
    clean-clone CI run's launch failed. With the interrupt noted (as run_node does) that error is a stop; without,
    the same error is a failure."""
    out = subprocess.run([sys.executable, "-c", INTERRUPT_REPLACED, "noted" if noted else "plain"],
                         capture_output=True, text=True, timeout=60, start_new_session=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", str(noted)], out.stdout + out.stderr


def test_no_variable_no_watch(monkeypatch):
    """A node started by ros2 launch, ros2 run or by hand watches nothing; nor one whose variable names a
    live process that is not its parent."""
    monkeypatch.delenv(lifetime.PARENT_PID_VARIABLE, raising=False)
    assert lifetime.watch_parent() is None
    monkeypatch.setenv(lifetime.PARENT_PID_VARIABLE, str(os.getpid()))  # alive, and not pytest's parent
    assert lifetime.watch_parent() is None
    assert lifetime.PARENT_PID_VARIABLE not in os.environ


@contextlib.contextmanager
def _launch(tmp_path):
    """A `cond-ros launch` with a token of its own; on exit its group and every process carrying the token
    are killed, whatever the test did."""
    pytest.importorskip("rclpy")
    token = uuid.uuid4().hex
    with ros_session():
        launcher = NodeProcess(LAUNCH, tmp_path / "launch.log", env={TOKEN_VARIABLE: token})
        try:
            yield launcher, token
        finally:
            launcher.stop(grace=2.0)
            kill_token_processes(token)


def _wait_for(launcher, texts, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not all(text in launcher.log() for text in texts):
        assert launcher.alive(), "the launcher exited:\n" + launcher.log()
        assert time.monotonic() < end, f"no {texts} within {timeout} s:\n" + launcher.log()
        time.sleep(0.2)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGHUP, 128 + signal.SIGHUP),
                                       (signal.SIGINT, 0)], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_launcher_stops_its_nodes_on_a_signal(tmp_path, sig, code):
    """SIGTERM, SIGHUP or SIGINT to the launcher alone (not its group): it stops both nodes (SIGINT, SIGKILL
    after a grace) and exits 128 + N, or 0 for SIGINT; nothing of the launch is left 3 s later."""
    with _launch(tmp_path) as (launcher, token):
        _wait_for(launcher, [SIM_UP, CONTROLLER_UP], UP_TIMEOUT_S)
        time.sleep(1.0)  # stepping as fast as it can
        assert len(token_processes(token)) == 3
        os.kill(launcher.proc.pid, sig)
        waited, left = wait_until_gone(token, GONE_S)
        assert not left, f"still running {waited:.1f} s after {sig!r}: {left}\n" + launcher.log()
        print(f"{sig!r}: all gone after {waited:.2f} s")
        assert launcher.proc.wait(timeout=1.0) == code, launcher.log()


def test_nodes_stop_when_the_launcher_is_killed(tmp_path):
    """SIGKILL to the launcher, which cannot stop anything then: the running nodes see their parent go and
    stop on their own, within 3 s."""
    with _launch(tmp_path) as (launcher, token):
        _wait_for(launcher, [SIM_UP, CONTROLLER_UP], UP_TIMEOUT_S)
        time.sleep(1.0)
        assert len(token_processes(token)) == 3
        launcher.proc.kill()
        waited, left = wait_until_gone(token, GONE_S)
        assert not left, f"still running {waited:.1f} s after SIGKILL: {left}\n" + launcher.log()
        print(f"SIGKILL: all gone after {waited:.2f} s")


def _has_participant(pid: int) -> bool:
    """Whether the process maps a Fast DDS shared-memory file: its node exists, its scene may still load."""
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return "/dev/shm/fastdds" in fh.read()
    except OSError:
        return False


@pytest.mark.parametrize("phase", ["importing", "building"])
def test_starting_nodes_stop_when_the_launcher_is_killed(tmp_path, phase):
    """SIGKILL to the launcher while its nodes still import (the kernel's parent-death signal ends them), or
    once their nodes exist but still load the scene and compile (their watch stops them): they all stop."""
    with _launch(tmp_path) as (launcher, token):
        end = time.monotonic() + UP_TIMEOUT_S
        while True:
            nodes = [pid for pid in token_processes(token) if pid != launcher.proc.pid]
            if len(nodes) == 2 and (phase == "importing" or all(_has_participant(pid) for pid in nodes)):
                break
            assert time.monotonic() < end and launcher.alive(), f"no nodes {phase}:\n" + launcher.log()
            time.sleep(0.05)
        assert SIM_UP not in launcher.log(), "the sim came up already: this test no longer tests a start"
        launcher.proc.kill()
        waited, left = wait_until_gone(token, GONE_S)
        assert not left, f"still running {waited:.1f} s after SIGKILL: {left}\n" + launcher.log()
        print(f"SIGKILL while {phase}: all gone after {waited:.2f} s")


def test_a_node_that_dies_is_named_and_fails_the_launch(tmp_path):
    """The controller SIGKILLed under a running launch: the launcher stops the sim, says which node ended the
    launch and how, and exits 128 + 9 (it once tore the sim down without a word)."""
    with _launch(tmp_path) as (launcher, token):
        _wait_for(launcher, [SIM_UP, CONTROLLER_UP], UP_TIMEOUT_S)
        controller = [pid for pid in token_processes(token)
                      if b"demo_controller" in open(f"/proc/{pid}/cmdline", "rb").read()]
        assert len(controller) == 1
        os.kill(controller[0], signal.SIGKILL)
        assert launcher.proc.wait(timeout=GONE_S + 5) == 128 + signal.SIGKILL, launcher.log()
        assert "[launch] cond_demo_controller ended on its own after" in launcher.log()
        assert "(killed by SIGKILL); stopped cond_sim" in launcher.log(), launcher.log()
        assert not wait_until_gone(token, GONE_S)[1]


def test_a_duration_that_ends_before_the_first_step_fails(tmp_path):
    """--duration shorter than the sim's start (~2 s with cached kernels; a first start compiles for 30-100 s):
    no step ran, so the launch did not run, and it says so and exits 1 instead of 0."""
    pytest.importorskip("rclpy")
    with ros_session():
        launcher = NodeProcess(LAUNCH + ["--duration", "0.3"], tmp_path / "launch.log")
        try:
            launcher.proc.wait(timeout=60)
        finally:
            code = launcher.stop()
    assert code == 1, launcher.log()
    assert "[launch] the simulation never stepped in 0 s" in launcher.log(), launcher.log()
    assert "cond-ros compile" in launcher.log()


def test_shared_memory_a_killed_node_leaves_is_cleaned_by_the_next(tmp_path):
    """A SIGKILLed node leaves its Fast DDS segments in /dev/shm (their lock files free); the next node to
    start removes exactly those, and a live participant's (an observer on another domain, whose peers cannot
    clean anything of it) are kept and go on working."""
    import glob

    from ros_harness import Observer, start_sim
    pytest.importorskip("rclpy")

    def segments():  # a participant's own (fastdds_<guid>); port segments are reused by the next participant
        return {p for p in glob.glob("/dev/shm/fastdds_*") if "port" not in p}
    with ros_session() as domain:
        before = segments()
        observer = Observer(1 + (domain + 50) % 100)  # live all along, out of the nodes' sight
        try:
            live = segments() - before  # the observer's own (stale files of earlier tests may go meanwhile)
            assert live
            first = start_sim(tmp_path, name="first")
            _wait_for(first, ["first step done"], UP_TIMEOUT_S)
            left = segments() - live - before
            assert left, "the node made no shared-memory segment"
            first.kill()
            first.proc.wait(timeout=10)
            time.sleep(lifetime.SHM_MIN_AGE_S + 0.5)
            assert left <= segments()  # SIGKILL: nobody removed them
            second = start_sim(tmp_path, name="second")
            try:
                _wait_for(second, ["first step done"], UP_TIMEOUT_S)
                assert not left & segments(), left & segments()
                assert live <= segments()
                assert "Fast DDS shared-memory files that killed processes left" in second.log()
            finally:
                second.stop()
            observer.spin_for(0.2)  # the observer's participant still works
        finally:
            observer.close()


def test_rviz_starts_beside_the_nodes_and_its_exit_leaves_them_running(tmp_path):
    """--rviz starts the rviz2 on PATH (here a stand-in that notes its arguments and exits with 3 at once) on the
    package's config/panda_cable.rviz; a viewer that closes does not end the launch, which runs its duration and
    exits 0."""
    pytest.importorskip("rclpy")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rviz2").write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'rviz_args'}\nexit 3\n")
    (bin_dir / "rviz2").chmod(0o755)
    token = uuid.uuid4().hex
    with ros_session():
        start = time.monotonic()
        launcher = NodeProcess([*LAUNCH, "--rviz", "--duration", "8"], tmp_path / "launch.log",
                               env={TOKEN_VARIABLE: token, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
        try:
            code = launcher.proc.wait(timeout=UP_TIMEOUT_S)
        finally:
            launcher.stop(grace=2.0)
            kill_token_processes(token)
    assert code == 0 and time.monotonic() - start > 8.0, launcher.log()
    assert "first step done" in launcher.log() and "ended on its own" not in launcher.log(), launcher.log()
    arguments = (tmp_path / "rviz_args").read_text().split()
    assert arguments[0] == "-d" and arguments[1].endswith(os.path.join("config", "panda_cable.rviz"))
    assert os.path.isfile(arguments[1])
