"""Real robots' F/T recordings, converted into what the sim's F/T topic means (``cond-ros compare --preset``).

Presets (default topic; message; frame and sign):

- ``ati-netft``: ``/force_torque_sensor_broadcaster/wrench``; WrenchStamped; the sensor's frame, the load
  the tool side applies on the sensor (``child_to_parent``).
- ``franka-fr3``: ``/franka_robot_state_broadcaster/external_wrench_in_stiffness_frame``; WrenchStamped;
  K (``K_F_ext_hat_K``), the wrench the robot exerts on its environment.
- ``franka-fr3-base``: ``/franka_robot_state_broadcaster/external_wrench_in_base_frame``; WrenchStamped; the
  robot's base axes, torque about K (``O_F_ext_hat_K``), as franka-fr3. The sensor's pose in the base moves
  with the arm, so the bag's joint states (``joint_states_topic``, interpolated to each stamp) give it.
- ``franka-ros1``: ``/franka_state_controller/F_ext`` (a ROS 1 ``.bag``); WrenchStamped; K (frame
  ``panda_K``), as franka-fr3.
- ``multipanda``: the bag's one topic whose type has ``k_f_ext_hat_k``; a state message's float64[6]; K,
  as franka-fr3.

A state message (``franka_msgs/msg/FrankaState``: ``K_F_ext_hat_K`` in ROS 1, ``k_f_ext_hat_k`` in ROS 2) also
serves as the topic of the Franka presets; its header stamps the array.

The sim reports its sensor's reading: the wrench transmitted between the sensor's parent and child links,
signed by the scene's ``measure_direction``, in the sensor's frame. Franka's estimate is the external wrench
about K, without the tool's own weight. So the Franka presets:
- flip the sign: the environment's wrench on the tool is what reaches the sensor (``child_to_parent``), and
  it is opposite to what the robot exerts;
- move the wrench from K into the sensor frame, with the tool's rigid transform from the scene's URDF
  (``stiffness_frame``, default the first ``*tcp`` link fixed below the sensor).
The sim's reading still holds the tool's weight, which Franka's does not; ``--tare`` removes it while the
tool's orientation stays near the tare's.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import messages
from .frames import WrenchTransform
from .io import BagError, BagReader
from .series import STAMP_SOURCES, WrenchSeries, series_from_arrays

STATE_FIELDS = ("k_f_ext_hat_k", "K_F_ext_hat_K")  # the K-frame external wrench in Franka state messages


@dataclasses.dataclass(frozen=True)
class RealPreset:
    name: str
    topic: str | None  # None: the bag's one topic with a STATE_FIELDS array
    frame: str  # "sensor": the sensor's own reading; "stiffness": Franka's wrench in K; "base": in the base axes

    @property
    def franka(self) -> bool:
        return self.frame != "sensor"


PRESETS = {
    "ati-netft": RealPreset("ati-netft", "/force_torque_sensor_broadcaster/wrench", "sensor"),
    "franka-fr3": RealPreset("franka-fr3", "/franka_robot_state_broadcaster/external_wrench_in_stiffness_frame",
                             "stiffness"),
    "franka-fr3-base": RealPreset("franka-fr3-base", "/franka_robot_state_broadcaster/external_wrench_in_base_frame",
                                  "base"),
    "franka-ros1": RealPreset("franka-ros1", "/franka_state_controller/F_ext", "stiffness"),
    "multipanda": RealPreset("multipanda", None, "stiffness"),
}


@dataclasses.dataclass(frozen=True)
class SensorConvention:
    """How the sim publishes its F/T sensor, from the scene: ``frame_id``, whether it reports
    ``child_to_parent``, and the pose of Franka's K in its torque reference (``k_in_sensor``), None without a
    K on the tool."""

    frame_id: str
    child_to_parent: bool
    k_in_sensor: WrenchTransform | None
    base_in_sensor: object = None  # q -> WrenchTransform of (the base's axes at K) in the sensor frame
    joint_names: tuple = ()  # the robot's DOF names, for the joint states that give q
    q0: np.ndarray | None = None  # the scene's initial q (DOFs that the joint states leave out)


def sensor_convention(scene, stiffness_frame: str = "", sensor: int = 0) -> SensorConvention:
    """The :class:`SensorConvention` of ``scene``'s F/T sensor ``sensor``; ValueError when the scene has no
    such sensor, or K is not rigidly fixed below it."""
    from ..cosim import sensor_frame_id, stiffness_link
    from ..sim import ArticulationKinematics
    if not 0 <= sensor < len(scene.sensors):
        raise ValueError(f"the scene has {len(scene.sensors)} F/T sensor(s); it needs one to compare against")
    ft = scene.sensors[sensor]
    spec, model = ft.spec, scene.simulator.model
    art = model.robots[ft.robot]
    child = ft.probe.child
    _, child_to_k = stiffness_link(art, child, stiffness_frame)
    lo, hi = model.robot_dof_offset[ft.robot], model.robot_dof_offset[ft.robot + 1]

    def poses(q):
        """(sensor frame, K) world poses at joint positions ``q``."""
        kin = ArticulationKinematics(art)
        kin.update(q)
        frame = kin.link_pose[art.link_index(spec.parent_link)] if spec.frame == "parent" else kin.link_pose[child]
        if spec.frame == "sensor":
            frame = frame @ np.asarray(spec.sensor_pose)
        return frame, kin.link_pose[child] @ child_to_k

    torque_point = np.zeros(3) if spec.torque_point is None else np.asarray(spec.torque_point, float)
    frame, k_pose = poses(model.robot_q[lo:hi])
    relative = np.linalg.solve(frame, k_pose)  # K in the sensor frame (fixed on the tool: any q gives it)
    base_rotation = art.base_transform[:3, :3] @ art.joint_origin[0][:3, :3]

    def base_in_sensor(q):
        frame, k_pose = poses(q)
        return WrenchTransform(frame[:3, :3].T @ base_rotation, np.linalg.solve(frame, k_pose)[:3, 3] - torque_point)

    return SensorConvention(sensor_frame_id(spec), spec.measure_direction == "child_to_parent",
                            WrenchTransform(relative[:3, :3], relative[:3, 3] - torque_point), base_in_sensor,
                            tuple(art.dof_name), model.robot_q[lo:hi].copy())


def joint_positions_at(bag, topic: str, convention: SensorConvention, stamps_ns, *, stamps: str = "header"):
    """The robot's q at each of ``stamps_ns``, interpolated linearly from the bag's JointState ``topic``
    (held before the first and after the last); DOFs it does not name keep the scene's start. BagError when the
    topic is missing or names none of the robot's joints."""
    from ..cosim import JointNameMap, UnknownJointError
    names = JointNameMap(convention.joint_names)
    times, rows = [], []
    with BagReader(bag) as reader:
        reader.require(topic, (messages.JOINT_STATE,))
        for _, log_ns, msg in reader.messages([topic]):
            row = np.full(len(convention.joint_names), np.nan)
            for name, value in zip(msg.name, msg.position):
                try:
                    dof = names.dof(name)
                except UnknownJointError:
                    continue  # a joint of another robot (the gripper of another stack, ...)
                if dof is not None:
                    row[dof] = value
            times.append(messages.stamp_ns(msg.header.stamp) if stamps == "header" else log_ns)
            rows.append(row)
    rows = np.array(rows)
    if not len(rows) or np.all(np.isnan(rows)):
        raise BagError(bag, f"names none of the robot's joints ({', '.join(convention.joint_names)}); the arm's "
                            "pose is needed to move a base-frame wrench into the sensor frame", topic)
    order = np.argsort(times, kind="stable")
    times, rows = np.asarray(times, float)[order], rows[order]
    q = np.tile(convention.q0, (len(stamps_ns), 1))
    for dof in range(rows.shape[1]):
        known = ~np.isnan(rows[:, dof])
        if known.any():
            q[:, dof] = np.interp(np.asarray(stamps_ns, float), times[known], rows[known, dof])
    return q


