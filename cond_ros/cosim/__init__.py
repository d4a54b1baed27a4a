"""Co-simulation without ROS: everything the ``cond_sim`` node decides that is not a message or a callback.

Plain Python on :mod:`cond_ros.sim`, tested without rclpy and shared with the bag tools of
:mod:`cond_ros.bags`: ``config`` (the node's parameters and their checks), ``sim_setup`` (the scene they
describe), ``commands`` (validation and the held command), ``joint_names`` (panda_/fer_ prefixes),
``joint_tracking`` and ``shadow`` (following a measured motion: replay's joint-state drive, the node's
shadow mode), ``stepping`` and ``pacing`` (when to step: lockstep, real-time pacing), ``outputs`` and
``contact_wrenches`` (the values published), ``interfaces`` (the topic conventions of ros2_control, Isaac,
ATI and Franka),
``publication`` (which value goes on which topic), ``simulation_control`` (the simulation_interfaces
standard's states and result codes), ``throttle`` (warnings).
Nothing here imports :mod:`cond_ros.ros`.
"""
from .commands import (FORWARD_TOPICS, LIMIT_TOLERANCE, TRAJECTORY_TOPIC, CommandError,
                       CommandState, DriveMode, JointTargets, forward_targets, joint_state_targets, joint_trajectory,
                       script_commands)
from .config import (NS_PER_S, PARAMETERS, SPECS, ConfigError, SimConfig, check_parameter,
                     undeclared_parameter_problems, validate_config)
from . import simulation_control
from .interfaces import (FT_PRESETS, JOINT_COMMAND_TOPIC, JOINT_INTERFACES, JOINT_STATES_TOPIC, JointInterface,
                         joint_interface, stiffness_link)
from .joint_names import JointNameMap, UnknownJointError
from .joint_tracking import InverseDynamics, clip_to_limits, sample_motion, tracking_targets
from .outputs import (WORLD_FRAME, ColliderShape, cable_polyline, collider_shapes, contact_force_segments, link_frames,
                      robot_kinematics, robot_link_poses, sensor_frame_id, soft_body_surface)
from .pacing import Pacer
from .publication import CLOCK_TOPIC, StepOutputs, ft_topics, resolve_topic, topic_token
from .shadow import ShadowDecision, ShadowMode
from .sim_setup import (build_scene, command_mapping, load_scene_parameter, restart_scene, scene_parameter_file,
                        warm_up)
from .stepping import LockstepGate, SimClock, StepRequests
from .throttle import WarningThrottle

__all__ = [
    # commands in
    "CommandError", "CommandState", "DriveMode", "JointTargets", "LIMIT_TOLERANCE", "JOINT_COMMAND_TOPIC",
    "TRAJECTORY_TOPIC", "FORWARD_TOPICS", "forward_targets", "joint_state_targets", "joint_trajectory",
    "script_commands", "JointNameMap", "UnknownJointError",
    # following a measured motion (replay --drive joint_states, shadow mode)
    "InverseDynamics", "clip_to_limits", "sample_motion", "tracking_targets", "ShadowDecision", "ShadowMode",
    # parameters and the scene they describe
    "ConfigError", "SimConfig", "PARAMETERS", "SPECS", "NS_PER_S", "check_parameter", "validate_config",
    "undeclared_parameter_problems",
    "build_scene", "command_mapping", "load_scene_parameter", "scene_parameter_file", "warm_up",
    "restart_scene",
    # the topic conventions of users' stacks
    "JOINT_INTERFACES", "JointInterface", "joint_interface", "FT_PRESETS", "stiffness_link", "sensor_frame_id",
    "simulation_control",
    # when to step
    "Pacer", "LockstepGate", "SimClock", "StepRequests",
    # values out
    "StepOutputs", "CLOCK_TOPIC", "JOINT_STATES_TOPIC", "WORLD_FRAME", "ft_topics", "resolve_topic", "topic_token",
    "cable_polyline", "ColliderShape", "collider_shapes", "contact_force_segments", "link_frames", "robot_kinematics",
    "robot_link_poses", "soft_body_surface", "WarningThrottle",
]
