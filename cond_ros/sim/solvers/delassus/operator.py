"""The Delassus operator G = J_c A^-1 J_c^T of eq. (2), for the impulse-space baselines.

The paper's I-FPI baselines (Sec. V-C1) factorize A with a sparse Cholesky
(Eigen's SimplicialLLT) and assemble G column by column. Here the
factorization is qdldl's sparse LDL^T (Apache-2.0, AMD ordering; A is
symmetric positive definite, so LDL^T and LL^T do the same work), and the
3 m right-hand sides of A X = J_c^T are solved together by one numba kernel
that walks the factor once for a block of columns.

With X = A^-1 J_c^T (the impulse response), every impulse-space solver shares:

- v_hat = v_free + X lambda, with v_free = A^-1 b,
- u = J_c v_hat + phi = G lambda + u_free, u_free = J_c v_free + phi,

and maps its iteration residual to velocity space as ||X (lambda^{l+1} - lambda^l)||
(the paper: "converted to velocity space using the map A^-1 J^T"), so that its
tolerance means the same as COND's theta on ||v^{l+1} - v^l||.

Contacts act on the real contact points here: a contact on a virtual node
(eq. 14) uses the node's J_v on its owner's DOFs, and no virtual-node
coupling enters A.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import qdldl
import scipy.sparse as sp
from numba import prange

from ...collision.nodalization import ContactSet
from ...dynamics.assembly import LinearSystem
from ...jit import kernel, parallel_kernel
from ...validate import ModelError

COLUMN_BLOCK = 32  # right-hand sides solved together: one pass over the factor serves a block


@kernel
def _contact_jacobian_triplets(dof_count, dof_a, dof_b, frame, vn_dof, vn_size, vn_jac, rows, cols, vals):
    """COO triplets of J_c (3 m x dof_count) in contact frames; returns the number written."""
    k = 0
    for m in range(dof_a.shape[0]):
        for side in range(2):
            node = dof_a[m] if side == 0 else dof_b[m]
            if node < 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            if node < dof_count:  # a node of the original DOFs: J = I on its translation
                for e in range(3):
                    for r in range(3):
                        rows[k] = 3 * m + e
                        cols[k] = node + r
                        vals[k] = sign * frame[m, e, r]
                        k += 1
            else:  # a virtual node: the real point's J_v on its owner
                vn = (node - dof_count) // 3
                for e in range(3):
                    for c in range(vn_size[vn]):
                        acc = 0.0
                        for r in range(3):
                            acc += frame[m, e, r] * vn_jac[vn, r, c]
                        rows[k] = 3 * m + e
                        cols[k] = vn_dof[vn] + c
                        vals[k] = sign * acc
                        k += 1
    return k


def contact_jacobian(dof_count: int, contacts: ContactSet) -> sp.csr_matrix:
    """J_c of eq. (2): contact-frame velocities u = J_c v of the contact points, (3 m x dof_count)."""
    width = max(3, contacts.vn_jac.shape[2] if contacts.vn_jac.ndim == 3 else 3)
    capacity = 2 * 3 * width * contacts.count
    rows, cols = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
    vals = np.empty(capacity)
    vn_jac = contacts.vn_jac if contacts.vn_jac.ndim == 3 else np.zeros((0, 3, 3))
    n = _contact_jacobian_triplets(dof_count, contacts.dof_a, contacts.dof_b, contacts.frame, contacts.vn_dof,
                                   contacts.vn_size, np.ascontiguousarray(vn_jac), rows, cols, vals)
    return sp.csr_matrix((vals[:n], (rows[:n], cols[:n])), shape=(3 * contacts.count, dof_count))


def _ldl_solve_block(indptr, indices, lower, diagonal, x):
    """x <- (L + I)^-T D^-1 (L + I)^-1 x for the columns of x (n x k, rows in factor order)."""
    n = diagonal.shape[0]
    k = x.shape[1]
    for j in range(n):
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            f = lower[p]
            for c in range(k):
                x[i, c] -= f * x[j, c]
    for j in range(n):
        inv = 1.0 / diagonal[j]
        for c in range(k):
            x[j, c] *= inv
    for j in range(n - 1, -1, -1):
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            f = lower[p]
            for c in range(k):
                x[j, c] -= f * x[i, c]


_ldl_solve_block_kernel = kernel(_ldl_solve_block)


@parallel_kernel
def _ldl_solve_columns(indptr, indices, lower, diagonal, permutation, rhs, out):
    """out = A^-1 rhs for the columns of rhs (n x k), in blocks of COLUMN_BLOCK columns on all threads."""
    n, k = rhs.shape
    blocks = (k + COLUMN_BLOCK - 1) // COLUMN_BLOCK
    for b in prange(blocks):
        c0 = b * COLUMN_BLOCK
        c1 = min(k, c0 + COLUMN_BLOCK)
        x = np.empty((n, c1 - c0))
        for i in range(n):
            for c in range(c1 - c0):
                x[i, c] = rhs[permutation[i], c0 + c]
        _ldl_solve_block_kernel(indptr, indices, lower, diagonal, x)
        for i in range(n):
            for c in range(c1 - c0):
                out[permutation[i], c0 + c] = x[i, c]


@kernel
def velocity_change_norm(response, change):
    """||X d lambda|| for the impulse response X (dof x 3m, row-major): the residual every impulse-space
    solver reports; columns with no change are skipped."""
    nonzero = np.empty(change.shape[0], np.int64)
    count = 0
    for j in range(change.shape[0]):
        if change[j] != 0.0:
            nonzero[count] = j
            count += 1
    total = 0.0
    for r in range(response.shape[0]):
        acc = 0.0
        for k in range(count):
            acc += response[r, nonzero[k]] * change[nonzero[k]]
        total += acc * acc
    return np.sqrt(total)


@kernel
def contact_velocity_at(delassus, free_velocity, force):
    """u = G lambda + u_free, column by column over the nonzero forces (G symmetric: rows are read)."""
    u = free_velocity.copy()
    for j in range(force.shape[0]):
        f = force[j]
        if f != 0.0:
            for r in range(u.shape[0]):
                u[r] += delassus[j, r] * f
    return u


class SparseFactor:
    """A = P^T (L + I) D (L + I)^T P by qdldl, solving many right-hand sides at once."""

    def __init__(self, matrix: sp.spmatrix):
        try:
            factor = qdldl.Solver(sp.csc_matrix(matrix))
        except ValueError as err:
            raise ModelError(f"sparse LDL^T of A failed ({err}); A must be symmetric positive definite") from err
        lower, diagonal, permutation = factor.factors()
        if not np.all(diagonal > 0.0):
            raise ModelError("sparse LDL^T of A: a non-positive pivot; A is not positive definite")
        lower = sp.csc_matrix(lower)
        self._arrays = (lower.indptr.astype(np.int64), lower.indices.astype(np.int64), lower.data,
                        np.asarray(diagonal, float), np.asarray(permutation, np.int64))
        self.size = len(diagonal)
        self.fill = lower.nnz

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """A^-1 rhs for a vector (n,) or the columns of a matrix (n, k)."""
        matrix = np.ascontiguousarray(rhs.reshape(self.size, -1), dtype=float)
        out = np.empty_like(matrix)
        _ldl_solve_columns(*self._arrays, matrix, out)
        return out.reshape(rhs.shape)


@dataclasses.dataclass
class ContactProblem:
    """The step's contact problem in impulse space: u = G lambda + u_free, lambda in the friction cones.

    Attributes:
        delassus: G = J_c A^-1 J_c^T + omega I (3 m x 3 m, dense, symmetric), contact-frame rows (n, t1, t2).
        free_velocity: u_free = J_c v_free + phi, the contact velocities with no contact force, (3 m,).
        friction: (mu1, mu2) per contact, (m, 2).
        impulse_response: X = A^-1 J_c^T, (dof_count x 3 m).
        free_dof_velocity: v_free = A^-1 b, (dof_count,).
        jacobian: J_c, (3 m x dof_count) CSR.
        factor_ms, delassus_ms: time to factorize A, and to assemble G given the factor [ms].
    """

    delassus: np.ndarray
    free_velocity: np.ndarray
    friction: np.ndarray
    impulse_response: np.ndarray
    free_dof_velocity: np.ndarray
    jacobian: sp.csr_matrix
    factor_ms: float = 0.0
    delassus_ms: float = 0.0

    @property
    def count(self) -> int:
        return len(self.friction)

    def contact_velocity(self, force: np.ndarray) -> np.ndarray:
        """u = G lambda + u_free for a flat force vector (3 m,)."""
        return self.delassus @ force + self.free_velocity

    def velocity(self, force: np.ndarray) -> np.ndarray:
        """v_hat = v_free + X lambda on the original DOFs."""
        return self.free_dof_velocity + self.impulse_response @ force

    def velocity_change(self, force_change: np.ndarray) -> float:
        """||X d lambda||: an impulse-space change mapped to velocity space (the paper's residual)."""
        return float(np.linalg.norm(self.impulse_response @ force_change))

    def block(self, m: int) -> np.ndarray:
        """G_mm, the 3 x 3 diagonal block of contact m."""
        return self.delassus[3 * m:3 * m + 3, 3 * m:3 * m + 3]


def build_contact_problem(system: LinearSystem, contacts: ContactSet, regularization: float = 0.0,
                          factor: SparseFactor | None = None) -> ContactProblem:
    """Factorize A_o (unless ``factor`` is given) and assemble the Delassus operator of ``contacts``."""
    n = system.dof_count
    t0 = time.perf_counter()
    if factor is None:
        factor = SparseFactor(sp.csr_matrix((system.data, system.indices, system.indptr), shape=(n, n)))
    t1 = time.perf_counter()
    free_dof_velocity = factor.solve(system.b)
    jacobian = contact_jacobian(n, contacts)
    response = factor.solve(jacobian.T.toarray()) if contacts.count else np.zeros((n, 0))
    delassus = jacobian @ response
    delassus = 0.5 * (delassus + delassus.T)  # exact in exact arithmetic; keeps G symmetric in floating point
    delassus[np.diag_indices_from(delassus)] += regularization
    free_velocity = jacobian @ free_dof_velocity + contacts.offset.reshape(-1)
    t2 = time.perf_counter()
    return ContactProblem(delassus=delassus, free_velocity=free_velocity, friction=contacts.friction,
                          impulse_response=response, free_dof_velocity=free_dof_velocity, jacobian=jacobian,
                          factor_ms=1e3 * (t1 - t0), delassus_ms=1e3 * (t2 - t1))
