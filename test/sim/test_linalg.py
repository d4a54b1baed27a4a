"""``linalg.csr_matvec``: rows grouped by a shared column list give a per-row sum's bits, serial and threaded;
the banded Cholesky against numpy's dense solver."""
import numpy as np
import pytest

from cond_ros import sim
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.linalg import banded_cholesky, csr_matvec_parallel, csr_matvec_serial, solve_banded_cholesky


def grouped_csr(rng, sizes, n_cols):
    """A CSR matrix whose rows come in groups of ``sizes``, each group with one random column list."""
    indptr, indices, row_group = [0], [], [0]
    for size in sizes:
        cols = np.sort(rng.choice(n_cols, size=rng.integers(1, 12), replace=False))
        for _ in range(size):
            indices.extend(cols)
            indptr.append(len(indices))
        row_group.append(row_group[-1] + size)
    return (np.array(indptr, np.int64), np.array(indices, np.int64), rng.normal(size=len(indices)),
            np.array(row_group, np.int64))


def per_row_reference(indptr, indices, data, x):
    """Each row summed over its entries in order, in plain Python floats (IEEE double, like the kernel)."""
    out = []
    for i in range(len(indptr) - 1):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += float(data[p]) * float(x[indices[p]])
        out.append(acc)
    return np.array(out)


@pytest.mark.parametrize("matvec", [csr_matvec_serial, csr_matvec_parallel], ids=["serial", "parallel"])
def test_grouped_rows_give_the_per_row_sum_bit_for_bit(matvec):
    rng = np.random.default_rng(5)
    sizes = [3, 6, 8, 1, 6, 3, 2, 9, 6]  # a particle's, a body's, robots' and odd groups
    indptr, indices, data, row_group = grouped_csr(rng, sizes, 40)
    x = rng.normal(size=40)
    out = np.full(len(indptr) - 1, np.nan)
    matvec(indptr, indices, data, row_group, x, out)
    np.testing.assert_array_equal(out, per_row_reference(indptr, indices, data, x))


def test_a_patterns_row_groups_share_their_column_list():
    """What csr_matvec relies on: every row of a DOF group of A_o's pattern has the same columns."""
    bld = sim.ModelBuilder()
    box = bld.add_body((1.0, 0.5, 0.2), mass=0.8, inertia=sim.box_inertia(0.8, (0.1, 0.1, 0.1)))
    bld.add_particle((0.0, 0.3, 0.1), mass=0.2, radius=0.01)
    bld.add_spring(sim.particle(0), sim.body_point(box, (0.2, 0.0, 0.1)), stiffness=200.0, rest_length=0.5)
    pattern = build_pattern(bld.finalize())
    assert pattern.row_group[-1] == len(pattern.indptr) - 1
    sizes = np.diff(pattern.row_group)
    assert set(sizes.tolist()) == {3, 6}  # the particle's group and the box's
    for first, last in zip(pattern.row_group[:-1], pattern.row_group[1:]):
        cols = pattern.indices[pattern.indptr[first]:pattern.indptr[first + 1]]
        for row in range(first + 1, last):
            np.testing.assert_array_equal(pattern.indices[pattern.indptr[row]:pattern.indptr[row + 1]], cols)


@pytest.mark.parametrize("size, band", [(56, 11), (30, 29), (5, 0), (1, 0), (20, 3)])
def test_the_banded_cholesky_solves_as_the_dense_solver_does(size, band):
    rng = np.random.default_rng(size + band)
    half = np.zeros((size, size))
    for i in range(size):
        for j in range(max(0, i - band), i + 1):
            half[i, j] = rng.normal()
    matrix = half @ half.T + 0.1 * np.eye(size)  # SPD, bandwidth band
    rhs = rng.normal(size=size)
    lower = np.full((size, size), np.nan)  # only the band may be read
    assert banded_cholesky(matrix, lower) == band
    np.testing.assert_allclose(solve_banded_cholesky(lower, band, rhs), np.linalg.solve(matrix, rhs), rtol=1e-10,
                               atol=1e-12)
    indefinite = matrix - 2.0 * np.abs(np.linalg.eigvalsh(matrix)).max() * np.eye(size)
    assert banded_cholesky(indefinite, lower) == -1
