"""Potentials of form (7), psi = 1/2 e^T K e, between two ends, and their rows of A and b (eq. 8-9).

An end is a world point/frame, a particle, a point on a rigid body or a point on a robot link
(:class:`~cond_ros.sim.model.PointKind`). K is diagonal in the potential's frame F:

- DISTANCE: e = |p_a - p_b| - rest_length (1-D; K = stiffness[0]);
- COUPLING: e = F^T (p_a - p_b) with F the orientation of end a (identity for a world point or a
  particle): a zero-length coupling whose stretch/shear gains differ along F's axes (a rod joint);
- ROTATION: e = Log(R_rest^T R_a^T R_b), F = R_a R_rest: the relative rotation away from its rest value,
  so that K = diag(bend, bend, twist) about F's axes (a rod joint, or a welded grip).

With the outer-product approximation the Jacobian of e is Je = de/dv at the start of the step (F held
fixed), and the potential adds h Je^T K Je + Je^T C Je to A and -Je^T K e to b (C: damping, diagonal
in F; h = theta dt, dt/2 for the paper's midpoint rule). The same Je gives the force the potential
transmits during the step (:func:`potential_forces`).
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel, leaf_kernel
from ..kinematics.articulation import point_jacobian_articulated
from ..kinematics.rigid import quat_to_matrix_into, rotation_log_into
from ..linalg import U6
from ..model import DampingPolicy, Model, PointKind, PotentialType, State, per_model
from .robots import robot_kinematics


class PotentialEnds:
    """World kinematics of every potential end at one state (arrays indexed [potential, end]).

    Attributes:
        pos: end point [m], (U, 2, 3). rot: end frame, (U, 2, 3, 3).
        jac_lin, jac_ang: linear velocity of the point and angular velocity of the frame on the owner's
            DOFs, zero-padded, (U, 2, 3, width).
        kind: the ends' :class:`~cond_ros.sim.model.PointKind`, (U, 2).
        dof, size: owner's first DOF and DOF count (size 0 for a world end), (U, 2).
    """

    def __init__(self, model: Model, state: State, width: int, kinematics=None, potentials=None):
        """``potentials``: indices of the potentials to evaluate (default all); the arrays follow their order."""
        # a model's per_model key: a tuple given is taken as it is (made once per model by the assembly; a tuple
        # of a cloth's thousands of springs made anew cost ~0.25 ms a step)
        which = None if potentials is None else potentials if type(potentials) is tuple else tuple(
            int(u) for u in potentials)
        kind, index, local, on_robot = per_model(model, _end_layout, which)
        self.kind = kind
        count = len(kind)
        self.pos = np.zeros((count, 2, 3))
        self.rot = np.zeros((count, 2, 3, 3))
        self.jac_lin = np.zeros((count, 2, 3, width))
        self.jac_ang = np.zeros((count, 2, 3, width))
        self.dof = np.full((count, 2), -1, dtype=np.int64)
        self.size = np.zeros((count, 2), dtype=np.int64)
        if count == 0:
            return
        free_end_kinematics(kind, index, local, state.particle_q, state.body_q, state.body_quat,
                            model.body_dof_start, self.pos, self.rot, self.jac_lin, self.jac_ang, self.dof, self.size)
        if not on_robot:
            return
        if kinematics is None:
            kinematics = robot_kinematics(model, state)
        for robot, u, x, link, point_local in on_robot:
            kin, lo = kinematics[robot], model.robot_dof_offset[robot]
            pose = kin.link_pose[link]
            # numpy's (BLAS) product, stacked: the bits of one product a point
            point = (pose[:, :3, :3] @ point_local[:, :, None])[:, :, 0] + pose[:, :3, 3]
            art = kin.art
            robot_end_kinematics(u, x, link, point, art.link_parent, art.joint_type, art.joint_dof,
                                 art.joint_multiplier, kin.link_pose, kin.joint_axis_world,
                                 model.robot_dof_start + lo, model.robot_dof_offset[robot + 1] - lo, self.pos,
                                 self.rot, self.jac_lin, self.jac_ang, self.dof, self.size)


@kernel
def robot_end_kinematics(u, x, link, point, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                         joint_axis_world, dof, size, pos, rot, jac_lin, jac_ang, end_dof, end_size):
    """Fills :class:`PotentialEnds` for the ends (``u``, ``x``) on links ``link`` of one robot, at world points
    ``point``: its first DOF ``dof`` and DOF count ``size``. A kernel: per end in Python (a Jacobian's array,
    six assignments) it cost ~5 us (soft_mat: 28 ends on the gripper)."""
    jac = np.empty((6, size))
    for k in range(u.shape[0]):
        a, b = u[k], x[k]
        point_jacobian_articulated(link[k], point[k], link_parent, joint_type, joint_dof, joint_multiplier,
                                   link_pose, joint_axis_world, jac)
        for e in range(3):
            pos[a, b, e] = point[k, e]
            for f in range(3):
                rot[a, b, e, f] = link_pose[link[k], e, f]
            for j in range(size):
                jac_lin[a, b, e, j] = jac[e, j]
                jac_ang[a, b, e, j] = jac[3 + e, j]
        end_dof[a, b] = dof
        end_size[a, b] = size


def _end_layout(model: Model, which):
    """(kind, index, local point) of the ends of potentials ``which`` (a tuple; None: all), and per robot with
    ends on its links (robot, potential, end, link, local point), arrays by end: model constants, made once per
    model (``per_model``)."""
    which = np.arange(model.potential_count) if which is None else np.asarray(which, np.int64)
    kind = np.ascontiguousarray(model.potential_kind[which])
    index, local = (np.ascontiguousarray(column[which]) for column in (model.potential_index, model.potential_local))
    ends = np.argwhere(kind == PointKind.ROBOT_LINK)
    robot = index[ends[:, 0], ends[:, 1]]
    link = np.asarray(model.potential_link)[which][ends[:, 0], ends[:, 1]].astype(np.int64)
    on_robot = tuple((int(r), *(np.ascontiguousarray(column[robot == r]) for column in (
        ends[:, 0].astype(np.int64), ends[:, 1].astype(np.int64), link, local[ends[:, 0], ends[:, 1]])))
        for r in np.unique(robot))
    return kind, index, local, on_robot


@kernel
def free_end_kinematics(kind, index, local, particle_q, body_q, body_quat, body_dof_start, pos, rot, jac_lin,
                        jac_ang, dof, size):
    """Fills :class:`PotentialEnds` for world, particle and body ends (robot ends are left alone); the arrays
    are zero where an end has no entry. Written out without temporary arrays: a cable has ~1300 ends, and with
    a rotation matrix, a BLAS product and a Jacobian made per end this cost ~170 ns an end."""
    for u in range(kind.shape[0]):
        for x in range(2):
            k = kind[u, x]
            i = index[u, x]
            if k == 1 or k == 2:  # WORLD or PARTICLE: the identity frame
                for e in range(3):
                    pos[u, x, e] = local[u, x, e] if k == 1 else particle_q[i, e]
                    rot[u, x, e, e] = 1.0
                if k == 2:
                    for e in range(3):
                        jac_lin[u, x, e, e] = 1.0
                    dof[u, x] = 3 * i
                    size[u, x] = 3
            elif k == 3:  # BODY
                body_end(i, local, u, x, u, body_q, body_quat, pos, rot, jac_lin)
                for e in range(3):
                    jac_lin[u, x, e, e] = 1.0
                    jac_ang[u, x, e, 3 + e] = 1.0
                dof[u, x] = body_dof_start + 6 * i
                size[u, x] = 6


@leaf_kernel(inline=True)
def body_end(i, local, u, x, s, body_q, body_quat, pos, rot, jac_lin):
    """End x of potential u on body i, its point ``local[u, x]`` in the body frame, into index s of the ends'
    arrays: pos[s, x], rot[s, x] and the arm's part of the point Jacobian [I, -[arm]x] (``rigid.point_jacobian``)
    in jac_lin[s, x] (its identity part and the frame's Jacobian [0, I] are left alone)."""
    quat_to_matrix_into(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3], rot[s, x])
    r = rot[s, x]
    lx, ly, lz = local[u, x, 0], local[u, x, 1], local[u, x, 2]
    arm0 = r[0, 0] * lx + r[0, 1] * ly + r[0, 2] * lz
    arm1 = r[1, 0] * lx + r[1, 1] * ly + r[1, 2] * lz
    arm2 = r[2, 0] * lx + r[2, 1] * ly + r[2, 2] * lz
    pos[s, x, 0], pos[s, x, 1], pos[s, x, 2] = body_q[i, 0] + arm0, body_q[i, 1] + arm1, body_q[i, 2] + arm2
    jac_lin[s, x, 0, 4], jac_lin[s, x, 0, 5] = arm2, -arm1
    jac_lin[s, x, 1, 3], jac_lin[s, x, 1, 5] = -arm2, arm0
    jac_lin[s, x, 2, 3], jac_lin[s, x, 2, 4] = arm1, -arm0


