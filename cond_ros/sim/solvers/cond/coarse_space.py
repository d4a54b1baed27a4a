"""The coarse space of COND's two-level correction (``SolverCOND(coarse_correction=True)``; not in the paper).

V-FPI's step is diagonal (W), and W is set by the stiffest rows. It therefore corrects the smooth
motions of a stiff body only slowly: a soft body's rigid motion and its low-order deformation (the ball
flattening between two fingers), and a robot joint moving together with its virtual nodes. The coarse
space spans exactly these motions, so one small Galerkin solve per iteration removes them:

- every deformable (FEM) body: its node displacement fields that are polynomials of degree <= 2 in the
  node position (constant, linear and quadratic in x, y, z, for each of the three components: up to 30
  columns, orthonormalized over the body's nodes). Rigid translations and rotations are in this span;
- every rod (cable): the translation fields that are piecewise linear along it, on ``ROD_COARSE_POINTS``
  evenly spaced segments (hat functions of the segment index, one column per point and component). The
  slowest modes of V-FPI on a taut cable are exactly these: smooth translations along the chain, held back
  by its axial and shear stiffness against the segments' tiny mass (measured on panda_cable at 320
  segments: the eight slowest eigenvectors of W A are half-sine translation fields with no rotation, and
  cond(W A) = 4.8e4). A rod's segment rotations follow through the V-FPI sweeps and need no columns;
- every other rigid body and every robot: one column per DOF;
- virtual nodes follow their owner: their rows are J_v times the owner's rows (eq. 14), so a coarse
  motion does not stretch the k_v springs of (15).

The columns of one body, rod or robot are contiguous (a rod's interleaved point by point), so each row of
P and of A P is zero outside a short column range; the kernels loop over those ranges only.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
from numba import prange

from ...jit import kernel, leaf_kernel, parallel_kernel
from ...linalg import jacobian_velocity
from ...model import Model, State, per_model

POLYNOMIAL_DEGREE = 2
RANK_TOLERANCE = 1e-8  # relative singular value below which a body's polynomial field is dropped (few nodes)
# per rod; panda_cable at 320 segments over 0-10 s: 14.4 mean iterations (max 29); 2 points: 14.6 (35), 16: 14.7 (27);
# 40-60 without the rod's columns
ROD_COARSE_POINTS = 4


def _polynomial_fields(positions: np.ndarray, degree: int = POLYNOMIAL_DEGREE) -> np.ndarray:
    """Orthonormal basis (node count x r) of the polynomials of degree <= ``degree`` in the node positions."""
    r = positions - positions.mean(axis=0)
    r /= max(float(np.sqrt((r * r).sum(axis=1).max())), np.finfo(float).tiny)  # scale for conditioning
    monomials = np.empty((len(r), len(_monomial_axes(degree))))
    _monomials(r, _monomial_axes(degree), monomials)
    u, s, _ = np.linalg.svd(monomials, full_matrices=False)
    return u[:, s > RANK_TOLERANCE * s[0]]


@functools.lru_cache(maxsize=None)
def _monomial_axes(degree: int) -> np.ndarray:
    """The monomials of degree <= ``degree`` in x, y, z as their factors' axes, one row each, -1 past the last
    factor: (1, x, y, z, xx, xy, xz, yy, yz, zz) for degree 2."""
    axes = [combination for d in range(degree + 1)
            for combination in itertools.combinations_with_replacement(range(3), d)]
    out = np.full((len(axes), max(degree, 1)), -1, np.int64)
    for i, combination in enumerate(axes):
        out[i, :len(combination)] = combination
    return out


@kernel
def _monomials(r, axes, out):
    """out[:, i] = the product of r's columns ``axes[i]``, left to right (1 for none): what numpy's prod over
    those columns gives, bit for bit, without a copy of r per monomial (soft_ball: 165 -> 27 us a step)."""
    for p in range(r.shape[0]):
        for i in range(axes.shape[0]):
            if axes[i, 0] < 0:
                out[p, i] = 1.0
                continue
            acc = r[p, axes[i, 0]]
            for f in range(1, axes.shape[1]):
                if axes[i, f] >= 0:
                    acc *= r[p, axes[i, f]]
            out[p, i] = acc


def _rod_fields(segments: int, points: int = ROD_COARSE_POINTS) -> np.ndarray:
    """Hat functions of the segment index on ``points`` evenly spaced segments, (segments x points); they
    sum to 1 on every segment (a rigid translation of the rod is in their span)."""
    points = min(points, segments)
    s = np.linspace(0.0, 1.0, segments)[:, None] * (points - 1)
    return np.clip(1.0 - np.abs(s - np.arange(points)[None, :]), 0.0, None)


def rows_are_static(model: Model) -> bool:
    """Whether the coarse basis's rows on the original DOFs are the same every step (no FEM body, whose
    polynomial fields follow its node positions). Asked twice a step: kept per model."""
    return per_model(model, _no_fem_body)


def _no_fem_body(model: Model) -> bool:
    return not np.any(model.particle_object >= 0)


def coarse_basis(model: Model, state: State, vn_dof: np.ndarray, vn_size: np.ndarray, vn_jac: np.ndarray, *,
                 previous: np.ndarray | None = None) -> np.ndarray:
    """The coarse space P of the step, shape (n, k) over the augmented DOFs (original, then virtual nodes).

    ``vn_*`` are the step's virtual nodes (``ContactSet``). ``previous``: the basis of an earlier step of the
    same model, whose array is reused when it has k columns (rewritten in place when it also has as many rows).
    Without FEM bodies its rows on the original DOFs depend on nothing that changes and are kept (a copy of a
    rod's dense P cost ~20 us a step); with them, every row of a column block is rewritten whole (the rows of no
    block are zero in any basis of the model), which costs less than a zeroed array and the blocks stored into
    it (soft_ball, 5 222 x 32: ~190 us a step).
    """
    n_o = model.dof_count
    n = n_o + 3 * len(vn_dof)
    if previous is not None and rows_are_static(model):
        basis = previous if previous.shape[0] == n else _with_rows(previous, n_o, n)
        _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac)
        return basis
    fem_nodes, fixed = per_model(model, _column_blocks)
    blocks = []  # (rows, values (rows x columns)) of each column block on the original DOFs
    for nodes in fem_nodes:
        fields = _polynomial_fields(state.particle_q[nodes])
        blocks.extend((3 * nodes + component, fields) for component in range(3))
    blocks.extend(fixed)
    k = sum(values.shape[1] for _, values in blocks)
    if previous is not None and previous.shape[1] == k:
        basis = previous if previous.shape[0] == n else _with_rows(previous, n_o, n)
    else:
        basis = np.zeros((n, k))
    column = 0
    for rows, values in blocks:
        _set_rows(basis, rows, column, values)
        column += values.shape[1]
    _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac)
    return basis


def _with_rows(basis: np.ndarray, n_o: int, n: int) -> np.ndarray:
    """A new (n, k) array with ``basis``'s rows on the original DOFs (the first ``n_o``); the rest not set."""
    out = np.empty((n, basis.shape[1]))
    out[:n_o] = basis[:n_o]
    return out