def _state_field(msg):
    for field in STATE_FIELDS:
        if hasattr(msg, field):
            return field
    return None


def preset_topic(reader: BagReader, preset: RealPreset, topic: str | None) -> str:
    """The topic to read: the one given, the preset's, or (multipanda) the only one with a K-frame array."""
    if topic:
        return topic
    if preset.topic is not None:
        return preset.topic
    candidates = [name for name, (msgtype, _) in reader.topics.items()
                  if any(f in reader.message_fields(msgtype) for f in STATE_FIELDS)]
    if len(candidates) != 1:
        listing = ", ".join(f"{t} ({m})" for t, (m, _) in sorted(reader.topics.items())) or "none"
        raise BagError(reader.path, f"{'no' if not candidates else 'more than one'} topic with a "
                                    f"{' or '.join(STATE_FIELDS)} array for --preset {preset.name}; give "
                                    f"--real-topic (topics: {listing})")
    return candidates[0]


def read_preset_series(bag, preset_name: str, convention: SensorConvention, *, topic: str | None = None,
                       stamps: str = "header", progress: bool = False,
                       joint_states_topic: str = "/joint_states") -> WrenchSeries:
    """The real bag's F/T topic as the sim would have published it (module docstring); BagError naming the
    bag and topic for a missing topic, a message that is neither a WrenchStamped nor a Franka state, or an
    unusable stamp."""
    if stamps not in STAMP_SOURCES:
        raise ValueError(f"stamps: expected one of {STAMP_SOURCES}, got {stamps!r}")
    preset = PRESETS[preset_name]
    bag = str(bag)
    times, rows, frames = [], [], set()
    with BagReader(bag) as reader:
        topic = preset_topic(reader, preset, topic)
        if topic not in reader.topics:
            reader.require(topic, (messages.WRENCH_STAMPED,))  # raises, listing the bag's topics
        for _, log_ns, msg in reader.messages([topic], progress=progress, desc=f"read {topic}"):
            field = _state_field(msg)
            if not hasattr(msg, "header"):
                raise BagError(bag, f"is {msg.__msgtype__}, which has no header to stamp it; expected a "
                                    "WrenchStamped or a Franka state message", topic)
            if field is not None:
                rows.append(np.asarray(getattr(msg, field), dtype=np.float64))
            elif hasattr(msg, "wrench"):
                rows.append(messages.wrench_values(msg))
            else:
                raise BagError(bag, f"is {msg.__msgtype__}: neither a WrenchStamped nor a state message with "
                                    f"{' or '.join(STATE_FIELDS)}", topic)
            if len(rows[-1]) != 6:
                raise BagError(bag, f"{field} has {len(rows[-1])} values, expected 6", topic)
            times.append(messages.stamp_ns(msg.header.stamp) if stamps == "header" else log_ns)
            frames.add(msg.header.frame_id)
    if not rows:
        raise BagError(bag, "has no messages", topic)
    if stamps == "header" and all(t == 0 for t in times):
        raise BagError(bag, "every header.stamp is zero (not set by the publisher); use --stamps log", topic)
    values = np.array(rows)
    if preset.franka:
        if convention.k_in_sensor is None:
            raise ValueError(f"--preset {preset.name} needs the sim's tool (--scene) to move K into its sensor frame")
        if preset.frame == "base":
            q = joint_positions_at(bag, joint_states_topic, convention, times, stamps=stamps)
            values = np.array([convention.base_in_sensor(qk).apply(-v)[0] for qk, v in zip(q, values)])
        else:
            values = convention.k_in_sensor.apply(-values)  # robot on the environment -> environment on the tool
        values = values if convention.child_to_parent else -values
        frame_id = convention.frame_id
    else:
        values = values if convention.child_to_parent else -values
        if len(frames) > 1:
            raise BagError(bag, f"frame_id changes between messages ({', '.join(sorted(map(repr, frames)))})", topic)
        frame_id = frames.pop()
    return series_from_arrays(bag, topic, times, values, frame_id)
