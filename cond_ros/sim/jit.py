"""The one place that decides how numba compiles our kernels.

Every kernel in ``cond_ros.sim`` is decorated with :func:`kernel` (serial) or
:func:`parallel_kernel` (``prange`` loops). Flags live here only, so that a test
can check no module hard-codes its own (stumpy's ``check_fastmath`` idea).

- ``cache=True``: the second start of a process loads machine code from
  ``__pycache__`` instead of recompiling (seconds instead of a minute).
- ``nogil=True``: rclpy callbacks keep running while a step is in a kernel.
- ``fastmath=False``: reassociation would make results depend on the
  compiler's choices; lockstep replays need bit-identical outputs.

Kernels must not read mutable module globals: the cache freezes them.

``OMP_WAIT_POLICY=PASSIVE`` (unless the user set it): numba's OpenMP layer
otherwise leaves its workers spinning after every parallel region, and on a
loaded 2-core machine the serial V-FPI loop that follows ran 100x slower
(480 ms instead of 3 ms for 30 iterations on 972 DOF). It must be set before
libgomp starts, hence here, before numba is imported.
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402
import numpy as np

FLOAT = np.float64
INDEX = np.int64

_FLAGS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")


def kernel(fn=None, **overrides):
    """Compile ``fn`` as a serial numba kernel with the project's flags."""
    flags = dict(_FLAGS, **overrides)
    if fn is None:
        return lambda f: numba.njit(**flags)(f)
    return numba.njit(**flags)(fn)


def parallel_kernel(fn=None, **overrides):
    """Compile ``fn`` with ``parallel=True``; its ``prange`` loops must write disjoint data."""
    flags = dict(_FLAGS, parallel=True, **overrides)
    if fn is None:
        return lambda f: numba.njit(**flags)(f)
    return numba.njit(**flags)(fn)
