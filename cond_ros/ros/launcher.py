"""``cond-ros launch NAME``: start a launch's nodes as child processes, without launch_ros (the pip path).

Each node of :data:`~cond_ros.ros.launch_config.LAUNCHES` runs as ``python -m MODULE --ros-args -r
__node:=NAME -p PARAM:=VALUE ...`` (another package's executable, rviz2, as itself), with its output prefixed by
its name. The launcher stops them all when one of them exits (not a viewer: closing RViz leaves the simulation
running), after ``duration`` seconds, or on SIGINT (Ctrl-C), SIGTERM or SIGHUP: SIGINT to each
node (rclpy's clean shutdown), SIGTERM to what is left after :data:`GRACE_S` and SIGKILL :data:`KILL_GRACE_S`
later (ros2 launch's ``sigterm_timeout`` and ``sigkill_timeout``), so all are gone within 10 s. A node of ours
that is still running at the SIGTERM first prints its threads' Python stacks
(:func:`~cond_ros.ros.lifetime.dump_stacks_on_request`), so the log says where it was.
It exits with the first failing node's code (a node killed by signal N counts as 128 + N), else 0 after
Ctrl-C or ``duration``, and 128 + N after SIGTERM or SIGHUP, as a process killed by that signal would; but 1
when the simulator never stepped (a ``duration`` spent compiling is not a run). It says which node ended the
launch, how, and which node it had to kill.

The nodes stay in the launcher's process group, so killing that group stops everything. A launcher that
is itself killed (SIGKILL) cannot stop them: they see it go and stop within 2 s on their own
(:mod:`~cond_ros.ros.lifetime`: the kernel's parent-death signal while a node starts, then a watch of its
parent pid, which the launcher passes in ``COND_ROS_PARENT_PID``).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from ..resources import packaged_file
from ..stop_signals import StopSignals
from .launch_config import FIRST_STEP_LOG, LAUNCHES, SHARE_PREFIX, parameter_values
from .lifetime import PARENT_PID_VARIABLE, STACKS_SIGNAL, keep_discovery_local, parent_death_signal

# [s] a node gets after SIGINT before SIGTERM: ros2 launch's sigterm_timeout. A clean stop takes 0.15-0.8 s,
# but the demo controller once took over 1.5 s (the grace before) while the sim stopped beside it, and a
# clean stop reported as a kill (exit 137) fails a run that went well
GRACE_S = 5.0
# [s] after the SIGTERM, before SIGKILL: ros2 launch's sigkill_timeout. A clean-clone CI run once killed the demo
# controller 5 s after SIGINT (when SIGKILL came then), though the run had gone well
KILL_GRACE_S = 5.0
POLL_S = 0.05  # [s] between two looks at the nodes (and at a signal that arrived)


def _ros_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) or "''"  # `-p name:=` would not parse: '' is YAML's empty string


def node_command(node, arguments: dict) -> list:
    """The command line of one node of a launch, with its parameters from the launch arguments; ValueError for
    another package's executable that is not installed (rviz2 on the pip path)."""
    if not node.module:
        executable = shutil.which(node.executable)
        if executable is None:
            raise ValueError(f"{node.condition}:=true starts {node.executable} (ROS 2 package {node.package}), which "
                             f"is not on PATH: it comes with a ROS 2 distribution and has no PyPI wheel")
        return [executable, *(packaged_file(a[len(SHARE_PREFIX):]) if a.startswith(SHARE_PREFIX) else a
                              for a in node.arguments)]
    command = [sys.executable, "-m", node.module, "--ros-args", "-r", f"__node:={node.name}"]
    for name, value in parameter_values(node, arguments).items():
        command += ["-p", f"{name}:={_ros_value(value)}"]
    return command


def _forward(name: str, stream, out, stepped: threading.Event | None) -> None:
    """Copy a node's output, prefixed by its name; set ``stepped`` when a simulator logs its first step."""
    for line in iter(stream.readline, b""):
        text = line.decode(errors="replace")
        if stepped is not None and FIRST_STEP_LOG in text:
            stepped.set()
        out.write(f"[{name}] {text}")
        out.flush()


def _say(out, text: str) -> None:
    out.write(f"[launch] {text}\n")
    out.flush()


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _still_running(processes, grace: float) -> list:
    """Those of ``processes`` (name, process, ours) that have not ended ``grace`` seconds from now."""
    deadline = time.monotonic() + grace
    left = []
    for entry in processes:
        try:
            entry[1].wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            left.append(entry)
    return left


