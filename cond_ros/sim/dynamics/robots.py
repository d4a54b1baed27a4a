"""Robots in the step's linear system: their rows of A, b (eq. 9), link contact points and joint limits.

A robot contributes one dense DOF group (its joints) with

    A_rr = M(q) / h + h K_p + K_d + D,
    b_r  = M(q) qd / h - (C(q, qd) qd + g(q)) + tau + K_p (q* - q) + K_d qd*,      h = theta dt (dt / 2),

the implicit PD drive being a potential of form (7), psi = 1/2 K_p (q - q*)^2, plus
viscous damping toward the target velocity and the URDF joint damping D.

Joint limits are unilateral constraints on single joint coordinates. They go
through the same contact machinery as everything else: a virtual node whose
J_v has one non-zero row (+-1 on the joint), an S-contact with normal along that
row and no friction, so the limit holds by complementarity (11), not by a spring.
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..kinematics.articulation import ArticulationKinematics, bias_forces, mass_matrix, point_jacobian_articulated
from ..kinematics.rigid import cross3
from ..model import Control, Model, State


def robot_kinematics(model: Model, state: State) -> list:
    """Forward kinematics of every robot at the state's joint positions."""
    out = []
    for r, art in enumerate(model.robots):
        kin = ArticulationKinematics(art)
        kin.update(state.robot_q[model.robot_dof_offset[r]:model.robot_dof_offset[r + 1]])
        out.append(kin)
    return out


def kinematics_at(model: Model, state: State, kinematics) -> list:
    """``kinematics`` (a :func:`robot_kinematics` list, or None) if it was computed at ``state``'s joint
    positions, else :func:`robot_kinematics` of ``state``: forward kinematics reused within a step, never stale."""
    offset = model.robot_dof_offset
    # bytes, not values: np.array_equal costs 2 us, and a -0.0 that differs only there just recomputes
    if kinematics is not None and len(kinematics) == len(model.robots) and all(
            kin.q is not None and kin.q.tobytes() == state.robot_q[offset[r]:offset[r + 1]].tobytes()
            for r, kin in enumerate(kinematics)):
        return kinematics
    return robot_kinematics(model, state)


def assemble_robots(model: Model, pattern, state: State, control: Control, dt: float, data: np.ndarray,
                    b: np.ndarray, kinematics=None) -> None:
    """Adds each robot's block of A and rows of b (module docstring) in place (``kinematics``: the state's
    :func:`robot_kinematics`, if already at hand)."""
    for r, kin in enumerate(kinematics if kinematics is not None else robot_kinematics(model, state)):
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        qd = state.robot_qd[lo:hi]
        a = kin.art
        mass, bias, stiffness = _robot_terms(a.link_parent, a.joint_type, a.joint_dof, a.joint_multiplier, a.link_mass,
                                             a.link_com, a.link_inertia, kin.link_pose, kin.joint_axis_world,
                                             np.ascontiguousarray(qd), model.gravity)
        h = model.integration_theta * dt
        _add_robot_rows(mass, mass @ qd, bias, stiffness, control.robot_drive_stiffness[lo:hi],
                        control.robot_drive_damping[lo:hi], a.dof_damping, control.robot_effort[lo:hi],
                        control.robot_q_target[lo:hi], state.robot_q[lo:hi], control.robot_qd_target[lo:hi], h,
                        pattern.block_slot[pattern.diag_pair[model.robot_group(r)]], model.robot_dof_start + lo, data,
                        b)


@kernel
def _robot_terms(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                 joint_axis_world, qd, gravity):
    """(M(q), C(q, qd) qd + g(q), the SPD projection of the gravity potential's Hessian d g / d q) of one robot at
    its kinematics, for :func:`_add_robot_rows`.

    The Hessian is the implicit part of eq. (9): treating gravity explicitly makes the midpoint rule gain energy
    at a rate ~ omega^3 dt (65 % of a pendulum's swing energy in 10 s at 10 ms); its linearization, like the
    potentials of form (7), removes that. Negative curvature (an inverted link) is projected out, as the paper
    projects the geometric stiffness onto SPD matrices. One kernel for the three: as ``ArticulationKinematics``
    methods and a separate projection, four calls from Python and their arrays."""
    n = qd.shape[0]
    mass = np.zeros((n, n))
    mass_matrix(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, mass)
    bias = np.zeros(n)
    bias_forces(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, qd, gravity, bias)
    hessian = np.empty((n, n))
    gravity_hessian(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_pose,
                    joint_axis_world, gravity, hessian)
    return mass, bias, spd_projection(hessian)


