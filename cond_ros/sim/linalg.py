"""The sparse kernels of the step's linear system: A_o x by its dense blocks, and the augmented A of eq. (15) with the
virtual nodes' J_v blocks applied matrix-free; point Jacobians times velocities and their transposes times
forces. Assembly (``dynamics``) fills the arrays; the solvers apply them through these kernels. And a
banded Cholesky factorization for the small SPD systems of the solvers (COND's coarse space).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from .jit import kernel, parallel_kernel


@kernel
def jacobian_velocity(v, dof, size, jac):
    """J v_owner: the world velocity of a point whose Jacobian on its owner's DOFs is ``jac`` (3 x size)."""
    out = np.zeros(3)
    for e in range(3):
        for r in range(size):
            out[e] += jac[e, r] * v[dof + r]
    return out


@kernel
def virtual_node_velocities(vn_dof, vn_size, vn_jac, v):
    """v[n_o:] = J_v v[:n_o] (eq. 14), in place; n_o = len(v) - 3 vn_count."""
    n_o = v.shape[0] - 3 * vn_dof.shape[0]
    for k in range(vn_dof.shape[0]):
        owner = jacobian_velocity(v, vn_dof[k], vn_size[k], vn_jac[k])
        for e in range(3):
            v[n_o + 3 * k + e] = owner[e]


@kernel
def add_jacobian_force(out, dof, size, jac, force, scale):
    """out[owner DOFs] += scale J^T force."""
    for r in range(size):
        out[dof + r] += scale * (jac[0, r] * force[0] + jac[1, r] * force[1] + jac[2, r] * force[2])


# below this, waking the second core costs about what it saves (2-core machine, A_o by CSR rows, 2026-11-26: 5 186
# rows 174 -> 161 us, 13 208 rows 436 -> 282 us; by blocks, 2026-11-28: 5 186 rows 103 -> 113 us, 13 208 rows
# 270 -> 225 us)
PARALLEL_MIN_ROWS = 8000