@leaf_kernel
def potential_error(u, s, ptype, rest_length, rest_rot, pos, rot, jac_lin, jac_ang, size, err, je, proj, relative):
    """e of potential u into ``err[:rows]``, its Jacobian on each end's DOFs into ``je[x, :rows, :size[s, x]]``
    and P, which maps world vectors to e's axes (n^T or F^T), into ``proj[:rows]`` (``relative``: 3 x 3
    scratch); returns (rows, |p_a - p_b| for DISTANCE, else 0). ``s``: the potential's ends in ``pos`` ..
    ``size`` (:class:`PotentialEnds` of a subset of the potentials holds them at another index than u).
    Written out into the caller's scratch and indexed rather than given views (each view costs an atomic
    reference count): as a kernel that made new arrays, with BLAS products of 3 x 3 by 3 x 8, it cost ~1.4 us a
    potential, most of panda_cable's assembly."""
    if ptype[u] == 1:  # DISTANCE
        d0, d1, d2 = pos[s, 0, 0] - pos[s, 1, 0], pos[s, 0, 1] - pos[s, 1, 1], pos[s, 0, 2] - pos[s, 1, 2]
        length = np.sqrt(d0 ** 2 + d1 ** 2 + d2 ** 2)
        if length > 1e-12:
            proj[0, 0], proj[0, 1], proj[0, 2] = d0 / length, d1 / length, d2 / length
        else:
            proj[0, 0], proj[0, 1], proj[0, 2] = 1.0, 0.0, 0.0
        err[0] = length - rest_length[u]
        _project_jacobian(proj, 1, jac_lin, s, size, 1.0, je)
        return 1, length
    if ptype[u] == 2:  # COUPLING
        _coupling_error(s, pos, rot, err, proj)
        _project_jacobian(proj, 3, jac_lin, s, size, 1.0, je)
        return 3, 0.0
    _rotation_error(u, s, rest_rot, rot, err, proj, relative)
    _project_jacobian(proj, 3, jac_ang, s, size, -1.0, je)
    return 3, 0.0


