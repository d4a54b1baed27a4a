"""The paper's numbers we print beside ours are the paper's: every row of ``paper_tables`` is read back
from the paper's text in ``../shared/papers`` (present in CI)."""
import pathlib

import pytest

from cond_ros.tools.paper_tables import PAPER, PAPER_TABLE_IV

PAPER_TEXT = (pathlib.Path(__file__).resolve().parents[3] / "shared" / "papers"
              / "cond_contact_nodalization_diagonalization.txt")


@pytest.fixture(scope="module")
def paper_lines():
    if not PAPER_TEXT.exists():
        pytest.skip(f"the paper's text is not at {PAPER_TEXT}")
    return PAPER_TEXT.read_text().splitlines()


def numbers(line):
    out = []
    for token in line.replace("(", " ").replace(")", " ").split():
        try:
            out.append(float(token))
        except ValueError:
            pass
    return out


def row_in_paper(lines, solver, values):
    """A line of the paper that starts with ``solver`` and holds every value (IE may be in N there)."""
    for line in lines:
        if not line.startswith(solver + " "):
            continue
        found = numbers(line)
        if all(any(abs(x - v) <= 1e-9 * max(1.0, abs(v)) or abs(1e3 * x - v) <= 1e-6 * abs(v) for x in found)
               for v in values):
            return True
    return False


@pytest.mark.parametrize("table", ["II soft_mat", "III soft_ball", "V panda_cable", "VI soft_gripper"])
@pytest.mark.parametrize("solver", ["COND", "PGS", "APGD"])
def test_solver_rows_are_the_papers(paper_lines, table, solver):
    values = [v for v in PAPER[table][solver] if v is not None]
    assert row_in_paper(paper_lines, solver, values), f"{table} {solver}: {values} is not a row of the paper"


@pytest.mark.parametrize("solver", ["COND", "PGS", "APGD"])
def test_table_iv_rows_are_the_papers(paper_lines, solver):
    assert row_in_paper(paper_lines, solver, PAPER_TABLE_IV[solver])


def test_a_wrong_row_is_caught(paper_lines):
    """The numbers that stood in fem_benchmarks for Table II's COND row until 2026-11 are in no row."""
    assert not row_in_paper(paper_lines, "COND", [0.0047, 12.37, 3.79, 2.48, 39.72])
