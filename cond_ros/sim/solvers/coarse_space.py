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

import itertools

import numpy as np

from ..dynamics import GROUP_PARTICLE, jacobian_velocity
from ..jit import kernel
from ..model import Model, State

POLYNOMIAL_DEGREE = 2
RANK_TOLERANCE = 1e-8  # relative singular value below which a body's polynomial field is dropped (few nodes)
# per rod; panda_cable at 320 segments over 0-10 s: 14.4 mean iterations (max 29); 2 points: 14.6 (35), 16: 14.7 (27);
# 40-60 without the rod's columns
ROD_COARSE_POINTS = 4


def _polynomial_fields(positions: np.ndarray, degree: int = POLYNOMIAL_DEGREE) -> np.ndarray:
    """Orthonormal basis (node count x r) of the polynomials of degree <= ``degree`` in the node positions."""
    r = positions - positions.mean(axis=0)
    r /= max(float(np.sqrt((r * r).sum(axis=1).max())), np.finfo(float).tiny)  # scale for conditioning
    monomials = np.column_stack([np.prod(r[:, list(axes)], axis=1) for d in range(degree + 1)
                                 for axes in itertools.combinations_with_replacement(range(3), d)])
    u, s, _ = np.linalg.svd(monomials, full_matrices=False)
    return u[:, s > RANK_TOLERANCE * s[0]]


def _rod_fields(segments: int, points: int = ROD_COARSE_POINTS) -> np.ndarray:
    """Hat functions of the segment index on ``points`` evenly spaced segments, (segments x points); they
    sum to 1 on every segment (a rigid translation of the rod is in their span)."""
    points = min(points, segments)
    s = np.linspace(0.0, 1.0, segments)[:, None] * (points - 1)
    return np.clip(1.0 - np.abs(s - np.arange(points)[None, :]), 0.0, None)


def coarse_basis(model: Model, state: State, pattern, vn_dof: np.ndarray, vn_size: np.ndarray,
                 vn_jac: np.ndarray, *, previous: np.ndarray | None = None) -> np.ndarray:
    """The coarse space P of the step, shape (n, k) over the augmented DOFs (original, then virtual nodes).

    ``pattern`` is the model's :class:`~cond_ros.sim.dynamics.SystemPattern`; ``vn_*`` are the step's
    virtual nodes (``ContactSet``). ``previous``: the basis of an earlier step of the same model; without
    FEM bodies its rows on the original DOFs depend on nothing that changes, and are reused.
    """
    n_o = model.dof_count
    if previous is not None and not np.any(model.particle_object >= 0):
        basis = np.zeros((n_o + 3 * len(vn_dof), previous.shape[1]))
        basis[:n_o] = previous[:n_o]
        _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac)
        return basis
    blocks = []  # (rows, values (rows x columns)) of each column block on the original DOFs
    objects = model.particle_object
    for body in np.unique(objects[objects >= 0]):
        nodes = np.flatnonzero(objects == body)
        fields = _polynomial_fields(state.particle_q[nodes])
        for component in range(3):
            blocks.append((3 * nodes + component, fields))
    for r in range(len(model.rod_body_start) - 1):
        bodies = model.rod_bodies[model.rod_body_start[r]:model.rod_body_start[r + 1]]
        fields = _rod_fields(len(bodies))
        interleaved = np.zeros((3 * len(bodies), 3 * fields.shape[1]))  # column 3 j + e: point j, component e
        for e in range(3):
            interleaved[e::3, e::3] = fields
        rows = (model.body_dof_start + 6 * bodies)[:, None] + np.arange(3)
        blocks.append((rows.reshape(-1), interleaved))
    in_rod = np.zeros(len(pattern.group_dof), bool)
    in_rod[model.particle_count + model.rod_bodies] = True
    whole = (pattern.group_kind != GROUP_PARTICLE) & ~in_rod
    for dof, size in zip(pattern.group_dof[whole], pattern.group_size[whole]):
        blocks.append((dof + np.arange(size), np.eye(size)))
    k = sum(values.shape[1] for _, values in blocks)
    basis = np.zeros((n_o + 3 * len(vn_dof), k))
    column = 0
    for rows, values in blocks:
        basis[rows, column:column + values.shape[1]] = values
        column += values.shape[1]
    _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac)
    return basis


def _virtual_node_rows(basis, n_o, vn_dof, vn_size, vn_jac) -> None:
    for j in range(len(vn_dof)):
        owner = basis[vn_dof[j]:vn_dof[j] + vn_size[j]]
        basis[n_o + 3 * j:n_o + 3 * j + 3] = vn_jac[j, :, :vn_size[j]] @ owner