@leaf_kernel
def _coupling_error(s, pos, rot, err, proj):
    """COUPLING's e and P: F = R_a, e = F^T (p_a - p_b) (ends at ``s``)."""
    for i in range(3):
        for k in range(3):
            proj[i, k] = rot[s, 0, k, i]
    for i in range(3):
        err[i] = proj[i, 0] * (pos[s, 0, 0] - pos[s, 1, 0]) + proj[i, 1] * (pos[s, 0, 1] - pos[s, 1, 1]) \
            + proj[i, 2] * (pos[s, 0, 2] - pos[s, 1, 2])


@leaf_kernel
def _rotation_error(u, s, rest_rot, rot, err, proj, relative):
    """ROTATION's e and P: F = R_a R_rest, e = Log(F^T R_b); e grows with omega_b - omega_a (ends at ``s``)."""
    for i in range(3):
        for k in range(3):
            proj[i, k] = rot[s, 0, k, 0] * rest_rot[u, 0, i] + rot[s, 0, k, 1] * rest_rot[u, 1, i] \
                + rot[s, 0, k, 2] * rest_rot[u, 2, i]
    for i in range(3):
        for j in range(3):
            relative[i, j] = proj[i, 0] * rot[s, 1, 0, j] + proj[i, 1] * rot[s, 1, 1, j] + proj[i, 2] * rot[s, 1, 2, j]
    rotation_log_into(relative, err)


