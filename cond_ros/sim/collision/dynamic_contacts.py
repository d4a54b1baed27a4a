"""D-contacts (Sec. III-A): contact points against the volumes of other owners, and node-node contacts.

Volumes that move are the shapes fixed to rigid bodies (``ModelBuilder.add_shape_box`` / ``_sphere``)
and the collision primitives of robot links. Every contact point of a *different* owner is tested
against them with the same signed-distance functions as the static colliders (node-vs-volume).
A contact couples the point (a node itself, or a virtual node with its owner's Jacobian) and a
virtual node at the closest surface point of the volume (the volume owner's Jacobian there),
J_c = [R, -R] (eq. 13).

Node-node contacts are sphere-sphere contacts between node points: the self-contact of a cable (rod
segment centres) or of an FEM body (surface nodes), and contacts between such bodies. Two nodes of one
chain (a rod, or one FEM body) are tested only when their rest positions (arc positions for a rod) lie
farther apart than ``SELF_CONTACT_ARC`` times the sum of their radii, so neighbours that overlap by
construction never touch.
"""
from __future__ import annotations

import functools

import numpy as np

from ..jit import kernel, leaf_kernel
from ..kinematics.articulation import point_jacobian_articulated
from ..kinematics.rigid import cross3, point_jacobian, quat_to_matrix_into
from ..model import ColliderType, GeometryType, Model, State, per_model
from .colliders import collider_signed_distance, contact_frame

_GEOMETRY_TO_COLLIDER = {int(GeometryType.BOX): int(ColliderType.BOX),
                         int(GeometryType.SPHERE): int(ColliderType.SPHERE),
                         int(GeometryType.CAPSULE): int(ColliderType.CAPSULE),
                         int(GeometryType.CYLINDER): int(ColliderType.CYLINDER)}


# Straight neighbours are < 1 apart in these units; a hairpin whose legs touch spans only pi / 2 and is
# missed, which a cable's bending stiffness keeps from happening in our scenes.
SELF_CONTACT_ARC = 3.0


def _bounding_radius(ctype: int, size) -> float:
    """Radius of a sphere about the volume's origin that holds it (an infinite plane never moves)."""
    if ctype == int(ColliderType.SPHERE):
        return float(size[0])
    if ctype == int(ColliderType.CAPSULE):
        return float(size[0] + size[1])
    if ctype == int(ColliderType.CYLINDER):
        return float(np.hypot(size[0], size[1]))
    return float(np.linalg.norm(size[:3]))


def _volume_layout(model: Model) -> dict:
    """The columns of :class:`MovingVolumes` that do not change during a run (collider type, size, bounding
    radius, friction, owner DOFs, group, link, robot or -1), and per robot (links, geometry origins, DOF range,
    its volumes' slice)."""
    n_p, n_s = model.particle_count, len(model.shape_body)
    body = model.shape_body.astype(np.int64)
    columns = dict(ctype=[model.shape_type.astype(np.int64)], size=[model.shape_size],
                   reach=[[_bounding_radius(int(t), z) for t, z in zip(model.shape_type, model.shape_size)]],
                   mu=[model.shape_mu], dof=[model.body_dof_start + 6 * body], dof_size=[np.full(n_s, 6)],
                   group=[n_p + body], link=[np.full(n_s, -1)], robot=[np.full(n_s, -1)])
    robots, first = [], n_s
    for r, art in enumerate(model.robots):
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        geoms = [g for g in range(len(art.geom_link)) if int(art.geom_type[g]) in _GEOMETRY_TO_COLLIDER]
        types = [_GEOMETRY_TO_COLLIDER[int(art.geom_type[g])] for g in geoms]
        links = art.geom_link[geoms].astype(np.int64)
        count = len(geoms)
        for name, x in (("ctype", types), ("size", art.geom_size[geoms].reshape(count, 3)),
                        ("reach", [_bounding_radius(ctype, art.geom_size[g]) for ctype, g in zip(types, geoms)]),
                        ("mu", np.tile(model.robot_mu[r], (count, 1))),
                        ("dof", np.full(count, model.robot_dof_start + lo)),
                        ("dof_size", np.full(count, hi - lo)), ("group", np.full(count, model.robot_group(r))),
                        ("link", links), ("robot", np.full(count, r))):
            columns[name].append(x)
        robots.append((links, art.geom_origin[geoms], lo, hi, first, first + count))
        first += count
    layout = {name: np.concatenate([np.asarray(x) for x in parts]) for name, parts in columns.items()}
    for name, dtype in (("ctype", np.int64), ("size", float), ("reach", float), ("group", np.int64)):
        layout[name] = np.ascontiguousarray(layout[name], dtype=dtype)
    layout["robots"] = robots
    layout["body"] = body
    return layout