@kernel
def _times_basis(indptr, indices, data, vn_dof, vn_size, vn_jac, kv, basis, first, last, out, out_ranges):
    """out = A P for the augmented A of eq. (15), skipping the zero columns of each row of P, and the column
    range [first, last) outside which each row of ``out`` is zero (``out_ranges``, (n, 2)).

    Row r of P is zero outside columns [first[r], last[r]) (a node of one FEM body touches only that
    body's columns), which makes this ~3x cheaper than A times each column of P.
    """
    n_o = indptr.shape[0] - 1
    k_all = basis.shape[1]
    out[:] = 0.0
    out_ranges[:, 0] = k_all
    out_ranges[:, 1] = 0
    for i in range(n_o):
        lo = k_all
        hi = 0
        for p in range(indptr[i], indptr[i + 1]):
            c = indices[p]
            f = first[c]
            t = last[c]
            if t <= f:
                continue
            lo = min(lo, f)
            hi = max(hi, t)
            x = data[p]
            for j in range(f, t):
                out[i, j] += x * basis[c, j]
        out_ranges[i, 0] = lo
        out_ranges[i, 1] = hi
    for k in range(vn_dof.shape[0]):
        base = n_o + 3 * k
        lo = k_all
        hi = 0
        for q in range(vn_size[k] + 3):  # the owner's rows, then the node's
            r = vn_dof[k] + q if q < vn_size[k] else base + q - vn_size[k]
            if last[r] > first[r]:
                lo = min(lo, first[r])
                hi = max(hi, last[r])
        for j in range(lo, hi):
            owner = jacobian_velocity(basis[:, j], vn_dof[k], vn_size[k], vn_jac[k])
            for e in range(3):
                out[base + e, j] = kv * (basis[base + e, j] - owner[e])
                for r in range(vn_size[k]):
                    out[vn_dof[k] + r, j] -= kv * vn_jac[k, e, r] * basis[base + e, j]
        if hi > lo:
            for q in range(vn_size[k] + 3):
                r = vn_dof[k] + q if q < vn_size[k] else base + q - vn_size[k]
                out_ranges[r, 0] = min(out_ranges[r, 0], lo)
                out_ranges[r, 1] = max(out_ranges[r, 1], hi)
    for r in range(out_ranges.shape[0]):
        if out_ranges[r, 1] <= out_ranges[r, 0]:
            out_ranges[r, 0] = 0
            out_ranges[r, 1] = 0


@kernel
def column_ranges(matrix):
    """[first, last) of each row's nonzero columns ((0, 0) for a zero row), shape (rows, 2)."""
    out = np.zeros((matrix.shape[0], 2), np.int64)
    for r in range(matrix.shape[0]):
        first = -1
        last = 0
        for j in range(matrix.shape[1]):
            if matrix[r, j] != 0.0:
                if first < 0:
                    first = j
                last = j + 1
        if first >= 0:
            out[r, 0] = first
            out[r, 1] = last
    return out


@kernel
def _galerkin(basis, a_basis, ranges, b, galerkin, coarse_b):
    """P^T (A P) and P^T b over the rows' column ranges."""
    galerkin[:] = 0.0
    coarse_b[:] = 0.0
    for r in range(basis.shape[0]):
        for i in range(ranges[r, 0], ranges[r, 1]):
            x = basis[r, i]
            if x == 0.0:
                continue
            coarse_b[i] += x * b[r]
            for j in range(ranges[r, 2], ranges[r, 3]):
                galerkin[i, j] += x * a_basis[r, j]


def coarse_operator(system, basis: np.ndarray):
    """(A P, P^T A P, P^T b, ranges) of the step's system for the coarse space ``basis``; ``ranges`` (n, 4)
    are :func:`column_ranges` of P and of A P, side by side."""
    p_ranges = column_ranges(basis)
    a_basis = np.empty_like(basis)
    a_ranges = np.empty_like(p_ranges)
    _times_basis(system.indptr, system.indices, system.data, system.vn_dof, system.vn_size, system.vn_jac,
                 system.virtual_node_gain, basis, np.ascontiguousarray(p_ranges[:, 0]),
                 np.ascontiguousarray(p_ranges[:, 1]), a_basis, a_ranges)
    ranges = np.ascontiguousarray(np.column_stack([p_ranges, a_ranges]))
    k = basis.shape[1]
    galerkin, coarse_b = np.empty((k, k)), np.empty(k)
    _galerkin(basis, a_basis, ranges, system.rhs(), galerkin, coarse_b)
    return a_basis, 0.5 * (galerkin + galerkin.T), coarse_b, ranges
