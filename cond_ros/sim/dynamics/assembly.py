"""Assembly of the step's linear system A v_hat = b + J_c^T lambda (eq. 1, 9, 15).

``A_o`` (eq. 9) is stored CSR with a sparsity pattern fixed per model: dense
blocks between the DOF groups (a particle's 3 DOF, a body's 6 DOF) that a
potential couples. Virtual nodes (eq. 15) are kept matrix-free: their
k_v J_v^T J_v term is added into the owner's diagonal block, and the
off-diagonal -k_v J_v blocks are applied by ``linalg.augmented_matvec``.

Here lambda is the mean contact force over the step [N], because eq. (9)
divides the momentum balance by the step (M_hat = 2 M / dt; M / (theta dt) for
``Model.integration_theta`` other than the midpoint rule's 1/2).
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..jit import kernel
from ..kinematics.rigid import cross3, quat_to_matrix_into
from ..model import DampingPolicy, Model, PointKind
from .fem.elements import assemble_tetrahedra, node_incidence
from .potentials import add_block, assemble_model_potentials
from .robots import assemble_robots, kinematics_at

GROUP_PARTICLE, GROUP_BODY, GROUP_ROBOT = 0, 1, 2


class PairBlocks(NamedTuple):
    """A_o's dense blocks, one per coupled pair of DOF groups (a pair id of ``SystemPattern``), in pair order (by
    row group, then column group): how ``linalg.block_matvec`` reads A_o's CSR. The rows of a group share one
    column list, its blocks' column ranges left to right, so in each row block q's entries follow those of the
    blocks before it.

    Attributes:
        start: each row group's first pair, then the pair count, shape (group_count + 1,).
        column, width: first column and column count of each pair's block, shape (pair_count,).
    """

    start: np.ndarray
    column: np.ndarray
    width: np.ndarray


@dataclasses.dataclass(frozen=True)
class SystemPattern:
    """CSR pattern of A_o and where each dense block starts in ``data``.

    Attributes:
        group_dof, group_size: first DOF and size (3 or 6) of each DOF group, shape (group_count,).
        group_kind: GROUP_PARTICLE, GROUP_BODY or GROUP_ROBOT per group, shape (group_count,).
        indptr, indices: CSR pattern of A_o.
        row_group: the first row of each DOF group, then dof_count: the rows of a group share one column list
            (``weights.frobenius_terms`` reads them side by side).
        block_slot: data index of a block's first column in each of its rows, shape (pair_count, max size).
        diag_pair: pair id of each group's diagonal block, shape (group_count,).
        potential_pairs: pair ids (aa, ab, ba, bb) of each potential, -1 where an end is the world.
        tet_pairs: pair id of nodes (i, j) of each tetrahedron at [t, 4 i + j], shape (tet_count, 16).
        tet_incidence: each particle's tetrahedra, :func:`~cond_ros.sim.dynamics.fem.elements.node_incidence`.
        pair_blocks: the same blocks in pair order (:class:`PairBlocks`).
    """

    group_dof: np.ndarray
    group_size: np.ndarray
    group_kind: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    row_group: np.ndarray
    block_slot: np.ndarray
    diag_pair: np.ndarray
    potential_pairs: np.ndarray
    tet_pairs: np.ndarray
    tet_incidence: tuple
    pair_blocks: PairBlocks

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def max_group_size(self) -> int:
        """Width of point Jacobian blocks (the largest DOF group; at least 3)."""
        return int(max(3, self.group_size.max(initial=3)))


def potential_groups(model: Model) -> np.ndarray:
    """DOF group of each potential end (-1 for a world point), shape (potential_count, 2)."""
    groups = np.full((model.potential_count, 2), -1, dtype=np.int64)
    kind, index = model.potential_kind, model.potential_index
    groups[kind == PointKind.PARTICLE] = index[kind == PointKind.PARTICLE]
    groups[kind == PointKind.BODY] = model.particle_count + index[kind == PointKind.BODY]
    on_robot = kind == PointKind.ROBOT_LINK
    groups[on_robot] = model.particle_count + model.body_count + index[on_robot]
    return groups


def build_pattern(model: Model) -> SystemPattern:
    """The fixed block-sparse pattern of A_o for ``model``."""
    size = model.group_sizes()
    n_groups = len(size)
    dof = model.group_dofs()
    ends = potential_groups(model)
    both = ends[(ends[:, 0] >= 0) & (ends[:, 1] >= 0) & (ends[:, 0] != ends[:, 1])]
    tet_edges = model.tet_nodes[:, np.array([[i, j] for i in range(4) for j in range(i + 1, 4)])].reshape(-1, 2)
    both = np.concatenate([both, tet_edges])  # a particle's group is its index
    pairs = np.concatenate([np.column_stack([np.arange(n_groups)] * 2), both, both[:, ::-1]]).astype(np.int64)
    pairs = np.unique(pairs, axis=0)  # sorted by (row group, column group)
    pair_id = {(int(g), int(h)): i for i, (g, h) in enumerate(pairs)}

    # Row lengths: every row of group g holds all columns of g's neighbour groups.
    row_len_of_group = np.zeros(n_groups, dtype=np.int64)
    np.add.at(row_len_of_group, pairs[:, 0], size[pairs[:, 1]])
    row_len = np.repeat(row_len_of_group, size)
    indptr = np.concatenate([[0], np.cumsum(row_len)]).astype(np.int64)
    indices = np.empty(indptr[-1], dtype=np.int64)
    block_slot = np.zeros((len(pairs), max(3, int(size.max(initial=3)))), dtype=np.int64)
    first = np.searchsorted(pairs[:, 0], np.arange(n_groups))
    last = np.searchsorted(pairs[:, 0], np.arange(n_groups), side="right")
    for g in range(n_groups):
        nbr = pairs[first[g]:last[g], 1]
        cols = np.concatenate([np.arange(dof[h], dof[h] + size[h]) for h in nbr])
        offsets = np.concatenate([[0], np.cumsum(size[nbr])[:-1]])
        for r in range(size[g]):
            start = indptr[dof[g] + r]
            indices[start:start + len(cols)] = cols
            block_slot[first[g]:last[g], r] = start + offsets
    pot_pairs = np.full((model.potential_count, 4), -1, dtype=np.int64)
    for u, (a, b) in enumerate(ends):
        for k, (g, h) in enumerate(((a, a), (a, b), (b, a), (b, b))):
            if g >= 0 and h >= 0:
                pot_pairs[u, k] = pair_id[(int(g), int(h))]
    diag = np.array([pair_id[(g, g)] for g in range(n_groups)], dtype=np.int64)
    tet_pairs = np.array([[pair_id[(int(a), int(b))] for a in nodes for b in nodes] for nodes in model.tet_nodes],
                         dtype=np.int64).reshape(-1, 16)
    kind = np.repeat(np.array([GROUP_PARTICLE, GROUP_BODY, GROUP_ROBOT], np.int64),
                     [model.particle_count, model.body_count, len(model.robots)])
    row_group = np.append(dof, int(size.sum())).astype(np.int64)
    return SystemPattern(dof, size, kind, indptr, indices, row_group, block_slot, diag, pot_pairs, tet_pairs,
                         node_incidence(model.tet_nodes, model.particle_count),
                         _pair_blocks(pairs, dof, size, first))


def _pair_blocks(pairs: np.ndarray, dof: np.ndarray, size: np.ndarray, first: np.ndarray) -> PairBlocks:
    """:class:`PairBlocks` of the sorted ``pairs`` (row group, column group); ``first``: each row group's first
    pair."""
    return PairBlocks(np.append(first, len(pairs)).astype(np.int64), dof[pairs[:, 1]].astype(np.int64),
                      size[pairs[:, 1]].astype(np.int64))


class AugmentedSystem(NamedTuple):
    """A v = b of eq. (15) as a kernel takes it (numba takes named tuples of arrays as they are): A_o's CSR
    ``indptr`` and ``data`` with its blocks (``row_group`` and :class:`PairBlocks`), the augmented b, and the
    virtual nodes' rows (``linalg.augmented_matvec``). Made by :meth:`LinearSystem.augmented`."""

    row_group: np.ndarray
    indptr: np.ndarray
    pair_start: np.ndarray
    pair_column: np.ndarray
    pair_width: np.ndarray
    data: np.ndarray
    b: np.ndarray
    vn_dof: np.ndarray
    vn_size: np.ndarray
    vn_jac: np.ndarray
    virtual_node_gain: float


