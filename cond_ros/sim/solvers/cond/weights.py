"""W, the step-size matrix of COND's V-FPI (Sec. IV-C).

Prop. 3 constrains W only on contact nodes: each node's three translation DOFs share one scalar w_bar,
so the surrogate Delassus operator J_c W J_c^T stays diagonal. Elsewhere any symmetric positive W is
allowed, which the block W below uses.

- Frobenius (IV-C1): w_ii = a_ii / ||A_i*||^2. Safe (||I - W A||_F is minimized), but where a row's
  off-diagonal entries dwarf its diagonal, w_ii is tiny. A Cosserat rod's rotation rows are such rows:
  the shear springs act on a segment's rotation through a lever of half a segment, which couples it
  to the neighbours' translations far more strongly than its own tiny rotational inertia weighs.
  On a 35-segment rope W A then spans 1e-6 .. 1.8 and V-FPI needs ~1e4 iterations per step.
- Block (not in the paper): W = alpha * blockdiag(A_bb^-1) over 3x3 blocks (a particle's or a body's
  translation, a body's rotation) and each robot's joint block, with w_bar = alpha / mean(a_ii) on
  contact nodes (Prop. 3) and 1 / k_v on virtual nodes. The same rope spans 0.02 .. 1.8. alpha keeps
  the largest eigenvalue of W A below 2 (the contraction condition of Sec. IV-C), estimated each step
  by power iteration.
"""
import numpy as np

from ...dynamics.assembly import GROUP_BODY, GROUP_ROBOT
from ...jit import kernel
from ...linalg import U2, U3, U4, U5, augmented_matvec

WEIGHTS_FROBENIUS = 0
WEIGHTS_BB1 = 1
WEIGHTS_BB2 = 2
WEIGHTS_BB_ALTERNATING = 3
WEIGHTS_BLOCK = 4
BLOCK_LARGEST_EIGENVALUE = 1.8  # alpha scales W A's largest eigenvalue to at most this (< 2)
POWER_ITERATIONS = 30


@kernel
def frobenius_terms(system, diag, row_norm2):
    """a_ii and ||A_i*||^2 of every row of the augmented A (eq. 15) of ``system`` (an
    :class:`~cond_ros.sim.dynamics.assembly.AugmentedSystem`), for IV-C1. A_o's CSR is read by DOF groups
    (``linalg.block_matvec``'s layout): the rows of a group of 3 or 6 sum side by side, each still over its own
    row in column order (the same bits as a row loop), and the diagonal entries are read from the group's
    diagonal block (panda_cable, 320 segments: 31 us by CSR rows one after another, 18 side by side)."""
    row_group, indptr, pair_start, pair_column, pair_width, data, _, vn_dof, vn_size, vn_jac, kv = system
    n_o = row_group[-1]
    for g in range(row_group.shape[0] - 1):
        first = row_group[g]
        rows = row_group[g + 1] - first
        b = np.uint64(indptr[first])  # unsigned: no wraparound check (linalg.U1)
        length = np.uint64(indptr[first + 1]) - b
        if rows == 6 or rows == 3:
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            for k in range(b, b + length):
                x0 = data[k]
                x1 = data[k + length]
                x2 = data[k + U2 * length]
                a0 += x0 * x0
                a1 += x1 * x1
                a2 += x2 * x2
                if rows == 6:
                    x3 = data[k + U3 * length]
                    x4 = data[k + U4 * length]
                    x5 = data[k + U5 * length]
                    a3 += x3 * x3
                    a4 += x4 * x4
                    a5 += x5 * x5
            row_norm2[first], row_norm2[first + 1], row_norm2[first + 2] = a0, a1, a2
            if rows == 6:
                row_norm2[first + 3], row_norm2[first + 4], row_norm2[first + 5] = a3, a4, a5
        else:
            for r in range(rows):
                acc = 0.0
                for k in range(indptr[first + r], indptr[first + r + 1]):
                    acc += data[k] * data[k]
                row_norm2[first + r] = acc
        for r in range(rows):
            diag[first + r] = 0.0
        offset = b  # where the group's block q starts in its first row
        for q in range(pair_start[g], pair_start[g + 1]):
            if pair_column[q] == first:  # the group's own block
                for r in range(rows):
                    diag[first + r] = data[offset + np.uint64(r) * length + np.uint64(r)]
            offset += np.uint64(pair_width[q])
    for k in range(vn_dof.shape[0]):
        dof = vn_dof[k]
        jac = vn_jac[k]
        base = n_o + 3 * k
        # squared entries of J_v: its rows are the virtual rows' -k_v J_v, its columns the owner's -k_v J_v^T
        for e in range(3):
            acc = 0.0
            for r in range(vn_size[k]):
                acc += jac[e, r] * jac[e, r]
                row_norm2[dof + r] += kv * kv * jac[e, r] * jac[e, r]
            diag[base + e] = kv
            row_norm2[base + e] = kv * kv * (1.0 + acc)


