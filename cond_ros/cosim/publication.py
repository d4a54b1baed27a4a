"""Which values the node publishes on which topic after each step, as plain data (no ROS import).

The node (``node``) turns these into ROS messages and publishers; the bag tools (``cond_ros.bags``)
turn the same values into rosbag2 messages, so a recorded or replayed bag carries exactly what the
node would have published. Topic names are the node's own: relative (``joint_states``), private
(``~/ft/wrist_ft``) or absolute (``/clock``); :func:`resolve_topic` gives the absolute name.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .contact_wrenches import BodyNames, pair_wrenches
from .outputs import WORLD_FRAME, JointStateLayout, RateDivider, sensor_frame_id

NODE_NAME = "cond_sim"
CLOCK_TOPIC = "/clock"
JOINT_STATES_TOPIC = "joint_states"
RATE_NAMES = ("joint_state", "ft", "contact_wrench", "marker", "tf")  # each has a ``<name>_rate`` parameter


def topic_token(name: str) -> str:
    """``name`` made valid as one token of a topic name."""
    token = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return token if token[:1].isalpha() else f"_{token}"


def resolve_topic(name: str, *, node: str = NODE_NAME, namespace: str = "/") -> str:
    """The absolute name of a topic of node ``node`` in ``namespace`` (``~/x``, ``x`` or ``/x``)."""
    base = "/" + namespace.strip("/") if namespace.strip("/") else ""
    if name.startswith("~/"):
        return f"{base}/{node}/{name[2:]}"
    if name.startswith("/"):
        return name
    return f"{base}/{name}"


def ft_topics(sensor_name: str) -> tuple[str, str]:
    """(measured, ground truth) topics of the F/T sensor ``sensor_name``."""
    topic = f"~/ft/{topic_token(sensor_name)}"
    return topic, f"{topic}/ground_truth"


def contact_wrench_topic(pair: tuple[str, str]) -> str:
    """The topic of the contact wrench between two bodies (a before b by name)."""
    return f"~/contact_wrench/{topic_token(pair[0])}/{topic_token(pair[1])}"


@dataclasses.dataclass(frozen=True)
class WrenchOutput:
    """One WrenchStamped to publish: topic, (fx, fy, fz, tx, ty, tz) [N, N m] and its frame."""

    topic: str
    values: np.ndarray
    frame_id: str


class StepOutputs:
    """What is due on each topic at each step, for a scene and the node's rate parameters.

    Args:
        scene: the :class:`~cond_ros.scenes.scene.Scene` the node runs (its sensors and cables name topics).
        config: the node's :class:`~cond_ros.cosim.config.SimConfig` (the ``*_rate`` parameters).
    """

    def __init__(self, scene, config):
        model, dt = scene.simulator.model, scene.simulator.dt
        self.layout = JointStateLayout.from_model(model)
        self.bodies = BodyNames(model, scene.cables)
        self.rates = {name: RateDivider(getattr(config, f"{name}_rate"), dt) for name in RATE_NAMES}
        self.ft = [ft_topics(sensor.spec.name) + (sensor_frame_id(sensor.spec),) for sensor in scene.sensors]
        self.pair_topics: dict = {}  # (body a, body b) -> topic, from the pair's first contact on

    def joint_state(self, step: int, state):
        """(names, positions, velocities) when /joint_states is due at ``step``, else None."""
        if not self.rates["joint_state"].due(step):
            return None
        return (self.layout.names, *self.layout.values(state))

    def wrenches(self, step: int, readings, contacts) -> list:
        """The :class:`WrenchOutput` due at ``step``: F/T readings (the measured one only when the sensor
        sampled at this step) and, for every body pair ever in contact, its wrench (zeros once apart).

        ``readings`` (one :class:`~cond_ros.sim.sensors.FTReading` per sensor) is None before the first step.
        """
        out = []
        if readings is None:
            return out
        if self.rates["ft"].due(step):
            for (measured, truth, frame), reading in zip(self.ft, readings):
                if reading.updated:
                    out.append(WrenchOutput(measured, reading.wrench, frame))
                out.append(WrenchOutput(truth, reading.true_wrench, frame))
        if self.rates["contact_wrench"].due(step):
            wrenches = pair_wrenches(self.bodies, contacts)
            for pair in wrenches:
                if pair not in self.pair_topics:
                    self.pair_topics[pair] = contact_wrench_topic(pair)
            for pair, topic in self.pair_topics.items():
                values = wrenches.get(pair)
                out.append(WrenchOutput(topic, values if values is not None else np.zeros(6), WORLD_FRAME))
        return out
