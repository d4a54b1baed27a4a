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
from ..kinematics.articulation import (ArticulationKinematics, forward_kinematics, gravity_forces,
                                       point_jacobian_articulated)
from ..model import Control, Model, State


def robot_kinematics(model: Model, state: State) -> list:
    """Forward kinematics of every robot at the state's joint positions."""
    out = []
    for r, art in enumerate(model.robots):
        kin = ArticulationKinematics(art)
        kin.update(state.robot_q[model.robot_dof_offset[r]:model.robot_dof_offset[r + 1]])
        out.append(kin)
    return out


def assemble_robots(model: Model, pattern, state: State, control: Control, dt: float, data: np.ndarray,
                    b: np.ndarray, kinematics=None) -> None:
    """Adds each robot's block of A and rows of b (module docstring) in place (``kinematics``: the state's
    :func:`robot_kinematics`, if already at hand)."""
    for r, kin in enumerate(kinematics if kinematics is not None else robot_kinematics(model, state)):
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        n = hi - lo
        qd = state.robot_qd[lo:hi]
        mass = kin.mass_matrix()
        bias = kin.bias_forces(qd, model.gravity)
        kp = control.robot_drive_stiffness[lo:hi]
        kd = control.robot_drive_damping[lo:hi]
        h = model.integration_theta * dt
        block = mass / h + np.diag(h * kp + kd + kin.art.dof_damping) \
            + h * gravity_stiffness(kin, state.robot_q[lo:hi], model.gravity)
        slot = pattern.block_slot[pattern.diag_pair[model.robot_group(r)]]
        data[slot[:n, None] + np.arange(n)] += block
        dof = model.robot_dof_start + lo
        b[dof:dof + n] += (mass @ qd / h - bias + control.robot_effort[lo:hi]
                          + kp * (control.robot_q_target[lo:hi] - state.robot_q[lo:hi])
                          + kd * control.robot_qd_target[lo:hi])


@kernel
def gravity_jacobian(link_parent, joint_type, joint_origin, joint_axis, joint_dof, joint_multiplier, joint_offset,
                     base_transform, link_mass, link_com, link_inertia, q, gravity, step, out):
    """out[:, i] = (g(q + step e_i) - g(q - step e_i)) / (2 step): central differences of the gravity torques,
    all 2 n kinematics and dynamics passes in one call (as Python calls they cost ~0.4 ms a step).

    Links before the first one that DOF i moves keep their poses and their terms of g, and g sums the links
    in order: a pass starts from that link with the poses and the partial sum at q, which is what a full
    pass computes, in half the work on a chain. ``link_inertia`` is unused (gravity puts no torque on a link)."""
    n = q.shape[0]
    links = link_parent.shape[0]
    pose = np.zeros((links, 4, 4))
    axis = np.zeros((links, 3))
    forward_kinematics(link_parent, joint_type, joint_origin, joint_axis, joint_dof, joint_multiplier,
                       joint_offset, base_transform, q, pose, axis)
    rest_pose = pose.copy()
    rest_axis = axis.copy()
    jac = np.empty((6, n))
    partial = np.zeros((links + 1, n))  # partial[k]: the terms of links 0..k-1 at q
    for link in range(links):
        partial[link + 1] = partial[link]
        gravity_forces(link, link + 1, link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com,
                       pose, axis, gravity, jac, partial[link + 1])
    plus = np.empty(n)
    minus = np.empty(n)
    shifted = q.copy()
    for i in range(n):
        first = links
        for link in range(links):
            if joint_dof[link] == i:
                first = link
                break
        for sign in range(2):
            shifted[i] = q[i] + step if sign == 0 else q[i] - step
            side = plus if sign == 0 else minus
            forward_kinematics(link_parent, joint_type, joint_origin, joint_axis, joint_dof, joint_multiplier,
                               joint_offset, base_transform, shifted, pose, axis, first)
            side[:] = partial[first]
            gravity_forces(first, links, link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com,
                           pose, axis, gravity, jac, side)
        shifted[i] = q[i]
        pose[first:] = rest_pose[first:]
        axis[first:] = rest_axis[first:]
        for r in range(n):
            out[r, i] = (plus[r] - minus[r]) / (2.0 * step)


