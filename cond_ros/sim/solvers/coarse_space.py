"""The coarse space of COND's two-level correction (``SolverCOND(coarse_correction=True)``; not in the paper).

V-FPI's step is diagonal (W), and W is set by the stiffest rows. It therefore corrects the smooth
motions of a stiff body only slowly: a soft body's rigid motion and its low-order deformation (the ball
flattening between two fingers), and a robot joint moving together with its virtual nodes. The coarse
space spans exactly these motions, so one small Galerkin solve per iteration removes them:

- every deformable (FEM) body: its node displacement fields that are polynomials of degree <= 2 in the
  node position (constant, linear and quadratic in x, y, z, for each of the three components: up to 30
  columns, orthonormalized over the body's nodes). Rigid translations and rotations are in this span;
- every rigid body and robot: one column per DOF;
- virtual nodes follow their owner: their rows are J_v times the owner's rows (eq. 14), so a coarse
  motion does not stretch the k_v springs of (15).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..dynamics import GROUP_PARTICLE, jacobian_velocity
from ..jit import kernel
from ..model import Model, State

POLYNOMIAL_DEGREE = 2
RANK_TOLERANCE = 1e-8  # relative singular value below which a body's polynomial field is dropped (few nodes)


def _polynomial_fields(positions: np.ndarray, degree: int = POLYNOMIAL_DEGREE) -> np.ndarray:
    """Orthonormal basis (node count x r) of the polynomials of degree <= ``degree`` in the node positions."""
    r = positions - positions.mean(axis=0)
    r /= max(float(np.sqrt((r * r).sum(axis=1).max())), np.finfo(float).tiny)  # scale for conditioning
    monomials = np.column_stack([np.prod(r[:, list(axes)], axis=1) for d in range(degree + 1)
                                 for axes in itertools.combinations_with_replacement(range(3), d)])
    u, s, _ = np.linalg.svd(monomials, full_matrices=False)
    return u[:, s > RANK_TOLERANCE * s[0]]


def coarse_basis(model: Model, state: State, pattern, vn_dof: np.ndarray, vn_size: np.ndarray,
                 vn_jac: np.ndarray) -> np.ndarray:
    """The coarse space P of the step, shape (n, k) over the augmented DOFs (original, then virtual nodes).

    ``pattern`` is the model's :class:`~cond_ros.sim.dynamics.SystemPattern`; ``vn_*`` are the step's
    virtual nodes (``ContactSet``).
    """
    n_o = model.dof_count
    blocks = []  # (rows, values (rows x columns)) of each column block on the original DOFs
    objects = model.particle_object
    for body in np.unique(objects[objects >= 0]):
        nodes = np.flatnonzero(objects == body)
        fields = _polynomial_fields(state.particle_q[nodes])
        for component in range(3):
            blocks.append((3 * nodes + component, fields))
    for dof, size, kind in zip(pattern.group_dof, pattern.group_size, pattern.group_kind):
        if kind != GROUP_PARTICLE:
            blocks.append((dof + np.arange(size), np.eye(size)))
    k = sum(values.shape[1] for _, values in blocks)
    basis = np.zeros((n_o + 3 * len(vn_dof), k))
    column = 0
    for rows, values in blocks:
        basis[rows, column:column + values.shape[1]] = values
        column += values.shape[1]
    for j in range(len(vn_dof)):
        owner = basis[vn_dof[j]:vn_dof[j] + vn_size[j]]
        basis[n_o + 3 * j:n_o + 3 * j + 3] = vn_jac[j, :, :vn_size[j]] @ owner
    return basis


@kernel
def _times_basis(indptr, indices, data, vn_dof, vn_size, vn_jac, kv, basis, first, last, out):
    """out = A P for the augmented A of eq. (15), skipping the zero columns of each row of P.

    Row r of P is zero outside columns [first[r], last[r]) (a node of one FEM body touches only that
    body's columns), which makes this ~3x cheaper than A times each column of P.
    """
    n_o = indptr.shape[0] - 1
    out[:] = 0.0
    for i in range(n_o):
        for p in range(indptr[i], indptr[i + 1]):
            c = indices[p]
            for j in range(first[c], last[c]):
                out[i, j] += data[p] * basis[c, j]
    for k in range(vn_dof.shape[0]):
        base = n_o + 3 * k
        for j in range(basis.shape[1]):
            owner = jacobian_velocity(basis[:, j], vn_dof[k], vn_size[k], vn_jac[k])
            for e in range(3):
                out[base + e, j] = kv * (basis[base + e, j] - owner[e])
                for r in range(vn_size[k]):
                    out[vn_dof[k] + r, j] -= kv * vn_jac[k, e, r] * basis[base + e, j]


def coarse_operator(system, basis: np.ndarray):
    """(A P, P^T A P, P^T b) of the step's system for the coarse space ``basis``."""
    nonzero = basis != 0.0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), 0)
    last = np.where(nonzero.any(axis=1), basis.shape[1] - nonzero[:, ::-1].argmax(axis=1), 0)
    a_basis = np.empty_like(basis)
    _times_basis(system.indptr, system.indices, system.data, system.vn_dof, system.vn_size, system.vn_jac,
                 system.virtual_node_gain, basis, first, last, a_basis)
    galerkin = basis.T @ a_basis
    return a_basis, 0.5 * (galerkin + galerkin.T), basis.T @ system.rhs()
