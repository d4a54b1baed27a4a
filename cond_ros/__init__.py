"""cond_ros: COND contact simulation (numba) with a ROS 2 co-simulation node.

``cond_ros.sim`` is the physics core and never imports ROS; ``cond_ros.ros``
is the only place that imports rclpy.
"""
import os

# One BLAS thread unless the user asks for more, set before anything loads numpy's OpenBLAS. Its workers
# spin after every call (the FEM coarse space's SVD, numba's LAPACK calls), and on 2 cores they took the
# second core from our own parallel kernels: soft_ball ran at 0.51x real time with them, 0.63x without
# (2026-11-26). A script that imports numpy before cond_ros keeps its own setting.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