class MovingVolumes:
    """The step's moving volumes, as arrays by volume (shapes first, then each robot's geometries): collider
    type, world pos, world rot, size, bounding radius R, twist (linear velocity of the origin, angular
    velocity), friction, owner (dof, size, group), robot link or -1; ``com``: the COM of each rigid body's volume's
    body (the shapes' rows only)."""

    def __init__(self, model: Model, state: State, kinematics: list):
        layout = per_model(model, _volume_layout)
        for name in ("ctype", "size", "reach", "mu", "dof", "dof_size", "group", "link", "robot"):
            setattr(self, name, layout[name])
        self.count = len(self.ctype)
        self.pos, self.rot = np.empty((self.count, 3)), np.empty((self.count, 3, 3))
        self.twist = np.empty((self.count, 6))
        self.com = state.body_q[model.shape_body]
        if len(model.shape_body):
            _body_volumes(layout["body"], model.shape_pos, model.shape_rot, state.body_q, state.body_quat,
                          state.body_qd, self.pos, self.rot, self.twist)
        for kin, (links, origin, lo, hi, first, last) in zip(kinematics, layout["robots"]):
            if first == last:
                continue
            art = kin.art
            _robot_volumes(links, origin, art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier,
                           kin.link_pose, kin.joint_axis_world, state.robot_qd[lo:hi], self.pos[first:last],
                           self.rot[first:last], self.twist[first:last])


def moving_volumes(model: Model, state: State, kinematics: list) -> MovingVolumes:
    """The volumes fixed to rigid bodies and robot links at ``state`` (:class:`MovingVolumes`)."""
    return MovingVolumes(model, state, kinematics)


@kernel
def _body_volumes(body, shape_pos, shape_rot, body_q, body_quat, body_qd, pos, rot, twist):
    """World pose and twist (origin velocity, angular velocity) of each shape fixed to a rigid body. A kernel:
    per shape in Python (a rotation matrix, two products, a cross product) it cost ~10 us a shape and step."""
    turn = np.empty((3, 3))
    for k in range(body.shape[0]):
        b = body[k]
        quat_to_matrix_into(body_quat[b, 0], body_quat[b, 1], body_quat[b, 2], body_quat[b, 3], turn)
        arm = (turn[0, 0] * shape_pos[k, 0] + turn[0, 1] * shape_pos[k, 1] + turn[0, 2] * shape_pos[k, 2],
               turn[1, 0] * shape_pos[k, 0] + turn[1, 1] * shape_pos[k, 1] + turn[1, 2] * shape_pos[k, 2],
               turn[2, 0] * shape_pos[k, 0] + turn[2, 1] * shape_pos[k, 1] + turn[2, 2] * shape_pos[k, 2])
        for i in range(3):
            pos[k, i] = body_q[b, i] + arm[i]
            for j in range(3):
                rot[k, i, j] = (turn[i, 0] * shape_rot[k, 0, j] + turn[i, 1] * shape_rot[k, 1, j]
                                + turn[i, 2] * shape_rot[k, 2, j])
        spin = cross3((body_qd[b, 3], body_qd[b, 4], body_qd[b, 5]), arm)
        for i in range(3):
            twist[k, i] = body_qd[b, i] + spin[i]
            twist[k, 3 + i] = body_qd[b, 3 + i]


@kernel
def _robot_volumes(links, origin, link_parent, joint_type, joint_dof, joint_multiplier, link_pose, joint_axis_world,
                   qd, pos, rot, twist):
    """World pose and twist (origin velocity, angular velocity) of each of a robot's collision primitives (on
    link ``links[k]`` at ``origin[k]`` in its frame). A kernel: as batched 4 x 4 products, Jacobians and a
    product with qd it cost ~15 us a step for the Panda."""
    n = qd.shape[0]
    jac = np.empty((6, n))
    for k in range(links.shape[0]):
        pose = link_pose[links[k]]
        for i in range(3):
            pos[k, i] = (pose[i, 0] * origin[k, 0, 3] + pose[i, 1] * origin[k, 1, 3] + pose[i, 2] * origin[k, 2, 3]
                         + pose[i, 3])
            for j in range(3):
                rot[k, i, j] = (pose[i, 0] * origin[k, 0, j] + pose[i, 1] * origin[k, 1, j]
                                + pose[i, 2] * origin[k, 2, j])
        point_jacobian_articulated(links[k], pos[k], link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                                   joint_axis_world, jac)
        for i in range(6):
            total = 0.0
            for j in range(n):
                total += jac[i, j] * qd[j]
            twist[k, i] = total


@kernel
def _grow(rows, count):
    """``rows`` (k, w), or a copy twice as long when it is full (``count == k``): output of unknown length."""
    if count < rows.shape[0]:
        return rows
    grown = np.empty((2 * rows.shape[0], rows.shape[1]), rows.dtype)
    grown[:count] = rows[:count]
    return grown


