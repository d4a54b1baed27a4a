"""The same-window solver comparison behind the paper tables (``cond_ros.tools.solver_comparison``)."""
import numpy as np

from cond_ros.tools.fem_benchmarks import ball_stiffness_edit
from cond_ros.scenes.registry import edited_scene
from cond_ros.tools.solver_comparison import compare_solvers, run_prefix, run_window, solver_for, summarize


def test_every_solver_starts_from_the_same_state_and_replays_bit_for_bit():
    """Two copies of the scene's solver over the same window give identical series, and against a reference
    that is the same run every accuracy error is exactly zero (so nonzero errors measure the solver)."""
    scene = edited_scene("soft_ball", ball_stiffness_edit(None, 4))
    start = run_prefix(scene, 45)
    first = run_window(scene, solver_for(scene, "scene"), start, 3)
    second = run_window(scene, solver_for(scene, "scene"), start, 3)
    for key in ("penetration_mm", "iterations", "internal_force_norm", "contacts"):
        assert first[key] == second[key]
    assert max(first["contacts"]) > 0  # the fingers hold the ball: a real contact window
    row = summarize(second, first)
    assert row["IE_mN"] == 0.0 and row["steps"] == 3 and row["failed"] is None


def test_a_looser_tolerance_shows_as_a_larger_internal_force_error():
    scene = edited_scene("soft_ball", ball_stiffness_edit(None, 4))
    table = compare_solvers(scene, {"loose": ("scene", {"tolerance": 1e-2}), "tight": ("scene", {"tolerance": 1e-7})},
                            prefix=45, window=3)
    rows = table["rows"]
    assert rows["loose"]["IN"] < rows["tight"]["IN"]
    assert rows["loose"]["IE_mN"] > rows["tight"]["IE_mN"]
    assert np.isfinite(rows["tight"]["DT_ms"]) and table["start_time_s"] > 0.4
