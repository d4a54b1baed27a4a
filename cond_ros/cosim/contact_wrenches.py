"""Contact wrenches summed per body pair, from the last step's solved contacts (no ROS import).

A "body" here is what a user names: a robot link (``panda_hand``), a cable (``cable0``, all its
segments), a free body (``body0``), the particles (``particles``) or a static collider (``cylinder0``,
``box1``: its type and index in the scene). For each pair (a, b), with a <= b by name, the wrench is
the one b exerts on a, in the world frame, the torque taken about the world origin. Contacts within one
body (a cable touching itself) and joint limits are left out.
"""
from __future__ import annotations

import functools

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

    @functools.cached_property
    def ids(self) -> _NameIds:
        """The names as integers, for :func:`pair_wrenches`."""
        return _NameIds(self)

    def side(self, group: int, link: int) -> str:
        robot = group - self.model.particle_count - self.model.body_count
        if robot >= 0 and link >= 0:
            return self.links[robot][link]
        return self.group[group]

    def group_of_dof(self, dof):
        """The DOF group of a node's first DOF in v (a particle, or a body's translation); an int or an array."""
        m = self.model
        return np.where(dof < m.body_dof_start, dof // 3, m.particle_count + (dof - m.body_dof_start) // 6)


class _NameIds:
    """Each distinct name of a :class:`BodyNames` as an integer id, and lookups from groups, links and
    colliders to ids. ``rank``: an id's place in string order, which decides a pair's order and sign."""

    def __init__(self, names: BodyNames):
        model = names.model
        every = names.group + [n for links in names.links for n in links] + names.collider
        self.name = list(dict.fromkeys(every))
        index = {n: i for i, n in enumerate(self.name)}
        self.group = np.array([index[n] for n in names.group], np.int64)
        self.collider = np.array([index[n] for n in names.collider], np.int64)
        first_robot = model.particle_count + model.body_count
        width = max((len(links) for links in names.links), default=0)
        self.link = np.full((len(names.links), max(width, 1)), -1, np.int64)  # by robot and link
        for r, links in enumerate(names.links):
            self.link[r, :len(links)] = [index[n] for n in links]
        self.first_robot = first_robot
        order = sorted(range(len(self.name)), key=self.name.__getitem__)
        self.rank = np.empty(len(self.name), np.int64)
        self.rank[order] = np.arange(len(order))
        self.by_rank = [self.name[i] for i in order]

    def side(self, group: np.ndarray, link: np.ndarray) -> np.ndarray:
        """Ids of contact sides: a robot link's where the side is on a robot with a link, else its group's."""
        group = np.asarray(group, np.int64)
        out = self.group[group]
        robot = group - self.first_robot
        on_link = (robot >= 0) & (link >= 0)
        out[on_link] = self.link[robot[on_link], link[on_link]]
        return out


def pair_wrenches(names: BodyNames, contacts: ContactSet | None) -> dict:
    """{(name a, name b): wrench (6,) that b exerts on a: force [N], torque about the origin [N m]}, in
    name order.

    Contacts are named and grouped with arrays (a Python loop over a wound cable's ~250 contacts cost
    ~0.3 ms of the node's step); ``np.add.at`` adds each pair's contacts in contact order, the sums a
    loop over the contacts makes."""
    if contacts is None or contacts.count == 0:
        return {}
    ids = names.ids
    force = contacts.world_forces()  # on side a
    torque = np.cross(contacts.position, force)
    link = contacts.link if contacts.link is not None else np.full((contacts.count, 2), -1)
    a = ids.side(contacts.point_group, link[:, 0])
    b = np.full(contacts.count, -1, np.int64)
    on_collider = contacts.collider >= 0
    b[on_collider] = ids.collider[contacts.collider[on_collider]]
    dof_count = names.model.dof_count
    on_virtual_node = ~on_collider & (contacts.dof_b >= dof_count)  # side b is a virtual node on its owner
    node = (contacts.dof_b[on_virtual_node] - dof_count) // 3
    b[on_virtual_node] = ids.side(contacts.vn_group[node], link[on_virtual_node, 1])
    on_node = ~on_collider & (contacts.dof_b >= 0) & (contacts.dof_b < dof_count)  # a particle, a rod segment
    b[on_node] = ids.group[names.group_of_dof(contacts.dof_b[on_node])]
    keep = (b >= 0) & (a != b)  # no joint limits, no contacts within one body
    a, b = a[keep], b[keep]
    rank_a, rank_b = ids.rank[a], ids.rank[b]
    sign = np.where(rank_a < rank_b, 1.0, -1.0)
    low, high = np.minimum(rank_a, rank_b), np.maximum(rank_a, rank_b)
    pairs, which = np.unique(low * len(ids.name) + high, return_inverse=True)  # sorted: name order
    sums = np.zeros((len(pairs), 6))
    np.add.at(sums, which, np.hstack([force[keep], torque[keep]]) * sign[:, None])
    by_rank = ids.by_rank
    return {(by_rank[p // len(ids.name)], by_rank[p % len(ids.name)]): sums[k] for k, p in enumerate(pairs)}