@leaf_kernel
def _body_pair_error(u, s, ptype, rest_rot, pos, rot, jac_lin, err, je, proj, relative):
    """:func:`potential_error` of a COUPLING or ROTATION between two rigid bodies (a rod's joints; its ends at
    ``s`` in ``pos``, ``rot``, ``jac_lin``); returns the first column of Je that is not zero, 0 or 3. A body's
    point Jacobian is [I, -[arm]x] and its frame's [0, I]: the products with their zeros and ones are left out,
    which changes no bit of Je (x * 1 and x + 0 are exact, and the remaining terms are summed in the same
    order), and the columns Je is zero in are not written (the caller starts at the returned column)."""
    if ptype[u] == 2:  # COUPLING: Je_x = s_x F^T [I, -[arm_x]x], s_a = 1, s_b = -1
        _coupling_error(s, pos, rot, err, proj)
        for x in range(2):
            sign = 1.0 if x == 0 else -1.0
            j04, j05 = jac_lin[s, x, 0, 4], jac_lin[s, x, 0, 5]
            j13, j15 = jac_lin[s, x, 1, 3], jac_lin[s, x, 1, 5]
            j23, j24 = jac_lin[s, x, 2, 3], jac_lin[s, x, 2, 4]
            for e in range(3):
                p0, p1, p2 = proj[e, 0], proj[e, 1], proj[e, 2]
                je[x, e, 0] = sign * p0
                je[x, e, 1] = sign * p1
                je[x, e, 2] = sign * p2
                je[x, e, 3] = sign * (p1 * j13 + p2 * j23)
                je[x, e, 4] = sign * (p0 * j04 + p2 * j24)
                je[x, e, 5] = sign * (p0 * j05 + p1 * j15)
        return 0
    _rotation_error(u, s, rest_rot, rot, err, proj, relative)  # ROTATION: Je_x = s_x [0, F^T], s_a = -1, s_b = 1
    for x in range(2):
        sign = -1.0 if x == 0 else 1.0
        for e in range(3):
            je[x, e, 3] = sign * proj[e, 0]
            je[x, e, 4] = sign * proj[e, 1]
            je[x, e, 5] = sign * proj[e, 2]
    return 3


@leaf_kernel
def _project_jacobian(proj, rows, jac, s, size, sign, out):
    """out[x, :rows, :size[s, x]] = s_x proj[:rows] @ jac[s, x, :, :size[s, x]] for both ends, s_a = sign and
    s_b = -sign."""
    for x in range(2):
        end_sign = sign if x == 0 else -sign
        for e in range(rows):
            for c in range(size[s, x]):
                out[x, e, c] = end_sign * (proj[e, 0] * jac[s, x, 0, c] + proj[e, 1] * jac[s, x, 1, c]
                                           + proj[e, 2] * jac[s, x, 2, c])


@kernel
def add_block(data, block_slot, pair, rows, cols, scale, left, right):
    """data[block] += scale * left^T right (left: ne x rows, right: ne x cols)."""
    base = block_slot[pair]
    for r in range(rows):
        for c in range(cols):
            acc = 0.0
            for e in range(left.shape[0]):
                acc += left[e, r] * right[e, c]
            data[base[r] + c] += scale * acc


@leaf_kernel
def _add_potential_block(data, block_slot, pair, scaled, je, x, y, rows, first_x, cols_x, first_y, cols_y):
    """data[block of pair] += (diag(gain) Je_x)^T Je_y over e's ``rows`` (``scaled``: Je_x's rows times their gains,
    rows x cols_x; Je_y: rows x cols_y), skipping the columns before ``first_x`` / ``first_y`` (zero in Je)."""
    for r in range(first_x, cols_x):
        slot = block_slot[pair, r]
        if rows == 3:  # a rod's potentials: the row's three factors held across its columns (same sums)
            g0, g1, g2 = scaled[x, 0, r], scaled[x, 1, r], scaled[x, 2, r]
            for c in range(first_y, cols_y):
                acc = 0.0
                acc += g0 * je[y, 0, c]
                acc += g1 * je[y, 1, c]
                acc += g2 * je[y, 2, c]
                data[slot + c] += acc
            continue
        for c in range(first_y, cols_y):
            acc = 0.0
            for e in range(rows):
                acc += scaled[x, e, r] * je[y, e, c]
            data[slot + c] += acc


