"""A node that ``cond-ros launch`` starts never outlives the launcher, even one killed by SIGKILL.

A launcher that is SIGKILLed cannot stop its children: they used to be re-parented to init and go on
stepping. Two guards, both plain Python (no rclpy), both inactive for a node that was not started by
the launcher (``ros2 launch``, ``ros2 run``, by hand):

- :func:`parent_death_signal`, run by the launcher in each child between fork and exec (``preexec_fn``):
  Linux's ``PR_SET_PDEATHSIG`` has the kernel send the child SIGTERM when the launcher dies. It covers
  the seconds of interpreter start-up and imports, before the node can watch for itself; nothing is
  there to clean up yet, so SIGTERM's default action (exit at once) is right. The setting survives
  ``execve`` of a binary that is not set-user-ID, such as the re-execution of the interpreter by the
  ROS wheels' ``.pth`` hook (``os.execve``, same process).
- :func:`watch_parent`, called by :func:`~cond_ros.ros.node_process.run_node` before ``rclpy.init``, when
  :data:`PARENT_PID_VARIABLE` (set by the launcher) names the node's parent: a daemon thread polls
  ``os.getppid()``; once the parent is gone it sends its own process SIGINT, the same clean shutdown as
  Ctrl-C (rclpy shuts its context down, so Fast DDS removes its /dev/shm files), and ends the process
  if it still runs :data:`EXIT_GRACE_S` later (a numba compile of a minute): by SIGALRM's default
  action, which needs no Python (a C call can hold the GIL for a second), else by ``os._exit``. It
  clears the kernel's parent-death signal, which would otherwise arrive with its own SIGINT and
  interrupt that shutdown.
"""
from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time

PARENT_PID_VARIABLE = "COND_ROS_PARENT_PID"
#: a node prints its threads' Python stacks on this signal (:func:`dump_stacks_on_request`); None where there is none
STACKS_SIGNAL = getattr(signal, "SIGUSR1", None)
POLL_S = 0.1  # [s] between two looks at the parent pid
EXIT_GRACE_S = 1.5  # [s] from seeing the parent gone to the forced end: with POLL_S, gone within 2 s
_PR_SET_PDEATHSIG = 1


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _libc_prctl()  # looked up here: the child between fork and exec should do no more than call it


def parent_death_signal(sig: int = signal.SIGTERM):
    """A ``preexec_fn`` for ``subprocess.Popen`` (the child gets ``sig`` when the calling thread, which
    must outlive the child's useful life, ends), or None where the kernel has no such setting."""
    if _prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        _prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the setting was made: nobody will signal us
            os._exit(1)
    return preexec


def clear_parent_death_signal() -> None:
    """Undo :func:`parent_death_signal` for this process (from its main thread, the one that carries it)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, 0, 0, 0, 0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch_parent(name: str = "node") -> threading.Thread | None:
    """Stop this process when the parent named by :data:`PARENT_PID_VARIABLE` ends; the watching thread,
    or None without the variable. The variable is removed from the environment, so that a process this
    one starts does not watch a pid that is not its parent."""
    text = os.environ.pop(PARENT_PID_VARIABLE, None)
    try:
        parent = int(text) if text else 0
    except ValueError:
        parent = 0
    if parent <= 0:
        return None
    if os.getppid() != parent and _alive(parent):
        print(f"{name}: {PARENT_PID_VARIABLE}={parent} is not this process's parent; not watching it",
              file=sys.stderr)
        return None
    # cleared after that check, so a parent dying in between still sends its signal; after this, the watch
    # sees its death
    if threading.current_thread() is threading.main_thread():
        clear_parent_death_signal()
    thread = threading.Thread(target=_watch, args=(parent,), name=f"{name}-parent-watch", daemon=True)
    thread.start()
    return thread


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    # no message: the launcher read this process's output, and writing to its closed pipe would fail here
    if signal.getsignal(signal.SIGALRM) == signal.SIG_DFL:
        # the kernel ends the process when the timer fires, even while the main thread holds the GIL
        signal.setitimer(signal.ITIMER_REAL, EXIT_GRACE_S)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(EXIT_GRACE_S)
    os._exit(1)


def dump_stacks_on_request() -> bool:
    """Print every thread's Python stack to stderr on :data:`STACKS_SIGNAL`, from the signal itself: also while
    the main thread is inside C code (a numba compile, an LLVM call) that keeps Python's own handlers from
    running. The launcher asks a node that has not stopped within its grace after SIGINT, so its log says
    where the node was before it is made to stop (a clean-clone CI run once killed the demo controller 5 s
    after SIGINT, with nothing to say why). False where it cannot: no such signal, or no standard error with a
    file descriptor (a node run inside another program); the node runs as before then."""
    if STACKS_SIGNAL is None:
        return False
    try:
        faulthandler.register(STACKS_SIGNAL, file=sys.__stderr__ or sys.stderr, all_threads=True)
    except (AttributeError, ValueError, RuntimeError, OSError):  # io.UnsupportedOperation: no fileno()
        return False
    return True


def ignore_stop_signals() -> None:
    """From the main thread, once the process is shutting down: a second SIGINT or SIGTERM (Ctrl-C reaches
    a launched node from the terminal and again from the launcher) would interrupt the clean-up."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


