"""The one place that decides how numba compiles our kernels.

Every kernel in ``cond_ros.sim`` is decorated with :func:`kernel` (serial) or
:func:`parallel_kernel` (``prange`` loops). Flags live here only, so that a test
can check no module hard-codes its own (stumpy's ``check_fastmath`` idea).

- ``cache=True``: the second start of a process loads machine code from
  ``__pycache__`` instead of recompiling (seconds instead of a minute); where
  the package directory is read-only, from :func:`user_cache_dir` instead.
  Numba keys its cache by each source file's path and time stamp, so every
  install location compiles once (``cond-ros compile`` does it ahead of time).
- ``nogil=True``: rclpy callbacks keep running while a step is in a kernel.
- ``fastmath=False``: reassociation would make results depend on the
  compiler's choices; lockstep replays need bit-identical outputs.

Kernels must not read mutable module globals: the cache freezes them.

numba keys its cache by a function's module, qualified name and signature, not by its flags: a serial and a
parallel kernel made from the same Python function would load each other's machine code. A parallel
kernel is therefore compiled from a copy of the function named ``<name>_parallel`` (:func:`_cache_twin`).
Measured before that, once the parallel twin had been cached first, the "serial" CSR A x of a
200-row matrix cost 50 us a call instead of 4 (a thread hand-off per call), and panda_pick's V-FPI
89 us an iteration instead of 3.

Threading layer: numba's TBB where the ``tbb`` package is installed (a dependency on x86-64; numba picks it
first), else OpenMP. TBB's workers yield while they wait for the next parallel region, then sleep: soft_gripper
ran at 0.53x real time on TBB, 0.33x on OpenMP asleep and 0.47x on OpenMP spinning on an idle machine, and at
0.33x, 0.32x and 0.21x beside a process that kept one core busy (``benchmarks/thread_waiting.py``, 2026-11-28).

For OpenMP, ``OMP_WAIT_POLICY=PASSIVE`` (unless the user set it): numba's OpenMP layer
otherwise leaves its workers spinning after every parallel region, and on a
loaded 2-core machine the serial V-FPI loop that follows ran 100x slower
(480 ms instead of 3 ms for 30 iterations on 972 DOF). It must be set before
libgomp starts, hence here, before numba is imported. The price is a wake-up of
the sleeping worker at each parallel region (~50 us: soft_gripper's A x took
120 us on two threads and 140 on one, 70 with a spinning worker, 70-95 on TBB). A
``GOMP_SPINCOUNT`` in the environment overrides the policy (libgomp); spinning
costs a third where another process keeps a core busy (numbers above).
"""
import hashlib
import os
import types

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_cache_dir() -> str:
    """``$XDG_CACHE_HOME/cond_ros/numba`` (default ``~/.cache/cond_ros/numba``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cond_ros", "numba")


def cache_dir_for(package_dir: str) -> str | None:
    """Where the compiled kernels go: None (numba's ``__pycache__`` beside the sources) when the package
    directory is writable, else :func:`user_cache_dir`, so a read-only install (a system prefix, a wheel
    into a root-owned venv) still compiles only once. A ``NUMBA_CACHE_DIR`` the user set always wins."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    kernels = os.path.join(package_dir, "sim")
    in_tree = (kernels, os.path.join(kernels, "__pycache__"))
    return None if all(os.access(d, os.W_OK) for d in in_tree if os.path.exists(d)) else user_cache_dir()


# numba reads NUMBA_CACHE_DIR when it is imported, and each kernel's cache locator reads config.CACHE_DIR
# when the kernel is decorated: set both before any kernel module is imported (they all import this one).
CACHE_DIR = cache_dir_for(PACKAGE_DIR)
if CACHE_DIR is not None:
    os.environ["NUMBA_CACHE_DIR"] = CACHE_DIR

import numba  # noqa: E402
import numba.core.caching  # noqa: E402
import numpy as np  # noqa: E402

if CACHE_DIR is not None:
    numba.config.CACHE_DIR = CACHE_DIR  # numba may have been imported before us

KERNELS_DIR = os.path.join(PACKAGE_DIR, "sim")


def source_digest(directory: str = KERNELS_DIR) -> str:
    """sha256 over the relative names and the bytes of every ``.py`` file under ``directory``."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, directory).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def _whole_package_locator(base):
    """numba's cache locator ``base``, with a source stamp that covers every file of ``cond_ros.sim``.

    numba keys a cached kernel by its own source file only, yet compiles the kernels it calls from other files
    into it: an edit there left it stale. (Lowering ``linalg.PARALLEL_MIN_ROWS`` went unseen by
    ``fixed_point.py``'s cached V-FPI, which kept the old threshold until its cache was deleted.) With the
    whole package's digest in the stamp, any edit recompiles every kernel once.
    """
    class WholePackageLocator(base):
        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(KERNELS_DIR + os.sep):
                return None  # not ours: numba's own locators
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return super().get_source_stamp(), SOURCE_DIGEST

    WholePackageLocator.__name__ = WholePackageLocator.__qualname__ = f"WholePackage{base.__name__}"
    return WholePackageLocator


SOURCE_DIGEST = source_digest()
# numba's list of locators (CacheImpl in numba 0.68, _CacheImpl before): without it, kernels keep numba's per-file
# stamps (test_jit_policy's end-to-end test then fails)
_IMPL = getattr(numba.core.caching, "CacheImpl", None) or getattr(numba.core.caching, "_CacheImpl", None)
_LOCATORS = getattr(_IMPL, "_locator_classes", None)
if _LOCATORS is not None and not any(cls.__name__.startswith("WholePackage") for cls in _LOCATORS):
    _LOCATORS[:0] = [_whole_package_locator(numba.core.caching.UserProvidedCacheLocator),
                     _whole_package_locator(numba.core.caching.InTreeCacheLocator)]

FLOAT = np.float64
INDEX = np.int64

_FLAGS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")


def kernel(fn=None, **overrides):
    """Compile ``fn`` as a serial numba kernel with the project's flags."""
    flags = dict(_FLAGS, **overrides)
    if fn is None:
        return lambda f: numba.njit(**flags)(f)
    return numba.njit(**flags)(fn)


def leaf_kernel(fn=None, *, inline: bool = False):
    """Compile ``fn`` as a serial kernel that other kernels call in their inner loops (per contact, per
    row), without numba's reference counting (NRT).

    With NRT, every call of a kernel increments and decrements the reference count of each array argument
    with atomic instructions; for a helper that does a few flops per call that costs more than the work
    (V-FPI's contact solve on panda_cable, 153 contacts: 37 us with it, ~4 us without). A leaf kernel
    must therefore create no arrays (no np.empty, no array-valued return, no slices kept as views).

    ``inline``: numba inlines the body into each caller, where a literal argument becomes a constant (a loop
    bound the compiler can unroll).
    """
    flags = dict(_FLAGS, _nrt=False, **({"inline": "always"} if inline else {}))
    if fn is None:
        return lambda f: numba.njit(**flags)(f)
    return numba.njit(**flags)(fn)


def _cache_twin(fn, suffix: str):
    """A copy of ``fn`` named ``<name><suffix>``, so that numba's on-disk cache keeps its machine code apart
    from that of ``fn`` compiled with other flags."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__)
    twin.__qualname__ = fn.__qualname__ + suffix
    twin.__module__ = fn.__module__
    twin.__doc__ = fn.__doc__
    twin.__kwdefaults__ = fn.__kwdefaults__
    return twin


def parallel_kernel(fn=None, **overrides):
    """Compile ``fn`` with ``parallel=True``; its ``prange`` loops must write disjoint data. The kernel is
    compiled from a twin of ``fn`` named ``<name>_parallel`` (see the module's note on the cache), so ``fn``
    may also be compiled serially with :func:`kernel`.

    A ``prange`` body should index its arrays, not slice them: every view counts a reference on its parent
    array atomically, and threads doing that per item contend for it (the FEM assembly's node pass took
    1.85 ms on two threads and 1.97 on one until it stopped slicing)."""
    flags = dict(_FLAGS, parallel=True, **overrides)
    if fn is None:
        return lambda f: numba.njit(**flags)(_cache_twin(f, "_parallel"))
    return numba.njit(**flags)(_cache_twin(fn, "_parallel"))


class CompileTimer:
    """Wall time numba spends compiling (or loading cached) kernels while the ``with`` block runs:
    :attr:`seconds`, readable during the block too.

    A kernel compiles on its first call with new argument types, which may come mid-run (a contact kind that
    first appears at 2 s), so a run's real-time factor subtracts this rather than only warming up first.
    Nested compilations (a kernel calling another) count once.
    """

    def __init__(self):
        from numba.core import event
        self._timing = event.TimingListener()
        self._installed = event.install_listener("numba:compile", self._timing)

    @property
    def seconds(self) -> float:
        return self._timing.duration if self._timing.done else 0.0

    def __enter__(self) -> "CompileTimer":
        self._installed.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._installed.__exit__(*exc)