@kernel
def _near_volumes(ctype, centre, rot, size, reach, twist, owner, pos, radius, vel, active, group, margin, dt):
    """(volume, point) pairs that pass the bounding-sphere prefilter and the signed-distance bound of
    :func:`detect_dynamic_contacts`, by volume then point, with (sd, normal) of each.

    A volume's speed bound is |v_o| + |omega| R: no point within its bounding radius R moves faster at the
    start of the step. A kernel: as numpy over all 48 Panda volumes and 410 points and a Python loop over the
    volumes near a point it cost ~0.25 ms a step on panda_cable, which mostly has no D-contact.
    """
    point_speed = np.empty(pos.shape[0])
    point_reach = np.empty(pos.shape[0])
    for i in range(pos.shape[0]):
        point_speed[i] = np.sqrt(vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2)
        point_reach[i] = radius[i] + margin + 2.0 * dt * point_speed[i]
    pairs = np.empty((16, 2), np.int64)
    geometry = np.empty((16, 4))
    normal = np.empty(3)
    box = np.empty(7)  # lower corner, upper corner, largest reach of the candidate points of one owner
    count = 0
    for v in range(ctype.shape[0]):
        speed = (np.sqrt(twist[v, 0] ** 2 + twist[v, 1] ** 2 + twist[v, 2] ** 2)
                 + np.sqrt(twist[v, 3] ** 2 + twist[v, 4] ** 2 + twist[v, 5] ** 2) * reach[v])
        sphere = reach[v] + 2.0 * dt * speed
        # a volume whose prefilter sphere misses the box around all its candidate points cannot pass the test
        # of any of them (rounding is monotonic, so the box's distance is never the larger): on panda_cable
        # this skips 45 of the 48 Panda volumes
        if v == 0 or owner[v] != owner[v - 1]:
            box[:3] = np.inf
            box[3:6] = -np.inf
            box[6] = 0.0
            for i in range(pos.shape[0]):
                if active[i] and group[i] != owner[v]:
                    for e in range(3):
                        box[e] = min(box[e], pos[i, e])
                        box[3 + e] = max(box[3 + e], pos[i, e])
                    box[6] = max(box[6], point_reach[i])
        gap_squared = 0.0
        for e in range(3):
            outside = max(box[e] - centre[v, e], centre[v, e] - box[3 + e], 0.0)
            gap_squared += outside * outside
        if gap_squared > (sphere + box[6]) ** 2 + 1e-12:
            continue
        for i in range(pos.shape[0]):
            # a robot's own link points lie near all of its volumes: they are not candidates
            if not active[i] or group[i] == owner[v]:
                continue
            dx = pos[i, 0] - centre[v, 0]
            dy = pos[i, 1] - centre[v, 1]
            dz = pos[i, 2] - centre[v, 2]
            # the 1e-12 m^2 slack: a prefilter may only err towards testing a point
            if dx * dx + dy * dy + dz * dz > (sphere + point_reach[i]) ** 2 + 1e-12:
                continue
            sd = collider_signed_distance(ctype[v], centre[v], rot[v], size[v], pos[i], normal)
            # the exact test needs the volume's velocity at the contact; a bound on it rejects most points
            # here, before a Jacobian is built for them (1.01: rounding slack of a bound that is exact)
            if not sd - radius[i] < margin + 2.0 * dt * 1.01 * (point_speed[i] + speed):
                continue
            # then the exact test itself with the twist's velocity at the contact point (v_o + omega x r, not
            # J v_k: other rounding, hence the slack of 1% of the speeds); in Python each point that reached
            # the exact test cost ~15 us, and the grasped cable end sends ~3.6 a step there (~1 a contact)
            rx = pos[i, 0] - sd * normal[0] - centre[v, 0]
            ry = pos[i, 1] - sd * normal[1] - centre[v, 1]
            rz = pos[i, 2] - sd * normal[2] - centre[v, 2]
            ux = vel[i, 0] - (twist[v, 0] + twist[v, 4] * rz - twist[v, 5] * ry)
            uy = vel[i, 1] - (twist[v, 1] + twist[v, 5] * rx - twist[v, 3] * rz)
            uz = vel[i, 2] - (twist[v, 2] + twist[v, 3] * ry - twist[v, 4] * rx)
            approach = max(0.0, -(ux * normal[0] + uy * normal[1] + uz * normal[2]))
            if not sd - radius[i] < margin + 2.0 * dt * (approach + 0.01 * (point_speed[i] + speed)):
                continue
            pairs = _grow(pairs, count)
            geometry = _grow(geometry, count)
            pairs[count, 0] = v
            pairs[count, 1] = i
            geometry[count, 0] = sd
            geometry[count, 1:] = normal
            count += 1
    return pairs[:count], geometry[:count]