def _column_blocks(model: Model):
    """The basis's model constants (``per_model``): each FEM body's nodes, and the column blocks (rows, values)
    of the rods (their translation rows: hat functions, interleaved point by point) and of every other rigid
    body and robot (identity), in column order after the FEM bodies'."""
    objects = model.particle_object
    fem_nodes = [np.flatnonzero(objects == body) for body in np.unique(objects[objects >= 0])]
    fixed = []
    for r in range(len(model.rod_body_start) - 1):
        bodies = model.rod_bodies[model.rod_body_start[r]:model.rod_body_start[r + 1]]
        fields = _rod_fields(len(bodies))
        interleaved = np.zeros((3 * len(bodies), 3 * fields.shape[1]))  # column 3 j + e: point j, component e
        for e in range(3):
            interleaved[e::3, e::3] = fields
        rows = (model.body_dof_start + 6 * bodies)[:, None] + np.arange(3)
        fixed.append((rows.reshape(-1), interleaved))
    size = model.group_sizes()
    dof = model.group_dofs()
    whole = np.ones(len(size), bool)
    whole[:model.particle_count] = False
    whole[model.particle_count + model.rod_bodies] = False
    for first, count in zip(dof[whole], size[whole]):
        fixed.append((first + np.arange(count), np.eye(count)))
    return fem_nodes, fixed


