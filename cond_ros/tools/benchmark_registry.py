"""``cond-ros bench NAME``: every benchmark by name, in one registry.

The modules that define the benchmarks import nothing from here (``paper_benchmarks`` builds on
``benchmarks``), so the registry sits above them and the tools package has no import circle.
"""
from .benchmarks import (bench_box_sliding, bench_chebyshev, bench_cloth_drape, bench_panda_cable, bench_panda_pick,
                         bench_scaling)
from .fem_benchmarks import FEM_BENCHMARKS
from .paper_benchmarks import bench_paper

BENCHMARKS = {
    "paper": bench_paper,
    "panda_cable": bench_panda_cable,
    "panda_pick": bench_panda_pick,
    "box_sliding": bench_box_sliding,
    "chebyshev": bench_chebyshev,
    "scaling": bench_scaling,
    "cloth_drape": bench_cloth_drape,
    **FEM_BENCHMARKS,
}
