"""The sparse kernels of the step's linear system: A_o x in CSR, and the augmented A of eq. (15) with the
virtual nodes' J_v blocks applied matrix-free; point Jacobians times velocities and their transposes times
forces. Assembly (``dynamics``) fills the arrays; the solvers apply them through these kernels.
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


def _csr_matvec(indptr, indices, data, x, out):
    """out = A x, one row per iteration (rows are independent, so the result is order-free)."""
    for i in prange(indptr.shape[0] - 1):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * x[indices[p]]
        out[i] = acc


csr_matvec_serial = kernel(_csr_matvec)
csr_matvec_parallel = parallel_kernel(_csr_matvec)


@kernel
def csr_matvec(indptr, indices, data, x, out):
    """out = A x, threaded only for large systems (both variants give identical results)."""
    if indptr.shape[0] - 1 >= PARALLEL_MIN_ROWS:
        csr_matvec_parallel(indptr, indices, data, x, out)
    else:
        csr_matvec_serial(indptr, indices, data, x, out)


@kernel
def augmented_matvec(indptr, indices, data, vn_dof, vn_size, vn_jac, kv, x, out):
    """out = A x for the augmented A of eq. (15), with A_o in CSR and the J_v blocks applied matrix-free."""
    n_o = indptr.shape[0] - 1
    csr_matvec(indptr, indices, data, x[:n_o], out[:n_o])
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
