"""Command-line tools: running a scene (``runner``), benchmarks behind one registry (``benchmark_registry``),
the paper's tables and their report, and solver comparisons (the ``cond-ros`` command).

Public names are loaded on first use: the benchmarks import plotting and the whole core.
"""
from ..exports import lazy_exports

_EXPORTS = {
    "BENCHMARKS": "benchmark_registry",
    "format_summary": "runner", "run_scene": "runner", "warm_up_timed": "runner", "COMPILE_PHASE": "runner",
}
__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