@kernel
def _set_rows(basis, rows, column, values):
    """basis[rows[i]] = values[i] in columns ``column``.. and zero elsewhere: a column block's rows, whole."""
    width = values.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(basis.shape[1]):
            basis[r, j] = 0.0
        for j in range(width):
            basis[r, column + j] = values[i, j]


@kernel
def _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac) -> None:
    """Rows n_o.. of ``basis``: each virtual node's J_v times its owner's rows."""
    for j in range(vn_dof.shape[0]):
        for e in range(3):
            for c in range(basis.shape[1]):
                acc = 0.0
                for r in range(vn_size[j]):
                    acc += vn_jac[j, e, r] * basis[vn_dof[j] + r, c]
                basis[n_o + 3 * j + e, c] = acc


@kernel
def product_terms(indptr, indices, row_group, pattern_ptr, pattern_columns, k):
    """The sparsity structure of A_o P (original rows), from A_o's CSR pattern, its DOF groups (``row_group``: the
    rows of a group share one column list) and :func:`row_pattern` of P.

    Returns (entry_ptr, entry_column, term_ptr, term_offset, term_row, multiply_adds): the rows of group g have
    the nonzero entries entry_ptr[g]..entry_ptr[g + 1], entry e in column entry_column[e]; in row i of the group
    it is the sum of data[indptr[i] + term_offset[t]] * P[term_row[t], entry_column[e]] over its terms t (in A's
    nonzero order). A group's rows share their terms: one list per row held six copies of a rod segment's, of
    which :func:`original_rows_serial` read one, strided through 2.2 MB at 1280 segments. ``multiply_adds``: the
    terms summed over every row (what :func:`coarse_in_parallel` weighs). Both patterns are fixed while the
    model is (rod, robot and FEM columns alike), so this is built once.
    """
    groups = row_group.shape[0] - 1
    entries = 0
    terms = 0
    multiply_adds = 0
    seen = np.full(k, -1, np.int64)
    for g in range(groups):
        i = row_group[g]
        group_terms = 0
        for p in range(indptr[i], indptr[i + 1]):
            c = indices[p]
            group_terms += pattern_ptr[c + 1] - pattern_ptr[c]
            for q in range(pattern_ptr[c], pattern_ptr[c + 1]):
                if seen[pattern_columns[q]] != g:
                    seen[pattern_columns[q]] = g
                    entries += 1
        terms += group_terms
        multiply_adds += group_terms * (row_group[g + 1] - i)
    entry_ptr = np.zeros(groups + 1, np.int64)
    entry_column = np.empty(entries, np.int64)
    term_ptr = np.zeros(entries + 1, np.int64)
    term_offset = np.empty(terms, np.int64)
    term_row = np.empty(terms, np.int64)
    count = np.zeros(k, np.int64)
    e = 0
    t = 0
    for g in range(groups):
        i = row_group[g]
        count[:] = 0
        for p in range(indptr[i], indptr[i + 1]):
            c = indices[p]
            for q in range(pattern_ptr[c], pattern_ptr[c + 1]):
                count[pattern_columns[q]] += 1
        for j in range(k):  # the group's entries in column order, each entry's terms in A's nonzero order
            if count[j] == 0:
                continue
            entry_column[e] = j
            for p in range(indptr[i], indptr[i + 1]):
                c = indices[p]
                for q in range(pattern_ptr[c], pattern_ptr[c + 1]):
                    if pattern_columns[q] == j:
                        term_offset[t] = p - indptr[i]
                        term_row[t] = c
                        t += 1
            e += 1
            term_ptr[e] = t
        entry_ptr[g + 1] = e
    return entry_ptr, entry_column, term_ptr, term_offset, term_row, multiply_adds