@leaf_kernel(inline=True)
def _add_body_pair_block(data, block_slot, pair, scaled, je, x, y, first):
    """:func:`_add_potential_block` for two body ends (6 columns each), from column ``first`` (a literal at each
    call: inlined, the loops have constant bounds, ~0.1 us a potential less than the general form)."""
    for r in range(first, 6):
        slot = np.uint64(block_slot[pair, r])  # unsigned: no wraparound check at each store (linalg.U1)
        g0, g1, g2 = scaled[x, 0, r], scaled[x, 1, r], scaled[x, 2, r]
        for c in range(np.uint64(first), U6):
            acc = 0.0
            acc += g0 * je[y, 0, c]
            acc += g1 * je[y, 1, c]
            acc += g2 * je[y, 2, c]
            data[slot + c] += acc


@kernel
def assemble_potentials(ptype, stiffness, rest_length, damping, rest_rot, geometric, pot_pairs, body_pair, end_slot,
                        index, local, body_q, body_quat, body_dof_start, pos, rot, jac_lin, jac_ang, dof, size, h,
                        block_slot, data, b):
    """Adds h Je^T K Je + Je^T C Je to A and -Je^T K e to b for every potential (eq. 8-9), h = theta dt.

    A potential between two bodies (``body_pair``: a COUPLING or ROTATION between two BODY ends, a rod's joints,
    nearly all of a cable scene's) takes its ends' poses from ``body_q`` and ``body_quat`` here (``index``,
    ``local``: the model's ``potential_index`` and ``potential_local``) and a written-out path with the same
    arithmetic; the others' ends are ``pos`` .. ``size`` at ``end_slot[u]`` (:class:`PotentialEnds` of those
    potentials only). Made here, a rod's ends cost no arrays of the potentials' size (at 1280 segments 2 MB of
    point Jacobians written and read back a step).

    Serial on purpose: potentials scatter into shared blocks, and a fixed order keeps results bit-identical.
    """
    width = jac_lin.shape[3]
    err = np.empty(3)
    je = np.empty((2, 3, max(width, 6)))
    proj = np.empty((3, 3))
    relative = np.empty((3, 3))
    gain = np.empty(3)  # rows of Je scaled by h k_e + c_e
    # Je's rows times their gains, once per end rather than once per block entry (a block sums je gain je, and
    # the product's left half is the same for all of an end's blocks): a third of the blocks' flops
    scaled = np.empty((2, 3, max(width, 6)))
    # each end's first column of Je that is not zero: a ROTATION potential's Je on a body is [0, -F^T], and its
    # blocks' translation rows and columns would only add zeros (half of a rod's potentials)
    first = np.empty(2, np.int64)
    # the ends of one body pair, as PotentialEnds at index 0 (only the arm's entries of its Jacobian are read)
    pair_pos, pair_rot, pair_jac = np.empty((1, 2, 3)), np.empty((1, 2, 3, 3)), np.empty((1, 2, 3, 6))
    pair_size = np.full((1, 2), 6, np.int64)
    end_size = np.empty(2, np.int64)  # the ends' DOF counts and first DOFs (the paths' arrays are not rebound:
    end_dof = np.empty(2, np.int64)  # an array variable bound anew counts references, ~40 ns a potential)
    for u in range(ptype.shape[0]):
        bodies = body_pair[u]
        s = end_slot[u]
        if bodies:
            for x in range(2):
                body_end(index[u, x], local, u, x, 0, body_q, body_quat, pair_pos, pair_rot, pair_jac)
                end_dof[x] = body_dof_start + 6 * index[u, x]
                end_size[x] = 6
            rows, length = 3, 0.0
            first[0] = first[1] = _body_pair_error(u, 0, ptype, rest_rot, pair_pos, pair_rot, pair_jac, err, je, proj,
                                                   relative)
        else:
            rows, length = potential_error(u, s, ptype, rest_length, rest_rot, pos, rot, jac_lin, jac_ang, size, err,
                                           je, proj, relative)
            for x in range(2):
                end_dof[x] = dof[s, x]
                end_size[x] = size[s, x]
                first[x] = size[s, x]
                for r in range(size[s, x] - 1, -1, -1):
                    for e in range(rows):
                        if je[x, e, r] != 0.0:
                            first[x] = r
        for e in range(rows):
            gain[e] = h * stiffness[u, e] + damping[u, e]
        for x in range(2):
            for e in range(rows):
                for r in range(first[x], end_size[x]):
                    scaled[x, e, r] = je[x, e, r] * gain[e]
        for x in range(2):
            if end_size[x] == 0:
                continue
            for r in range(first[x], end_size[x]):
                force = 0.0
                for e in range(rows):
                    force += je[x, e, r] * (stiffness[u, e] * err[e])
                b[end_dof[x] + r] -= force
            for y in range(2):
                pair = pot_pairs[u, 2 * x + y]
                if bodies and first[x] == 0:
                    _add_body_pair_block(data, block_slot, pair, scaled, je, x, y, 0)
                elif bodies:
                    _add_body_pair_block(data, block_slot, pair, scaled, je, x, y, 3)
                elif size[s, y] > 0:
                    _add_potential_block(data, block_slot, pair, scaled, je, x, y, rows, first[x], size[s, x],
                                         first[y], size[s, y])
        if geometric and ptype[u] == 1 and length > 1e-12:
            # Diagonal SPD projection of the geometric stiffness k e (I - n n^T) / l (column abs sums),
            # applied on particle ends only: a body end's arm makes the exact term rotation-dependent.
            scale = stiffness[u, 0] * abs(err[0]) / length
            n_ends = (1 if size[s, 0] > 0 else 0) + (1 if size[s, 1] > 0 else 0)
            for x in range(2):
                if size[s, x] != 3:
                    continue
                pair = pot_pairs[u, 3 * x]
                for c in range(3):
                    col = 0.0
                    for r in range(3):
                        col += abs(scale * ((1.0 if r == c else 0.0) - proj[0, r] * proj[0, c]))
                    data[block_slot[pair, c] + c] += h * n_ends * col
        if geometric and bodies:
            _add_rotational_geometric(u, 0, ptype, stiffness, err, rows, proj, pair_jac, pair_size, pot_pairs, h,
                                      block_slot, data)
        elif geometric:
            _add_rotational_geometric(u, s, ptype, stiffness, err, rows, proj, jac_lin, size, pot_pairs, h,
                                      block_slot, data)


