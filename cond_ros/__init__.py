"""cond_ros: COND contact simulation (numba) with a ROS 2 co-simulation node.

``cond_ros.sim`` is the physics core and never imports ROS; ``cond_ros.ros``
is the only place that imports rclpy.
"""
__version__ = "0.1.0"
