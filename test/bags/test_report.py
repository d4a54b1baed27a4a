"""The report directory: markdown, JSON and plots, written whole or not at all."""
import json
import os

import numpy as np
import pytest

from cond_ros.bags import report
from cond_ros.bags.compare import CompareOptions, compare_series
from cond_ros.bags.series import series_from_arrays


@pytest.fixture(scope="module")
def comparison():
    """Real = a known signal plus a 0.3 N fx offset after 2 s, against the clean signal, tared over 1 s."""
    t = np.arange(0, 6, 0.01)
    sim = np.column_stack([np.sin(t * k) for k in range(1, 7)])
    real = sim.copy()
    real[t > 2.0, 0] += 0.3
    stamps = (t * 1e9).astype(np.int64) + 5 * 10**9
    return compare_series(series_from_arrays("real_bag", "/ft", stamps, real + 2.0, "s"),
                          series_from_arrays("sim_bag", "/sim", stamps, sim, "s"),
                          CompareOptions(real_topic="/ft", tare_s=1.0, window_s=2.0))


def test_report_files_and_contents(comparison, tmp_path):
    """report.md has the run table, the windows and the removed bias; report.json is valid JSON with every
    window's metrics; one PNG per axis."""
    files = report.write_report(comparison, tmp_path / "report")
    assert sorted(os.listdir(tmp_path)) == ["report"]
    assert sorted(os.listdir(files["dir"])) == sorted(["report.md", "report.json"] + [f"{a}.png" for a in
                                                                                     ("fx", "fy", "fz", "tx", "ty",
                                                                                      "tz")])
    text = open(files["markdown"]).read()
    assert "| bias removed | 2 | 2 | 2 | 2 | 2 | 2 |" in text
    assert "| 4.000 .. 5.990 | 200 | 0.3 |" in text and "![fx](fx.png)" in text
    data = json.load(open(files["json"]))
    assert data["valid"] is True and len(data["windows"]) == 3
    assert data["windows"][0]["metrics"]["fx"]["rmse"] < 1e-12  # tared: equal up to rounding
    assert abs(data["windows"][2]["metrics"]["fx"]["bias"] + 0.3) < 1e-12  # sim - real
    assert abs(data["alignment"]["bias_removed"]["fx"] - 2.0) < 1e-12
    for png in files["plots"]:
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_failure_leaves_nothing_and_keeps_the_old_report(comparison, tmp_path, monkeypatch):
    """An error while writing leaves the previous report as it was and no half-written directory."""
    target = tmp_path / "report"
    report.write_report(comparison, target, plots=False)
    before = open(target / "report.md").read()

    def broken(*args):
        raise RuntimeError("disk full")
    monkeypatch.setattr(report, "plot_axis", broken)
    with pytest.raises(RuntimeError):
        report.write_report(comparison, target)
    assert sorted(os.listdir(tmp_path)) == ["report"] and open(target / "report.md").read() == before


def test_refuses_to_replace_other_directories(comparison, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not a comparison report"):
        report.write_report(comparison, tmp_path / "data", plots=False)
    assert os.listdir(tmp_path / "data") == ["keep.txt"]


def test_summary_text(comparison):
    text = report.summary_text(comparison)
    assert "lag 0.000000 s (none)" in text and "fx: rmse" in text
