"""A ROS 2 node's process, start to exit: what ``cond_sim`` and the demo controller share.

rclpy is set up with the discovery kept on this machine unless set, the Fast DDS segments of killed processes are
removed, a bad parameter ends the process with code 2 and one line, the node spins on a SingleThreadedExecutor,
and a launched process also ends when its launcher does.
"""
from __future__ import annotations

import gc
import os
import sys

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation

from ..cosim import ConfigError
from .lifetime import (clean_stale_shared_memory, dump_stacks_on_request, ignore_stop_signals, is_stop,
                       keep_discovery_local, note_interrupts, watch_parent)

RCLError = rclpy_implementation.RCLError
SECURITY_HINT = ("; ROS_SECURITY_ENABLE is true, and the Fast DDS of the PyPI wheels has no security plugins: "
                 "SROS2 needs a ROS 2 distribution's build (README, \"Who may command the sim\")")


def _rcl_reason(exc: Exception) -> str:
    """rcl's message without its source locations: ``Couldn't parse parameter override rule: '-p x:=[' ...``."""
    text = str(exc).splitlines()[0]
    text = text.removeprefix("failed to initialize rcl: ")
    return text.split(", at /")[0] + (" (quote a value that holds {, }, [, ], : or ',' as YAML: "
                                      "-p \"name:=['a=~/b/{c}']\")" if "parameter override" in text else "")


def run_node(make_node, name: str, args=None, spin=None) -> int:
    """Init rclpy, build a node (a ConfigError is printed and gives exit code 2), spin it on a
    SingleThreadedExecutor (``spin(node, executor)``, else ``executor.spin()``) until shutdown, destroy it.
    Started by ``cond-ros launch``, the process also ends when the launcher does
    (:func:`~cond_ros.ros.lifetime.watch_parent`)."""
    watch_parent(name)  # before rclpy.init: building the node can take a minute of numba compilation
    dump_stacks_on_request()
    note_interrupts()  # before rclpy.init, whose SIGINT handler chains to this one
    node = None
    keep_discovery_local()
    stale = clean_stale_shared_memory()
    if stale:
        print(f"{name}: removed {len(stale)} Fast DDS shared-memory files that killed processes left in /dev/shm",
              file=sys.stderr)
    try:
        context = rclpy.init(args=args)
    except RCLError as exc:  # a --ros-args rule rcl cannot parse: a parameter's YAML value, a remapping
        print(f"{name}: the command line's ROS arguments: {_rcl_reason(exc)}", file=sys.stderr)
        return 2
    try:
        with context:
            try:
                node = make_node()
            except ConfigError as exc:
                print(f"{name}: {exc}", file=sys.stderr)
                return 2
            except RCLError as exc:  # the middleware refused the node: a keystore, a domain, an rmw
                print(f"{name}: cannot create the node: {str(exc).splitlines()[0]}"
                      + (SECURITY_HINT if os.environ.get("ROS_SECURITY_ENABLE") == "true" else ""), file=sys.stderr)
                return 2
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            try:
                if spin is not None:
                    spin(node, executor)
                else:
                    try:
                        executor.spin()
                    except Exception as exc:  # a timer that publishes after a signal shut the context down
                        if not is_stop(exc, node.context):
                            raise
            finally:
                ignore_stop_signals()
                executor.shutdown()
                # rclpy destroys its nodes on shutdown only when the context is still up, which a signal's
                # shutdown is not; left to the garbage collector, the DDS participant would go with the exit
                node.destroy_node()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        ignore_stop_signals()  # rclpy's shutdown put Python's own handlers back
        if node is None:
            gc.collect()  # a node interrupted while being built: its participant goes now, not with the exit
        # the exit's collection of numba's objects took 0.7-2 s on 2 loaded cores (a launcher waits 1.5 s);
        # nothing in them needs finalizing
        gc.freeze()
    return 0
