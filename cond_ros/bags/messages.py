"""ROS messages as ``rosbags`` objects <-> plain data (the rosbag2 counterpart of ``cond_ros.ros.messages``).

Times are integer nanoseconds; wrenches are (fx, fy, fz, tx, ty, tz) arrays [N, N m].
"""
from __future__ import annotations

import numpy as np

from .io import typestore

NS_PER_S = 1_000_000_000
CLOCK = "rosgraph_msgs/msg/Clock"
JOINT_STATE = "sensor_msgs/msg/JointState"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
FLOAT64_MULTI_ARRAY = "std_msgs/msg/Float64MultiArray"


def _type(name: str):
    return typestore().types[name]


def time_msg(ns: int):
    return _type("builtin_interfaces/msg/Time")(sec=int(ns // NS_PER_S), nanosec=int(ns % NS_PER_S))


def duration_msg(ns: int):
    return _type("builtin_interfaces/msg/Duration")(sec=int(ns // NS_PER_S), nanosec=int(ns % NS_PER_S))


def stamp_ns(stamp) -> int:
    """A builtin_interfaces Time or Duration in nanoseconds."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def header(ns: int, frame_id: str = ""):
    return _type("std_msgs/msg/Header")(stamp=time_msg(ns), frame_id=frame_id)


def _floats(values) -> np.ndarray:
    return np.asarray(values if values is not None else [], dtype=np.float64).reshape(-1)


def clock(ns: int):
    return _type(CLOCK)(clock=time_msg(ns))


def joint_state(names, position, velocity, ns: int, effort=None):
    return _type(JOINT_STATE)(header=header(ns), name=list(names), position=_floats(position),
                              velocity=_floats(velocity), effort=_floats(effort))


def wrench(values, frame_id: str, ns: int):
    vector = _type("geometry_msgs/msg/Vector3")
    v = [float(x) for x in values]
    body = _type("geometry_msgs/msg/Wrench")(force=vector(x=v[0], y=v[1], z=v[2]),
                                             torque=vector(x=v[3], y=v[4], z=v[5]))
    return _type(WRENCH_STAMPED)(header=header(ns, frame_id), wrench=body)


def float64_multi_array(data):
    layout = _type("std_msgs/msg/MultiArrayLayout")(dim=[], data_offset=0)
    return _type(FLOAT64_MULTI_ARRAY)(layout=layout, data=_floats(data))


def joint_trajectory(names, points, ns: int = 0):
    """``points``: (time_from_start [ns], positions, velocities or None) each."""
    point = _type("trajectory_msgs/msg/JointTrajectoryPoint")
    empty = _floats(None)
    return _type(JOINT_TRAJECTORY)(header=header(ns), joint_names=list(names), points=[
        point(positions=_floats(p), velocities=_floats(v), accelerations=empty, effort=empty,
              time_from_start=duration_msg(t)) for t, p, v in points])


def wrench_values(msg) -> np.ndarray:
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z], dtype=np.float64)


def joint_state_fields(msg) -> tuple:
    """(names, positions, velocities, efforts) of a sensor_msgs/JointState (as ``cond_ros.ros.messages``)."""
    return list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort)


def trajectory_fields(msg) -> tuple:
    """(names, header stamp [s], [(time_from_start [s], positions, velocities)]) of a JointTrajectory."""
    points = [(stamp_ns(p.time_from_start) / NS_PER_S, list(p.positions), list(p.velocities)) for p in msg.points]
    return list(msg.joint_names), stamp_ns(msg.header.stamp) / NS_PER_S, points