def _block_matvec(row_group, indptr, pair_start, pair_column, pair_width, data, x, out):
    """out = A_o x for A_o in CSR (``indptr``, ``data``) read by its dense blocks (``SystemPattern.pair_blocks``):
    the rows of group g (``row_group[g]:row_group[g + 1]``) share one column list, the column ranges of its blocks
    ``pair_start[g]:pair_start[g + 1]`` left to right (block q: ``pair_width[q]`` columns from ``pair_column[q]``),
    so the group is a dense row-major (rows x L) array in ``data`` and block q of row r starts L r + (the widths
    before q) after the group's first entry. A group of 3 or 6 rows keeps a sum per row in a register and loads
    each x entry once. Each row is summed over its columns in ascending order, as a CSR row's loop would: the
    result is bit for bit that of A_o's CSR. A row at a time, the same sums took 1.4-1.7x as long (2026-11-28,
    2-core machine: panda_cable at 320 / 1280 segments 19.6 / 90 -> 13.5 / 54 us, soft_mat 93 -> 67 us); a copy
    of the entries block by block (each block contiguous) was no faster than reading them in place, and cost
    6-12 us a step on the cable, 115-600 us on the FEM scenes (2026-11-28: A x on a rod at 320 / 1280 segments
    11.5 / 48.5 us with the copy, 10.6 / 45.5 in place; soft_mat 47.4 / 46.3, soft_ball 84 / 78).

    The offsets into ``data`` and ``x`` are unsigned (``U1`` ...): numba checks every signed index for a
    negative value to wrap, and those checks took ~40 % of the time (captured systems, the same hour: panda_cable
    at 160 / 320 / 1280 segments 10.2 / 18.6 / 76 -> 6.1 / 10.9 / 42.5 us, soft_mat 66 -> 47 us). Groups are
    independent: order-free."""
    for g in prange(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        b = np.uint64(indptr[first])
        length = np.uint64(indptr[first + 1]) - b  # L
        if rows == 3:
            a0 = a1 = a2 = 0.0
            for q in range(pair_start[g], pair_start[g + 1]):
                c0 = np.uint64(pair_column[q])
                c = np.uint64(pair_width[q])
                b1 = b + length
                b2 = b1 + length
                if c == U3:
                    y0, y1, y2 = x[c0], x[c0 + U1], x[c0 + U2]
                    a0 += data[b] * y0
                    a0 += data[b + U1] * y1
                    a0 += data[b + U2] * y2
                    a1 += data[b1] * y0
                    a1 += data[b1 + U1] * y1
                    a1 += data[b1 + U2] * y2
                    a2 += data[b2] * y0
                    a2 += data[b2 + U1] * y1
                    a2 += data[b2 + U2] * y2
                else:
                    for k in range(c):
                        y = x[c0 + k]
                        a0 += data[b + k] * y
                        a1 += data[b1 + k] * y
                        a2 += data[b2 + k] * y
                b += c
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
        elif rows == 6:
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            for q in range(pair_start[g], pair_start[g + 1]):
                c0 = np.uint64(pair_column[q])
                c = np.uint64(pair_width[q])
                b1 = b + length
                b2 = b1 + length
                b3 = b2 + length
                b4 = b3 + length
                b5 = b4 + length
                for k in range(c):
                    y = x[c0 + k]
                    a0 += data[b + k] * y
                    a1 += data[b1 + k] * y
                    a2 += data[b2 + k] * y
                    a3 += data[b3 + k] * y
                    a4 += data[b4 + k] * y
                    a5 += data[b5 + k] * y
                b += c
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
            out[first + 3], out[first + 4], out[first + 5] = a3, a4, a5
        else:
            for r in range(rows):
                acc = 0.0
                row = b + np.uint64(r) * length
                for q in range(pair_start[g], pair_start[g + 1]):
                    c0 = np.uint64(pair_column[q])
                    c = np.uint64(pair_width[q])
                    for k in range(c):
                        acc += data[row + k] * x[c0 + k]
                    row += c
                out[first + r] = acc


# 1 .. 8 as unsigned offsets: numba checks every signed index for a negative value to wrap around, which a hot
# loop pays for at each load (see _block_matvec); uint64 + int64 is float64 in numba, hence these
U1, U2, U3, U4, U5, U6, U7, U8 = (np.uint64(k) for k in range(1, 9))


block_matvec_serial = kernel(_block_matvec)
block_matvec_parallel = parallel_kernel(_block_matvec)


@kernel
def block_matvec(row_group, indptr, pair_start, pair_column, pair_width, data, x, out):
    """out = A_o x (:func:`_block_matvec`), threaded only for large systems (both variants give identical
    results)."""
    if row_group[-1] >= PARALLEL_MIN_ROWS:
        block_matvec_parallel(row_group, indptr, pair_start, pair_column, pair_width, data, x, out)
    else:
        block_matvec_serial(row_group, indptr, pair_start, pair_column, pair_width, data, x, out)


@kernel
def augmented_matvec(system, x, out):
    """out = A x for the augmented A of eq. (15) (``system``: an
    :class:`~cond_ros.sim.dynamics.assembly.AugmentedSystem`), A_o by its blocks (:func:`block_matvec`) and the
    J_v blocks applied matrix-free."""
    row_group, indptr, pair_start, pair_column, pair_width, data, _, vn_dof, vn_size, vn_jac, kv = system
    n_o = row_group[-1]
    block_matvec(row_group, indptr, pair_start, pair_column, pair_width, data, x[:n_o], out[:n_o])
    for k in range(vn_dof.shape[0]):
        base = n_o + 3 * k
        owner_velocity = jacobian_velocity(x, vn_dof[k], vn_size[k], vn_jac[k])
        for e in range(3):
            out[base + e] = kv * (x[base + e] - owner_velocity[e])
        add_jacobian_force(out, vn_dof[k], vn_size[k], vn_jac[k], x[base:base + 3], -kv)


@kernel
def dot(x, y):
    """x^T y, summed in index order (the same rounding in every solver that uses it)."""
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * y[i]
    return acc


@kernel
def banded_cholesky(matrix, lower):
    """L with L L^T = ``matrix`` (symmetric positive definite) within its band, into ``lower``'s band; returns the
    bandwidth, or -1 at a non-positive pivot (``lower`` is then garbage).

    A rod's coarse columns (hat functions, interleaved point by point) couple only to their neighbours, so
    G of ``solvers.cond.fixed_point.coarse_correction`` is banded: O(k b^2) instead of a dense solve's O(k^3)
    (k = 56, b = 11: 2.4 us against numpy's 43 us). A dense G (an FEM body's polynomial fields) has b = k - 1
    and costs what a dense Cholesky does. Only the band of ``lower`` is written and read.
    """
    k = matrix.shape[0]
    band = 0
    for i in range(k):
        for j in range(i):
            if matrix[i, j] != 0.0:
                band = max(band, i - j)
                break
    for j in range(k):
        top = max(0, j - band)
        pivot = matrix[j, j]
        for p in range(top, j):
            pivot -= lower[j, p] * lower[j, p]
        if not pivot > 0.0:
            return -1
        lower[j, j] = np.sqrt(pivot)
        for i in range(j + 1, min(k, j + band + 1)):
            acc = matrix[i, j]
            for p in range(max(top, i - band), j):
                acc -= lower[i, p] * lower[j, p]
            lower[i, j] = acc / lower[j, j]
    return band


@kernel
def solve_banded_cholesky(lower, band, rhs):
    """x with L L^T x = ``rhs`` for :func:`banded_cholesky`'s factor ``lower`` of bandwidth ``band``."""
    k = lower.shape[0]
    x = rhs.copy()
    for i in range(k):  # L y = rhs
        for p in range(max(0, i - band), i):
            x[i] -= lower[i, p] * x[p]
        x[i] /= lower[i, i]
    for i in range(k - 1, -1, -1):  # L^T x = y
        for p in range(i + 1, min(k, i + band + 1)):
            x[i] -= lower[p, i] * x[p]
        x[i] /= lower[i, i]
    return x