def _stop(processes, out) -> None:
    """SIGINT to each running node of ``processes`` (name, process, whether it is one of ours); SIGTERM to those
    still running :data:`GRACE_S` later, after a dump of their Python stacks for ours (their output); SIGKILL to
    those still running :data:`KILL_GRACE_S` after that. Each late one is said on ``out``."""
    for _, proc, _ in processes:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    late = _still_running(processes, GRACE_S)
    for name, proc, ours in late:
        if ours and STACKS_SIGNAL is not None:
            _say(out, f"{name} still runs {GRACE_S:g} s after SIGINT; its threads' Python stacks follow; SIGTERM")
            proc.send_signal(STACKS_SIGNAL)
        else:
            _say(out, f"{name} still runs {GRACE_S:g} s after SIGINT; SIGTERM")
        proc.send_signal(signal.SIGTERM)
    for name, proc, _ in _still_running(late, KILL_GRACE_S):
        proc.kill()
        proc.wait()
        _say(out, f"{name} did not stop within {GRACE_S + KILL_GRACE_S:g} s of SIGINT; killed")


def _exit_code(received, codes) -> int:
    """SIGTERM/SIGHUP: 128 + N; else the first failure (a node that died of signal N: 128 + N), else 0.
    A node that died of SIGINT was stopped, not failing: Ctrl-C in a terminal reaches the nodes too."""
    if received in (signal.SIGTERM, signal.SIGHUP):
        return 128 + received
    for code in codes:
        if code not in (0, None, -signal.SIGINT):
            return 128 - code if code < 0 else code
    return 0


def run_launch(name: str, overrides: dict, *, duration: float | None = None, out=sys.stdout) -> int:
    """Run launch ``name`` with its arguments' defaults replaced by ``overrides`` until a node exits,
    ``duration`` ends or a stop signal arrives; the exit code (module docstring). ValueError for a bad
    argument."""
    spec = LAUNCHES[name]
    unknown = sorted(set(overrides) - set(spec.defaults()))
    if unknown:
        raise ValueError(f"unknown launch arguments {unknown}; {name} takes {sorted(spec.defaults())}")
    arguments = dict(spec.defaults(), **overrides)
    nodes = [node for node in spec.nodes if node.enabled(arguments)]
    commands = [(node.name, node_command(node, arguments)) for node in nodes]  # ValueError before starting
    env = dict(os.environ)
    keep_discovery_local(env)  # the nodes'
    env[PARENT_PID_VARIABLE] = str(os.getpid())
    processes, forwarders, essential = [], [], []
    with StopSignals() as signals:
        try:
            # every node is started before any output thread: a preexec_fn is only safe to fork without threads
            for node_name, command in commands:
                if signals.received is not None:
                    break
                proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        preexec_fn=parent_death_signal())
                processes.append((node_name, proc))
            stepped = threading.Event()
            for (node_name, proc), node in zip(processes, nodes):
                forwarders.append(threading.Thread(target=_forward, daemon=True, args=(
                    node_name, proc.stdout, out, stepped if node.simulator else None)))
                forwarders[-1].start()
            start = time.monotonic()
            end = None if duration is None else start + duration
            essential = [(n, p) for (n, p), node in zip(processes, nodes) if node.essential]  # not a viewer
            while (signals.received is None and all(p.poll() is None for _, p in essential)
                   and (end is None or time.monotonic() < end)):
                time.sleep(POLL_S)
            ended = [(n, p.returncode) for n, p in essential if p.poll() is not None]
        finally:
            _stop([(n, p, bool(node.module)) for (n, p), node in zip(processes, nodes)], out)
        end_of_output = time.monotonic() + 0.5
        for thread in forwarders:  # the nodes' last lines (their pipes end with them)
            thread.join(timeout=max(0.0, end_of_output - time.monotonic()))
    for node_name, code in ended:  # a node that ended by itself took the launch down: say which and how
        others = ", ".join(n for n, _ in processes if n != node_name)
        _say(out, f"{node_name} ended on its own after {time.monotonic() - start:.1f} s ({_describe(code)}); "
                  f"stopped {others or 'nothing else'}")
    code = _exit_code(signals.received, [p.returncode for _, p in essential])
    if code == 0 and not stepped.is_set() and any(node.simulator for node in nodes):
        _say(out, f"the simulation never stepped in {time.monotonic() - start:.0f} s (a first start compiles the "
                  "kernels for ~30-100 s: run `cond-ros compile` first, or give a longer --duration)")
        return 1
    return code
