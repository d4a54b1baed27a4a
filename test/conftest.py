"""Fixtures shared by the node's tests (test/ros) and its ROS-free logic's (test/cosim): a small scene.

The ROS processes' isolation (LOCALHOST discovery, a ROS_DOMAIN_ID per test, process groups, Fast DDS
shared-memory clean-up) is ros_harness.py's, in test/ros.
"""
import pytest

from cond_ros.scenes.registry import load_named_scene

SMALL_SCENE = "panda_cable_small"  # panda_cable with a 20-segment cable: ~11 ms per step here


@pytest.fixture(scope="module")
def small_scene():
    """The small cable scene (Panda, 20-segment cable, post, wrist F/T sensor, winding script)."""
    return load_named_scene(SMALL_SCENE)
