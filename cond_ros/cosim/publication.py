"""Which values the node publishes on which topic after each step, as plain data (no ROS import).

The node (``node``) turns these into ROS messages and publishers; the bag tools (``cond_ros.bags``)
turn the same values into rosbag2 messages, so a recorded or replayed bag carries exactly what the
node would have published. Topic names are the node's own: relative (``joint_states``), private
(``~/ft/wrist_ft``) or absolute (``/clock``); :func:`resolve_topic` gives the absolute name.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .config import ConfigError
from .contact_wrenches import BodyNames, pair_wrenches
from .interfaces import FTOutput, franka_wrenches, joint_interface, parse_ft_output, stiffness_link
from .outputs import WORLD_FRAME, JointStateLayout, RateDivider, sensor_frame_id

NODE_NAME = "cond_sim"
CLOCK_TOPIC = "/clock"
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
        self.interface = joint_interface(config.interface, config.joint_states_topic, config.joint_commands_topic)
        self.ft, self._franka = ft_outputs(scene, config)
        self.ft_truth = {out.sensor: (ft_topics(scene.sensors[out.sensor].spec.name)[1], out.frame_id)
                         for out in self.ft if out.preset == "native"}  # sensor -> (topic, frame_id)
        self._parent_to_child = [sensor.spec.measure_direction == "parent_to_child" for sensor in scene.sensors]
        self.pair_topics: dict = {}  # (body a, body b) -> topic, from the pair's first contact on

    @property
    def ft_topic_names(self) -> list:
        """Every F/T topic, measured and ground truth (they exist from the start)."""
        return [out.topic for out in self.ft] + [topic for topic, _ in self.ft_truth.values()]

    def joint_state(self, step: int, state):
        """(names, positions, velocities) when /joint_states is due at ``step``, else None."""
        if not self.rates["joint_state"].due(step):
            return None
        return (self.layout.names, *self.layout.values(state))

    def wrenches(self, step: int, readings, contacts) -> list:
        """The :class:`WrenchOutput` due at ``step``: :meth:`ft_wrenches`, then :meth:`contact_wrenches`;
        none before the first step (``readings`` None)."""
        if readings is None:
            return []
        return self.ft_wrenches(step, readings) + self.contact_wrenches(step, contacts)

    def ft_wrenches(self, step: int, readings) -> list:
        """The F/T outputs due at ``step`` (a measured reading only when the sensor sampled at this step).

        ``readings``: per sensor, its (:class:`~cond_ros.sim.sensors.FTReading`,
        :class:`~cond_ros.sim.sensors.wrench.JointWrench`) of the step.
        """
        out = []
        if self.rates["ft"].due(step):
            franka = {}  # sensor -> (base, stiffness) wrenches, computed once for both Franka outputs
            for ft in self.ft:
                reading, joint_wrench = readings[ft.sensor]
                if ft.preset == "native" or ft.preset == "ati_netft":
                    if reading.updated:
                        sign = -1.0 if ft.preset == "ati_netft" and self._parent_to_child[ft.sensor] else 1.0
                        out.append(WrenchOutput(ft.topic, sign * reading.wrench, ft.frame_id))
                else:
                    if ft.sensor not in franka:
                        franka[ft.sensor] = franka_wrenches(joint_wrench, *self._franka[ft.sensor])
                    base, stiffness = franka[ft.sensor]
                    out.append(WrenchOutput(ft.topic, base if ft.preset == "franka_fr3_base" else stiffness,
                                            ft.frame_id))
            for sensor, (topic, frame_id) in self.ft_truth.items():
                out.append(WrenchOutput(topic, readings[sensor][0].true_wrench, frame_id))
        return out

    def contact_wrenches(self, step: int, contacts) -> list:
        """For every body pair ever in contact, its wrench at ``step`` when due (zeros once apart)."""
        out = []
        if self.rates["contact_wrench"].due(step):
            wrenches = pair_wrenches(self.bodies, contacts)
            for pair in wrenches:
                if pair not in self.pair_topics:
                    self.pair_topics[pair] = contact_wrench_topic(pair)
            for pair, topic in self.pair_topics.items():
                values = wrenches.get(pair)
                out.append(WrenchOutput(topic, values if values is not None else np.zeros(6), WORLD_FRAME))
        return out


def ft_outputs(scene, config) -> tuple[list, dict]:
    """The :class:`FTOutput` of every ``ft_outputs`` entry and sensor, in entry order then sensor order, and
    {sensor: (world <- robot root link, sensor child link <- K)} of the sensors with a Franka output; raises
    ConfigError when two sensors would share a topic or K is not fixed below a sensor."""
    out, franka = [], {}
    sensors, model = scene.sensors, scene.simulator.model
    for entry in config.ft_outputs:
        preset, topic = parse_ft_output(entry)
        if len(sensors) > 1 and "{sensor}" not in topic:
            raise ConfigError(f"ft_outputs: {entry!r} would publish {len(sensors)} sensors on one topic; put "
                              f"{{sensor}} in its topic")
        for i, sensor in enumerate(sensors):
            name = topic.replace("{sensor}", topic_token(sensor.spec.name))
            frame = sensor_frame_id(sensor.spec)
            if preset.startswith("franka"):
                art = model.robots[sensor.robot]
                try:
                    k_link, child_to_k = stiffness_link(art, sensor.probe.child, config.franka_stiffness_frame)
                except ValueError as exc:
                    raise ConfigError(str(exc)) from None
                franka[i] = (art.base_transform @ art.joint_origin[0], child_to_k)
                frame = art.link_name[0] if preset == "franka_fr3_base" else art.link_name[k_link]
            out.append(FTOutput(preset, i, name, frame))
    return out, franka
