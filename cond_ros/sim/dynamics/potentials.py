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

from ..jit import kernel
from ..kinematics.rigid import point_jacobian, quat_to_matrix, rotation_log
from ..model import DampingPolicy, Model, PointKind, PotentialType, State
from .robots import robot_kinematics


class PotentialEnds:
    """World kinematics of every potential end at one state (arrays indexed [potential, end]).

    Attributes:
        pos: end point [m], (U, 2, 3). rot: end frame, (U, 2, 3, 3).
        jac_lin, jac_ang: linear velocity of the point and angular velocity of the frame on the owner's
            DOFs, zero-padded, (U, 2, 3, width).
        dof, size: owner's first DOF and DOF count (size 0 for a world end), (U, 2).
    """

    def __init__(self, model: Model, state: State, width: int, kinematics=None, potentials=None):
        """``potentials``: indices of the potentials to evaluate (default all); the arrays follow their order."""
        which = np.arange(model.potential_count) if potentials is None else np.asarray(potentials, np.int64)
        count = len(which)
        self.pos = np.zeros((count, 2, 3))
        self.rot = np.zeros((count, 2, 3, 3))
        self.jac_lin = np.zeros((count, 2, 3, width))
        self.jac_ang = np.zeros((count, 2, 3, width))
        self.dof = np.full((count, 2), -1, dtype=np.int64)
        self.size = np.zeros((count, 2), dtype=np.int64)
        if count == 0:
            return
        kind = model.potential_kind[which]
        free_end_kinematics(kind, model.potential_index[which], model.potential_local[which], state.particle_q,
                            state.body_q, state.body_quat, model.body_dof_start, self.pos, self.rot, self.jac_lin,
                            self.jac_ang, self.dof, self.size)
        on_robot = np.argwhere(kind == PointKind.ROBOT_LINK)
        if len(on_robot) == 0:
            return
        if kinematics is None:
            kinematics = robot_kinematics(model, state)
        for u, x in on_robot:
            robot, link = int(model.potential_index[which[u], x]), int(model.potential_link[which[u], x])
            kin = kinematics[robot]
            pose = kin.link_pose[link]
            point = pose[:3, :3] @ model.potential_local[which[u], x] + pose[:3, 3]
            jac = kin.jacobian(link, point)
            lo, hi = model.robot_dof_offset[robot], model.robot_dof_offset[robot + 1]
            self.pos[u, x], self.rot[u, x] = point, pose[:3, :3]
            self.jac_lin[u, x, :, :hi - lo], self.jac_ang[u, x, :, :hi - lo] = jac[:3], jac[3:]
            self.dof[u, x], self.size[u, x] = model.robot_dof_start + lo, hi - lo


@kernel
def free_end_kinematics(kind, index, local, particle_q, body_q, body_quat, body_dof_start, pos, rot, jac_lin,
                        jac_ang, dof, size):
    """Fills :class:`PotentialEnds` for world, particle and body ends (robot ends are left alone)."""
    for u in range(kind.shape[0]):
        for x in range(2):
            k = kind[u, x]
            i = index[u, x]
            if k == 1:  # WORLD
                pos[u, x] = local[u, x]
                rot[u, x] = np.eye(3)
            elif k == 2:  # PARTICLE
                pos[u, x] = particle_q[i]
                rot[u, x] = np.eye(3)
                for e in range(3):
                    jac_lin[u, x, e, e] = 1.0
                dof[u, x] = 3 * i
                size[u, x] = 3
            elif k == 3:  # BODY
                r = quat_to_matrix(body_quat[i])
                arm = r @ local[u, x]
                pos[u, x] = body_q[i] + arm
                rot[u, x] = r
                jac_lin[u, x, :, :6] = point_jacobian(6, arm)
                for e in range(3):
                    jac_ang[u, x, e, 3 + e] = 1.0
                dof[u, x] = body_dof_start + 6 * i
                size[u, x] = 6


