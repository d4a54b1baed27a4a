"""Co-simulation without ROS: everything the ``cond_sim`` node decides that is not a message or a callback.

Plain Python on :mod:`cond_ros.sim`, tested without rclpy and shared with the bag tools of
:mod:`cond_ros.bags`: ``config`` (the node's parameters and their checks), ``sim_setup`` (the scene they
describe), ``commands`` (validation and the held command), ``joint_names`` (panda_/fer_ prefixes),
``stepping`` and ``pacing`` (when to step: lockstep, real-time pacing), ``outputs`` and ``contact_wrenches``
(the values published), ``publication`` (which value goes on which topic), ``throttle`` (warnings).
Nothing here imports :mod:`cond_ros.ros`.
"""
