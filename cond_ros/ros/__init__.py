"""The ROS 2 layer: the ``cond_sim`` node, its demo controller, the pip launcher and the ROS benchmark.

``node``, ``messages``, ``sim_services``, ``demo_controller``, ``bench`` and ``play`` (``cond-ros play``) import
rclpy and message types; ``launch_config`` and ``launcher`` are ``cond-ros launch``, and ``lifetime`` makes sure
a launched node never outlives its launcher (and that a killed one's shared memory goes); ``interface_build`` is
``cond-ros build-interfaces``; ``soak`` is ``cond-ros soak`` and its flood controller. What the
node decides without ROS (parameters, commands, stepping, outputs) is in :mod:`cond_ros.cosim`.

Public names are loaded on first use, so that listing them (``cond-ros launch --help``) imports no rclpy.
"""
from ..exports import lazy_exports

_EXPORTS = {
    "SimNode": "node",
    "bench_ros_panda_cable": "bench",
    "LAUNCHES": "launch_config",
    "run_launch": "launcher",
    "play_bag": "play",
    "plan_playback": "play",
    "SoakOptions": "soak", "run_soak": "soak", "recovery": "soak", "keep_discovery_local": "lifetime",
    "INTERFACE_CACHE": "interface_build", "InterfaceBuildError": "interface_build",
    "build_interface_wheel": "interface_build", "install_interface_wheel": "interface_build",
}
__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
