"""Fixtures of the ROS layer's tests: a small scene, and for the rclpy tests an isolated ROS session.

Every ROS process of these tests (the test process's own rclpy context included) runs with
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of its own (1..100), so no DDS traffic
leaves loopback and tests never see each other's nodes. Children run in their own process groups and
are killed on a hard timeout; the Fast DDS shared-memory files that killed processes leave in /dev/shm
are removed when the session ends.
"""
import pytest

from cond_ros.tools.scenes import load_named_scene

SMALL_SCENE = "panda_cable_small"  # panda_cable with a 20-segment cable: ~11 ms per step here


@pytest.fixture(scope="module")
def small_scene():
    """The small cable scene (Panda, 20-segment cable, post, wrist F/T sensor, winding script)."""
    return load_named_scene(SMALL_SCENE)