@kernel
def _volume_contacts(near, geometry, pos, radius, vel, point_mu, volume_rot, volume_mu, volume_dof, volume_size,
                     volume_group, volume_link, volume_com, v_k, margin, dt, width, link_parent, joint_type, joint_dof,
                     joint_multiplier, link_pose, joint_axis_world):
    """The contacts of the (volume, point) pairs ``near`` (with their (sd, normal): :func:`_near_volumes`) that
    pass the exact test, as the columns of :func:`detect_dynamic_contacts`. The pairs' volumes are all a rigid
    body's (``volume_com`` their bodies' COMs) or all one robot's, whose kinematics the last six arrays are.
    The exact test: gap < margin + 2 dt max(0, -(v_point - J_b v_k) . n), with J_b the volume owner's Jacobian
    at the surface point. A kernel: per pair in Python it cost ~10 us (soft_gripper: ~650 pairs a step)."""
    count = near.shape[0]
    keep = np.zeros(count, np.bool_)
    frame = np.zeros((count, 3, 3))
    gap = np.empty(count)
    surface = np.empty((count, 3))
    friction = np.empty((count, 2))
    jac_b = np.zeros((count, 3, width))
    scratch = np.empty((6, width))  # a robot's link Jacobian (its DOFs <= width)
    arm = np.empty(3)
    for p in range(count):
        v, i = near[p, 0], near[p, 1]
        sd = geometry[p, 0]
        normal = geometry[p, 1:]
        size_b = volume_size[v]
        dof_b = volume_dof[v]
        gap[p] = sd - radius[i]
        for e in range(3):
            surface[p, e] = pos[i, e] - sd * normal[e]
        if volume_link[v] < 0:
            for e in range(3):
                arm[e] = surface[p, e] - volume_com[v, e]
            jac_b[p, :, :size_b] = point_jacobian(6, arm)
        else:
            point_jacobian_articulated(volume_link[v], surface[p], link_parent, joint_type, joint_dof,
                                       joint_multiplier, link_pose, joint_axis_world, scratch)
            jac_b[p, :, :size_b] = scratch[:3, :size_b]
        approach = 0.0
        for e in range(3):
            moving = 0.0
            for j in range(size_b):
                moving += jac_b[p, e, j] * v_k[dof_b + j]
            approach += (vel[i, e] - moving) * normal[e]
        if gap[p] >= margin + 2.0 * dt * max(0.0, -approach):
            continue
        keep[p] = True
        contact_frame(normal, volume_rot[v], frame[p])
        for e in range(2):
            friction[p, e] = max(point_mu[i, e], volume_mu[v, e])
    volume = near[keep, 0]
    return (frame[keep], gap[keep], surface[keep], friction[keep], near[keep, 1], volume_dof[volume],
            volume_size[volume], jac_b[keep], volume_group[volume], volume_link[volume])


def detect_dynamic_contacts(model: Model, state: State, kinematics: list, points: dict, dt: float, width: int):
    """D-contacts of body and robot contact points (``points``, arrays by point) against moving volumes.

    Returns a dict of arrays by contact, ordered by volume then point: frame, gap, position, friction, the
    point index and the volume owner's (dof, size, jacobian at the contact, group, robot link).
    """
    volumes = moving_volumes(model, state, kinematics)
    if not volumes.count:
        return dict(_no_contacts(width))
    near, geometry = _near_volumes(volumes.ctype, volumes.pos, volumes.rot, volumes.size, volumes.reach,
                                   volumes.twist, volumes.group, points["pos"], points["radius"], points["vel"],
                                   points["active"], points["group"], model.contact_margin, dt)
    if not len(near):
        return dict(_no_contacts(width))
    v_k = state.velocity()
    parts = []
    # the rigid bodies' volumes, then each robot's: one kernel call per owner kind that has pairs, in volume order
    owners = [(0, len(model.shape_body), None)] + [(first, last, kin) for kin, (*_, first, last) in
                                                     zip(kinematics, per_model(model, _volume_layout)["robots"])]
    lo = 0
    for first, last, kin in owners:
        hi = lo + int(np.searchsorted(near[lo:, 0], last))
        if hi > lo:
            art = kin.art if kin is not None else None
            parts.append(_volume_contacts(
                near[lo:hi], geometry[lo:hi], points["pos"], points["radius"], points["vel"], points["mu"],
                volumes.rot, volumes.mu, volumes.dof, volumes.dof_size, volumes.group, volumes.link, volumes.com,
                v_k, model.contact_margin, dt, width, *(_NO_ROBOT if kin is None else (
                    art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier, kin.link_pose,
                    kin.joint_axis_world))))
        lo = hi
    columns = parts[0] if len(parts) == 1 else [np.concatenate(column) for column in zip(*parts)]
    return dict(zip(_CONTACT_COLUMNS, columns))


#: the robot kinematics :func:`_volume_contacts` is given for a rigid body's volumes (which do not read it)
_NO_ROBOT = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 4, 4)),
             np.zeros((0, 3)))
_CONTACT_COLUMNS = ("frame", "gap", "position", "friction", "point", "dof_b", "size_b", "jac_b", "group_b", "link_b")


@functools.lru_cache(maxsize=None)
def _no_contacts(width: int) -> dict:
    """:func:`detect_dynamic_contacts`' result without contacts (most steps of a cable scene), made once: read-only
    empty arrays."""
    columns = (np.zeros((0, 3, 3)), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 2)),
               *(np.zeros(0, np.int64) for _ in range(3)), np.zeros((0, 3, width)), np.zeros(0, np.int64),
               np.zeros(0, np.int64))
    for column in columns:
        column.flags.writeable = False
    return dict(zip(_CONTACT_COLUMNS, columns))


@leaf_kernel
def _neighbours_at_rest(i, j, radius, chain, rest, arc_factor):
    """Nodes i and j are on one chain and were within ``arc_factor`` times their radii at rest: never a contact."""
    if chain[i] >= 0 and chain[i] == chain[j]:
        rx = rest[i, 0] - rest[j, 0]
        ry = rest[i, 1] - rest[j, 1]
        rz = rest[i, 2] - rest[j, 2]
        return np.sqrt(rx * rx + ry * ry + rz * rz) <= arc_factor * (radius[i] + radius[j])
    return False


