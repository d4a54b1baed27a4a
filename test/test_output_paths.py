"""output_problem: every output path is judged before any work, by a real write, not by os.access (which says
yes to root everywhere: a node recording into /proc died with a traceback, issue 32)."""
import os

from cond_ros.output_paths import output_problem


def test_writable_paths_pass(tmp_path):
    assert output_problem(tmp_path / "run.csv") is None
    assert output_problem(tmp_path / "bag", new=True) is None
    (tmp_path / "run.csv").write_text("old")
    assert output_problem(tmp_path / "run.csv") is None  # overwritten
    assert os.listdir(tmp_path) == ["run.csv"]  # the probe left nothing


def test_each_problem_is_named(tmp_path):
    (tmp_path / "bag").mkdir()
    assert output_problem(tmp_path / "bag", new=True) == f"{tmp_path / 'bag'} exists already"
    assert output_problem(tmp_path / "bag") == f"{tmp_path / 'bag'} is a directory"
    assert output_problem(tmp_path / "no" / "run.csv") == f"the directory {tmp_path / 'no'} does not exist"
    problem = output_problem("/proc/run.csv")  # not writable, for root too
    assert problem.startswith("the directory /proc is not writable ("), problem