@kernel
def frobenius_weights(diag, row_norm2, dof_a, dof_b, w):
    """w_ii = a_ii / ||A_i*||^2, with one shared w_bar per contact node (Prop. 3, IV-C1)."""
    for i in range(w.shape[0]):
        w[i] = diag[i] / row_norm2[i]
    for m in range(dof_a.shape[0]):
        for node in (dof_a[m], dof_b[m]):
            if node < 0:
                continue
            num = diag[node] + diag[node + 1] + diag[node + 2]
            den = row_norm2[node] + row_norm2[node + 1] + row_norm2[node + 2]
            w[node] = w[node + 1] = w[node + 2] = num / den


def block_layout(group_dof, group_size, group_kind, node_dof):
    """The diagonal blocks of the block W: (first DOF, size) of each, in DOF order.

    ``node_dof`` marks the first DOF of every contact node among the original DOFs; a node's
    translation keeps the scalar w_bar of Prop. 3 and gets no block.
    """
    starts, sizes = [], []
    for dof, size, kind in zip(group_dof, group_size, group_kind):
        if kind == GROUP_ROBOT:
            starts.append(dof)
            sizes.append(size)
            continue
        if not node_dof[dof]:
            starts.append(dof)
            sizes.append(3)
        if kind == GROUP_BODY:
            starts.append(dof + 3)
            sizes.append(3)
    sizes = np.asarray(sizes, np.int64)
    return (np.asarray(starts, np.int64), sizes,
            np.concatenate([[0], np.cumsum(sizes * sizes)]).astype(np.int64))


@kernel
def block_weights(indptr, indices, data, kv, n_vn, dof_a, dof_b, block_dof, block_size, block_ptr, w, block_data):
    """Fill the block W (before alpha): inverse diagonal blocks, w_bar = 1 / mean(a_ii) on contact nodes.

    DOFs inside a block get w_ii = 0, so the diagonal part of W x leaves them to the blocks.
    """
    n_o = indptr.shape[0] - 1
    diag = np.zeros(n_o)
    for i in range(n_o):
        for p in range(indptr[i], indptr[i + 1]):
            if indices[p] == i:
                diag[i] = data[p]
    w[:] = 0.0
    for i in range(n_o, n_o + 3 * n_vn):
        w[i] = 1.0 / kv
    for m in range(dof_a.shape[0]):
        for node in (dof_a[m], dof_b[m]):
            if 0 <= node < n_o:
                w[node] = w[node + 1] = w[node + 2] = 3.0 / (diag[node] + diag[node + 1] + diag[node + 2])
    for k in range(block_dof.shape[0]):
        dof = block_dof[k]
        size = block_size[k]
        block = np.zeros((size, size))
        for r in range(size):
            for p in range(indptr[dof + r], indptr[dof + r + 1]):
                c = indices[p] - dof
                if 0 <= c < size:
                    block[r, c] = data[p]
        inverse = np.linalg.inv(block)
        for r in range(size):
            for c in range(size):
                block_data[block_ptr[k] + r * size + c] = inverse[r, c]


@kernel
def apply_block_weights(w, block_dof, block_size, block_ptr, block_data, x, out):
    """out = W x for a diagonal ``w`` plus dense diagonal blocks (empty for a purely diagonal W)."""
    for i in range(x.shape[0]):
        out[i] = w[i] * x[i]
    for k in range(block_dof.shape[0]):
        dof = block_dof[k]
        size = block_size[k]
        base = block_ptr[k]
        for r in range(size):
            acc = 0.0
            for c in range(size):
                acc += block_data[base + r * size + c] * x[dof + c]
            out[dof + r] = acc


@kernel
def largest_eigenvalue(system, w, block_dof, block_size, block_ptr, block_data, iterations):
    """Power-iteration estimate of W A's largest eigenvalue (real: W A is similar to W^1/2 A W^1/2), A that of
    ``system`` (an :class:`~cond_ros.sim.dynamics.assembly.AugmentedSystem`).

    The start vector is fixed, so the estimate (and the simulation) is deterministic.
    """
    n = w.shape[0]
    x = np.empty(n)
    for i in range(n):
        x[i] = 1.0 + (i % 7) / 7.0
    ax = np.empty(n)
    wax = np.empty(n)
    estimate = 0.0
    for _ in range(iterations):
        norm = np.sqrt(np.sum(x * x))
        x /= norm
        augmented_matvec(system, x, ax)
        apply_block_weights(w, block_dof, block_size, block_ptr, block_data, ax, wax)
        estimate = np.sqrt(np.sum(wax * wax))
        x[:] = wax
    return estimate
