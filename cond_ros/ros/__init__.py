"""The ROS 2 layer: the ``cond_sim`` node, its demo controller, the pip launcher and the ROS benchmark.

``node``, ``messages``, ``sim_services``, ``demo_controller`` and ``bench`` import rclpy and message types;
``launch_config`` and ``launcher`` are ``cond-ros launch``, and ``lifetime`` makes sure a launched node never
outlives its launcher. What the node decides without ROS (parameters, commands, stepping, outputs) is in
:mod:`cond_ros.cosim`.
"""