@dataclasses.dataclass
class LinearSystem:
    """One step's A, b of eq. (15), with A_o in CSR and the virtual nodes matrix-free.

    Attributes:
        dof_count: n_o, the original DOFs (virtual node DOFs follow them).
        indptr, indices, data: A_o + k_v J_v^T J_v in CSR, (dof_count x dof_count).
        row_group: the rows that share a column list (``SystemPattern.row_group``).
        pair_blocks: A_o's blocks in pair order (``SystemPattern.pair_blocks``).
        b: b_o [N], shape (dof_count,).
        vn_dof, vn_size: first DOF and DOF count of each virtual node's owner (a particle, body or robot).
        vn_jac: J_v of each virtual node on its owner's DOFs, zero-padded, shape (vn_count, 3, max size).
        virtual_node_gain: k_v [N s/m].
    """

    dof_count: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    row_group: np.ndarray
    pair_blocks: PairBlocks
    b: np.ndarray
    vn_dof: np.ndarray
    vn_size: np.ndarray
    vn_jac: np.ndarray
    virtual_node_gain: float

    @property
    def vn_count(self) -> int:
        return len(self.vn_dof)

    @property
    def size(self) -> int:
        """n, the DOFs including virtual nodes."""
        return self.dof_count + 3 * self.vn_count

    def matrix(self) -> sp.csr_matrix:
        """The full augmented A of eq. (15) as scipy CSR (for tests and factorizing solvers)."""
        n_o, kv = self.dof_count, self.virtual_node_gain
        a_o = sp.csr_matrix((self.data, self.indices, self.indptr), shape=(n_o, n_o))
        if self.vn_count == 0:
            return a_o
        jv = virtual_node_jacobian(self)
        return sp.bmat([[a_o, -kv * jv.T], [-kv * jv, kv * sp.eye(3 * self.vn_count)]], format="csr")

    def augmented(self) -> AugmentedSystem:
        """The arrays of eq. (15) for a kernel, b augmented (A_o's arrays themselves, not copies)."""
        blocks = self.pair_blocks
        return AugmentedSystem(self.row_group, self.indptr, blocks.start, blocks.column, blocks.width, self.data,
                               self.rhs(), self.vn_dof, self.vn_size, self.vn_jac, self.virtual_node_gain)

    def rhs(self) -> np.ndarray:
        """The full augmented b of eq. (15)."""
        return np.concatenate([self.b, np.zeros(3 * self.vn_count)])


