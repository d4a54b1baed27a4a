"""The headline scene, shortened: panda_cable at 40 segments over its first 8 s (the cable is lifted, pulled
taut and laid on the post), solved by the scene's own solver: COND at the paper's settings.

References: a stored primal Newton solve of the same run converged to 1e-9 (``data/``, written by
``data/make_panda_cable_reference.py``), and primal Newton run here with COND's hard contact model. A second
stored run, the scene's own solve before issue 29's speed work, guards that work: speed must not move the
force (it is no physics reference; the converged solve is). The
comparison with the authors' implementation over the whole 55 s is a benchmark
(``benchmarks/cable_vs_authors.py``), not a test.
"""
import pathlib
import sys

import numpy as np
import pytest
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "data"))
from make_panda_cable_reference import CONVERGED, PATH, SHIPPED_PATH, converged_run  # noqa: E402

from cond_ros.scenes.registry import scene_file  # noqa: E402

#: the issue's bar for "the same fixed point": tool force within 1 mN (measured: 0.6 mN max, 0.2 mN RMS)
SAME_FIXED_POINT_N = 1e-3


@pytest.fixture(scope="module")
def scene_run():
    """The scene as it ships: COND at the paper's settings (1e-4 m/s, 200 iterations) with the coarse
    correction, the 1e-4 held per DOF beyond the paper's 320 segments (1928 DOFs; this run's 40 are below)."""
    shipped = yaml.safe_load(pathlib.Path(scene_file("panda_cable")).read_text())["solver"]
    assert shipped == {"name": "cond", "tolerance": 1e-4, "max_iterations": 200, "coarse_correction": True,
                       "tolerance_reference_dofs": 1928}
    return converged_run()


def test_cond_converges_every_step_in_the_papers_iteration_budget(scene_run):
    _, _, result = scene_run
    iterations = result.column("iterations")
    assert result.column("residual").max() < 1e-4  # no step stopped at the cap
    assert iterations.mean() <= 25.0, iterations.mean()  # paper Table IX: 18.28 at 320 segments
    assert 1e3 * result.column("max_penetration_m").max() <= 0.0025  # paper: 0.0021 mm


def test_the_tool_force_matches_the_stored_converged_solve(scene_run):
    t, force, _ = scene_run
    stored = np.loadtxt(PATH, delimiter=",", skiprows=1)
    np.testing.assert_allclose(t, stored[:, 0], rtol=0, atol=1e-9)
    assert np.abs(stored[:, 1:]).max() > 1.0  # the cable pulls on the tool (F_y up to 1.6 N)
    error = np.abs(force - stored[:, 1:]).max()
    assert error <= SAME_FIXED_POINT_N, (
        f"tool force {error:.2e} N from {PATH.name}; if the scene or the physics changed on purpose, "
        "regenerate it with make_panda_cable_reference.py")


def test_speed_work_leaves_the_tool_force_and_penetration_as_they_were(scene_run):
    """Issue 29: the F/T within 1e-4 N RMS of the run before the speed work, max penetration unchanged.
    Reordered arithmetic (written-out sums for BLAS products) moves it by ~1e-12 N; a changed contact set, a
    dropped term or a solver stopping early moves it by far more."""
    t, force, result = scene_run
    stored = np.loadtxt(SHIPPED_PATH, delimiter=",", skiprows=1)
    np.testing.assert_allclose(t, stored[:, 0], rtol=0, atol=1e-9)
    rms = np.sqrt(np.mean((force - stored[:, 1:4]) ** 2, axis=0))
    assert np.all(rms <= 1e-4), f"tool force RMS difference per axis {rms} N from {SHIPPED_PATH.name}"
    penetration = result.column("max_penetration_m")
    assert abs(penetration.max() - stored[:, 4].max()) <= 1e-9, (penetration.max(), stored[:, 4].max())


def test_cond_and_primal_newton_converge_to_the_same_fixed_point():
    """COND to 1e-9 and primal Newton to 1e-9 (with compliance 1e-8 / 1e-6 of the Delassus estimate, the
    hard contact law to within 0.1 mN here) give one tool force."""
    _, cond, result = converged_run({"name": "cond", "tolerance": 1e-9, "max_iterations": 20000,
                                     "coarse_correction": True})
    assert result.column("residual").max() < 1e-9
    _, newton, _ = converged_run(CONVERGED)
    assert np.abs(cond - newton).max() <= 0.1 * SAME_FIXED_POINT_N