@leaf_kernel
def _within_reach(i, j, pos, radius, vel, chain, rest, margin, dt, arc_factor, min_distance=1e-12):
    """Nodes i and j may touch during the step (and are not neighbours at rest on one chain).

    Scalar arithmetic only: a temporary array per candidate pair cost 3 ms at 320 nodes.
    """
    if _neighbours_at_rest(i, j, radius, chain, rest, arc_factor):
        return False
    dx = pos[i, 0] - pos[j, 0]
    dy = pos[i, 1] - pos[j, 1]
    dz = pos[i, 2] - pos[j, 2]
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    ux = vel[i, 0] - vel[j, 0]
    uy = vel[i, 1] - vel[j, 1]
    uz = vel[i, 2] - vel[j, 2]
    speed = np.sqrt(ux * ux + uy * uy + uz * uz)
    return dist - radius[i] - radius[j] < margin + 2.0 * dt * speed and dist > min_distance


@kernel
def neighbour_windows(candidates, radius, chain, rest, arc_factor):
    """For each candidate c, the run ``[lo[c], hi[c]]`` of candidates around it (by position in ``candidates``)
    whose every member is c's neighbour at rest on its chain (:func:`_neighbours_at_rest`), found by walking out
    from c to the first that is not. :func:`_node_pairs` skips those with two integer compares instead of the rest
    test: a rod's candidates come in arc order, and at 1280 segments (0.3 mm apart, a 2 mm radius) each has ~75
    such neighbours, most of them in its grid cells (panda_cable's list rebuild there: 1.00 -> 0.88 ms; the
    rest is the pairs beyond them that the search must test). Made once per model (``nodalization._point_layout``)."""
    n = candidates.shape[0]
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for c in range(n):
        i = candidates[c]
        k = c - 1
        while k >= 0 and _neighbours_at_rest(i, candidates[k], radius, chain, rest, arc_factor):
            k -= 1
        lo[c] = k + 1
        k = c + 1
        while k < n and _neighbours_at_rest(i, candidates[k], radius, chain, rest, arc_factor):
            k += 1
        hi[c] = k - 1
    return lo, hi


@kernel
def chain_bands(candidates, radius, chain, rest, arc_factor, window_hi, on_arc):
    """For each candidate c on an arc (``on_arc``, per point: a rod's node, whose chain's candidates come in arc
    order), the last candidate of the run after its window (``window_hi``: :func:`neighbour_windows`) whose
    members lie on c's chain within ``arc_factor + NODE_PAIR_BAND`` times their radii of it at rest (c's band;
    ``window_hi[c]`` when the run is empty or c is not on an arc). A :class:`NodePairList` tests these pairs every
    step instead of listing them: a straight rod's nodes just beyond the window are within the list's reach, so
    listing them made the list grow with the square of the segments (panda_cable: 7 776 pairs at 1280, ~6 a
    node). An FEM surface's candidates come in no such order: its bands held few listed pairs and cost more to
    walk than the list (soft_mat: collision 0.37 -> 0.43 ms a step)."""
    n = candidates.shape[0]
    band_hi = np.empty(n, np.int64)
    for c in range(n):
        i = candidates[c]
        k = window_hi[c] + 1
        while k < n and on_arc[i] and _neighbours_at_rest(i, candidates[k], radius, chain, rest,
                                                          arc_factor + NODE_PAIR_BAND):
            k += 1
        band_hi[c] = k - 1
    return band_hi