def virtual_node_jacobian(system: LinearSystem) -> sp.csr_matrix:
    """J_v of eq. (14), (3 vn_count x dof_count)."""
    rows, cols, vals = [], [], []
    for k in range(system.vn_count):
        jac = system.vn_jac[k, :, :system.vn_size[k]]
        r, c = np.nonzero(jac)
        rows.append(3 * k + r)
        cols.append(system.vn_dof[k] + c)
        vals.append(jac[r, c])
    if not rows:
        return sp.csr_matrix((0, system.dof_count))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(3 * system.vn_count, system.dof_count))


@kernel
def assemble_inertia(particle_mass, particle_qd, particle_force, body_mass, body_inertia, body_damping, body_quat,
                     body_qd, body_wrench, gravity, h, group_dof, diag_pair, block_slot, data, b):
    """M_hat = M / h blocks of A and the b terms M_hat v - C v + f_ext (eq. 9, h = theta dt = dt / 2 there),
    plus each body's own damping D in A (the force -D v_hat has no b term); resets data and b."""
    data[:] = 0.0
    n_particles = particle_mass.shape[0]
    for i in range(n_particles):
        base = block_slot[diag_pair[i]]
        scale = particle_mass[i] / h
        for r in range(3):
            data[base[r] + r] = scale
            b[3 * i + r] = scale * particle_qd[i, r] + particle_mass[i] * gravity[r] + particle_force[i, r]
    # per body without temporary arrays or BLAS calls (they cost ~380 ns a body, 120 us a step for a 320-segment
    # cable); I = R I_body R^T and the gyroscopic term omega x (I omega) summed in a fixed order
    rot = np.empty((3, 3))
    turned = np.empty((3, 3))
    inertia = np.empty((3, 3))
    ang_mom = np.empty(3)
    for j in range(body_mass.shape[0]):
        g = n_particles + j
        base = block_slot[diag_pair[g]]
        dof = group_dof[g]
        quat_to_matrix_into(body_quat[j, 0], body_quat[j, 1], body_quat[j, 2], body_quat[j, 3], rot)
        for r in range(3):
            for k in range(3):  # R I_body, once per entry rather than once per entry of the product
                turned[r, k] = (rot[r, 0] * body_inertia[j, 0, k] + rot[r, 1] * body_inertia[j, 1, k]
                                + rot[r, 2] * body_inertia[j, 2, k])
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for k in range(3):
                    acc += turned[r, k] * rot[c, k]
                inertia[r, c] = acc
        for r in range(3):
            ang_mom[r] = inertia[r, 0] * body_qd[j, 3] + inertia[r, 1] * body_qd[j, 4] + inertia[r, 2] * body_qd[j, 5]
        gyro = cross3((body_qd[j, 3], body_qd[j, 4], body_qd[j, 5]), (ang_mom[0], ang_mom[1], ang_mom[2]))  # C v, eq. 9
        for r in range(3):
            data[base[r] + r] = body_mass[j] / h + body_damping[j, 0]
            b[dof + r] = body_mass[j] / h * body_qd[j, r] + body_mass[j] * gravity[r] + body_wrench[j, r]
            for k in range(3):
                data[base[3 + r] + 3 + k] = inertia[r, k] / h
            data[base[3 + r] + 3 + r] += body_damping[j, 1]
            b[dof + 3 + r] = ang_mom[r] / h - gyro[r] + body_wrench[j, 3 + r]


