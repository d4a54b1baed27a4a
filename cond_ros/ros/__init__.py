"""The ROS 2 layer: the ``cond_sim`` node, its demo controller, the pip launcher and the ROS benchmark.

Only ``node``, ``messages``, ``sim_services``, ``demo_controller`` and ``bench`` import rclpy. The rest
is plain Python, usable and tested without ROS: ``config`` (parameters), ``sim_setup`` (the scene they
describe), ``commands`` (validation and the held command), ``joint_names`` (panda_/fer_ prefixes),
``stepping`` and ``pacing`` (when to step), ``outputs``, ``contact_wrenches`` and ``publication`` (what to
publish on which topic, shared with the bag tools of ``cond_ros.bags``),
``throttle`` (warnings), ``launch_config`` and ``launcher`` (``cond-ros launch``), ``lifetime`` (a launched
node never outlives its launcher).
"""
