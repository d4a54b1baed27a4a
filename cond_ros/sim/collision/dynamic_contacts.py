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

import numpy as np

from ..dynamics.robots import link_point_jacobians
from ..jit import kernel
from ..kinematics.rigid import point_jacobian, quat_to_matrix
from ..model import ColliderType, GeometryType, Model, State
from .colliders import collider_signed_distances, contact_frame

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


def moving_volumes(model: Model, state: State, kinematics: list) -> list:
    """(collider type, world pos, world rot, size, mu, owner dof, owner size, owner group, jacobian(p), robot link
    or -1, speed bound) per volume. The speed bound [m/s] is |v_o| + |omega| R: no point within the
    volume's bounding radius R moves faster at the start of the step."""
    volumes = []
    n_p = model.particle_count
    for k in range(len(model.shape_body)):
        body = int(model.shape_body[k])
        rot_b = quat_to_matrix(state.body_quat[body])
        com = state.body_q[body]

        def jac(p, com=com):
            return point_jacobian(6, p - com)
        pos = com + rot_b @ model.shape_pos[k]
        ctype, size = int(model.shape_type[k]), model.shape_size[k]
        v, w = state.body_qd[body, :3], state.body_qd[body, 3:]
        speed = np.linalg.norm(v + np.cross(w, pos - com)) + np.linalg.norm(w) * _bounding_radius(ctype, size)
        volumes.append((ctype, pos, rot_b @ model.shape_rot[k], size, model.shape_mu[k],
                        model.body_dof_start + 6 * body, 6, n_p + body, jac, -1, speed))
    for r, kin in enumerate(kinematics):
        art = kin.art
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        geoms = [g for g in range(len(art.geom_link)) if int(art.geom_type[g]) in _GEOMETRY_TO_COLLIDER]
        if not geoms:
            continue
        links = art.geom_link[geoms].astype(np.int64)
        poses = kin.link_pose[links] @ art.geom_origin[geoms]
        twists = np.zeros((len(geoms), 6, hi - lo))
        link_point_jacobians(links, np.ascontiguousarray(poses[:, :3, 3]), art.link_parent, art.joint_type,
                             art.joint_dof, art.joint_multiplier, kin.link_pose, kin.joint_axis_world, hi - lo, twists)
        twists = twists @ state.robot_qd[lo:hi]
        types = [_GEOMETRY_TO_COLLIDER[int(art.geom_type[g])] for g in geoms]
        reach = np.array([_bounding_radius(ctype, art.geom_size[g]) for ctype, g in zip(types, geoms)])
        speeds = np.linalg.norm(twists[:, :3], axis=1) + np.linalg.norm(twists[:, 3:], axis=1) * reach
        for k, g in enumerate(geoms):
            link = int(links[k])

            def jac(p, kin=kin, link=link):
                return kin.jacobian(link, p)[:3]
            ctype, size, speed = types[k], art.geom_size[g], float(speeds[k])
            volumes.append((ctype, poses[k, :3, 3].copy(), np.ascontiguousarray(poses[k, :3, :3]), size,
                            model.robot_mu[r], model.robot_dof_start + lo, hi - lo, model.robot_group(r), jac, link,
                            speed))
    return volumes


def detect_dynamic_contacts(model: Model, state: State, kinematics: list, points: dict, dt: float, width: int):
    """D-contacts of body and robot contact points (``points``, arrays by point) against moving volumes.

    Returns a list of dicts, one per contact, with frame, gap, position, friction, the point index and
    the volume owner's (dof, size, jacobian at the contact, group).
    """
    rows = []
    volumes = moving_volumes(model, state, kinematics)
    if not volumes:
        return rows
    frame = np.zeros((3, 3))
    v_k = state.velocity()
    point_speed = np.linalg.norm(points["vel"], axis=1)
    reach = points["radius"] + model.contact_margin + 2.0 * dt * point_speed
    # bounding-sphere prefilter of every volume against every point at once, with the volume's own motion
    centre = np.array([vol[1] for vol in volumes])
    sphere = np.array([_bounding_radius(vol[0], vol[3]) + 2.0 * dt * vol[10] for vol in volumes])
    # squared distances by one matrix product; the 1e-12 m^2 slack covers its cancellation (a prefilter may
    # only err towards testing a point)
    pos_all = points["pos"]
    squared = (np.einsum("pi,pi->p", pos_all, pos_all)[None, :] + np.einsum("vi,vi->v", centre, centre)[:, None]
               - 2.0 * centre @ pos_all.T)
    owner = np.array([vol[7] for vol in volumes])
    # a robot's own link points lie near all of its volumes: they are not candidates
    candidate = ((squared <= (sphere[:, None] + reach[None, :]) ** 2 + 1e-12) & points["active"][None, :]
                 & (points["group"][None, :] != owner[:, None]))
    for v in np.flatnonzero(candidate.any(axis=1)):
        ctype, pos, rot, size, mu, dof_b, size_b, group_b, jac_fn, link_b, volume_speed = volumes[v]
        near = np.flatnonzero(candidate[v])
        normals = np.empty((len(near), 3))
        distances = collider_signed_distances(ctype, pos, rot, size, points["pos"][near], normals)
        # the exact test below needs the volume's velocity at the contact; a bound on it rejects most
        # points here, before a Jacobian is built for them (1.01: rounding slack of a bound that is exact)
        bound = model.contact_margin + 2.0 * dt * 1.01 * (point_speed[near] + volume_speed)
        for k in np.flatnonzero(distances - points["radius"][near] < bound):
            i, sd, normal = near[k], distances[k], normals[k]
            p = points["pos"][i]
            gap = sd - points["radius"][i]
            surface = p - sd * normal
            jac_b = np.zeros((3, width))
            jac_b[:, :size_b] = jac_fn(surface)
            rel = points["vel"][i] - jac_b[:, :size_b] @ v_k[dof_b:dof_b + size_b]
            if gap >= model.contact_margin + 2.0 * dt * max(0.0, -float(rel @ normal)):
                continue
            contact_frame(normal, rot, frame)
            rows.append(dict(frame=frame.copy(), gap=gap, position=surface,
                             friction=np.maximum(points["mu"][i], mu), point=i, dof_b=dof_b, size_b=size_b,
                             jac_b=jac_b, group_b=group_b, link_b=link_b))
    return rows