@leaf_kernel
def _add_rotational_geometric(u, s, ptype, stiffness, err, rows, proj, jac_lin, size, pot_pairs, h, block_slot, data):
    """Diagonal SPD projection of the geometric stiffness a potential's force puts on a body's rotation.

    A force f at a body point with arm r has the rotational Hessian sym([f]x [r]x) = (f r^T + r f^T) / 2
    - (f . r) I; a ROTATION potential's couple tau turns with its frame, bounded here by |tau| / 2 per
    axis. The outer-product approximation drops both, and a rod segment's rotational inertia is so
    small (~1e-11 kg m^2) that the dropped terms alone make the midpoint rule unstable at 10 ms
    (omega dt ~ 30 for a 0.3 N tension on a 1.25 mm segment). Adding their column abs sums times h
    (policy 2 of Sec. II-A, like the DISTANCE springs') treats them implicitly (h = theta dt).
    """
    t0 = t1 = t2 = 0.0
    for e in range(rows):
        t0 += proj[e, 0] * (stiffness[u, e] * err[e])
        t1 += proj[e, 1] * (stiffness[u, e] * err[e])
        t2 += proj[e, 2] * (stiffness[u, e] * err[e])
    for x in range(2):
        if size[s, x] != 6:
            continue
        pair = pot_pairs[u, 3 * x]
        # the arm from the point Jacobian [I, -[r]x]; f on end b is the tension, on end a its opposite
        sign = 1.0 if x == 1 else -1.0
        f = (sign * t0, sign * t1, sign * t2)
        arm = (jac_lin[s, x, 1, 5], jac_lin[s, x, 2, 3], jac_lin[s, x, 0, 4])
        fr = f[0] * arm[0] + f[1] * arm[1] + f[2] * arm[2]
        for c in range(3):
            if ptype[u] == 3:  # ROTATION
                col = 0.5 * np.sqrt(t0 ** 2 + t1 ** 2 + t2 ** 2)
            else:
                col = 0.0
                for r in range(3):
                    col += abs(0.5 * (f[r] * arm[c] + arm[r] * f[c]) - (fr if r == c else 0.0))
            data[block_slot[pair, 3 + c] + 3 + c] += h * col


