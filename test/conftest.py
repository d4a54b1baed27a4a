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


@pytest.fixture
def cpu_hog():
    """Every core busy with a spinning process (their own process group, ended with the test): what a
    determinism check runs beside, since thread timing must never reach the results."""
    import os
    import signal
    import subprocess
    import sys
    hogs = subprocess.Popen([sys.executable, "-c", "import os, sys\nfor _ in range(int(sys.argv[1]) - 1):\n"
                             "    if os.fork() == 0: break\nwhile True: pass", str(os.cpu_count() or 2)],
                            start_new_session=True)
    try:
        yield
    finally:
        os.killpg(hogs.pid, signal.SIGKILL)
        hogs.wait()
