"""Checks the commands share, each saying what is wrong in one line on stderr."""
from __future__ import annotations

import sys


def rclpy_missing(command: str) -> bool:
    """True, and the one-line message naming the extra, when rclpy cannot be imported."""
    import importlib.util
    if importlib.util.find_spec("rclpy") is not None:
        return False
    print(f"cond-ros {command}: rclpy is not installed; pip install -e '.[ros]' (or source a ROS 2 distribution)",
          file=sys.stderr)
    return True