@kernel
def _add_robot_rows(mass, mass_qd, bias, gravity_stiffness, kp, kd, damping, effort, q_target, q, qd_target, h, slot,
                    dof, data, b):
    """A robot's block of A and rows of b (module docstring) added in place, each entry summed in the order the
    numpy expressions it replaces summed it (``mass_qd``: M qd from numpy, whose BLAS product sets its bits).
    One kernel: as ~15 numpy operations on 9 x 9 arrays it cost ~30 us a step."""
    n = mass.shape[0]
    for i in range(n):
        diagonal = h * kp[i] + kd[i] + damping[i]
        for j in range(n):
            data[slot[i] + j] += (mass[i, j] / h + (diagonal if i == j else 0.0)) + h * gravity_stiffness[i, j]
        b[dof + i] += (mass_qd[i] / h - bias[i] + effort[i] + kp[i] * (q_target[i] - q[i])
                       + kd[i] * qd_target[i])


@kernel
def gravity_hessian(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_pose,
                    joint_axis_world, gravity, out):
    """out (n x n) = d g / d q, g(q) the gravity torques (``bias_forces`` at qd = 0), in closed form.

    With G = -gravity, joint i (world axis a_i through p_i, the origin of its child link) carries the links
    of its subtree S_i, of mass M_i and mass moment C_i = sum m_l c_l; w_i = C_i - M_i p_i. Then
    g_i = G . (a_i x w_i) for a revolute joint and M_i G . a_i for a prismatic one. Turning an ancestor
    joint k (or i itself) turns a_i and w_i about a_k, sliding one moves neither, so
        dg_i/dtheta_k = G . ((a_k x a_i) x w_i + a_i x (a_k x w_i))   (both revolute)
                      = M_i G . (a_k x a_i)                            (k revolute, i prismatic)
                      = 0                                              (k prismatic),
    and the Hessian of the potential energy is symmetric, which gives the pairs with k below i; joints on
    different branches do not interact. A mimic joint's theta = multiplier q + offset maps joint pairs to
    DOF pairs. One pass over the subtrees and one over the joint pairs: ~2 us for the Panda, where the
    central differences it replaces (2 n kinematics and gravity passes) took ~130 us a step.
    """
    links = link_parent.shape[0]
    subtree_mass = np.zeros(links)
    moment = np.zeros((links, 3))
    for link in range(links):
        m = link_mass[link]
        subtree_mass[link] = m
        for e in range(3):
            moment[link, e] = m * (link_pose[link, e, 0] * link_com[link, 0] + link_pose[link, e, 1] * link_com[link, 1]
                                   + link_pose[link, e, 2] * link_com[link, 2] + link_pose[link, e, 3])
    for link in range(links - 1, 0, -1):  # parents precede children
        parent = link_parent[link]
        if parent >= 0:
            subtree_mass[parent] += subtree_mass[link]
            for e in range(3):
                moment[parent, e] += moment[link, e]
    g = (-gravity[0], -gravity[1], -gravity[2])
    out[:, :] = 0.0
    for i in range(links):
        if joint_dof[i] < 0:
            continue
        a_i = (joint_axis_world[i, 0], joint_axis_world[i, 1], joint_axis_world[i, 2])
        mass = subtree_mass[i]
        w_i = (moment[i, 0] - mass * link_pose[i, 0, 3], moment[i, 1] - mass * link_pose[i, 1, 3],
               moment[i, 2] - mass * link_pose[i, 2, 3])
        k = i
        while k >= 0:
            if joint_dof[k] >= 0 and joint_type[k] != 3:  # a revolute (or continuous) ancestor, or i itself
                a_k = (joint_axis_world[k, 0], joint_axis_world[k, 1], joint_axis_world[k, 2])
                turned_axis = cross3(a_k, a_i)
                if joint_type[i] == 3:
                    value = mass * (g[0] * turned_axis[0] + g[1] * turned_axis[1] + g[2] * turned_axis[2])
                else:
                    first = cross3(turned_axis, w_i)
                    second = cross3(a_i, cross3(a_k, w_i))
                    value = (g[0] * (first[0] + second[0]) + g[1] * (first[1] + second[1])
                             + g[2] * (first[2] + second[2]))
                value *= joint_multiplier[i] * joint_multiplier[k]
                out[joint_dof[i], joint_dof[k]] += value
                if k != i:
                    out[joint_dof[k], joint_dof[i]] += value
            k = link_parent[k]


@kernel
def spd_projection(sym):
    """The symmetric matrix ``sym`` with its negative eigenvalues set to zero (numpy's eigh and products, at
    half the cost of calling them from Python)."""
    values, vectors = np.linalg.eigh(sym)
    return (vectors * np.maximum(values, 0.0)) @ vectors.T


@kernel
def link_point_motion(point_link, point_local, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                      joint_axis_world, qd, pos, vel, jac):
    """World position, velocity and linear Jacobian (into ``jac[k, :, :len(qd)]``) of each point k fixed to
    link point_link[k] at ``point_local[k]`` in that link's frame: one call per robot and step."""
    n = qd.shape[0]
    scratch = np.empty((6, n))
    for k in range(point_link.shape[0]):
        link = point_link[k]
        for e in range(3):
            pos[k, e] = (link_pose[link, e, 0] * point_local[k, 0] + link_pose[link, e, 1] * point_local[k, 1]
                         + link_pose[link, e, 2] * point_local[k, 2] + link_pose[link, e, 3])
        point_jacobian_articulated(link, pos[k], link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                                   joint_axis_world, scratch)
        for e in range(3):
            total = 0.0
            for j in range(n):
                jac[k, e, j] = scratch[e, j]
                total += scratch[e, j] * qd[j]
            vel[k, e] = total


