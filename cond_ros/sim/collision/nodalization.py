"""Contact nodalization (Sec. III-A): the step's contacts as nodes, frames and offsets.

Every contact acts on nodes of the augmented velocity vector (eq. 15):

- a particle in contact is a node itself, and so is the centre of a rod segment (a body contact point
  flagged ``node``: its contacts act on the body's translational DOFs). Contacts that share such a node
  (a particle touching two colliders, a rod node touching the post and another turn of the rod) form
  one group whose small surrogate problem the solver handles on its own; giving them virtual nodes
  instead would add a k_v-stiff mode to a light node. Different groups never share a node, which keeps
  the per-group kernels race-free;
- any other point on a rigid body gets a virtual node (eq. 14) with J_v = [I, -[r]x]; a point on a
  robot link likewise, with the link Jacobian on the robot's joints; so does a joint limit that may be
  reached (``robot_dynamics``).

The contact conditions (11) are imposed on the end-of-step contact velocity
u = J_c v_{k+1} (relative to a lower bound L on its normal part), because the
midpoint rule v_{k+1} = 2 v_hat - v_k would otherwise bounce elastically off
every contact. With J_c v_hat = (J_c v_k + J_c v_{k+1}) / 2 this is the
paper's form J_c v_hat + phi with the offset phi = -(J_c v_k + [L, 0, 0]) / 2 (generally
-((1 - theta) J_c v_k + theta [L, 0, 0]) for ``Model.integration_theta``),
where L holds the penetration compensation and restitution:

- gap g > 0 (speculative): L = min(0, -g / dt - (1 - theta) a_n): approach no faster than the next
  step can still stop inelastically (u_{k+1} (1 - theta) dt <= g_{k+1}), so an approaching node slows down over the
  last steps and touches without penetrating or bouncing (the exact-landing bound -2 g / dt - a_n
  would let it arrive at speed and sink u dt / 2 in the step after);
- g <= 0: L = max(-beta g / dt, -e a_n), i.e. push out a fraction beta of the
  penetration per step, or bounce with restitution e,

with a_n the normal contact velocity at the start of the step.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..dynamics.assembly import SystemPattern
from ..dynamics.robots import joint_limit_candidates, robot_contact_points, robot_kinematics, robot_point_motion
from ..jit import kernel, leaf_kernel
from ..kinematics.rigid import cross3, point_jacobian, quat_to_matrix_into
from ..model import Model, State, per_model
from .colliders import detect_point_contacts
from .dynamic_contacts import (SELF_CONTACT_ARC, NodePairList, detect_dynamic_contacts, detect_node_pairs,
                               neighbour_windows)

SOURCE_PARTICLE = 0
SOURCE_BODY_POINT = 1
SOURCE_ROBOT_POINT = 2  # a point of a robot link's collision primitive
SOURCE_JOINT_LIMIT = 3  # source_index = 2 * joint + (0 lower, 1 upper)


@dataclasses.dataclass
class ContactSet:
    """The contacts of one step, ready for any solver.

    Attributes:
        pattern: the model's A_o pattern (carried so a solver can assemble).
        count: number of contacts m.
        dof_a, dof_b: first DOF of each contact's node(s) in the augmented v; dof_b = -1 for an S-contact.
        frame: rows (n, t1, t2) mapping world to contact frame (R_c,m of eq. 13), (m, 3, 3).
        friction: (mu1, mu2) along (t1, t2), (m, 2).
        offset: phi of eq. (11)/(23) [m/s], (m, 3).
        gap: signed distance at the start of the step [m] (negative = penetration), (m,).
        position: world contact point [m], (m, 3).
        collider: static collider index (-1 for a D-contact), (m,).
        source_kind, source_index: SOURCE_PARTICLE, SOURCE_BODY_POINT, SOURCE_ROBOT_POINT or
            SOURCE_JOINT_LIMIT, and the index of that particle, point or limit.
        force: contact force solved for the step in the contact frame [N], (m, 3).
        point_dof, point_size, point_jac, point_group: the real contact point's owner (particle or body):
            first DOF in v, DOF count, the point's 3 x size Jacobian (zero-padded), DOF group.
        vn_dof, vn_size, vn_jac, vn_group: virtual nodes: owner's first DOF, DOF count, J_v (eq. 14), DOF group.
        group_starts: start of each group of contacts sharing a node, plus the end (None: group by dof_a).
        link: robot link of side a and side b of each contact (-1 if not on a robot), (m, 2); which robot
            follows from the owner's DOF group.
        kinematics: each robot's kinematics at the step's start state (``robot_kinematics``), which found the
            contacts; assembly and the F/T sensors read them rather than run forward kinematics again.
    """

    pattern: SystemPattern
    count: int
    dof_a: np.ndarray
    dof_b: np.ndarray
    frame: np.ndarray
    friction: np.ndarray
    offset: np.ndarray
    gap: np.ndarray
    position: np.ndarray
    collider: np.ndarray
    source_kind: np.ndarray
    source_index: np.ndarray
    force: np.ndarray
    point_dof: np.ndarray
    point_size: np.ndarray
    point_jac: np.ndarray
    point_group: np.ndarray
    vn_dof: np.ndarray
    vn_size: np.ndarray
    vn_jac: np.ndarray
    vn_group: np.ndarray
    group_starts: np.ndarray = None
    link: np.ndarray = None
    kinematics: list = None

    def group_start(self) -> np.ndarray:
        """Start of each run of contacts that share a node (one group of the solver), plus the end."""
        if self.count == 0:
            return np.zeros(1, dtype=np.int64)
        if self.group_starts is not None:
            return self.group_starts
        change = np.flatnonzero(self.dof_a[1:] != self.dof_a[:-1]) + 1
        return np.concatenate([[0], change, [self.count]]).astype(np.int64)

    def world_forces(self) -> np.ndarray:
        """Contact forces on the node side in world coordinates [N], (m, 3)."""
        return forces_to_world(self.frame, self.force)


def forces_to_world(frame: np.ndarray, force: np.ndarray) -> np.ndarray:
    """R_c^T lambda for every contact: contact-frame forces (m, 3) to world coordinates."""
    return np.einsum("mij,mi->mj", frame, force)


@kernel
def keyed_world_forces(keys, frame, force):
    """(keys sorted, stably, and the contacts' world forces R_c^T lambda in that order): what a solver keeps of
    a step for the next one's force warm start, the same for every solver that keeps them. The sums run in
    einsum's order (i = 0, 1, 2): the bits of :func:`forces_to_world` sorted by ``np.argsort(kind="stable")``."""
    order = np.argsort(keys, kind="mergesort")
    sorted_keys = np.empty_like(keys)
    world = np.empty((keys.shape[0], 3))
    for p in range(keys.shape[0]):
        m = order[p]
        sorted_keys[p] = keys[m]
        for j in range(3):
            world[p, j] = world_force(frame, force, m, j)
    return sorted_keys, world


@leaf_kernel
def world_force(frame, force, m, j):
    """Component j of contact m's world force R_c^T lambda, summed in einsum's order (i = 0, 1, 2): the bits of
    :func:`forces_to_world`."""
    return frame[m, 0, j] * force[m, 0] + frame[m, 1, j] * force[m, 1] + frame[m, 2, j] * force[m, 2]


def contact_keys(contacts: ContactSet) -> np.ndarray:
    """An integer identity of each contact that persists across steps (warm starts).

    It names the source point and what it touches: the static collider, or the other side's owner (a
    node's own DOF, or a virtual node's owner DOF and robot link), so that one particle squeezed by two
    fingers has two keys.
    """
    link_b = contacts.link[:, 1] if contacts.link is not None else np.full(contacts.count, -1)
    keys = np.empty(contacts.count, np.int64)
    if not _contact_keys(len(contacts.pattern.indptr) - 1, contacts.dof_b, contacts.vn_dof, link_b,
                         contacts.collider, contacts.source_index, contacts.source_kind, keys):
        raise ValueError("contact_keys: more than 2^29 points, 2^24 DOFs or 126 robot links do not fit the key")
    return keys


@kernel
def _contact_keys(dof_count, dof_b, vn_dof, link_b, collider, source_index, source_kind, keys):
    """:func:`contact_keys` into ``keys``; False where one does not fit its bits. A kernel: it runs every
    step, and as a dozen numpy calls it cost ~70 us at 150 contacts."""
    fits = True
    last_vn = max(vn_dof.shape[0] - 1, 0)
    for m in range(dof_b.shape[0]):
        b = dof_b[m]
        if b < 0:
            other = collider[m] + 1
        else:
            if b < dof_count:
                owner = b
            elif vn_dof.shape[0]:
                owner = vn_dof[min(max((b - dof_count) // 3, 0), last_vn)]
            else:
                owner = 0
            other = (1 << 24) + owner * 128 + link_b[m] + 1
        if other >= 1 << 31 or source_index[m] >= 1 << 29 or link_b[m] >= 127:
            fits = False
        keys[m] = (source_index[m] * (1 << 31) + other) * 4 + source_kind[m]  # 4 source kinds
    return fits


@kernel
def contact_offsets(frame, owner_dof_a, size_a, jac_a, owner_dof_b, size_b, jac_b, v_k, gap, dt, theta,
                    restitution, recovery, out):
    """phi of every contact from the start-of-step velocity v_k (see module docstring).

    Nodes are given by their owner (first DOF in v_k, DOF count, point Jacobian); owner_dof_b = -1
    marks an S-contact.
    """
    # scalars: a BLAS product and two new arrays per contact cost ~0.2 us each (~150 contacts a step)
    vel = np.empty(3)
    a = np.empty(3)
    for m in range(frame.shape[0]):
        for e in range(3):
            total = 0.0
            for r in range(size_a[m]):
                total += jac_a[m, e, r] * v_k[owner_dof_a[m] + r]
            if owner_dof_b[m] >= 0:
                other = 0.0
                for r in range(size_b[m]):
                    other += jac_b[m, e, r] * v_k[owner_dof_b[m] + r]
                total -= other
            vel[e] = total
        for e in range(3):
            a[e] = frame[m, e, 0] * vel[0] + frame[m, e, 1] * vel[1] + frame[m, e, 2] * vel[2]
        g = gap[m]
        if g > 0.0:
            bound = min(0.0, -g / dt - (1.0 - theta) * a[0])
        else:
            bound = max(-recovery * g / dt, -restitution * a[0])
        out[m, 0] = -((1.0 - theta) * a[0] + theta * bound)
        out[m, 1] = -(1.0 - theta) * a[1]
        out[m, 2] = -(1.0 - theta) * a[2]


def _point_layout(model: Model, width: int) -> dict:
    """What of every contact-capable point (particles, body contact points, robot contact points) does not
    change during a run: the columns of :func:`contact_points` and ``robot_contact_points`` other than
    position, velocity and (for non-node body points and robot points) Jacobian, source kind and index, the
    contact flag, the self-contact layout. Built once per model (``per_model``): rebuilt every step they cost
    ~0.1 ms of panda_cable's collision step."""
    n_p, n_c = model.particle_count, model.contact_point_count
    body = model.contact_point_body
    node = np.concatenate([np.ones(n_p, bool), model.contact_point_node])
    size = np.concatenate([np.full(n_p, 3), np.full(n_c, 6)]).astype(np.int64)
    size[node] = 3
    jac = np.zeros((n_p + n_c, 3, width))
    jac[node, :, :3] = np.eye(3)
    own = dict(radius=np.concatenate([model.particle_radius, model.contact_point_radius]),
               mu=np.concatenate([model.particle_mu, model.contact_point_mu]),
               dof=np.concatenate([3 * np.arange(n_p), model.body_dof_start + 6 * body]).astype(np.int64),
               size=size, jac=jac, group=np.concatenate([np.arange(n_p), n_p + body]).astype(np.int64), node=node,
               link=np.full(n_p + n_c, -1, np.int64))
    layout = dict(own=own, rigid=np.flatnonzero(~model.contact_point_node))
    names = ("radius", "mu", "dof", "size", "jac", "group", "node", "link")
    if model.robots:
        # a robot point's columns but position, velocity and Jacobian depend on the model only
        _, radius, _, mu, dof, size, _, group, node, link = robot_contact_points(model, model.state(), width)
        robot = dict(radius=radius, mu=mu, dof=dof, size=size, jac=np.zeros((len(radius), 3, width)), group=group,
                     node=node, link=link)
        layout.update({name: np.concatenate([own[name], robot[name]]) for name in names})
    else:
        layout.update({name: own[name] for name in names})
    n_points = len(layout["radius"])
    layout["kind"] = np.select([np.arange(n_points) < n_p, np.arange(n_points) < n_p + n_c],
                               [SOURCE_PARTICLE, SOURCE_BODY_POINT], SOURCE_ROBOT_POINT).astype(np.int64)
    layout["index"] = np.arange(n_points) - np.select([layout["kind"] == SOURCE_PARTICLE,
                                                       layout["kind"] == SOURCE_BODY_POINT], [0, n_p], n_p + n_c)
    # interior FEM nodes are not contact nodes
    layout["active"] = np.concatenate([model.particle_contact, np.ones(n_points - n_p, bool)])
    layout["tested"] = None if layout["active"].all() else np.flatnonzero(layout["active"])
    layout["chain"], layout["rest"] = self_contact_layout(model, n_points)
    layout["pair_node"] = layout["node"] & layout["active"]
    layout["pair_candidates"] = np.flatnonzero(layout["pair_node"] & (layout["chain"] >= 0)).astype(np.int64)
    layout["pair_windows"] = neighbour_windows(layout["pair_candidates"], layout["radius"], layout["chain"],
                                               layout["rest"], SELF_CONTACT_ARC)
    # a rod's nodes: body points on a chain, at arc positions, added along it (``add_rod``)
    layout["pair_on_arc"] = (layout["kind"] == SOURCE_BODY_POINT) & (layout["chain"] >= 0)
    return layout


@kernel
def _body_point_motion(body_q, body_qd, body_quat, body, local, pos, vel, arm):
    """World position, velocity and world offset from the body's COM (``arm``: R local) of body contact points:
    c + arm and v + omega x arm. A kernel: the gathers, the rotation matrices, einsum, np.cross and
    concatenations cost ~35 us a step at 304 rod nodes."""
    rot = np.empty((3, 3))
    for p in range(body.shape[0]):
        b = body[p]
        quat_to_matrix_into(body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3], rot)
        for e in range(3):
            arm[p, e] = rot[e, 0] * local[p, 0] + rot[e, 1] * local[p, 1] + rot[e, 2] * local[p, 2]
        turn = cross3((body_qd[b, 3], body_qd[b, 4], body_qd[b, 5]), (arm[p, 0], arm[p, 1], arm[p, 2]))
        for e in range(3):
            pos[p, e] = body_q[b, e] + arm[p, e]
            vel[p, e] = body_qd[b, e] + turn[e]


def _moving_columns(model: Model, state: State, layout: dict, robot=None):
    """Positions (P, 3), velocities (P, 3) and point Jacobians (P, 3, width) of the particles and body contact
    points at ``state``, the columns that change (``layout['own']`` has the others: radius, friction, owner DOF
    and size, group, node flag, link; a node point's owner is its body's translational DOFs, J = I),
    followed by ``robot``'s (the position, velocity and Jacobian of each robot contact point) if given."""
    n_p, n_c = model.particle_count, model.contact_point_count
    n = n_p + n_c + (len(robot[0]) if robot is not None else 0)
    pos, vel = np.empty((n, 3)), np.empty((n, 3))
    pos[:n_p], vel[:n_p] = state.particle_q, state.particle_qd
    body = model.contact_point_body
    arm = np.empty((n_c, 3))
    if n_c:
        _body_point_motion(state.body_q, state.body_qd, state.body_quat, body, model.contact_point_local,
                           pos[n_p:n_p + n_c], vel[n_p:n_p + n_c], arm)
    jac = layout["own"]["jac"]
    if len(layout["rigid"]):
        jac = jac.copy()
        for j in layout["rigid"]:
            jac[n_p + j, :, :6] = point_jacobian(6, arm[j])
    if robot is not None:
        pos[n_p + n_c:], vel[n_p + n_c:] = robot[0], robot[1]
        jac = np.concatenate([jac, robot[2]])
    return pos, vel, jac


def self_contact_layout(model: Model, n_points: int):
    """(chain id, rest coordinates [m]) of every contact point, for node-node contacts.

    Rod nodes: their chain, at (arc, 0, 0). FEM nodes: one chain per deformable object (numbered after
    the rods'), at their rest positions. Two nodes of one chain touch only when they were far apart at
    rest (``dynamic_contacts.SELF_CONTACT_ARC``). Free particles and robot points: no chain.
    """
    n_p, n_c = model.particle_count, model.contact_point_count
    first_object = int(model.contact_point_chain.max(initial=-1)) + 1
    particle_chain = np.where(model.particle_object >= 0, first_object + model.particle_object, -1)
    chain = np.concatenate([particle_chain, model.contact_point_chain,
                            np.full(n_points - n_p - n_c, -1)]).astype(np.int64)
    rest = np.zeros((n_points, 3))
    rest[:n_p] = model.particle_q
    rest[n_p:n_p + n_c, 0] = model.contact_point_arc
    return chain, rest


def build_contact_set(model: Model, pattern: SystemPattern, state: State, dt: float,
                      pair_list: NodePairList | None = None) -> ContactSet:
    """The step's contacts: contact points against the static colliders (S), body and robot contact points
    against other owners' moving volumes (D), and the robot joint limits that may be reached (``pair_list``:
    the caller's :class:`~cond_ros.sim.collision.dynamic_contacts.NodePairList`, kept across its steps)."""
    width = pattern.max_group_size
    layout = per_model(model, _point_layout, width)
    kinematics = robot_kinematics(model, state) if model.robots else []
    robot = None
    if model.robots:
        robot = robot_point_motion(model, state, width, kinematics)
    pos, vel, jac = _moving_columns(model, state, layout, robot)
    radius, mu, group, node, active, tested = (layout[k] for k in ("radius", "mu", "group", "node", "active", "tested"))
    point_kind, point_index = layout["kind"], layout["index"]
    rows = _Rows(width, (layout["dof"], layout["size"], jac, group, node, layout["link"]))
    if tested is None:
        found = detect_point_contacts(pos, radius, vel, model, model.contact_margin, dt)
        hit = found.point_index
    else:
        found = detect_point_contacts(pos[tested], radius[tested], vel[tested], model, model.contact_margin, dt)
        hit = tested[found.point_index]
    rows.add_batch(found.frame, found.gap, found.position, found.collider, point_kind[hit], point_index[hit],
                   np.maximum(mu[hit], model.collider_mu[found.collider]), hit)
    limits = joint_limit_candidates(model, state, dt, width) if model.robots else None
    if limits is not None:
        joint, side, gap, l_dof, l_size, l_jac, l_group = limits
        frame, position, collider, kind, friction, node, link = _limit_constants(len(gap))
        rows.add_batch(frame, gap, position, collider, kind, 2 * joint + (side < 0), friction,
                       (l_dof, l_size, l_jac, l_group, node, link))
    points = dict(pos=pos, radius=radius, vel=vel, mu=mu, group=group, node=node, active=active)
    dynamic = detect_dynamic_contacts(model, state, kinematics, points, dt, width)
    k = len(dynamic["gap"])
    if k:
        i = dynamic["point"]
        rows.add_batch(dynamic["frame"], dynamic["gap"], dynamic["position"], np.full(k, -1), point_kind[i],
                       point_index[i], dynamic["friction"], i,
                       (dynamic["dof_b"], dynamic["size_b"], dynamic["jac_b"], dynamic["group_b"], np.zeros(k, bool),
                        dynamic["link_b"]))
    pairs, frame, gap, position = detect_node_pairs(model, pos, radius, vel, layout["pair_node"], layout["chain"],
                                                    layout["rest"], dt, layout["pair_candidates"], pair_list,
                                                    layout["pair_windows"], layout["pair_on_arc"])
    if len(pairs):
        i, j = pairs[:, 0], pairs[:, 1]
        rows.add_batch(frame, gap, position, np.full(len(i), -1), point_kind[i], point_index[i],
                       np.maximum(mu[i], mu[j]), i, j)
    return rows.finish(model, pattern, state, dt, kinematics or None)


@functools.lru_cache(maxsize=64)
def _limit_constants(k: int) -> tuple:
    """The columns of k joint-limit contacts that are the same for every limit (frame I, position, collider -1,
    source kind, friction, node flag, link), read-only: made once per count, not every step."""
    columns = (np.tile(np.eye(3), (k, 1, 1)), np.zeros((k, 3)), np.full(k, -1), np.full(k, SOURCE_JOINT_LIMIT),
               np.zeros((k, 2)), np.zeros(k, bool), np.full(k, -1))
    for column in columns:
        column.flags.writeable = False
    return columns


@leaf_kernel
def _root(parent, c):
    """Union-find root of ``c``, halving the path on the way."""
    while parent[c] != c:
        parent[c] = parent[parent[c]]
        c = parent[c]
    return c


@kernel
def _contact_groups(a_dof, a_node, b_dof, b_node):
    """Order of the contacts and the start of each group of contacts that share a node (union-find over the
    node sides; a group is ordered by its first contact, its contacts in their order). A kernel: in Python
    it cost ~140 us a step at panda_cable's 256 contacts, here ~6 us."""
    m = a_dof.shape[0]
    parent = np.arange(m)
    top = -1
    for c in range(m):
        if a_node[c]:
            top = max(top, a_dof[c])
        if b_node[c]:
            top = max(top, b_dof[c])
    first_at_node = np.full(top + 1, -1, np.int64)
    for c in range(m):
        for side in range(2):
            if not (a_node[c] if side == 0 else b_node[c]):
                continue
            dof = a_dof[c] if side == 0 else b_dof[c]
            if first_at_node[dof] < 0:
                first_at_node[dof] = c
            other = _root(parent, first_at_node[dof])
            parent[_root(parent, c)] = other
    roots = np.empty(m, np.int64)
    for c in range(m):
        roots[c] = _root(parent, c)
    order = np.argsort(roots, kind="mergesort")  # stable: by root, then contact
    starts = np.empty(m + 1, np.int64)
    count = 0
    for k in range(m):
        if k == 0 or roots[order[k]] != roots[order[k - 1]]:
            starts[count] = k
            count += 1
    starts[count] = m
    return order, starts[:count + 1]


_FIELD_TYPES = (float, float, float, np.int64, np.int64, np.int64, float)  # frame .. friction of add_batch
_SIDE_TYPES = (np.int64, np.int64, float, np.int64, bool, np.int64)  # dof, size, jac, group, node, link


@functools.lru_cache(maxsize=None)
def _no_side(width: int) -> tuple:
    """The side columns (dof, size, J, group, node, link) of a side with no owner: an S-contact's side b."""
    return (np.full(1, -1, np.int64), np.full(1, -1, np.int64), np.zeros((1, 3, width)), np.full(1, -1, np.int64),
            np.zeros(1, np.bool_), np.full(1, -1, np.int64))


@kernel
def _gather_sides(rows, p_dof, p_size, p_jac, p_group, p_node, p_link, g_dof, g_size, g_jac, g_group, g_node, g_link):
    """The side columns of each contact: row r >= 0 of the point table (p_*), or row -1 - r of the given sides
    (g_*)."""
    m = rows.shape[0]
    dof, size, group, link = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64)
    jac = np.empty((m, 3, p_jac.shape[2]))
    node = np.empty(m, np.bool_)
    for c in range(m):
        r = rows[c]
        if r >= 0:
            dof[c], size[c], group[c], node[c], link[c] = p_dof[r], p_size[r], p_group[r], p_node[r], p_link[r]
            jac[c] = p_jac[r]
        else:
            r = -1 - r
            dof[c], size[c], group[c], node[c], link[c] = g_dof[r], g_size[r], g_group[r], g_node[r], g_link[r]
            jac[c] = g_jac[r]
    return dof, size, jac, group, node, link


@kernel
def _nodalize(frame, gap, position, collider, kind, index, friction, rows_a, rows_b, p_dof, p_size, p_jac, p_group,
              p_node, p_link, g_dof, g_size, g_jac, g_group, g_node, g_link, dof_count):
    """:meth:`_Rows.finish` on the collected contacts: their order (by the first owner's group, then into the
    groups of :func:`_contact_groups`), each contact's nodes (its own node, or a virtual node numbered by owner
    group: side a's, then side b's, in order) and the virtual nodes' owners. A kernel: as ~40 numpy calls on
    ~150 contacts it cost ~115 us a step.

    ``rows_a``, ``rows_b``: each contact's sides, as rows of the point table p_* (>= 0) or of the given sides g_*
    (-1 - row; :class:`_Rows`). Returns the fields, side a's (dof, size, jac, group) and side b's (dof, size, jac)
    in contact order, dof_a, dof_b, link (m, 2), vn_dof, vn_size, vn_jac, vn_group and the groups' starts.
    """
    a_dof, a_size, a_jac, a_group, a_node, a_link = _gather_sides(rows_a, p_dof, p_size, p_jac, p_group, p_node,
                                                                  p_link, g_dof, g_size, g_jac, g_group, g_node, g_link)
    b_dof, b_size, b_jac, b_group, b_node, b_link = _gather_sides(rows_b, p_dof, p_size, p_jac, p_group, p_node,
                                                                  p_link, g_dof, g_size, g_jac, g_group, g_node, g_link)
    by_owner = np.argsort(a_group, kind="mergesort")  # stable
    order, group_start = _contact_groups(a_dof[by_owner], a_node[by_owner], b_dof[by_owner], b_node[by_owner])
    order = by_owner[order]
    m = order.shape[0]
    a_dof, a_size, a_jac, a_group, a_node = a_dof[order], a_size[order], a_jac[order], a_group[order], a_node[order]
    b_dof, b_size, b_jac, b_group, b_node = b_dof[order], b_size[order], b_jac[order], b_group[order], b_node[order]
    link = np.empty((m, 2), np.int64)
    for c in range(m):
        link[c, 0] = a_link[order[c]]
        link[c, 1] = b_link[order[c]]
    # virtual nodes: the sides that are not nodes, numbered by owner group (stable: side a's, then b's)
    on_a = np.flatnonzero(~a_node)
    on_b = np.flatnonzero((b_dof >= 0) & ~b_node)
    count_a = on_a.shape[0]
    count = count_a + on_b.shape[0]
    owner_group = np.empty(count, np.int64)
    for k in range(count):
        owner_group[k] = a_group[on_a[k]] if k < count_a else b_group[on_b[k - count_a]]
    by_group = np.argsort(owner_group, kind="mergesort")
    number = np.empty(count, np.int64)
    for k in range(count):
        number[by_group[k]] = k
    dof_a = np.where(a_node, a_dof, -1)
    dof_b = np.where((b_dof >= 0) & b_node, b_dof, -1)
    width = a_jac.shape[2]
    vn_dof = np.empty(count, np.int64)
    vn_size = np.empty(count, np.int64)
    vn_jac = np.empty((count, 3, width))
    vn_group = np.empty(count, np.int64)
    for k in range(count):
        n = number[k]
        if k < count_a:
            c = on_a[k]
            dof_a[c] = dof_count + 3 * n
            vn_dof[n], vn_size[n], vn_group[n] = a_dof[c], a_size[c], a_group[c]
            vn_jac[n] = a_jac[c]
        else:
            c = on_b[k - count_a]
            dof_b[c] = dof_count + 3 * n
            vn_dof[n], vn_size[n], vn_group[n] = b_dof[c], b_size[c], b_group[c]
            vn_jac[n] = b_jac[c]
    return (frame[order], gap[order], position[order], collider[order], kind[order], index[order], friction[order],
            a_dof, a_size, a_jac, a_group, b_dof, b_size, b_jac, dof_a, dof_b, link, vn_dof, vn_size, vn_jac, vn_group,
            group_start)


class _Rows:
    """Collects contacts, then nodalizes them (module docstring).

    A contact side is (owner dof, owner size, J, owner DOF group, is-a-node, robot link or -1): a contact point's
    is a row of the step's point table, given by the point's index; any other side (a joint limit's, a moving
    volume's) is given as such arrays. Node sides act on the node directly; every other side gets a virtual
    node. Virtual nodes are numbered owner by owner (the solver's force warm start relies on each owner's nodes
    being one run). Contacts sharing a node are joined into one group (union-find) and stored as one run;
    ``group_start`` marks the runs.
    """

    def __init__(self, width, points):
        """``points``: the step's point table, the side columns (dof, size, J, group, node, link) by point."""
        self.width = width
        self.points = points
        self.fields = []
        self.rows_a, self.rows_b = [], []  # per batch: a point's index (>= 0), or -1 - a row of ``given``
        self.given = [_no_side(width)]  # row 0: an S-contact's side b, which has no owner
        self.given_count = 1

    def _rows(self, side, k):
        if isinstance(side, np.ndarray):
            return side
        first = self.given_count
        self.given.append(side)
        self.given_count += k
        return -1 - np.arange(first, first + k)

    def add_batch(self, frame, gap, position, collider, kind, index, friction, side_a, side_b=None):
        """k contacts at once: every field an array of k rows, a side the indices of k contact points or a
        tuple of side columns (a wound cable has hundreds of contacts with the post; one Python call per
        contact cost ~1 ms a step); no ``side_b``: S-contacts."""
        k = len(gap)
        self.fields.append((frame, gap, position, collider, kind, index, friction))
        self.rows_a.append(self._rows(side_a, k))
        self.rows_b.append(np.full(k, -1, np.int64) if side_b is None else self._rows(side_b, k))

    def finish(self, model, pattern, state, dt, kinematics) -> ContactSet:
        if not self.fields:
            self.add_batch(np.zeros((0, 3, 3)), np.zeros(0), np.zeros((0, 3)), *(np.zeros(0, np.int64),) * 3,
                           np.zeros((0, 2)), np.zeros(0, np.int64))
        if len(self.fields) == 1:  # one batch (most steps): nothing to join
            fields = [np.ascontiguousarray(x, dtype=t) for x, t in zip(self.fields[0], _FIELD_TYPES)]
            rows_a, rows_b = (np.ascontiguousarray(x, dtype=np.int64) for x in (self.rows_a[0], self.rows_b[0]))
        else:
            fields = [np.ascontiguousarray(np.concatenate([batch[j] for batch in self.fields]), dtype=t)
                      for j, t in enumerate(_FIELD_TYPES)]
            rows_a, rows_b = (np.concatenate(rows).astype(np.int64) for rows in (self.rows_a, self.rows_b))
        given = self.given[0] if len(self.given) == 1 else [
            np.ascontiguousarray(np.concatenate([side[k] for side in self.given]), dtype=t)
            for k, t in enumerate(_SIDE_TYPES)]
        (frame, gap, position, collider, kind, index, friction, a_dof, a_size, a_jac, a_group, b_dof, b_size, b_jac,
         dof_a, dof_b, link, vn_dof, vn_size, vn_jac, vn_group, group_start) = _nodalize(
            *fields, rows_a, rows_b, *self.points, *given, model.dof_count)
        m = len(gap)
        offset = np.empty((m, 3))
        if m:
            contact_offsets(frame, a_dof, a_size, a_jac, b_dof, b_size, b_jac, state.velocity(), gap,
                            dt, model.integration_theta, model.restitution, model.penetration_recovery, offset)
        return ContactSet(
            pattern=pattern, count=m, dof_a=dof_a, dof_b=dof_b, frame=frame, friction=friction, offset=offset, gap=gap,
            position=position, collider=collider, source_kind=kind, source_index=index, force=np.zeros((m, 3)),
            point_dof=a_dof, point_size=a_size, point_jac=a_jac, point_group=a_group, vn_dof=vn_dof, vn_size=vn_size,
            vn_jac=vn_jac, vn_group=vn_group, group_starts=group_start, link=link, kinematics=kinematics,
        )
