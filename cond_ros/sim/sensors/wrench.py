"""The wrench a robot joint transmits during a step, from the step's solved impulses.

For the subtree S below a joint (the child link and everything attached to it), Newton-Euler over the
step reads  W_parent->S = dH_S/dt - W_ext,S,  with W_ext,S the external wrench on S: gravity, the
contact forces the solver returned for contacts on S's links, and the forces the potentials of form (7)
transmitted to S's links (a cable welded to the hand), each the step's impulse divided by dt. The
momentum rate dH_S/dt is the change of S's linear and angular momentum between the start and the end
of the step, i.e. what those same solved impulses did to S's velocities; it vanishes at rest.

Everything is evaluated in the configuration at the start of the step, where the solver linearized
the dynamics. Wrenches are (force [N], torque [N m] about a stated world point) in world coordinates.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..collision.nodalization import ContactSet, world_force
from ..dynamics.potentials import PotentialEnds, potential_forces
from ..dynamics.robots import kinematics_at
from ..jit import kernel, leaf_kernel
from ..kinematics.articulation import ArticulationKinematics, point_jacobian_articulated
from ..kinematics.rigid import cross3, cross_vectors
from ..model import Model, PointKind, State
from ..validate import ModelError


def subtree_links(articulation, link: int) -> np.ndarray:
    """``link`` and all its descendants."""
    inside = np.zeros(articulation.link_count, bool)
    inside[link] = True
    for child in range(articulation.link_count):  # parents precede children
        parent = articulation.link_parent[child]
        if parent >= 0 and inside[parent]:
            inside[child] = True
    return np.flatnonzero(inside)


@kernel
def cross_sum(points, vectors):
    """sum_k points[k] x vectors[k], (k, 3) arrays: np.cross(points, vectors).sum(axis=0) with the same
    operations in the same order, without numpy's ~10 us of Python per np.cross."""
    out = np.zeros(3)
    for k in range(points.shape[0]):
        c0, c1, c2 = cross3((points[k, 0], points[k, 1], points[k, 2]), (vectors[k, 0], vectors[k, 1], vectors[k, 2]))
        if k == 0:  # numpy's sum starts from the first row, not from +0 (the sign of a zero)
            out[0], out[1], out[2] = c0, c1, c2
        else:
            out[0] += c0
            out[1] += c1
            out[2] += c2
    return out


@kernel
def external_wrench(frame, force, position, point_group, link, dof_b, vn_group, dof_count, group, in_subtree,
                    end_force, end_torque, end_pos, end_potential, end_side):
    """(force, torque about the world origin) of the contact and potential forces on a robot subtree
    (``in_subtree``: by link) of owner group ``group``: the contacts' world forces on side a where side a is a
    subtree point, their opposites where side b is a virtual node on a subtree link, then the potentials' forces
    and couples at the listed ends (``end_potential``, ``end_side``: rows of ``end_force``, ``end_torque``,
    ``end_pos``), summed one by one from +0 in that order: the bits of numpy's row sums and :func:`cross_sum`
    over the lists :meth:`JointWrenchProbe.measure` built before (~25 us of Python a step on panda_cable)."""
    total = np.zeros(3)
    moment = np.zeros(3)
    couple = np.zeros(3)
    f = np.empty(3)
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0  # side b's contacts push the subtree the other way (exactly: a sign flip)
        for m in range(frame.shape[0]):
            if side == 0:
                on_subtree = point_group[m] == group and link[m, 0] >= 0 and in_subtree[link[m, 0]]
            else:
                k = (dof_b[m] - dof_count) // 3  # side b's virtual node
                on_subtree = (link[m, 1] >= 0 and in_subtree[link[m, 1]] and 0 <= k < vn_group.shape[0]
                              and vn_group[k] == group)
            if not on_subtree:
                continue
            for j in range(3):
                f[j] = sign * world_force(frame, force, m, j)
            _accumulate(total, moment, position[m, 0], position[m, 1], position[m, 2], f)
    for e in range(end_potential.shape[0]):
        u, x = end_potential[e], end_side[e]
        for j in range(3):
            f[j] = end_force[u, x, j]
            couple[j] += end_torque[u, x, j]
        _accumulate(total, moment, end_pos[u, x, 0], end_pos[u, x, 1], end_pos[u, x, 2], f)
    for j in range(3):
        moment[j] += couple[j]
    return total, moment


