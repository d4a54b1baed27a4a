"""ROS message <-> plain data. Nothing here decides anything: ``commands`` validates, ``outputs`` computes.

Times are integer nanoseconds of simulated time; wrenches are (fx, fy, fz, tx, ty, tz) arrays.
"""
from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, TransformStamped, WrenchStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ..cosim import NS_PER_S, WORLD_FRAME
from ..sim import matrix_to_quat

MARKER_TYPES = {"box": Marker.CUBE, "plane": Marker.CUBE, "sphere": Marker.SPHERE, "cylinder": Marker.CYLINDER,
                "capsule": Marker.CYLINDER}


def to_time(ns: int) -> Time:
    return Time(sec=int(ns // NS_PER_S), nanosec=int(ns % NS_PER_S))


def time_s(stamp) -> float:
    """A builtin_interfaces Time or Duration in seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def clock(ns: int) -> Clock:
    return Clock(clock=to_time(ns))


def joint_state(names, position, velocity, ns: int) -> JointState:
    msg = JointState(name=list(names), position=position.tolist(), velocity=velocity.tolist())
    msg.header.stamp = to_time(ns)
    return msg


def wrench(values: np.ndarray, frame_id: str, ns: int) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.stamp = to_time(ns)
    msg.header.frame_id = frame_id
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in values)
    return msg


def _set_rotation(quaternion_msg, matrix: np.ndarray) -> None:
    q = quaternion_msg
    q.w, q.x, q.y, q.z = matrix_to_quat(matrix)


def _set_pose(pose_msg, matrix: np.ndarray) -> None:
    """A geometry_msgs Pose from a 4x4 matrix."""
    pose_msg.position.x, pose_msg.position.y, pose_msg.position.z = (float(v) for v in matrix[:3, 3])
    _set_rotation(pose_msg.orientation, matrix)


def transforms(frames, ns: int) -> list:
    """geometry_msgs/TransformStamped of each (parent, child, 4x4) of ``outputs.link_frames``."""
    out = []
    for parent, child, matrix in frames:
        msg = TransformStamped()
        msg.header.stamp = to_time(ns)
        msg.header.frame_id, msg.child_frame_id = parent, child
        tr = msg.transform
        tr.translation.x, tr.translation.y, tr.translation.z = (float(v) for v in matrix[:3, 3])
        _set_rotation(tr.rotation, matrix)
        out.append(msg)
    return out


def _marker(ns_name: str, marker_id: int, kind: int, stamp: Time, color) -> Marker:
    msg = Marker(ns=ns_name, id=marker_id, type=kind, action=Marker.ADD)
    msg.header.stamp = stamp
    msg.header.frame_id = WORLD_FRAME
    msg.pose.orientation.w = 1.0
    msg.color = ColorRGBA(r=color[0], g=color[1], b=color[2], a=color[3])
    return msg


def _points(array) -> list:
    return [Point(x=x, y=y, z=z) for x, y, z in np.asarray(array, dtype=np.float64).reshape(-1, 3).tolist()]


def markers(cables, contact_points: np.ndarray, colliders, ns: int, surfaces=(), force_segments=None) -> MarkerArray:
    """Cables as line strips ((name, polyline, radius) each), contact points as spheres, colliders as
    shapes (``outputs.ColliderShape``), FEM bodies' surfaces as triangle lists ((name, corners) each, from
    ``outputs.soft_body_surface``) and contact forces as line segments (``outputs.contact_force_segments``)."""
    stamp = to_time(ns)
    out = MarkerArray()
    for i, (name, polyline, radius) in enumerate(cables):
        msg = _marker("cables", i, Marker.LINE_STRIP, stamp, (0.9, 0.5, 0.1, 1.0))
        msg.scale.x = 2.0 * radius
        msg.points = _points(polyline)
        msg.text = name
        out.markers.append(msg)
    msg = _marker("contacts", 0, Marker.SPHERE_LIST, stamp, (1.0, 0.1, 0.1, 1.0))
    msg.scale.x = msg.scale.y = msg.scale.z = 0.006
    msg.points = _points(contact_points)
    out.markers.append(msg)
    if force_segments is not None:
        msg = _marker("contact_forces", 0, Marker.LINE_LIST, stamp, (1.0, 0.85, 0.0, 1.0))
        msg.scale.x = 0.002  # line width [m]
        msg.points = _points(force_segments)
        out.markers.append(msg)
    for i, (name, corners) in enumerate(surfaces):
        msg = _marker("soft_bodies", i, Marker.TRIANGLE_LIST, stamp, (0.25, 0.55, 0.9, 0.9))
        msg.scale.x = msg.scale.y = msg.scale.z = 1.0  # a TRIANGLE_LIST's points are scaled by it
        msg.points = _points(corners)
        msg.text = name
        out.markers.append(msg)
    for i, shape in enumerate(colliders):
        msg = _marker("colliders", i, MARKER_TYPES[shape.kind], stamp, (0.6, 0.6, 0.65, 0.6))
        _set_pose(msg.pose, shape.pose)
        msg.scale.x, msg.scale.y, msg.scale.z = (float(v) for v in shape.size)
        out.markers.append(msg)
    return out


def diagnostics(name: str, level: str, message: str, values: dict, ns: int, more=()) -> DiagnosticArray:
    """One status, and the (name, level, message, values) of ``more``; ``level``: OK, WARN or ERROR."""
    statuses = [DiagnosticStatus(level=getattr(DiagnosticStatus, level), name=name, message=message,
                                 hardware_id="cond_sim",
                                 values=[KeyValue(key=k, value=f"{v:.6g}" if isinstance(v, float) else str(v))
                                         for k, v in values.items()])
                for name, level, message, values in [(name, level, message, values), *more]]
    msg = DiagnosticArray(status=statuses)
    msg.header.stamp = to_time(ns)
    return msg


def joint_state_fields(msg) -> tuple:
    """(names, positions, velocities, efforts) of a sensor_msgs/JointState."""
    return list(msg.name), list(msg.position), list(msg.velocity), list(msg.effort)


def trajectory_fields(msg) -> tuple:
    """(names, header stamp [s], [(time_from_start [s], positions, velocities)]) of a JointTrajectory."""
    points = [(time_s(p.time_from_start), list(p.positions), list(p.velocities)) for p in msg.points]
    return list(msg.joint_names), time_s(msg.header.stamp), points