def gravity_stiffness(kin: ArticulationKinematics, q: np.ndarray, gravity, step=1e-6) -> np.ndarray:
    """SPD projection of the gravity potential's Hessian d g / d q, for the implicit part of eq. (9).

    Treating gravity explicitly makes the midpoint rule gain energy at a rate ~ omega^3 dt (65 % of a
    pendulum's swing energy in 10 s at 10 ms); its linearization, like the potentials of form (7),
    removes that. Negative curvature (an inverted link) is projected out, as the paper projects the
    geometric stiffness onto SPD matrices. Central differences of g(q) (``gravity_jacobian``).
    """
    a = kin.art
    hessian = np.empty((len(q), len(q)))
    gravity_jacobian(a.link_parent, a.joint_type, a.joint_origin, a.joint_axis, a.joint_dof, a.joint_multiplier,
                     a.joint_offset, a.base_transform, a.link_mass, a.link_com, a.link_inertia,
                     np.asarray(q, dtype=np.float64), np.asarray(gravity, dtype=np.float64), float(step), hessian)
    sym = 0.5 * (hessian + hessian.T)
    values, vectors = np.linalg.eigh(sym)
    return (vectors * np.maximum(values, 0.0)) @ vectors.T


@kernel
def link_point_jacobians(point_link, points, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                         joint_axis_world, dof_count, out):
    """out[k, :, :dof_count] = the first out.shape[1] rows (3: linear; 6: and angular) of the Jacobian of world
    point k fixed to link point_link[k]."""
    scratch = np.empty((6, dof_count))
    for k in range(points.shape[0]):
        point_jacobian_articulated(point_link[k], points[k], link_parent, joint_type, joint_dof, joint_multiplier,
                                   link_pose, joint_axis_world, scratch)
        out[k, :, :dof_count] = scratch[:out.shape[1]]


def robot_contact_points(model: Model, state: State, width: int, kinematics=None):
    """Contact points on robot links: positions, radii, velocities, friction, owner DOF/size, Jacobians, group,
    node flag (always False: link points get virtual nodes), link index.

    Arrays by point: positions (P, 3), radii (P,), velocities (P, 3), friction (P, 2), owner DOF and size (P,),
    Jacobians (P, 3, width), group (P,), node flag (P,), link (P,); the Jacobians are the linear rows of the
    link Jacobian on the robot's joints (3 x n, zero-padded to ``width``).
    """
    parts = []
    for r, kin in enumerate(kinematics if kinematics is not None else robot_kinematics(model, state)):
        art = kin.art
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        geom, local, radius = art.contact_points
        link = art.geom_link[geom].astype(np.int64)
        frame = kin.link_pose[link] @ art.geom_origin[geom]
        pos = np.einsum("kij,kj->ki", frame[:, :3, :3], local) + frame[:, :3, 3]
        jac = np.zeros((len(geom), 3, width))
        link_point_jacobians(link, pos, art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier,
                             kin.link_pose, kin.joint_axis_world, hi - lo, jac)
        count = len(geom)
        parts.append((pos, radius, jac[:, :, :hi - lo] @ state.robot_qd[lo:hi], np.tile(model.robot_mu[r], (count, 1)),
                      np.full(count, model.robot_dof_start + lo, np.int64), np.full(count, hi - lo, np.int64), jac,
                      np.full(count, model.robot_group(r), np.int64), np.zeros(count, bool), link))
    if not parts:
        return (np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 2)), np.zeros(0, np.int64),
                np.zeros(0, np.int64), np.zeros((0, 3, width)), np.zeros(0, np.int64), np.zeros(0, bool),
                np.zeros(0, np.int64))
    return tuple(np.concatenate(column) for column in zip(*parts))


def joint_limit_candidates(model: Model, state: State, dt: float, width: int):
    """Joint limits close enough to be reached this step, as virtual-node S-contact data.

    Returns (global joint index, side (+1 lower, -1 upper), gap [rad or m], owner dof, owner size, J_v, group).
    """
    rows = []
    for r, art in enumerate(model.robots):
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        for i in range(hi - lo):
            q, qd = state.robot_q[lo + i], state.robot_qd[lo + i]
            for side, limit in ((1.0, art.dof_lower[i]), (-1.0, art.dof_upper[i])):
                if not np.isfinite(limit):
                    continue
                gap = side * (q - limit)
                if gap < model.contact_margin + 2.0 * dt * max(0.0, -side * qd):
                    jac = np.zeros((3, width))
                    jac[0, i] = side
                    rows.append((lo + i, side, gap, model.robot_dof_start + lo, hi - lo, jac, model.robot_group(r)))
    return rows