@leaf_kernel
def _accumulate(total, moment, p0, p1, p2, f):
    """total += f, moment += p x f."""
    c0, c1, c2 = cross3((p0, p1, p2), (f[0], f[1], f[2]))
    total[0] += f[0]
    total[1] += f[1]
    total[2] += f[2]
    moment[0] += c0
    moment[1] += c1
    moment[2] += c2


@kernel
def subtree_momentum(links, link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia,
                     link_pose, joint_axis_world, qd, coms):
    """(linear momentum, angular momentum about the world origin) of ``links``; fills ``coms`` (links, 3)
    with their world centres of mass. One call instead of a Jacobian call and five matrix products in
    Python per link; the products are the same BLAS calls as numpy's, so the same bits."""
    jac = np.empty((6, qd.shape[0]))
    momenta = np.empty((links.shape[0], 3))
    spin = np.zeros(3)
    for i in range(links.shape[0]):
        link = links[i]
        rot = np.ascontiguousarray(link_pose[link, :3, :3])
        coms[i] = rot @ link_com[link] + link_pose[link, :3, 3]
        point_jacobian_articulated(link, coms[i], link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                                   joint_axis_world, jac)
        momenta[i] = link_mass[link] * (np.ascontiguousarray(jac[:3]) @ qd)
        spin += rot @ link_inertia[link] @ rot.T @ (np.ascontiguousarray(jac[3:]) @ qd)
    linear = momenta[0].copy()
    for i in range(1, links.shape[0]):
        linear += momenta[i]
    return linear, cross_sum(coms, momenta) + spin


