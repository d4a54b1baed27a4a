"""Contact wrenches summed per body pair, from the last step's solved contacts (no ROS import).

A "body" here is what a user names: a robot link (``panda_hand``), a cable (``cable0``, all its
segments), a free body (``body0``), the particles (``particles``) or a static collider (``cylinder0``,
``box1``: its type and index in the scene). For each pair (a, b), with a <= b by name, the wrench is
the one b exerts on a, in the world frame, the torque taken about the world origin. Contacts within one
body (a cable touching itself) and joint limits are left out.
"""
from __future__ import annotations

import numpy as np

from ..sim import ColliderType, ContactSet, Model


class BodyNames:
    """Names of the DOF groups (and robot links) of a model, and of its static colliders."""

    def __init__(self, model: Model, cables=()):
        self.model = model
        group = ["particles"] * model.particle_count + [f"body{b}" for b in range(model.body_count)]
        for c, rod in enumerate(cables):
            for b in rod.bodies:
                group[model.particle_count + b] = f"cable{c}"
        link_names = [name for art in model.robots for name in art.link_name]
        clash = len(set(link_names)) != len(link_names)  # two robots from one URDF: prefix the robot name
        self.links = [[f"{art.name}/{name}" if clash else name for name in art.link_name] for art in model.robots]
        self.group = group + [art.name for art in model.robots]
        self.collider = [f"{ColliderType(int(t)).name.lower()}{i}" for i, t in enumerate(model.collider_type)]

    def side(self, group: int, link: int) -> str:
        robot = group - self.model.particle_count - self.model.body_count
        if robot >= 0 and link >= 0:
            return self.links[robot][link]
        return self.group[group]

    def group_of_dof(self, dof: int) -> int:
        """The DOF group of a node's first DOF in v (a particle, or a body's translation)."""
        m = self.model
        if dof < m.body_dof_start:
            return dof // 3
        return m.particle_count + (dof - m.body_dof_start) // 6


def pair_wrenches(names: BodyNames, contacts: ContactSet | None) -> dict:
    """{(name a, name b): wrench (6,) that b exerts on a: force [N], torque about the origin [N m]}, in
    name order."""
    if contacts is None or contacts.count == 0:
        return {}
    model = names.model
    force = contacts.world_forces()  # on side a
    torque = np.cross(contacts.position, force)
    link = contacts.link if contacts.link is not None else np.full((contacts.count, 2), -1)
    out: dict = {}
    for m in range(contacts.count):
        a = names.side(int(contacts.point_group[m]), int(link[m, 0]))
        if contacts.collider[m] >= 0:
            b = names.collider[int(contacts.collider[m])]
        elif contacts.dof_b[m] >= model.dof_count:  # side b is a virtual node on its owner
            node = (contacts.dof_b[m] - model.dof_count) // 3
            b = names.side(int(contacts.vn_group[node]), int(link[m, 1]))
        elif contacts.dof_b[m] >= 0:  # side b is a node (particle, rod segment centre)
            b = names.group[names.group_of_dof(int(contacts.dof_b[m]))]
        else:
            continue  # a joint limit
        if a == b:
            continue
        sign = 1.0 if a < b else -1.0
        key = (a, b) if a < b else (b, a)
        wrench = out.setdefault(key, np.zeros(6))
        wrench[:3] += sign * force[m]
        wrench[3:] += sign * torque[m]
    return dict(sorted(out.items()))