@kernel
def _node_pairs(pos, radius, vel, chain, rest, candidates, skip_hi, margin, dt, arc_factor, min_distance=1e-12):
    """(i, j) of node pairs within reach, i < j, excluding near neighbours at rest on a chain; shape (pairs, 2),
    in the order of a double loop over ``candidates`` (ascending), whatever the search. The pairs of candidates
    ci < cj <= ``skip_hi[ci]`` are not tested: :func:`neighbour_windows`' upper ends (neighbours at rest, which
    the test would refuse), or :func:`chain_bands` (a :class:`NodePairList`'s search, which leaves them out).

    A uniform grid replaces the all-pairs loop (14 ms for the soft gripper's 2 x 1000 surface nodes): a
    cell is as wide as the largest reach of any pair, 2 r_max + margin + 2 dt (2 |v|_max), so a pair
    within reach lies in the same or an adjacent cell.
    """
    n = candidates.shape[0]
    r_max, v_max = 0.0, 0.0
    lo = np.full(3, np.inf)
    for ci in range(n):
        i = candidates[ci]
        r_max = max(r_max, radius[i])
        v_max = max(v_max, np.sqrt(vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2))
        for e in range(3):
            lo[e] = min(lo[e], pos[i, e])
    cell = max(2.0 * r_max + margin + 4.0 * dt * v_max, 1e-9)
    coords = np.empty((n, 3), np.int64)
    dims = np.ones(3, np.int64)
    for ci in range(n):
        for e in range(3):
            coords[ci, e] = np.int64((pos[candidates[ci], e] - lo[e]) / cell)
            dims[e] = max(dims[e], coords[ci, e] + 3)  # room for the +1 neighbour
    key = np.empty(n, np.int64)
    for ci in range(n):
        key[ci] = ((coords[ci, 0] + 1) * dims[1] + coords[ci, 1] + 1) * dims[2] + coords[ci, 2] + 1
    order = np.argsort(key, kind="mergesort")
    sorted_key = key[order]
    found = np.empty((16, 2), np.int64)  # (ci, cj) with ci < cj
    count = 0
    # one occupied cell (the run [first, last) of sorted_key) at a time against the 9 runs of keys k - 1 ..
    # k + 1 (a column of 3 cells along z) around it, each pair once (sorted position sb > sa): ~3x fewer
    # searches and half the tests of a 27-cell search per node (0.24 ms at 320 nodes). The cells come in
    # ascending key, so each of the 9 runs' starts only moves forward: a pointer per run, not a binary search
    # per cell (~15 us a step at 160 rod nodes)
    run_start = np.zeros(9, np.int64)
    first = 0
    while first < n:
        last = first + 1
        while last < n and sorted_key[last] == sorted_key[first]:
            last += 1
        c = order[first]
        for ox in range(-1, 2):
            for oy in range(-1, 2):
                k = ((coords[c, 0] + 1 + ox) * dims[1] + coords[c, 1] + 1 + oy) * dims[2] + coords[c, 2] + 1
                run = 3 * (ox + 1) + oy + 1
                lo_run = run_start[run]
                while lo_run < n and sorted_key[lo_run] < k - 1:
                    lo_run += 1
                run_start[run] = lo_run
                hi_run = lo_run
                while hi_run < n and sorted_key[hi_run] <= k + 1:
                    hi_run += 1
                for sa in range(first, last):
                    ca = order[sa]
                    for sb in range(max(lo_run, sa + 1), hi_run):
                        cb = order[sb]
                        ci = min(ca, cb)
                        cj = max(ca, cb)
                        if cj <= skip_hi[ci]:
                            continue
                        if not _within_reach(candidates[ci], candidates[cj], pos, radius, vel, chain, rest, margin,
                                             dt, arc_factor, min_distance):
                            continue
                        found = _grow(found, count)
                        found[count, 0] = ci
                        found[count, 1] = cj
                        count += 1
        first = last
    rank = np.argsort(found[:count, 0] * n + found[:count, 1], kind="mergesort")
    out = np.empty((count, 2), np.int64)
    for p in range(count):
        out[p, 0] = candidates[found[rank[p], 0]]
        out[p, 1] = candidates[found[rank[p], 1]]
    return out


@kernel
def _node_pair_geometry(pos, radius, pairs):
    """(frame, gap, position) of each node pair's contact: the normal from node j to node i, the contact point
    mid-gap. A kernel: per pair in Python it cost ~12 us (soft_mat's self-contact, ~100 pairs: 1.3 ms a step)."""
    count = pairs.shape[0]
    frame = np.zeros((count, 3, 3))
    gap = np.empty(count)
    position = np.empty((count, 3))
    axes = np.eye(3)
    d = np.empty(3)
    normal = np.empty(3)
    for p in range(count):
        i = pairs[p, 0]
        j = pairs[p, 1]
        for e in range(3):
            d[e] = pos[i, e] - pos[j, e]
        dist = np.sqrt(np.dot(d, d))  # np.linalg.norm's rounding (BLAS ddot), not a written-out sum's
        for e in range(3):
            normal[e] = d[e] / dist
        contact_frame(normal, axes, frame[p])
        g = dist - radius[i] - radius[j]
        gap[p] = g
        for e in range(3):
            position[p, e] = pos[j, e] + normal[e] * (radius[j] + 0.5 * g)
    return frame, gap, position