@kernel
def transmitted_forces(ptype, stiffness, rest_length, damping, rest_rot, pos, rot, jac_lin, jac_ang, dof, size, h,
                       v_hat, force, torque):
    """World force and torque each potential applies to each of its ends during a step, (U, 2, 3) each.

    The step's generalized force is -Je^T (K e + (h K + C) Je v_hat), the same linearization A and b
    hold, so these are the impulses the solve applied divided by dt. The force acts at the end point;
    the torque is the pure couple of a ROTATION potential.
    """
    width = jac_lin.shape[3]
    err = np.empty(3)
    je = np.empty((2, 3, width))
    proj = np.empty((3, 3))
    relative = np.empty((3, 3))
    rate = np.empty(3)
    world = np.empty(3)
    for u in range(ptype.shape[0]):
        rows, _ = potential_error(u, u, ptype, rest_length, rest_rot, pos, rot, jac_lin, jac_ang, size, err, je,
                                  proj, relative)
        rate[:] = 0.0
        for x in range(2):
            for r in range(size[u, x]):
                for e in range(rows):
                    rate[e] += je[x, e, r] * v_hat[dof[u, x] + r]
        world[:] = 0.0
        for e in range(rows):
            tension = stiffness[u, e] * (err[e] + h * rate[e]) + damping[u, e] * rate[e]
            for k in range(3):
                world[k] += proj[e, k] * tension
        force[u, 0] = 0.0
        force[u, 1] = 0.0
        torque[u, 0] = 0.0
        torque[u, 1] = 0.0
        if ptype[u] == 3:  # ROTATION: e grows with omega_b - omega_a
            torque[u, 0] = world
            torque[u, 1] = -world
        else:
            force[u, 0] = -world
            force[u, 1] = world


def assemble_model_potentials(model: Model, pattern, state: State, dt: float, data: np.ndarray, b: np.ndarray,
                              kinematics=None) -> None:
    """Adds every potential of ``model`` to A (``data``) and ``b``."""
    if not model.potential_count:
        return
    body_pair, others, end_slot = per_model(model, _potential_split)
    ends = PotentialEnds(model, state, pattern.max_group_size, kinematics, potentials=others)
    assemble_potentials(model.potential_type, model.potential_stiffness, model.potential_rest_length,
                        model.potential_damping, model.potential_rest_rotation,
                        model.damping_policy == DampingPolicy.GEOMETRIC, pattern.potential_pairs, body_pair, end_slot,
                        model.potential_index, model.potential_local, state.body_q, state.body_quat,
                        model.body_dof_start, ends.pos, ends.rot, ends.jac_lin, ends.jac_ang, ends.dof, ends.size,
                        model.integration_theta * dt, pattern.block_slot, data, b)


def _potential_split(model: Model):
    """(body_pair, others, end_slot): which potentials :func:`assemble_potentials` evaluates from the body poses
    (a COUPLING or ROTATION between two BODY ends), the others' indices (a tuple, for :class:`PotentialEnds`;
    None for all, a cloth's springs), and each potential's index among those (-1 for a body pair). Model
    constants (``per_model``)."""
    kind = model.potential_kind
    body_pair = (kind[:, 0] == PointKind.BODY) & (kind[:, 1] == PointKind.BODY) & (
        model.potential_type != PotentialType.DISTANCE)
    others = np.flatnonzero(~body_pair)
    end_slot = np.full(model.potential_count, -1, np.int64)
    end_slot[others] = np.arange(len(others))
    return body_pair, None if len(others) == model.potential_count else tuple(int(u) for u in others), end_slot


def potential_forces(model: Model, ends: PotentialEnds, v_hat: np.ndarray, dt: float, potentials=None):
    """(force, torque) in world coordinates that each potential applies to each end during the step
    (``potentials``: the subset ``ends`` was built for)."""
    which = np.arange(model.potential_count) if potentials is None else np.asarray(potentials, np.int64)
    force = np.zeros((len(which), 2, 3))
    torque = np.zeros((len(which), 2, 3))
    if len(which):
        transmitted_forces(model.potential_type[which], model.potential_stiffness[which],
                           model.potential_rest_length[which], model.potential_damping[which],
                           model.potential_rest_rotation[which], ends.pos, ends.rot, ends.jac_lin, ends.jac_ang,
                           ends.dof, ends.size, model.integration_theta * dt, np.ascontiguousarray(v_hat), force,
                           torque)
    return force, torque


__all__ = ["PotentialEnds", "PotentialType", "assemble_model_potentials", "potential_forces"]