PARALLEL_MIN_TERMS = 500_000  # A_o P's multiply-adds from which it and P^T A P take all cores (see coarse_in_parallel)


def coarse_in_parallel(product) -> bool:
    """Whether :func:`times_basis` and the Galerkin product run on all cores: when A_o P takes at least
    ``PARALLEL_MIN_TERMS`` multiply-adds (``product``: :func:`product_terms`). On 2 cores, 2026-11-26: soft_ball
    (2.0 million) 4.3 -> 2.9 ms; panda_cable at 1280 segments (138 000) 483 -> 493 us, at 320 133 -> 285 us."""
    return product[5] >= PARALLEL_MIN_TERMS


@kernel
def original_rows_serial(indptr, data, row_group, basis, product, ranges, out):
    """Rows 0..n_o of A_o P (see :func:`times_basis`), entry by entry over its terms, a DOF group
    (``row_group``) at a time: a group's rows share their terms, offset by their rows' starts in ``data``, so a
    group of six (a rod segment) reads each term's P value once for its six sums (panda_cable, 320 segments: 84
    -> 61 us a step, the same bits). Each row's column range is zeroed before its entries: the columns between
    them that have no terms are read as zeros."""
    entry_ptr, entry_column, term_ptr, term_offset, term_row, _ = product
    for g in range(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        if entry_ptr[g + 1] > entry_ptr[g]:
            lo, hi = entry_column[entry_ptr[g]], entry_column[entry_ptr[g + 1] - 1] + 1
            for i in range(first, first + rows):
                out[i, lo:hi] = 0.0
                ranges[i, 2] = lo
                ranges[i, 3] = hi
        # unsigned offsets: a signed index is checked for a negative value to wrap (``linalg._block_matvec``)
        start = np.uint64(indptr[first])
        if rows == 6:
            s1, s2, s3 = indptr[first + 1] - indptr[first], indptr[first + 2] - indptr[first], \
                indptr[first + 3] - indptr[first]
            s4, s5 = indptr[first + 4] - indptr[first], indptr[first + 5] - indptr[first]
            s1, s2, s3, s4, s5 = np.uint64(s1), np.uint64(s2), np.uint64(s3), np.uint64(s4), np.uint64(s5)
            for e in range(entry_ptr[g], entry_ptr[g + 1]):
                j = np.uint64(entry_column[e])
                a0 = a1 = a2 = a3 = a4 = a5 = 0.0
                for t in range(term_ptr[e], term_ptr[e + 1]):
                    p = start + np.uint64(term_offset[t])
                    x = basis[np.uint64(term_row[t]), j]
                    a0 += data[p] * x
                    a1 += data[p + s1] * x
                    a2 += data[p + s2] * x
                    a3 += data[p + s3] * x
                    a4 += data[p + s4] * x
                    a5 += data[p + s5] * x
                out[first, j], out[first + 1, j], out[first + 2, j] = a0, a1, a2
                out[first + 3, j], out[first + 4, j], out[first + 5, j] = a3, a4, a5
        else:
            for i in range(first, first + rows):
                row_start = np.uint64(indptr[i])
                for e in range(entry_ptr[g], entry_ptr[g + 1]):
                    j = np.uint64(entry_column[e])
                    acc = 0.0
                    for t in range(term_ptr[e], term_ptr[e + 1]):
                        acc += data[row_start + np.uint64(term_offset[t])] * basis[np.uint64(term_row[t]), j]
                    out[i, j] = acc


@parallel_kernel
def original_rows_parallel(row_group, indptr, pair_start, pair_column, pair_width, data, basis, ranges, out):
    """Rows 0..n_o of A_o P on all cores, DOF group by DOF group, from A_o's blocks (``linalg.block_matvec``'s
    layout): each row of P has its nonzeros in a short column range (``ranges[:, :2]``), added across it for every
    entry of A. For an FEM body (a node's row: the ten polynomial fields side by side) this streams A once instead
    of :func:`product_terms`' index arrays (two int64 per term, 32 MB for soft_ball's 2 million terms), which left
    the product memory-bound; by blocks, a row of P is read once for all of a group's rows (soft_ball, 2026-11-28:
    1.52 -> 1.00 ms against A's CSR rows one after another). Each row still adds its entries in column order, and
    the zeros inside a range add +-0 to a partial sum, so every value is :func:`original_rows_serial`'s (an entry
    with no terms may come out as -0.0 instead of 0.0, which no later sum can tell apart)."""
    k_all = basis.shape[1]
    for g in prange(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        lo = k_all
        hi = 0
        for q in range(pair_start[g], pair_start[g + 1]):
            for c in range(pair_column[q], pair_column[q] + pair_width[q]):
                if ranges[c, 1] > ranges[c, 0]:
                    lo = min(lo, ranges[c, 0])
                    hi = max(hi, ranges[c, 1])
        acc = np.zeros((rows, k_all))
        length = indptr[first + 1] - indptr[first]
        entry = indptr[first]  # the group's first row's entry of column c
        for q in range(pair_start[g], pair_start[g + 1]):
            for c in range(pair_column[q], pair_column[q] + pair_width[q]):
                j_lo, j_hi = np.uint64(ranges[c, 0]), np.uint64(ranges[c, 1])  # unsigned: linalg.U1
                if rows == 3:  # an FEM node: P's row read once for its three rows (each (r, j) sums in c's order)
                    x0, x1, x2 = data[entry], data[entry + length], data[entry + 2 * length]
                    for j in range(j_lo, j_hi):
                        p = basis[c, j]
                        acc[0, j] += x0 * p
                        acc[1, j] += x1 * p
                        acc[2, j] += x2 * p
                else:
                    for r in range(rows):
                        x = data[entry + r * length]
                        for j in range(j_lo, j_hi):
                            acc[r, j] += x * basis[c, j]
                entry += 1
        for r in range(rows):
            for j in range(lo, hi):
                out[first + r, j] = acc[r, j]
            if hi > lo:
                ranges[first + r, 2] = lo
                ranges[first + r, 3] = hi


@leaf_kernel
def _widen_with_zeros(out, ranges, r, lo, hi):
    """Row r of A P's column range (``ranges[r, 2:]``) widened to cover [lo, hi), the columns it gains zeroed
    (the gap between an old range and a disjoint new one too)."""
    old_lo, old_hi = ranges[r, 2], ranges[r, 3]
    if old_hi <= old_lo:
        for j in range(lo, hi):
            out[r, j] = 0.0
        ranges[r, 2], ranges[r, 3] = lo, hi
        return
    for j in range(min(lo, old_lo), old_lo):
        out[r, j] = 0.0
    for j in range(old_hi, max(hi, old_hi)):
        out[r, j] = 0.0
    ranges[r, 2], ranges[r, 3] = min(lo, old_lo), max(hi, old_hi)


@kernel
def _virtual_node_columns(vn_dof, vn_size, vn_jac, kv, basis, ranges, out):
    """The virtual nodes' part of A P (eq. 15: their rows, and the -k_v J_v^T terms on their owners' rows), added
    to ``out`` = A_o P, and the column ranges of the rows it touches (``ranges[:, 2:]``), which ``out`` holds
    (zeros where nothing was added)."""
    n_o = out.shape[0] - 3 * vn_dof.shape[0]
    k_all = basis.shape[1]
    for k in range(vn_dof.shape[0]):
        base = n_o + 3 * k
        lo = k_all
        hi = 0
        for q in range(vn_size[k] + 3):  # the owner's rows, then the node's
            r = vn_dof[k] + q if q < vn_size[k] else base + q - vn_size[k]
            if ranges[r, 1] > ranges[r, 0]:
                lo = min(lo, ranges[r, 0])
                hi = max(hi, ranges[r, 1])
        if hi <= lo:
            continue
        for r in range(vn_dof[k], vn_dof[k] + vn_size[k]):
            _widen_with_zeros(out, ranges, r, lo, hi)
        for j in range(lo, hi):
            owner = jacobian_velocity(basis[:, j], vn_dof[k], vn_size[k], vn_jac[k])
            for e in range(3):
                out[base + e, j] = kv * (basis[base + e, j] - owner[e])
                for r in range(vn_size[k]):
                    out[vn_dof[k] + r, j] -= kv * vn_jac[k, e, r] * basis[base + e, j]
        for e in range(3):
            ranges[base + e, 2] = min(ranges[base + e, 2], lo)
            ranges[base + e, 3] = max(ranges[base + e, 3], hi)
    for r in range(ranges.shape[0]):
        if ranges[r, 3] <= ranges[r, 2]:
            ranges[r, 2] = 0
            ranges[r, 3] = 0


@kernel
def row_pattern(matrix, first_row):
    """The nonzero columns of rows ``first_row``.. of a dense matrix, CSR-style: (ptr, columns), with
    ptr[r - first_row] the start of row r's columns (ascending)."""
    rows = matrix.shape[0] - first_row
    ptr = np.zeros(rows + 1, np.int64)
    for r in range(rows):
        count = 0
        for j in range(matrix.shape[1]):
            if matrix[first_row + r, j] != 0.0:
                count += 1
        ptr[r + 1] = ptr[r] + count
    columns = np.empty(ptr[rows], np.int64)
    for r in range(rows):
        q = ptr[r]
        for j in range(matrix.shape[1]):
            if matrix[first_row + r, j] != 0.0:
                columns[q] = j
                q += 1
    return ptr, columns


@kernel
def has_row_pattern(matrix, ptr, columns):
    """Whether the nonzero columns of ``matrix``'s rows are (ptr, columns) (a :func:`row_pattern`): one pass that
    stops at the first difference, against a new pattern and a comparison (soft_ball's FEM rows: ~220 us)."""
    if ptr.shape[0] != matrix.shape[0] + 1:
        return False
    for r in range(matrix.shape[0]):
        q = ptr[r]
        for j in range(matrix.shape[1]):
            if matrix[r, j] != 0.0:
                if q >= ptr[r + 1] or columns[q] != j:
                    return False
                q += 1
        if q != ptr[r + 1]:
            return False
    return True


def extend_pattern(pattern, basis: np.ndarray, first_row: int):
    """:func:`row_pattern` of all of ``basis`` from ``pattern``, the pattern of its rows before ``first_row``
    (a reused basis's original DOFs: only the step's virtual-node rows are scanned)."""
    ptr, columns = pattern
    more_ptr, more_columns = row_pattern(basis, first_row)
    return np.concatenate([ptr, ptr[-1] + more_ptr[1:]]), np.concatenate([columns, more_columns])


@kernel
def pattern_ranges(ptr, columns, out):
    """out[:, :2] = [first, last) of each row's nonzero columns ((0, 0) for a zero row) from its
    :func:`row_pattern`."""
    for r in range(ptr.shape[0] - 1):
        out[r, 0] = 0
        out[r, 1] = 0
        if ptr[r + 1] > ptr[r]:
            out[r, 0] = columns[ptr[r]]
            out[r, 1] = columns[ptr[r + 1] - 1] + 1


def _galerkin(basis, a_basis, pattern_ptr, pattern_columns, ranges, b, splits, galerkin, coarse_b):
    """P^T (A P) and P^T b over the nonzeros of P (by row: :func:`row_pattern`) and the rows' column ranges of
    A P. Work item t makes the rows ``splits[t]:splits[t + 1]`` of G (columns of P), going down P's rows in
    ascending order: each entry sums over P's rows in that order, whatever the items, so the parallel variant
    gives the serial one's bits (and those of a sum down each column of P). Row by row, a row of A P is read
    once per item, not once per nonzero of P's row (an FEM node's ten fields); column by column the product
    re-read A P from memory for every column (soft_ball, in isolation: 360 us on two cores and 85 us for P's
    pattern by column against 300 us)."""
    for t in prange(splits.shape[0] - 1):
        first, last = splits[t], splits[t + 1]
        # the item's rows of G and P^T b in its own arrays: P^T b's entries of two items share a cache line,
        # which the two cores then passed back and forth at every row of P
        rows = np.zeros((last - first, galerkin.shape[1]))
        rhs = np.zeros(last - first)
        for r in range(pattern_ptr.shape[0] - 1):
            lo, hi = np.uint64(ranges[r, 2]), np.uint64(ranges[r, 3])  # unsigned: no wraparound check (linalg.U1)
            for e in range(pattern_ptr[r], pattern_ptr[r + 1]):
                i = pattern_columns[e]
                if i < first or i >= last:
                    continue
                x = basis[r, i]
                rhs[i - first] += x * b[r]
                for j in range(lo, hi):
                    rows[i - first, j] += x * a_basis[r, j]
        galerkin[first:last] = rows
        coarse_b[first:last] = rhs


galerkin_serial = kernel(_galerkin)
galerkin_parallel = parallel_kernel(_galerkin)


def times_basis(system, basis: np.ndarray, product, ranges: np.ndarray, augmented=None) -> np.ndarray:
    """A P for the augmented A of eq. (15) within each row's column range (``ranges[:, 2:]``, outside which the
    row is zero: those entries of the array are not written; ``ranges[:, :2]``: P's, given).

    ``product`` is :func:`product_terms`: each entry of A_o P is summed in registers over its own terms. A
    row of P has few nonzeros (a rod segment's translation row two hat functions, its rotation rows none),
    so there are about as many terms as A_o has nonzeros; accumulating into ``out`` across A's nonzeros
    instead waits on memory for each one (panda_cable, 320 segments: 280 us against ~50 us). Large systems
    (the FEM scenes) take A_o P's rows on all cores, from A_o's blocks (``augmented``: ``system.augmented()``, if
    already at hand).
    """
    out = np.empty_like(basis)  # only each row's column range is written and read (a zeroed n x k: 8 us at 320)
    ranges[:, 2] = basis.shape[1]
    ranges[:, 3] = 0
    if coarse_in_parallel(product):
        blocks = augmented if augmented is not None else system.augmented()
        original_rows_parallel(*blocks[:6], basis, ranges, out)
    else:
        original_rows_serial(system.indptr, system.data, system.row_group, basis, product, ranges, out)
    _virtual_node_columns(system.vn_dof, system.vn_size, system.vn_jac, system.virtual_node_gain, basis, ranges, out)
    return out


def coarse_operator(system, basis: np.ndarray, pattern=None, product=None, augmented=None):
    """(A P, P^T A P, P^T b, ranges) of the step's system for the coarse space ``basis``; ``ranges`` (n, 4)
    are the column ranges of the nonzeros of P and of A P, side by side (A P is written within its ranges only:
    :func:`times_basis`). ``pattern``: :func:`row_pattern` of ``basis``, ``product``: :func:`product_terms`
    of its original rows, and ``augmented``: ``system.augmented()``, when known (computed here otherwise)."""
    ptr, columns = row_pattern(basis, 0) if pattern is None else pattern
    if product is None:
        product = product_terms(system.indptr, system.indices, system.row_group, ptr, columns, basis.shape[1])
    ranges = np.empty((basis.shape[0], 4), np.int64)
    pattern_ranges(ptr, columns, ranges)
    a_basis = times_basis(system, basis, product, ranges, augmented)
    k = basis.shape[1]
    galerkin, coarse_b = np.empty((k, k)), np.empty(k)
    parallel = coarse_in_parallel(product)
    galerkin_product = galerkin_parallel if parallel else galerkin_serial
    splits = np.array([0, k // 2, k] if parallel else [0, k], np.int64)  # G's rows per item
    rhs = augmented.b if augmented is not None else system.rhs()
    galerkin_product(basis, a_basis, ptr, columns, ranges, rhs, splits, galerkin, coarse_b)
    return a_basis, 0.5 * (galerkin + galerkin.T), coarse_b, ranges