@kernel
def add_point_coupling(point_size, point_jac, point_group, point_matrix, diag_pair, block_slot, data):
    """Adds J_p^T K_p J_p into the owner's diagonal block for every point p (K_p: 3x3, world frame).

    With K_p = k_v I this is the k_v J_v^T J_v block of eq. (15).
    """
    for k in range(point_size.shape[0]):
        size = point_size[k]
        jac = np.ascontiguousarray(point_jac[k, :, :size])
        add_block(data, block_slot, diag_pair[point_group[k]], size, size, 1.0, point_matrix[k] @ jac, jac)


@kernel
def add_virtual_node_coupling(vn_size, vn_jac, vn_group, kv, diag_pair, block_slot, data):
    """The k_v J_v^T J_v block of eq. (15) for every virtual node: :func:`add_point_coupling` with K_p = k_v I, given
    as k_v alone (its (count, 3, 3) array cost ~10 us a step to make). k_v J has the bits of (k_v I) J: the
    product's other terms are exact zeros."""
    for k in range(vn_size.shape[0]):
        size = vn_size[k]
        jac = np.ascontiguousarray(vn_jac[k, :, :size])
        add_block(data, block_slot, diag_pair[vn_group[k]], size, size, 1.0, kv * jac, jac)


def assemble(model: Model, pattern: SystemPattern, state, control, dt: float,
             vn_dof=None, vn_size=None, vn_jac=None, vn_group=None, kinematics=None) -> LinearSystem:
    """Build the step's :class:`LinearSystem` from the state at the start of the step (``kinematics``: its
    ``robot_kinematics``, if already at hand)."""
    data = np.empty(pattern.nnz)
    b = np.zeros(model.dof_count)  # robot rows are accumulated, not set
    assemble_inertia(model.particle_mass, state.particle_qd, control.particle_force, model.body_mass,
                     model.body_inertia, model.body_damping, state.body_quat, state.body_qd, control.body_wrench,
                     model.gravity,
                     model.integration_theta * dt, pattern.group_dof, pattern.diag_pair, pattern.block_slot, data, b)
    # forward kinematics once for the potentials' robot ends and the robots' rows
    kinematics = kinematics_at(model, state, kinematics) if model.robots else None
    assemble_model_potentials(model, pattern, state, dt, data, b, kinematics)
    if model.tet_count:
        assemble_tetrahedra(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_rest_volume, model.tet_lame,
                            model.tet_damping_time, model.damping_policy == DampingPolicy.GEOMETRIC, state.particle_q,
                            model.integration_theta * dt, pattern.tet_pairs, pattern.block_slot, pattern.tet_incidence,
                            data, b)
    if model.robots:
        assemble_robots(model, pattern, state, control, dt, data, b, kinematics)
    if vn_dof is None:
        vn_dof = np.zeros(0, np.int64)
        vn_size = np.zeros(0, np.int64)
        vn_jac = np.zeros((0, 3, pattern.max_group_size))
        vn_group = np.zeros(0, np.int64)
    if len(vn_dof):
        add_virtual_node_coupling(vn_size, vn_jac, vn_group, model.virtual_node_gain, pattern.diag_pair,
                                  pattern.block_slot, data)
    return LinearSystem(model.dof_count, pattern.indptr, pattern.indices, data, pattern.row_group, pattern.pair_blocks,
                        b, vn_dof, vn_size, vn_jac, model.virtual_node_gain)