@kernel
def potential_error(ptype, rest_length, rest_rot, pos, rot, jac_lin, jac_ang):
    """(e, Je_a, Je_b, P, length) of one potential: e has 1 (DISTANCE) or 3 rows, P maps world vectors to
    e's axes (n^T or F^T), length is |p_a - p_b| for DISTANCE."""
    if ptype == 1:  # DISTANCE
        d = pos[0] - pos[1]
        length = np.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
        n = d / length if length > 1e-12 else np.array([1.0, 0.0, 0.0])
        proj = n.reshape(1, 3)
        err = np.array([length - rest_length])
        return err, proj @ jac_lin[0], -(proj @ jac_lin[1]), proj.copy(), length
    if ptype == 2:  # COUPLING
        frame_t = np.ascontiguousarray(rot[0].T)
        err = frame_t @ (pos[0] - pos[1])
        return err, frame_t @ jac_lin[0], -(frame_t @ jac_lin[1]), frame_t, 0.0
    # ROTATION
    frame = rot[0] @ rest_rot
    frame_t = np.ascontiguousarray(frame.T)
    err = rotation_log(frame_t @ rot[1])
    je_a = -(frame_t @ jac_ang[0])
    je_b = frame_t @ jac_ang[1]
    return err, je_a, je_b, frame_t, 0.0


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


@kernel
def assemble_potentials(ptype, stiffness, rest_length, damping, rest_rot, geometric, pot_pairs, pos, rot, jac_lin,
                        jac_ang, dof, size, h, block_slot, data, b):
    """Adds h Je^T K Je + Je^T C Je to A and -Je^T K e to b for every potential (eq. 8-9), h = theta dt.

    Serial on purpose: potentials scatter into shared blocks, and a fixed order keeps results bit-identical.
    """
    for u in range(ptype.shape[0]):
        err, je_a, je_b, proj, length = potential_error(ptype[u], rest_length[u], rest_rot[u], pos[u], rot[u],
                                                        jac_lin[u], jac_ang[u])
        rows = err.shape[0]
        jes = (je_a, je_b)
        for x in range(2):
            if size[u, x] == 0:
                continue
            weighted = jes[x].copy()  # rows scaled by dt/2 k_e + c_e
            force = np.zeros(jes[x].shape[1])
            for e in range(rows):
                weighted[e] *= h * stiffness[u, e] + damping[u, e]
                force += jes[x][e] * (stiffness[u, e] * err[e])
            for r in range(size[u, x]):
                b[dof[u, x] + r] -= force[r]
            for y in range(2):
                if size[u, y] > 0:
                    add_block(data, block_slot, pot_pairs[u, 2 * x + y], size[u, x], size[u, y], 1.0, weighted,
                              jes[y])
        if geometric and ptype[u] == 1 and length > 1e-12:
            # Diagonal SPD projection of the geometric stiffness k e (I - n n^T) / l (column abs sums),
            # applied on particle ends only: a body end's arm makes the exact term rotation-dependent.
            n = proj[0]
            g = stiffness[u, 0] * abs(err[0]) / length * (np.eye(3) - np.outer(n, n))
            n_ends = (1 if size[u, 0] > 0 else 0) + (1 if size[u, 1] > 0 else 0)
            for x in range(2):
                if size[u, x] != 3:
                    continue
                base = block_slot[pot_pairs[u, 3 * x]]
                for c in range(3):
                    col = abs(g[0, c]) + abs(g[1, c]) + abs(g[2, c])
                    data[base[c] + c] += h * n_ends * col
        if geometric:
            _add_rotational_geometric(ptype[u], stiffness[u], err, proj, pos[u], jac_lin[u], dof[u], size[u],
                                      pot_pairs[u], h, block_slot, data)


