"""cond_ros: COND contact simulation (numba) with a ROS 2 co-simulation node.

``cond_ros.sim`` is the physics core and never imports ROS; ``cond_ros.ros``
is the only place that imports rclpy.
"""
import ctypes
import os

# One BLAS thread unless the user asks for more, set before anything loads numpy's OpenBLAS. Its workers
# spin after every call (the FEM coarse space's SVD, numba's LAPACK calls), and on 2 cores they took the
# second core from our own parallel kernels: soft_ball ran at 0.51x real time with them, 0.63x without
# (2026-11-26). A script that imports numpy before cond_ros keeps its own setting.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

#: glibc's malloc: arrays up to this size come from the heap, not from a fresh mmap of their own
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
#: and free memory up to this much stays with the process instead of going back to the kernel
TRIM_THRESHOLD = 256 * 1024 * 1024


def _keep_freed_memory() -> bool:
    """Keep the memory of freed arrays for the next step's (glibc only; True when set).

    A step allocates the same large arrays every time (A's entries, the coarse space, the FEM passes'
    buffers, some in numba's worker threads). glibc's defaults handed that memory back to the kernel after
    each step and faulted it in again page by page in the next one: soft_gripper took ~1 800 minor page faults a
    step, soft_mat ~290, soft_ball ~150, and without them they ran 4-6 % faster (2026-11-28, 49.2 -> 47.3,
    6.38 -> 5.97, 8.98 -> 8.57 ms a step, same peak RSS). A process whose environment sets glibc's own malloc
    settings (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``) keeps them.
    """
    if any(name in os.environ for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's C library
    except (OSError, AttributeError):  # not glibc (macOS has no mallopt)
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    return bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD)) and bool(mallopt(m_trim_threshold, TRIM_THRESHOLD))


FREED_MEMORY_KEPT = _keep_freed_memory()

__version__ = "0.1.0"
