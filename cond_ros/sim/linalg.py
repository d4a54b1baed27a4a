"""The sparse kernels of the step's linear system: A_o x in CSR, and the augmented A of eq. (15) with the
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


# below this, waking the second core costs about what it saves (2-core machine, csr_matvec, 2026-11-26: 5 186 rows
# 174 -> 161 us, 13 208 rows 436 -> 282 us)
PARALLEL_MIN_ROWS = 8000


def _csr_matvec(indptr, indices, data, row_group, x, out):
    """out = A x for A_o's CSR, whose rows come in groups with one column list each (``row_group``: the first
    row of each group, then the row count; a DOF group's rows, ``SystemPattern.row_group``). A group of 3 or 6
    rows loads each x entry once for all of its rows and keeps a sum per row in a register (panda_cable, 320
    segments, 2026-11-27: 29.5 -> 18.9 us); every row is still summed over its own entries in order, so the
    result is a per-row loop's, bit for bit. Groups are independent, so the result is order-free."""
    for g in prange(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        start = indptr[first]
        length = indptr[first + 1] - start
        if rows == 6:
            s1, s2, s3, s4, s5 = indptr[first + 1], indptr[first + 2], indptr[first + 3], indptr[first + 4], \
                indptr[first + 5]
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            for p in range(length):
                xc = x[indices[start + p]]
                a0 += data[start + p] * xc
                a1 += data[s1 + p] * xc
                a2 += data[s2 + p] * xc
                a3 += data[s3 + p] * xc
                a4 += data[s4 + p] * xc
                a5 += data[s5 + p] * xc
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
            out[first + 3], out[first + 4], out[first + 5] = a3, a4, a5
        elif rows == 3:
            s1, s2 = indptr[first + 1], indptr[first + 2]
            a0 = a1 = a2 = 0.0
            for p in range(length):
                xc = x[indices[start + p]]
                a0 += data[start + p] * xc
                a1 += data[s1 + p] * xc
                a2 += data[s2 + p] * xc
            out[first], out[first + 1], out[first + 2] = a0, a1, a2
        else:
            for i in range(first, first + rows):
                acc = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    acc += data[p] * x[indices[p]]
                out[i] = acc


csr_matvec_serial = kernel(_csr_matvec)
csr_matvec_parallel = parallel_kernel(_csr_matvec)


@kernel
def csr_matvec(indptr, indices, data, row_group, x, out):
    """out = A x, threaded only for large systems (both variants give identical results)."""
    if indptr.shape[0] - 1 >= PARALLEL_MIN_ROWS:
        csr_matvec_parallel(indptr, indices, data, row_group, x, out)
    else:
        csr_matvec_serial(indptr, indices, data, row_group, x, out)


@kernel
def augmented_matvec(indptr, indices, data, row_group, vn_dof, vn_size, vn_jac, kv, x, out):
    """out = A x for the augmented A of eq. (15), with A_o in CSR (rows grouped by ``row_group``, see
    :func:`csr_matvec`) and the J_v blocks applied matrix-free."""
    n_o = indptr.shape[0] - 1
    csr_matvec(indptr, indices, data, row_group, x[:n_o], out[:n_o])
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
