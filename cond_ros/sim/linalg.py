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
PARALLEL_MIN_ENTRIES = 100_000  # of A_o, from which gather runs on all cores


def _gather(values, index, out):
    """out[i] = values[index[i]] (A_o's entries into block order, ``SystemPattern.pair_blocks``): numpy's ``take``
    took 2.3x as long."""
    for i in prange(index.shape[0]):
        out[i] = values[np.uint64(index[i])]  # unsigned: no wraparound check (U1)


gather_serial = kernel(_gather)
gather_parallel = parallel_kernel(_gather)


@kernel
def gather(values, index, out):
    """:func:`_gather`, threaded for a large system's A_o (both variants give identical results): FEM assembly
    leaves A_o's entries in both cores' caches (soft_ball, 203 000 entries: 0.60 ms a step serial, against 0.17 ms
    on a captured copy)."""
    if index.shape[0] >= PARALLEL_MIN_ENTRIES:
        gather_parallel(values, index, out)
    else:
        gather_serial(values, index, out)


def _block_matvec(row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, x, out):
    """out = A_o x for A_o stored as its dense blocks (``SystemPattern.pair_blocks``): row group g's blocks are
    ``pair_start[g]:pair_start[g + 1]``, block q covers columns ``pair_column[q]`` on (``pair_width[q]`` of
    them) and is stored row-major from ``pair_data[pair_offset[q]]``. A group of 3 or 6 rows keeps a sum per row in
    a register and loads each x entry once. Each row is summed over its columns in ascending order, as a CSR
    row's loop would: the result is bit for bit that of A_o's CSR. Read in CSR order (one column list per row group,
    each row's entries apart), the same sums took 1.4-1.7x as long (2026-11-28, 2-core machine: panda_cable at
    320 / 1280 segments 19.6 / 90 -> 13.5 / 54 us, soft_mat 93 -> 67 us).

    The offsets into ``pair_data`` and ``x`` are unsigned (``U1`` ...): numba checks every signed index for a
    negative value to wrap, and those checks took ~40 % of the time (captured systems, the same hour: panda_cable
    at 160 / 320 / 1280 segments 10.2 / 18.6 / 76 -> 6.1 / 10.9 / 42.5 us, soft_mat 66 -> 47 us). Groups are
    independent: order-free."""
    for g in prange(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        b = np.uint64(pair_offset[pair_start[g]])
        if rows == 3:
            a0 = a1 = a2 = 0.0
            for q in range(pair_start[g], pair_start[g + 1]):
                c0 = np.uint64(pair_column[q])
                c = np.uint64(pair_width[q])
                if c == U3:
                    y0, y1, y2 = x[c0], x[c0 + U1], x[c0 + U2]
                    a0 += pair_data[b] * y0
                    a0 += pair_data[b + U1] * y1
                    a0 += pair_data[b + U2] * y2
                    a1 += pair_data[b + U3] * y0
                    a1 += pair_data[b + U4] * y1
                    a1 += pair_data[b + U5] * y2
                    a2 += pair_data[b + U6] * y0
                    a2 += pair_data[b + U7] * y1
                    a2 += pair_data[b + U8] * y2
                else:
                    for k in range(c):
                        y = x[c0 + k]
                        a0 += pair_data[b + k] * y
                        a1 += pair_data[b + c + k] * y
                        a2 += pair_data[b + c + c + k] * y
                b += U3 * c
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
        elif rows == 6:
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            for q in range(pair_start[g], pair_start[g + 1]):
                c0 = np.uint64(pair_column[q])
                c = np.uint64(pair_width[q])
                b1 = b + c
                b2 = b1 + c
                b3 = b2 + c
                b4 = b3 + c
                b5 = b4 + c
                for k in range(c):
                    y = x[c0 + k]
                    a0 += pair_data[b + k] * y
                    a1 += pair_data[b1 + k] * y
                    a2 += pair_data[b2 + k] * y
                    a3 += pair_data[b3 + k] * y
                    a4 += pair_data[b4 + k] * y
                    a5 += pair_data[b5 + k] * y
                b = b5 + c
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
            out[first + 3], out[first + 4], out[first + 5] = a3, a4, a5
        else:
            for r in range(rows):
                acc = 0.0
                for q in range(pair_start[g], pair_start[g + 1]):
                    c0 = np.uint64(pair_column[q])
                    c = np.uint64(pair_width[q])
                    row = np.uint64(pair_offset[q]) + np.uint64(r) * c
                    for k in range(c):
                        acc += pair_data[row + k] * x[c0 + k]
                out[first + r] = acc


# 1 .. 8 as unsigned offsets: numba checks every signed index for a negative value to wrap around, which a hot
# loop pays for at each load (see _block_matvec); uint64 + int64 is float64 in numba, hence these
U1, U2, U3, U4, U5, U6, U7, U8 = (np.uint64(k) for k in range(1, 9))


block_matvec_serial = kernel(_block_matvec)
block_matvec_parallel = parallel_kernel(_block_matvec)


@kernel
def block_matvec(row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, x, out):
    """out = A_o x (:func:`_block_matvec`), threaded only for large systems (both variants give identical
    results)."""
    if row_group[-1] >= PARALLEL_MIN_ROWS:
        block_matvec_parallel(row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, x, out)
    else:
        block_matvec_serial(row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, x, out)


@kernel
def augmented_matvec(system, x, out):
    """out = A x for the augmented A of eq. (15) (``system``: an
    :class:`~cond_ros.sim.dynamics.assembly.AugmentedSystem`), A_o by its blocks (:func:`block_matvec`) and the
    J_v blocks applied matrix-free."""
    row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, _, vn_dof, vn_size, vn_jac, kv = system
    n_o = row_group[-1]
    block_matvec(row_group, pair_start, pair_column, pair_width, pair_offset, pair_data, x[:n_o], out[:n_o])
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