class NodePairList:
    """Candidate node pairs kept across steps (a Verlet list): the pairs within ``margin + skin`` of touching,
    velocities aside, at the positions of the search that listed them (the skin: ``NODE_PAIR_SKIN`` node
    diameters, plus what the nodes' speed then asks for). While every node has moved less than
    d and moves slower than v, with 2 d + 4 dt v below the skin, a pair within reach now (gap < margin +
    2 dt |v_i - v_j|) was within margin + skin then, so testing the listed pairs finds exactly the pairs the
    full search would, in its order. A wound cable's nodes move ~0.2 mm a step: the grid search (~50 us a step
    at 320 rod nodes) runs every few steps instead of every step. The pairs of a chain's band
    (:func:`chain_bands`) are not listed but tested every step (:func:`_band_pairs`). Held by one simulator: a
    list only ever answers for the model and candidates it was built for. A list that would hold more than
    ``NODE_PAIR_LIST_MAX`` pairs a node is given up for its model: every call is a full search then."""

    def __init__(self):
        self.model = None
        self.candidates = None
        self.built = None  # the candidates' positions at the search
        self.pairs = None
        self.band_hi = None  # chain_bands of the candidates
        self.banded = False  # whether any band has a member
        self.skin = 0.0
        self.searches = 0  # full searches made (for tests and profiles)

    def pairs_within_reach(self, model: Model, pos, radius, vel, chain, rest, candidates, dt: float,
                           windows=None, on_arc=None) -> np.ndarray:
        """``windows``: :func:`neighbour_windows` of the candidates, if at hand (made here otherwise); ``on_arc``:
        which points' chains have bands (:func:`chain_bands`; none without it)."""
        margin = model.contact_margin
        if windows is None:
            windows = neighbour_windows(candidates, radius, chain, rest, SELF_CONTACT_ARC)
        window_hi = windows[1]
        if self.model is model and self.candidates is candidates and self.pairs is None:  # a list does not pay
            return _node_pairs(pos, radius, vel, chain, rest, candidates, window_hi, margin, dt, SELF_CONTACT_ARC)
        if not (self.model is model and self.candidates is candidates
                and _list_holds(pos, vel, candidates, self.built, self.skin, dt)):
            if not (self.model is model and self.candidates is candidates):
                if on_arc is None:
                    on_arc = np.zeros(len(chain), np.bool_)
                self.band_hi = chain_bands(candidates, radius, chain, rest, SELF_CONTACT_ARC, window_hi, on_arc)
                self.banded = bool(np.any(self.band_hi > window_hi))
            # wide enough for the nodes' speed now (with a quarter to spare), so that the list holds at least
            # for the step it is built in
            speed = float(np.max(np.sqrt(np.einsum("ij,ij->i", vel[candidates], vel[candidates]))))
            self.skin = NODE_PAIR_SKIN * 2.0 * float(np.max(radius[candidates])) + 1.25 * 4.0 * dt * speed
            self.pairs = _node_pairs(pos, radius, np.zeros_like(vel), chain, rest, candidates, self.band_hi,
                                     margin + self.skin, dt, SELF_CONTACT_ARC, -1.0)
            self.model, self.candidates, self.built = model, candidates, pos[candidates]
            self.searches += 1
            if len(self.pairs) > NODE_PAIR_LIST_MAX * len(candidates):
                # an FEM surface lists ~10 pairs a node (soft_gripper: the list's tests cost more than searches)
                self.pairs = None
                return _node_pairs(pos, radius, vel, chain, rest, candidates, window_hi, margin, dt,
                                   SELF_CONTACT_ARC)
        band = (_band_pairs(pos, radius, vel, chain, rest, candidates, window_hi, self.band_hi, margin, dt,
                            SELF_CONTACT_ARC) if self.banded else _NO_PAIRS)
        return _listed_pairs(pos, radius, vel, chain, rest, self.pairs, band, margin, dt, SELF_CONTACT_ARC)


_NO_PAIRS = np.zeros((0, 2), np.int64)  # writeable like _band_pairs' output: one compiled _listed_pairs
#: a node pair list's skin in node diameters (beyond what the nodes' speed asks for): wider, fewer searches and
#: more listed pairs to test each step (panda_cable, 320 segments, dt 10 ms: a search every 5 / 10 steps at 1 / 2
#: diameters, the node pairs 33 / 38 us a step with the searches, 52 without a list)
NODE_PAIR_SKIN = 1.0
#: how far a chain's band (:func:`chain_bands`) reaches past its window, in the same units as ``SELF_CONTACT_ARC``
#: (sums of radii): past the list's reach on a straight rod (margin + a skin of ``NODE_PAIR_SKIN`` + the
#: nodes' speed), so that a rod lists only what lies across from it (a next turn, a post's other side)
NODE_PAIR_BAND = 1.0
#: a list with more pairs than this per candidate node is given up for the model. Before chains had bands, a
#: rod listed more the finer it was: panda_cable ~1.4 a node at 320 segments and up to 8 at 1280 (over 10 at
#: some step of its first 30 s, where the list was given up), which the list took collision from 0.92 to 0.58
#: ms in a median step; with bands it lists 0.00 / 0.01 a node on average (at most 1.0 at 1280). soft_mat
#: lists up to 8.8 (collision 1.03 to 0.64 ms median). soft_gripper's FEM surface lists over 10, where the
#: list's tests cost more than searching (2026-11-28; the cap was 3 before)
NODE_PAIR_LIST_MAX = 10.0


@kernel
def _list_holds(pos, vel, candidates, built, skin, dt):
    """Whether a :class:`NodePairList` built at positions ``built`` still holds every pair within reach:
    2 max |p - p_built| + 4 dt max |v| below its skin (with 1 % to spare for rounding)."""
    moved, speed = 0.0, 0.0
    for ci in range(candidates.shape[0]):
        i = candidates[ci]
        moved = max(moved, np.sqrt((pos[i, 0] - built[ci, 0]) ** 2 + (pos[i, 1] - built[ci, 1]) ** 2
                                   + (pos[i, 2] - built[ci, 2]) ** 2))
        speed = max(speed, np.sqrt(vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2))
    return 2.0 * moved + 4.0 * dt * speed < 0.99 * skin