_interrupted = threading.Event()  # set by note_interrupts' handler: a SIGINT has reached this process


def note_interrupts() -> None:
    """From the main thread, before ``rclpy.init`` (whose handler chains to the one it finds): SIGINT's Python
    handler also notes that a stop was asked for, then raises KeyboardInterrupt as before. Code written in C can
    replace the interrupt with an error of its own that names no cause; :func:`is_stop` then still knows."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        _interrupted.set()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)


def is_stop(exc: BaseException, context) -> bool:
    """Whether ``exc``, raised by a spinning node, is the stop a signal asked for rather than a failure: the
    context is down (rclpy's handler shut it), a SIGINT has arrived (:func:`note_interrupts`), or a
    KeyboardInterrupt is in its cause chain. Python's own SIGINT handler can raise before rclpy's deferred
    shutdown lands; inside a numba call the interrupt arrives wrapped (``SystemError: CPUDispatcher(...)
    returned a result with an exception set``), and inside rclpy's ``take_message``, whose conversion of the
    message to Python it interrupts, pybind11 replaces it (``RuntimeError: Unable to convert call argument '0'
    to Python object``, with no cause). Clean-clone CI runs' launch tests failed on both."""
    if not context.ok() or _interrupted.is_set():
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


DISCOVERY_RANGE = "ROS_AUTOMATIC_DISCOVERY_RANGE"


def keep_discovery_local(env=None):
    """DDS discovery on this machine unless the user chose its range: ``env`` (default: this process's
    environment, which children inherit) gets ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` where it has none.
    Anything on the sim's domain can command the robot; every process the package starts with ROS calls this."""
    (os.environ if env is None else env).setdefault(DISCOVERY_RANGE, "LOCALHOST")


SHM_DIR = "/dev/shm"
SHM_MIN_AGE_S = 5.0  # a segment younger than this may belong to a participant that is still starting


def clean_stale_shared_memory(directory: str = SHM_DIR, *, min_age_s: float = SHM_MIN_AGE_S) -> list:
    """Remove the Fast DDS shared-memory files that killed processes left behind; returns their names.

    A process killed by SIGKILL cannot remove its segments (``fastdds_<guid>``, ``fastdds_port<N>``, each
    ~0.5 MB) nor their lock files (``_el``) and port mutexes (``sem.fastdds_port<N>_mutex``); they pile up
    in /dev/shm, which is RAM. A live owner holds an exclusive ``flock`` on its segment's ``_el`` file for as
    long as it runs, so a lock that can be taken marks a segment nobody owns: what ``fastdds shm clean``
    removes. Called by every node before ``rclpy.init``."""
    import fcntl
    import glob
    removed = []
    now = time.time()
    for lock_path in glob.glob(os.path.join(directory, "fastdds_*_el")):
        base = lock_path[:-len("_el")]
        try:
            if now - os.stat(lock_path).st_mtime < min_age_s:
                continue
            fd = os.open(lock_path, os.O_RDONLY)
        except OSError:  # gone meanwhile, or not ours to open
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its participant is alive
            os.close(fd)
            continue
        try:
            for path in (base, os.path.join(directory, f"sem.{os.path.basename(base)}_mutex"), lock_path):
                try:
                    os.remove(path)
                except OSError:  # absent (a segment without a port mutex), or another user's
                    continue
                removed.append(os.path.basename(path))
        finally:
            os.close(fd)
    return removed
