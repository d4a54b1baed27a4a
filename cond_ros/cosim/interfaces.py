"""The topic conventions that users' stacks already speak (no ROS import).

Joint interfaces (parameter ``interface``):

- ``native``: the node's own topics (``joint_states`` out; ``joint_command``, the trajectory topic and
  the forward_command_controller topics in).
- ``topic_based``: ros2_control's topic-based hardware plugin
  (``joint_state_topic_hardware_interface/JointStateTopicSystem``, formerly
  ``topic_based_ros2_control/TopicBasedSystem``). The plugin publishes sensor_msgs/JointState on
  ``/robot_joint_commands`` (QoS depth 1, reliable), naming its joints, mimic joints included, and filling
  the position, velocity and effort fields of the command interfaces it has. It reads
  ``/robot_joint_states`` with sensor-data QoS (best effort).
- ``isaac``: the same exchange on ``/isaac_joint_commands`` and ``/isaac_joint_states`` (MoveIt's Isaac
  Sim configs).

With ``topic_based`` or ``isaac``, the user's controller_manager owns ``/joint_states`` (its
joint_state_broadcaster) and the controllers' topics
(``/joint_trajectory_controller/joint_trajectory``, ...). The sim therefore publishes its joint states
only on the preset's topic and subscribes to nothing else. Otherwise a trajectory sent to the user's
controller would also drive the sim directly.

F/T outputs (parameter ``ft_outputs``; each entry is ``PRESET`` or ``PRESET=TOPIC``, for every sensor):

- ``native``: ``~/ft/<sensor>``, the measured reading in the sensor's ``frame`` with its SDF
  ``measure_direction``, and the noise-free one on ``.../ground_truth``.
- ``ati_netft``: the measured reading on ``/force_torque_sensor_broadcaster/wrench`` (where ros2_control's
  force_torque_sensor_broadcaster and the ATI Net F/T drivers publish), in the sensor's frame. It is
  always the load that the tool side applies on the sensor (``child_to_parent``), whatever the scene's
  ``measure_direction``.
- ``franka_fr3_base`` and ``franka_fr3_stiffness``: what franka_ros2's franka_robot_state_broadcaster
  publishes as ``external_wrench_in_base_frame`` (``O_F_ext_hat_K``) and
  ``external_wrench_in_stiffness_frame`` (``K_F_ext_hat_K``).
  - The value is the external wrench on the tool below the sensor, without the tool's weight or inertia
    (contacts and potentials only: the estimate of a robot whose load is configured).
  - Its sign is the wrench the robot exerts on its environment (positive when the tool pushes).
  - Its torque is taken about the stiffness frame K (``franka_stiffness_frame``).
  - It is expressed in the robot's root link (frame_id: that link, e.g. ``panda_link0``) or in K (frame_id:
    K's link).
  - It is noise-free.

A ``TOPIC`` may hold ``{sensor}``, the sensor's name as a topic token; with several sensors it must,
so that no two sensors share a topic.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

JOINT_STATES_TOPIC = "joint_states"  # the native topics, relative to the node's namespace
JOINT_COMMAND_TOPIC = "joint_command"  # sensor_msgs/JointState


@dataclasses.dataclass(frozen=True)
class JointInterface:
    """Where the node's joint states go and its JointState commands come from, and whether the node's own
    trajectory and forward-command topics exist."""

    name: str
    joint_states: str
    joint_commands: str
    native_commands: bool


JOINT_INTERFACES = {
    "native": JointInterface("native", JOINT_STATES_TOPIC, JOINT_COMMAND_TOPIC, True),
    "topic_based": JointInterface("topic_based", "/robot_joint_states", "/robot_joint_commands", False),
    "isaac": JointInterface("isaac", "/isaac_joint_states", "/isaac_joint_commands", False),
}

FT_PRESETS = {  # preset -> default topic
    "native": "~/ft/{sensor}",
    "ati_netft": "/force_torque_sensor_broadcaster/wrench",
    "franka_fr3_base": "/franka_robot_state_broadcaster/external_wrench_in_base_frame",
    "franka_fr3_stiffness": "/franka_robot_state_broadcaster/external_wrench_in_stiffness_frame",
}
# a topic name as rcl accepts it, plus the {sensor} placeholder: tokens of letters, digits and _, not starting
# with a digit, separated by single slashes; absolute, relative or private (~/)
_TOPIC = re.compile(r"^(~/|/)?(\{sensor\}|[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*\{sensor\}[A-Za-z0-9_]*)"
                    r"(/(\{sensor\}|[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*\{sensor\}[A-Za-z0-9_]*))*$")


def joint_interface(preset: str, joint_states_topic: str = "", joint_commands_topic: str = "") -> JointInterface:
    """The preset's interface with the topics that are given (non-empty) in place of its own."""
    base = JOINT_INTERFACES[preset]
    return dataclasses.replace(base, joint_states=joint_states_topic or base.joint_states,
                               joint_commands=joint_commands_topic or base.joint_commands)