#: :func:`external_wrench`'s contact columns and potential ends when there are none
_NO_CONTACTS = (np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int64),
                np.zeros((0, 2), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
_NO_ENDS = np.zeros((0, 2, 3))


@dataclasses.dataclass
class JointWrench:
    """What one step transmitted through a joint, in world coordinates.

    Attributes:
        force, torque: the wrench the parent applied on the subtree [N, N m], torque about ``point``.
        point: the reference point (the child link's frame origin) [m].
        external_force, external_torque: the contact and potential forces on the subtree (no gravity,
            no inertia), torque about ``point``: e.g. the force a cable exerts on the tool.
        parent_pose, child_pose: world poses (4x4) of the two link frames.
    """

    force: np.ndarray
    torque: np.ndarray
    point: np.ndarray
    external_force: np.ndarray
    external_torque: np.ndarray
    parent_pose: np.ndarray
    child_pose: np.ndarray


class JointWrenchProbe:
    """Computes :class:`JointWrench` for the joint above ``child_link`` of robot ``robot``."""

    def __init__(self, model: Model, robot: int, child_link: str):
        if not (0 <= robot < len(model.robots)):
            raise ModelError(f"ft_sensor: no robot {robot} (have {len(model.robots)})")
        self.model = model
        self.robot = robot
        art = model.robots[robot]
        if child_link not in art.link_name:
            raise ModelError(f"ft_sensor: robot {robot} has no link {child_link!r}")
        self.child = art.link_index(child_link)
        self.parent = int(art.link_parent[self.child])
        if self.parent < 0:
            raise ModelError(f"ft_sensor: link {child_link!r} is the robot's root; it has no joint above it")
        self.links = subtree_links(art, self.child)
        self.in_subtree = np.zeros(art.link_count, bool)
        self.in_subtree[self.links] = True
        self.group = model.robot_group(robot)
        self.lo, self.hi = model.robot_dof_offset[robot], model.robot_dof_offset[robot + 1]
        # the potentials with an end on this robot (a cable has ~1000, ~20 on the hand), and (potential, end)
        # of those ends on the subtree, in the order of np.argwhere: the model's potentials are fixed
        self.potentials = np.zeros(0, np.int64)
        ends = np.zeros((0, 2), np.int64)
        if model.potential_count:
            on_links = (model.potential_kind == PointKind.ROBOT_LINK) & (model.potential_index == robot)
            self.potentials = np.flatnonzero(on_links.any(axis=1))
            ends = np.array([(k, x) for k, x in np.argwhere(on_links[self.potentials])
                             if self.in_subtree[model.potential_link[self.potentials[k], x]]], np.int64).reshape(-1, 2)
        self.potential_ends = (np.ascontiguousarray(ends[:, 0]), np.ascontiguousarray(ends[:, 1]))

    def _momentum(self, kin: ArticulationKinematics, qd: np.ndarray):
        """Linear momentum, angular momentum about the world origin and world centres of mass of the subtree."""
        art = kin.art
        coms = np.empty((len(self.links), 3))
        linear, angular = subtree_momentum(self.links, art.link_parent, art.joint_type, art.joint_dof,
                                           art.joint_multiplier, art.link_mass, art.link_com, art.link_inertia,
                                           kin.link_pose, kin.joint_axis_world, np.ascontiguousarray(qd), coms)
        return linear, angular, coms

    def measure(self, state_start: State, state_end: State, contacts: ContactSet | None, dt: float) -> JointWrench:
        """The wrench of the step that took ``state_start`` to ``state_end`` (``contacts`` hold its forces)."""
        model, art = self.model, self.model.robots[self.robot]
        q1 = state_end.robot_q[self.lo:self.hi]
        # the start state's kinematics found the step's contacts: reused when they are at hand
        start = kinematics_at(model, state_start, contacts.kinematics if contacts is not None else None)
        kin0 = start[self.robot]
        kin1 = ArticulationKinematics(art)
        kin1.update(q1)
        point = kin0.link_pose[self.child][:3, 3].copy()
        if contacts is not None and contacts.count and contacts.link is not None:
            side_columns = (contacts.frame, contacts.force, contacts.position, contacts.point_group, contacts.link,
                            contacts.dof_b, contacts.vn_group)
        else:
            side_columns = _NO_CONTACTS
        if len(self.potentials):
            which = self.potentials
            width = contacts.pattern.max_group_size if contacts is not None else max(6, art.dof_count)
            # an end may be on another robot: every robot's start kinematics
            ends = PotentialEnds(model, state_start, width, start, potentials=which)
            theta = model.integration_theta
            v_hat = theta * state_end.velocity() + (1.0 - theta) * state_start.velocity()
            end_force, end_torque = potential_forces(model, ends, v_hat, dt, potentials=which)
            end_pos = ends.pos
        else:
            end_force = end_torque = end_pos = _NO_ENDS
        force_ext, torque_ext = external_wrench(*side_columns, model.dof_count, self.group, self.in_subtree, end_force,
                                                end_torque, end_pos, *self.potential_ends)
        masses = art.link_mass[self.links]
        p0, h0, coms0 = self._momentum(kin0, state_start.robot_qd[self.lo:self.hi])
        p1, h1, _ = self._momentum(kin1, state_end.robot_qd[self.lo:self.hi])
        gravity_force = masses.sum() * model.gravity
        gravity_torque = cross_vectors(masses @ coms0, model.gravity)  # sum of com_i x m_i g
        force = (p1 - p0) / dt - force_ext - gravity_force
        torque = (h1 - h0) / dt - torque_ext - gravity_torque
        # about the origin -> about point: tau - point x f
        return JointWrench(force, torque - cross_vectors(point, force), point, force_ext,
                           torque_ext - cross_vectors(point, force_ext), kin0.link_pose[self.parent].copy(),
                           kin0.link_pose[self.child].copy())
