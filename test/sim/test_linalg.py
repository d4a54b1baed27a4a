"""``linalg.block_matvec``: A_o's CSR applied by its dense blocks gives a CSR row loop's bits, serial and threaded, on
a pattern with 3-, 6- and 8-row groups and blocks of every width between them; the banded Cholesky against numpy's
dense solver."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

from cond_ros import sim
from cond_ros.sim.dynamics.assembly import build_pattern
from cond_ros.sim.linalg import banded_cholesky, block_matvec_parallel, block_matvec_serial, solve_banded_cholesky

PANDA_URDF = os.path.join(os.path.dirname(__file__), "..", "..", "urdf", "panda.urdf")


def mixed_pattern():
    """A_o's pattern for two particles (3 DOF), two boxes (6) and the Panda (8: its second finger follows the first),
    coupled particle-box, particle-particle, box-box, and particle and box to a Panda link: blocks 3x3, 3x6, 6x3,
    6x6, 3x8, 8x3, 6x8, 8x6 and 8x8."""
    bld = sim.ModelBuilder()
    for x in (0.0, 0.3):
        bld.add_particle((x, 0.3, 0.1), mass=0.2, radius=0.01)
    boxes = [bld.add_body((1.0, y, 0.2), mass=0.8, inertia=sim.box_inertia(0.8, (0.1, 0.1, 0.1))) for y in (0.5, 0.9)]
    robot = bld.add_articulation(sim.load_urdf(PANDA_URDF, mesh_primitives=False))
    bld.add_spring(sim.particle(0), sim.body_point(boxes[0], (0.2, 0.0, 0.1)), stiffness=200.0, rest_length=0.5)
    bld.add_spring(sim.particle(0), sim.particle(1), stiffness=100.0, rest_length=0.3)
    bld.add_spring(sim.body_point(boxes[0]), sim.body_point(boxes[1]), stiffness=100.0, rest_length=0.4)
    bld.add_spring(sim.particle(1), sim.robot_link_point(robot, "panda_hand"), stiffness=50.0, rest_length=0.2)
    bld.add_spring(sim.body_point(boxes[1]), sim.robot_link_point(robot, "panda_link3"), stiffness=50.0,
                   rest_length=0.2)
    return build_pattern(bld.finalize())


def per_row_reference(indptr, indices, data, x):
    """Each row summed over its entries in order, in plain Python floats (IEEE double, like the kernel)."""
    out = []
    for i in range(len(indptr) - 1):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += float(data[p]) * float(x[indices[p]])
        out.append(acc)
    return np.array(out)


def test_the_pair_blocks_cover_each_groups_column_list_left_to_right():
    """What block_matvec's addressing relies on: in every row of group g, block q's entries are the columns
    pair_column[q] .. + pair_width[q], after the widths of the blocks before it."""
    pattern = mixed_pattern()
    assert sorted(set(np.diff(pattern.row_group).tolist())) == [3, 6, 8]
    blocks = pattern.pair_blocks
    n = pattern.row_group[-1]
    data = np.arange(1.0, pattern.nnz + 1.0)  # every entry its own value
    a = sp.csr_matrix((data, pattern.indices, pattern.indptr), shape=(n, n)).toarray()
    widths = set()
    for g in range(len(pattern.row_group) - 1):
        first, last = pattern.row_group[g], pattern.row_group[g + 1]
        length = pattern.indptr[first + 1] - pattern.indptr[first]
        np.testing.assert_array_equal(np.diff(pattern.indptr[first:last + 1]), length)  # rows of one length
        offset = 0
        for q in range(blocks.start[g], blocks.start[g + 1]):
            cols = slice(blocks.column[q], blocks.column[q] + blocks.width[q])
            block = np.array([data[pattern.indptr[r] + offset:pattern.indptr[r] + offset + blocks.width[q]]
                              for r in range(first, last)])
            np.testing.assert_array_equal(block, a[first:last, cols])
            offset += blocks.width[q]
            widths.add((int(last - first), int(blocks.width[q])))
        assert offset == length  # the blocks cover the row
    assert widths >= {(3, 3), (3, 6), (6, 3), (6, 6), (3, 8), (8, 3), (6, 8), (8, 6), (8, 8)}


@pytest.mark.parametrize("matvec", [block_matvec_serial, block_matvec_parallel], ids=["serial", "parallel"])
def test_the_block_matvec_gives_the_csr_row_loops_bits(matvec):
    pattern = mixed_pattern()
    blocks = pattern.pair_blocks
    rng = np.random.default_rng(5)
    n = pattern.row_group[-1]
    data = rng.normal(size=pattern.nnz)
    x = rng.normal(size=n)
    out = np.full(n, np.nan)
    matvec(pattern.row_group, pattern.indptr, blocks.start, blocks.column, blocks.width, data, x, out)
    np.testing.assert_array_equal(out, per_row_reference(pattern.indptr, pattern.indices, data, x))


def test_a_patterns_row_groups_share_their_column_list():
    """What weights.frobenius_terms relies on: every row of a DOF group of A_o's pattern has the same columns."""
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