def robot_point_motion(model: Model, state: State, width: int, kinematics) -> tuple:
    """Positions (P, 3), velocities (P, 3) and linear Jacobians (P, 3, width) of every robot's contact points
    (the columns of :func:`robot_contact_points` that change with the state), robot after robot."""
    parts = []
    for r, kin in enumerate(kinematics):
        art = kin.art
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        link, local = art.contact_point_links
        pos, vel, jac = np.empty((len(link), 3)), np.empty((len(link), 3)), np.zeros((len(link), 3, width))
        link_point_motion(link, local, art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier,
                          kin.link_pose, kin.joint_axis_world, np.ascontiguousarray(state.robot_qd[lo:hi]), pos, vel,
                          jac)
        parts.append((pos, vel, jac))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3, width))
    return tuple(np.concatenate(column) for column in zip(*parts))


def robot_contact_points(model: Model, state: State, width: int, kinematics=None):
    """Contact points on robot links: positions, radii, velocities, friction, owner DOF/size, Jacobians, group,
    node flag (always False: link points get virtual nodes), link index.

    Arrays by point: positions (P, 3), radii (P,), velocities (P, 3), friction (P, 2), owner DOF and size (P,),
    Jacobians (P, 3, width), group (P,), node flag (P,), link (P,); the Jacobians are the linear rows of the
    link Jacobian on the robot's joints (3 x n, zero-padded to ``width``).
    """
    kinematics = kinematics if kinematics is not None else robot_kinematics(model, state)
    if not kinematics:
        return (np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros(0, np.int64),
                np.zeros(0, np.int64), np.zeros((0, 3, width)), np.zeros(0, np.int64), np.zeros(0, bool),
                np.zeros(0, np.int64))
    pos, vel, jac = robot_point_motion(model, state, width, kinematics)
    parts = []
    for r, kin in enumerate(kinematics):
        art = kin.art
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        link = art.contact_point_links[0]
        count = len(link)
        parts.append((art.contact_points[2], np.tile(model.robot_mu[r], (count, 1)),
                      np.full(count, model.robot_dof_start + lo, np.int64), np.full(count, hi - lo, np.int64),
                      np.full(count, model.robot_group(r), np.int64), np.zeros(count, bool), link))
    radius, mu, dof, size, group, node, link = (np.concatenate(column) for column in zip(*parts))
    return pos, radius, vel, mu, dof, size, jac, group, node, link


def joint_limit_candidates(model: Model, state: State, dt: float, width: int):
    """Joint limits close enough to be reached this step, as virtual-node S-contact data: None, or columns by
    limit (global joint index, side (+1 lower, -1 upper), gap [rad or m], owner dof, owner size, J_v (k, 3, width),
    group), robot by robot, joint by joint, lower before upper."""
    batches = []
    for r, art in enumerate(model.robots):
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        batch = _limit_rows(state.robot_q, state.robot_qd, lo, art.dof_limits, model.contact_margin, dt,
                            model.robot_dof_start + lo, hi - lo, model.robot_group(r), width)
        if len(batch[0]):
            batches.append(batch)
    if len(batches) <= 1:
        return batches[0] if batches else None
    return tuple(np.concatenate(column) for column in zip(*batches))


@kernel
def _limit_rows(robot_q, robot_qd, lo, limits, margin, dt, dof, size, group, width):
    """:func:`joint_limit_candidates`' columns for the joints of one robot from ``lo`` (``limits``: lower, upper
    per joint, +-inf for none; the robot's first DOF ``dof``, its DOF count ``size`` and group). A kernel: as numpy
    expressions on 8 joints it cost ~40 us a step, and a row a limit in Python ~20 us more."""
    n = limits.shape[0]
    joint = np.empty(2 * n, np.int64)
    side = np.empty(2 * n)
    gap = np.empty(2 * n)
    count = 0
    for i in range(n):
        for s in range(2):
            sign = 1.0 if s == 0 else -1.0
            g = sign * (robot_q[lo + i] - limits[i, s])
            if np.isfinite(g) and g < margin + 2.0 * dt * max(0.0, -sign * robot_qd[lo + i]):
                joint[count], side[count], gap[count] = lo + i, sign, g
                count += 1
    jac = np.zeros((count, 3, width))
    for c in range(count):
        jac[c, 0, joint[c] - lo] = side[c]
    return (joint[:count].copy(), side[:count].copy(), gap[:count].copy(), np.full(count, dof), np.full(count, size),
            jac, np.full(count, group))