def topic_problem(name: str, topic: str) -> str | None:
    """Why ``topic`` is not a valid topic name for parameter ``name`` (None if it is)."""
    if not _TOPIC.match(topic):
        return (f"{name}: {topic!r} is not a valid topic name (tokens of letters, digits and _, not starting with "
                f"a digit, separated by single /; absolute, relative or ~/)")
    return None


def parse_ft_output(entry: str) -> tuple[str, str]:
    """(preset, topic) of one ``ft_outputs`` entry ``PRESET`` or ``PRESET=TOPIC``; ValueError says what is wrong."""
    preset, _, topic = entry.partition("=")
    preset = preset.strip()
    if preset not in FT_PRESETS:
        raise ValueError(f"unknown F/T preset {preset!r} in {entry!r} (known: {', '.join(FT_PRESETS)})")
    if "=" in entry:
        topic = topic.strip()
        problem = topic_problem(f"the topic of {entry!r}", topic)
        if problem:
            raise ValueError(problem)
        if preset == "native":
            raise ValueError(f"{entry!r}: native F/T topics keep their names (~/ft/<sensor>); name a topic only "
                             f"for the other presets")
        return preset, topic
    return preset, FT_PRESETS[preset]


@dataclasses.dataclass(frozen=True)
class FTOutput:
    """One sensor published by one preset: the topic (placeholder filled in) and the frame_id."""

    preset: str
    sensor: int
    topic: str
    frame_id: str


def rigid_offset(articulation, ancestor: int, link: int) -> np.ndarray | None:
    """``ancestor`` <- ``link`` (4x4) when only fixed joints lie between them (``link`` below ``ancestor``),
    else None."""
    offset = np.eye(4)
    while link != ancestor:
        if link < 0 or articulation.joint_dof[link] >= 0:
            return None
        offset = articulation.joint_origin[link] @ offset
        link = int(articulation.link_parent[link])
    return offset


def stiffness_link(articulation, child: int, name: str) -> tuple[int, np.ndarray]:
    """(link index, child <- K) of the stiffness frame K: the link ``name``, or when empty the first link
    named ``*tcp`` fixed below the sensor's ``child`` link (Franka's default K is the hand's TCP), else
    ``child`` itself. Raises ValueError when the named link is unknown or moves against ``child``."""
    if not name:
        for link, link_name in enumerate(articulation.link_name):
            offset = rigid_offset(articulation, child, link)
            if link_name.endswith("tcp") and offset is not None:
                return link, offset
        return child, np.eye(4)
    if name not in articulation.link_name:
        raise ValueError(f"franka_stiffness_frame: robot {articulation.name!r} has no link {name!r}")
    link = articulation.link_index(name)
    offset = rigid_offset(articulation, child, link)
    if offset is None:
        raise ValueError(f"franka_stiffness_frame: {name!r} is not fixed below the F/T sensor's link "
                         f"{articulation.link_name[child]!r}; the external wrench is taken about a frame on the tool")
    return link, offset


def external_wrench_at(force_on_tool, torque_on_tool, point, k_position) -> tuple[np.ndarray, np.ndarray]:
    """The wrench the robot exerts on its environment, torque about ``k_position`` (world vectors), from the
    external wrench on the tool (torque about ``point``): the opposite wrench, its torque moved to K."""
    force = -np.asarray(force_on_tool, float)
    torque = -np.asarray(torque_on_tool, float)
    return force, torque + np.cross(np.asarray(point, float) - np.asarray(k_position, float), force)


def franka_wrenches(joint_wrench, base_pose: np.ndarray, child_to_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(O_F_ext_hat_K in the base frame, K_F_ext_hat_K in K), each (fx, fy, fz, tx, ty, tz), from a
    :class:`~cond_ros.sim.sensors.wrench.JointWrench` of the sensor's joint; ``base_pose``: world <- base."""
    k_pose = joint_wrench.child_pose @ child_to_k
    force, torque = external_wrench_at(joint_wrench.external_force, joint_wrench.external_torque,
                                       joint_wrench.point, k_pose[:3, 3])
    base, k = base_pose[:3, :3], k_pose[:3, :3]
    return (np.concatenate([base.T @ force, base.T @ torque]), np.concatenate([k.T @ force, k.T @ torque]))
