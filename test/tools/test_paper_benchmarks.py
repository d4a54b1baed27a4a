"""``cond-ros bench paper --quick``: the suite runs, writes its report, and the paper's orderings are checked.

The orderings are the paper's claims (Sec. V-C): COND needs the fewest iterations and leaves the least
penetration on the deformable scenes, and PGS needs more iterations as the gripped ball gets stiffer
(Table IV). Claims our implementation does not reproduce are expected failures (strict: the test fails
once they hold, so the list stays true), with the measured reason.
"""
import json
import os

import numpy as np
import pytest

from cond_ros.tools.paper_benchmarks import bench_paper

NOT_REPRODUCED = {
    "III soft_ball: COND lowest max penetration":
        "the finger contacts act through virtual nodes (k_v = 1e4): in a steady grip the link point lags its node "
        "by lambda / k_v in velocity, which penetration recovery balances at g = lambda dt / (theta beta k_v) = "
        "3.92 N x 0.01 s / (0.5 x 0.5 x 1e4) = 0.0157 mm (measured 0.0156); PGS/APGD act on the real point",
    "II soft_mat: COND fewest iterations":
        "the quick mat rests on the table: 15.5 COND iterations against 12.75 for PGS",
}


@pytest.fixture(scope="module")
def quick_suite(tmp_path_factory):
    directory = tmp_path_factory.mktemp("paper")
    return bench_paper(quick=True, quiet=True, report=str(directory)), directory


def test_report_files_hold_every_table(quick_suite):
    result, directory = quick_suite
    with open(os.path.join(directory, "paper_quick.json")) as fh:
        saved = json.load(fh)
    assert saved["orderings"] == result["orderings"]
    with open(os.path.join(directory, "paper_quick.md")) as fh:
        text = fh.read()
    for heading in ("Table I", "Table II soft_mat", "Table III soft_ball", "Table IV", "Table IX", "Fig. 11",
                    "rigid scene", "orderings"):
        assert heading in text


def test_every_solver_row_ran_its_whole_window(quick_suite):
    result, _ = quick_suite
    for table in result["tables"].values():
        for row in table["rows"].values():
            assert row["failed"] is None and row["steps"] == table["window_steps"]
            assert np.isfinite(row["MP_mm"]) and np.isfinite(row["IE_mN"])


def test_all_solvers_push_the_box_like_the_analytic_solution(quick_suite):
    """The rigid table: the Signorini-Coulomb solvers' box follows y = (F/m - mu g) t^2 / 2 (mean error below
    0.05 mm over 0.5 s, in which it slides 250 mm) without sinking or rising (z error below 0.01 mm). The CCP
    solvers' box rises off the plane (u_n = mu ||u_t|| while sliding: z error above 0.1 mm, in all three,
    COND's proximal operator included) and so slides with less friction, but still within 1 mm in y."""
    result, _ = quick_suite
    rows = result["rigid"]["rows"]
    assert {k for k, r in rows.items() if r["ccp"]} == {"COND proximal", "APGD", "compliant"}
    for label, row in rows.items():
        if row["ccp"]:
            assert row["err_z_mm"] > 0.1 and row["err_y_mm"] < 1.0, label
        else:
            assert row["err_y_mm"] < 0.05 and row["err_z_mm"] < 0.01, label


def test_scaling_fits_are_reported_per_solver(quick_suite):
    result, _ = quick_suite
    for label in ("COND", "PGS", "APGD"):
        fit = result["fig11"][label]
        assert len(fit["dof"]) == len(fit["solver_ms"]) >= 3 and fit["r2_linear"] <= 1.0


@pytest.mark.parametrize("claim", ["II soft_mat: COND fewest iterations", "II soft_mat: COND lowest max penetration",
                                   "III soft_ball: COND fewest iterations",
                                   "III soft_ball: COND lowest max penetration",
                                   "IV: PGS iterations rise with stiffness"])
def test_paper_ordering(quick_suite, claim):
    result, _ = quick_suite
    if claim in NOT_REPRODUCED:
        pytest.xfail(NOT_REPRODUCED[claim]) if not result["orderings"][claim] else None
        pytest.fail(f"{claim!r} now holds: remove it from NOT_REPRODUCED")
    assert result["orderings"][claim], json.dumps(result["tables"], default=str)[:2000]
