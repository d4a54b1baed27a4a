"""``cond-ros launch NAME``: start a launch's nodes as child processes, without launch_ros (the pip path).

Each node of :data:`~cond_ros.ros.launch_config.LAUNCHES` runs as ``python -m MODULE --ros-args -r
__node:=NAME -p PARAM:=VALUE ...``, with its output prefixed by its name. The launcher stops them all when
one of them exits, on Ctrl-C, or after ``duration`` seconds: SIGINT first, SIGKILL to what is left after a
grace period. The nodes stay in the launcher's process group, so killing that group stops everything.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from .launch_config import LAUNCHES, parameter_values

GRACE_S = 5.0  # [s] a node gets after SIGINT before it is killed


def _ros_value(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def node_command(node, arguments: dict) -> list:
    """The command line of one node of a launch, with its parameters from the launch arguments."""
    command = [sys.executable, "-m", node.module, "--ros-args", "-r", f"__node:={node.name}"]
    for name, value in parameter_values(node, arguments).items():
        command += ["-p", f"{name}:={_ros_value(value)}"]
    return command


def _forward(name: str, stream, out) -> None:
    for line in iter(stream.readline, b""):
        out.write(f"[{name}] {line.decode(errors='replace')}")
        out.flush()


def _stop(processes) -> None:
    for proc in processes:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + GRACE_S
    for proc in processes:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_launch(name: str, overrides: dict, *, duration: float | None = None, out=sys.stdout) -> int:
    """Run launch ``name`` with its arguments' defaults replaced by ``overrides``; the first non-zero exit
    code of a node (0 when stopped by Ctrl-C or ``duration``). ValueError for a bad argument."""
    spec = LAUNCHES[name]
    unknown = sorted(set(overrides) - set(spec.defaults()))
    if unknown:
        raise ValueError(f"unknown launch arguments {unknown}; {name} takes {sorted(spec.defaults())}")
    arguments = dict(spec.defaults(), **overrides)
    commands = [(node.name, node_command(node, arguments)) for node in spec.nodes]  # ValueError before starting
    env = dict(os.environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # a simulation stays on this machine unless told
    processes = []
    try:
        for node_name, command in commands:
            proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            processes.append(proc)
            threading.Thread(target=_forward, args=(node_name, proc.stdout, out), daemon=True).start()
        end = None if duration is None else time.monotonic() + duration
        while all(p.poll() is None for p in processes) and (end is None or time.monotonic() < end):
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        _stop(processes)
    codes = [p.returncode for p in processes]
    return next((c for c in codes if c not in (0, -signal.SIGINT, None)), 0)