@kernel
def _within_reach(i, j, pos, radius, vel, chain, rest, margin, dt, arc_factor):
    """Nodes i and j may touch during the step (and are not neighbours at rest on one chain).

    Scalar arithmetic only: a temporary array per candidate pair cost 3 ms at 320 nodes.
    """
    if chain[i] >= 0 and chain[i] == chain[j]:
        rx = rest[i, 0] - rest[j, 0]
        ry = rest[i, 1] - rest[j, 1]
        rz = rest[i, 2] - rest[j, 2]
        if np.sqrt(rx * rx + ry * ry + rz * rz) <= arc_factor * (radius[i] + radius[j]):
            return False
    dx = pos[i, 0] - pos[j, 0]
    dy = pos[i, 1] - pos[j, 1]
    dz = pos[i, 2] - pos[j, 2]
    dist = np.sqrt(dx * dx + dy * dy + dz * dz)
    ux = vel[i, 0] - vel[j, 0]
    uy = vel[i, 1] - vel[j, 1]
    uz = vel[i, 2] - vel[j, 2]
    speed = np.sqrt(ux * ux + uy * uy + uz * uz)
    return dist - radius[i] - radius[j] < margin + 2.0 * dt * speed and dist > 1e-12


@kernel
def _node_pairs(pos, radius, vel, chain, rest, candidates, margin, dt, arc_factor):
    """(i, j) of node pairs within reach, i < j, excluding near neighbours at rest on a chain; shape (pairs, 2),
    in the order of a double loop over ``candidates`` (ascending), whatever the search.

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
    for ci in range(n):
        i = candidates[ci]
        for ox in range(-1, 2):
            for oy in range(-1, 2):
                for oz in range(-1, 2):
                    k = ((coords[ci, 0] + 1 + ox) * dims[1] + coords[ci, 1] + 1 + oy) * dims[2] + coords[ci, 2] + 1 + oz
                    first = np.searchsorted(sorted_key, k)
                    for s in range(first, n):
                        if sorted_key[s] != k:
                            break
                        cj = order[s]
                        if cj <= ci or not _within_reach(i, candidates[cj], pos, radius, vel, chain, rest, margin,
                                                         dt, arc_factor):
                            continue
                        if count == found.shape[0]:
                            grown = np.empty((2 * count, 2), np.int64)
                            grown[:count] = found
                            found = grown
                        found[count, 0] = ci
                        found[count, 1] = cj
                        count += 1
    rank = np.argsort(found[:count, 0] * n + found[:count, 1], kind="mergesort")
    out = np.empty((count, 2), np.int64)
    for p in range(count):
        out[p, 0] = candidates[found[rank[p], 0]]
        out[p, 1] = candidates[found[rank[p], 1]]
    return out


def detect_node_pairs(model: Model, pos, radius, vel, node, chain, rest, dt: float):
    """Sphere-sphere D-contacts between node points that belong to a chain (rod and FEM self-contact, rod-rod,
    FEM-FEM, rod-FEM); ``rest``: rest coordinates of each point (see ``contacts.self_contact_layout``).

    Yields (i, j, frame, gap, position): the normal points from node j to node i.
    """
    candidates = np.flatnonzero(node & (chain >= 0)).astype(np.int64)
    if len(candidates) < 2:
        return
    pairs = _node_pairs(pos, radius, vel, chain, rest, candidates, model.contact_margin, dt, SELF_CONTACT_ARC)
    frame = np.zeros((3, 3))
    for i, j in pairs:
        d = pos[i] - pos[j]
        dist = float(np.linalg.norm(d))
        normal = d / dist
        contact_frame(normal, np.eye(3), frame)
        gap = dist - radius[i] - radius[j]
        yield i, j, frame.copy(), gap, pos[j] + normal * (radius[j] + 0.5 * gap)  # mid-gap point