@kernel
def _add_rotational_geometric(ptype, stiffness, err, proj, pos, jac_lin, dof, size, pairs, h, block_slot, data):
    """Diagonal SPD projection of the geometric stiffness a potential's force puts on a body's rotation.

    A force f at a body point with arm r has the rotational Hessian sym([f]x [r]x) = (f r^T + r f^T) / 2
    - (f . r) I; a ROTATION potential's couple tau turns with its frame, bounded here by |tau| / 2 per
    axis. The outer-product approximation drops both, and a rod segment's rotational inertia is so
    small (~1e-11 kg m^2) that the dropped terms alone make the midpoint rule unstable at 10 ms
    (omega dt ~ 30 for a 0.3 N tension on a 1.25 mm segment). Adding their column abs sums times h
    (policy 2 of Sec. II-A, like the DISTANCE springs') treats them implicitly (h = theta dt).
    """
    rows = err.shape[0]
    tension = np.zeros(3)
    for e in range(rows):
        tension += proj[e] * (stiffness[e] * err[e])
    for x in range(2):
        if size[x] != 6:
            continue
        base = block_slot[pairs[3 * x]]
        diag = np.zeros(3)
        if ptype == 3:  # ROTATION
            mag = 0.5 * np.sqrt(tension[0] ** 2 + tension[1] ** 2 + tension[2] ** 2)
            diag[:] = mag
        else:
            arm = np.array([jac_lin[x, 1, 5], jac_lin[x, 2, 3], jac_lin[x, 0, 4]])
            f = tension if x == 1 else -tension
            fr = f[0] * arm[0] + f[1] * arm[1] + f[2] * arm[2]
            for c in range(3):
                col = 0.0
                for r in range(3):
                    entry = 0.5 * (f[r] * arm[c] + arm[r] * f[c]) - (fr if r == c else 0.0)
                    col += abs(entry)
                diag[c] = col
        for c in range(3):
            data[base[3 + c] + 3 + c] += h * diag[c]


@kernel
def transmitted_forces(ptype, stiffness, rest_length, damping, rest_rot, pos, rot, jac_lin, jac_ang, dof, size, h,
                       v_hat, force, torque):
    """World force and torque each potential applies to each of its ends during a step, (U, 2, 3) each.

    The step's generalized force is -Je^T (K e + (h K + C) Je v_hat), the same linearization A and b
    hold, so these are the impulses the solve applied divided by dt. The force acts at the end point;
    the torque is the pure couple of a ROTATION potential.
    """
    for u in range(ptype.shape[0]):
        err, je_a, je_b, proj, _ = potential_error(ptype[u], rest_length[u], rest_rot[u], pos[u], rot[u],
                                                   jac_lin[u], jac_ang[u])
        rate = np.zeros(err.shape[0])
        jes = (je_a, je_b)
        for x in range(2):
            for r in range(size[u, x]):
                for e in range(err.shape[0]):
                    rate[e] += jes[x][e, r] * v_hat[dof[u, x] + r]
        tension = np.empty(err.shape[0])
        for e in range(err.shape[0]):
            tension[e] = stiffness[u, e] * (err[e] + h * rate[e]) + damping[u, e] * rate[e]
        world = np.zeros(3)
        for e in range(err.shape[0]):
            world += proj[e] * tension[e]
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
                              kinematics=None) -> PotentialEnds:
    """Adds every potential of ``model`` to A (``data``) and ``b``; returns the ends it used."""
    ends = PotentialEnds(model, state, pattern.max_group_size, kinematics)
    if model.potential_count:
        assemble_potentials(model.potential_type, model.potential_stiffness, model.potential_rest_length,
                            model.potential_damping, model.potential_rest_rotation,
                            model.damping_policy == DampingPolicy.GEOMETRIC, pattern.potential_pairs, ends.pos,
                            ends.rot, ends.jac_lin, ends.jac_ang, ends.dof, ends.size, model.integration_theta * dt,
                            pattern.block_slot, data, b)
    return ends


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
