"""D-contacts (Sec. III-A): contact points of one body or robot against the volumes of another.

Volumes that move are the shapes fixed to rigid bodies (``ModelBuilder.add_shape_box`` / ``_sphere``)
and the collision primitives of robot links. Every contact point of a *different* owner is tested
against them with the same signed-distance functions as the static colliders (node-vs-volume).
A contact couples two virtual nodes: one at the point (its owner's Jacobian) and one at the
closest surface point of the volume (the volume owner's Jacobian there), J_c = [R, -R] (eq. 13).

Particles are not tested against moving volumes yet: a particle node already serves its static
contacts directly, and a node must not belong to two contact groups.
"""
from __future__ import annotations

import numpy as np

from .articulation import GeometryType
from .collision import ColliderType, collider_signed_distance, contact_frame
from .model import Model, State
from .rigid import point_jacobian, quat_to_matrix

_GEOMETRY_TO_COLLIDER = {int(GeometryType.BOX): int(ColliderType.BOX),
                         int(GeometryType.SPHERE): int(ColliderType.SPHERE),
                         int(GeometryType.CAPSULE): int(ColliderType.CAPSULE),
                         int(GeometryType.CYLINDER): int(ColliderType.CYLINDER)}


def moving_volumes(model: Model, state: State, kinematics: list) -> list:
    """(collider type, world pos, world rot, size, mu, owner dof, owner size, owner group, jacobian(p)) per volume."""
    volumes = []
    n_p = model.particle_count
    for k in range(len(model.shape_body)):
        body = int(model.shape_body[k])
        rot_b = quat_to_matrix(state.body_quat[body])
        com = state.body_q[body]

        def jac(p, com=com):
            return point_jacobian(6, p - com)
        volumes.append((int(model.shape_type[k]), com + rot_b @ model.shape_pos[k], rot_b @ model.shape_rot[k],
                        model.shape_size[k], model.shape_mu[k], model.body_dof_start + 6 * body, 6, n_p + body, jac))
    for r, kin in enumerate(kinematics):
        art = kin.art
        lo, hi = model.robot_dof_offset[r], model.robot_dof_offset[r + 1]
        for g in range(len(art.geom_link)):
            if int(art.geom_type[g]) not in _GEOMETRY_TO_COLLIDER:
                continue
            link = int(art.geom_link[g])
            pose = kin.link_pose[link] @ art.geom_origin[g]

            def jac(p, kin=kin, link=link):
                return kin.jacobian(link, p)[:3]
            volumes.append((_GEOMETRY_TO_COLLIDER[int(art.geom_type[g])], pose[:3, 3].copy(),
                            np.ascontiguousarray(pose[:3, :3]), art.geom_size[g], model.robot_mu[r],
                            model.robot_dof_start + lo, hi - lo, model.robot_group(r), jac))
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
    candidates = np.flatnonzero(points["kind_is_particle"] == 0)
    normal = np.zeros(3)
    frame = np.zeros((3, 3))
    v_k = state.velocity()
    for ctype, pos, rot, size, mu, dof_b, size_b, group_b, jac_fn in volumes:
        for i in candidates:
            if points["group"][i] == group_b:
                continue
            p = points["pos"][i]
            sd = collider_signed_distance(ctype, pos, rot, size, p, normal)
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
                             jac_b=jac_b, group_b=group_b))
    return rows