@kernel
def _band_pairs(pos, radius, vel, chain, rest, candidates, window_hi, band_hi, margin, dt, arc_factor):
    """The pairs of the chains' bands (:func:`chain_bands`) within reach now, by :func:`_node_pairs`' test and in
    its order.

    A band is walked along the chain, jumping the members that cannot be within reach: by the triangle
    inequality, a member further on is at least the current distance less the sum of the steps between
    consecutive candidates up to it (``arc``, prefix sums of those steps), and a pair within reach is closer than
    R = 2 r_max + margin + 4 dt v_max. A straight or wound rod 0.3 mm a segment tests ~3 of a band's ~13."""
    n = candidates.shape[0]
    r_max, v_max = 0.0, 0.0
    arc = np.zeros(n)
    for c in range(n):
        i = candidates[c]
        r_max = max(r_max, radius[i])
        v_max = max(v_max, np.sqrt(vel[i, 0] ** 2 + vel[i, 1] ** 2 + vel[i, 2] ** 2))
        if c > 0:
            j = candidates[c - 1]
            arc[c] = arc[c - 1] + np.sqrt((pos[i, 0] - pos[j, 0]) ** 2 + (pos[i, 1] - pos[j, 1]) ** 2
                                          + (pos[i, 2] - pos[j, 2]) ** 2)
    # 1e-9 to spare: the distances' rounding must never end a band before a pair the test would take
    reach = (2.0 * r_max + margin + 4.0 * dt * v_max) * (1.0 + 1e-9)
    out = np.empty((16, 2), np.int64)
    count = 0
    for c in range(n):
        i = candidates[c]
        k = window_hi[c] + 1
        while k <= band_hi[c]:
            j = candidates[k]
            dist = np.sqrt((pos[i, 0] - pos[j, 0]) ** 2 + (pos[i, 1] - pos[j, 1]) ** 2
                           + (pos[i, 2] - pos[j, 2]) ** 2)
            if dist < reach:
                if _within_reach(i, j, pos, radius, vel, chain, rest, margin, dt, arc_factor):
                    out = _grow(out, count)
                    out[count, 0] = i
                    out[count, 1] = j
                    count += 1
                k += 1
                continue
            beyond = arc[k] + (dist - reach)  # the members before this arc position are out of reach
            k += 1
            while k <= band_hi[c] and arc[k] < beyond:
                k += 1
    return out[:count].copy()


@kernel
def _listed_pairs(pos, radius, vel, chain, rest, listed, band, margin, dt, arc_factor):
    """The pairs of ``listed`` (in its order) within reach now, by :func:`_node_pairs`' test on each, merged with
    ``band`` (:func:`_band_pairs`), each node's band pairs before its listed ones (their second nodes come first
    on its chain): :func:`_node_pairs`' order."""
    keep = np.empty(listed.shape[0], np.bool_)
    count = band.shape[0]
    for p in range(listed.shape[0]):
        keep[p] = _within_reach(listed[p, 0], listed[p, 1], pos, radius, vel, chain, rest, margin, dt, arc_factor)
        count += keep[p]
    out = np.empty((count, 2), np.int64)
    k = 0
    b = 0
    for p in range(listed.shape[0]):
        while b < band.shape[0] and band[b, 0] <= listed[p, 0]:
            out[k, 0] = band[b, 0]
            out[k, 1] = band[b, 1]
            k += 1
            b += 1
        if keep[p]:
            out[k, 0] = listed[p, 0]
            out[k, 1] = listed[p, 1]
            k += 1
    for b in range(b, band.shape[0]):
        out[k, 0] = band[b, 0]
        out[k, 1] = band[b, 1]
        k += 1
    return out


def detect_node_pairs(model: Model, pos, radius, vel, node, chain, rest, dt: float, candidates=None,
                      pair_list: NodePairList | None = None, windows=None, on_arc=None):
    """Sphere-sphere D-contacts between node points that belong to a chain (rod and FEM self-contact, rod-rod,
    FEM-FEM, rod-FEM); ``rest``: rest coordinates of each point (see ``contacts.self_contact_layout``);
    ``candidates``: the indices of the node points on a chain, if at hand; ``pair_list``: a
    :class:`NodePairList` to search through (the same pairs; without one, a full search); ``windows``:
    :func:`neighbour_windows` of the candidates, if at hand; ``on_arc``: the points whose chains the list gives
    bands (:func:`chain_bands`: a rod's nodes).

    Returns (pairs (k, 2): i, j; frame (k, 3, 3); gap (k,); position (k, 3)): the normal points from node j to
    node i.
    """
    if candidates is None:
        candidates = np.flatnonzero(node & (chain >= 0)).astype(np.int64)
    if len(candidates) < 2:
        pairs = np.zeros((0, 2), np.int64)
    elif pair_list is not None:
        pairs = pair_list.pairs_within_reach(model, pos, radius, vel, chain, rest, candidates, dt, windows, on_arc)
    else:
        if windows is None:
            windows = neighbour_windows(candidates, radius, chain, rest, SELF_CONTACT_ARC)
        pairs = _node_pairs(pos, radius, vel, chain, rest, candidates, windows[1], model.contact_margin, dt,
                            SELF_CONTACT_ARC)
    return (pairs, *_node_pair_geometry(pos, radius, pairs))
