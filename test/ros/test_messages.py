"""Message conversions: exact stamps, wrenches, joint states, TF transforms, markers, command fields."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from cond_ros.ros import messages  # noqa: E402
from cond_ros.cosim.outputs import ColliderShape  # noqa: E402


def test_stamps_are_exact():
    """Nanosecond stamps survive the conversion; seconds read back from a stamp."""
    stamp = messages.to_time(123_456_789_012)
    assert (stamp.sec, stamp.nanosec) == (123, 456_789_012)
    assert messages.clock(10_000_000).clock.nanosec == 10_000_000
    assert messages.time_s(stamp) == pytest.approx(123.456789012)


def test_wrench_and_joint_state():
    """Values land in the right fields, with stamp and frame."""
    msg = messages.wrench(np.arange(6.0), "ft_sensor_link", 5)
    assert msg.header.frame_id == "ft_sensor_link" and msg.header.stamp.nanosec == 5
    assert (msg.wrench.force.z, msg.wrench.torque.x) == (2.0, 3.0)
    state = messages.joint_state(["a", "b"], np.array([1.0, 2.0]), np.array([0.0, -1.0]), 7)
    assert list(state.name) == ["a", "b"] and list(state.velocity) == [0.0, -1.0]
    assert messages.joint_state_fields(state)[:2] == (["a", "b"], [1.0, 2.0])


def test_transforms_and_markers():
    """A 90 degree turn about z becomes the quaternion (0, 0, sin 45, cos 45); markers get their shapes."""
    pose = np.eye(4)
    pose[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    pose[:3, 3] = [1, 2, 3]
    (tf,) = messages.transforms([("world", "panda_link0", pose)], 0)
    assert (tf.header.frame_id, tf.child_frame_id) == ("world", "panda_link0")
    assert tf.transform.rotation.z == pytest.approx(np.sqrt(0.5)) and tf.transform.translation.y == 2.0
    array = messages.markers([("cable0", np.zeros((3, 3)), 0.002)], np.ones((2, 3)),
                             [ColliderShape("cylinder", pose, np.array([0.04, 0.04, 0.3]))], 0)
    cable, contacts, post = array.markers
    assert len(cable.points) == 3 and cable.scale.x == 0.004
    assert len(contacts.points) == 2 and post.scale.z == 0.3 and post.pose.position.x == 1.0
    corners = np.arange(18.0).reshape(6, 3)  # two triangles
    segments = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.05]])
    array = messages.markers([], np.zeros((0, 3)), [], 0, [("soft_body0", corners)], segments)
    contacts, forces, surface = array.markers
    assert (forces.ns, forces.type, len(forces.points), forces.points[1].z) == ("contact_forces", forces.LINE_LIST,
                                                                               2, 0.05)
    assert (surface.ns, surface.type, surface.text, len(surface.points)) == ("soft_bodies", surface.TRIANGLE_LIST,
                                                                            "soft_body0", 6)
    assert surface.points[4].y == 13.0 and surface.scale.x == 1.0 and surface.header.frame_id == "world"


def test_trajectory_fields():
    """A JointTrajectory becomes names, stamp and (time, positions, velocities) per point."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    point = JointTrajectoryPoint(positions=[0.1], velocities=[])
    point.time_from_start.sec, point.time_from_start.nanosec = 1, 500_000_000
    names, stamp, points = messages.trajectory_fields(JointTrajectory(joint_names=["j"], points=[point]))
    assert names == ["j"] and stamp == 0.0 and points == [(1.5, [0.1], [])]
