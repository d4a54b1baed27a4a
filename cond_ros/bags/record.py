"""``cond-ros record``: run a scene in-process with the demo controller and write the node's topics to a bag.

For the pip install, where ``ros2 bag`` is missing. The loop is the node's in lockstep with
``cond_demo_controller``: the node publishes, the controller answers each /joint_states with the scene
script's targets for its stamp on /joint_command, and the next step runs on them. The bag holds what
both published: /clock, /joint_states, /cond_sim/ft/<sensor> (and /ground_truth), the contact wrenches
of every body pair from its first contact on, and /joint_command (so ``replay`` can drive a sim from it).
Log times are the simulated time, as ``record_bag`` of the node writes them.
"""
from __future__ import annotations

import dataclasses
import math
import time

from ..cosim import JOINT_COMMAND_TOPIC, JOINT_STATES_TOPIC, SimConfig, resolve_topic, script_commands
from ..sim import ModelError, SimulationError
from . import messages
from .io import BagError, BagWriter, progress_bar
from .offline_node import OfflineNode


@dataclasses.dataclass(frozen=True)
class RecordSummary:
    """What ``record`` wrote: the bag, steps, simulated seconds, messages per topic, wall time [s], commands
    rejected, the steps asked for, and whether a stop request ended it early."""

    out: str
    steps: int
    simulated_s: float
    counts: dict
    wall_s: float
    rejected: int
    steps_asked: int
    stopped: bool = False


def write_all(writer: BagWriter, published) -> None:
    """Write (topic, message) pairs stamped by their headers (a Clock by its value) at that log time."""
    for topic, msg in published:
        stamp = msg.clock if hasattr(msg, "clock") else msg.header.stamp
        writer.write(topic, messages.stamp_ns(stamp), msg)


def check_duration(duration_s: float | None) -> None:
    """A ``--duration`` is None (the whole scene or bag) or a finite number of seconds > 0."""
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise ValueError(f"duration: must be > 0 s, got {duration_s!r}")


def step_and_write(node: OfflineNode, writer: BagWriter, source, topics: str | None = None) -> list:
    """One step of ``node`` with its messages written; a failed simulation is a :class:`BagError` naming
    ``source`` (and ``topics``), and the writer, left by it, removes the partial bag."""
    try:
        published = node.step()
    except (SimulationError, ModelError) as exc:
        raise BagError(source, f"the simulation failed at t = {node.sim.state.time:.6f} s: {exc}; no bag "
                               "written", topics) from None
    write_all(writer, published)
    return published


def demo_commands(script, model, stamp_ns: int) -> list:
    """The JointState commands ``cond_demo_controller`` sends in answer to /joint_states stamped ``stamp_ns``."""
    t = stamp_ns // messages.NS_PER_S + (stamp_ns % messages.NS_PER_S) * 1e-9  # as messages.time_s reads it
    out = []
    for names, position, velocity, effort in script_commands(script, model, t):
        if position is not None:
            out.append(messages.joint_state(names, position, velocity, stamp_ns))
        else:
            out.append(messages.joint_state(names, None, None, stamp_ns, effort=effort))
    return out


def drive_script(node: OfflineNode, steps: int, sink, *, progress: bool = True, stop=lambda: False,
                 desc: str = "record", source=None) -> int:
    """Step ``node`` ``steps`` times from the start as ``cond_demo_controller`` drives it with the scene's script
    (in lockstep: each /joint_states answered before the next step), writing what both publish to ``sink``
    (``write(topic, log_ns, message)``); ``stop()`` true between two steps ends it. Returns the steps made.

    A failed step is a BagError naming ``source`` (default: the scene)."""
    script, model = node.scene.script, node.sim.model
    command_topic, states_topic = resolve_topic(JOINT_COMMAND_TOPIC), resolve_topic(JOINT_STATES_TOPIC)
    done = 0
    published = node.start()
    write_all(sink, published)
    for _ in progress_bar(range(steps), progress=progress, desc=desc, unit="step"):
        if stop():
            break
        if script is not None and any(topic == states_topic for topic, _ in published):
            for command in demo_commands(script, model, node.stamp_ns):
                sink.write(command_topic, node.stamp_ns, command)
                node.command(JOINT_COMMAND_TOPIC, command)
        published = step_and_write(node, sink, node.config.scene if source is None else source)
        done += 1
    return done


def record_scene(config: SimConfig, out, *, duration_s: float | None = None, storage: str = "mcap",
                 progress: bool = True, stop=lambda: False) -> RecordSummary:
    """Run ``config.scene`` for ``duration_s`` simulated seconds (default: the scene's duration) and write
    the bag ``out``; ``stop()`` true between two steps (Ctrl-C, SIGTERM in the CLI) ends it early with a
    complete bag of the steps so far.

    Raises ConfigError for a bad scene or parameter, BagError when the bag cannot be written or the
    simulation fails (no bag is left at ``out`` then).
    """
    check_duration(duration_s)
    writer = BagWriter(out, storage=storage)  # checks the path before the scene is built
    node = OfflineNode(config)
    steps = int(round((node.scene.duration if duration_s is None else duration_s) / node.sim.dt))
    start = time.perf_counter()
    with writer:
        done = drive_script(node, steps, writer, progress=progress, stop=stop, source=out)
    return RecordSummary(writer.path, done, done * node.sim.dt, dict(writer.counts), time.perf_counter() - start,
                         len(node.rejected), steps, done < steps)
