"""Joint names in messages -> the model's DOF indices (no ROS import).

Franka's own stacks name the same joints ``panda_joint1`` (franka_ros, older franka_description) or
``fer_joint1`` (newer franka_description), so a name with one prefix of an alias group resolves to the
model's joint with any prefix of that group. Mimic joints (``panda_finger_joint2``) appear in
/joint_states but follow their leader, so a command for one is dropped, not an error.
"""
from __future__ import annotations

import numpy as np

PREFIX_ALIASES = (("panda_", "fer_"),)  # each group: prefixes that name the same joints


class UnknownJointError(ValueError):
    """A name that is no joint of the model (the message lists the known names)."""


def _canonical(name: str, aliases) -> str:
    """``name`` with an aliased prefix replaced by its group's first prefix."""
    for group in aliases:
        for prefix in group:
            if name.startswith(prefix):
                return group[0] + name[len(prefix):]
    return name


class JointNameMap:
    """Resolves joint names (any aliased prefix) to DOF indices of the model's robot_* arrays.

    Args:
        dof_names: the name of each DOF, in robot_* order.
        mimic_names: joints that follow another joint's DOF (accepted, never commanded).
        aliases: groups of interchangeable name prefixes.
    """

    def __init__(self, dof_names, mimic_names=(), aliases=PREFIX_ALIASES):
        self.dof_names = list(dof_names)
        self.aliases = aliases
        self._dof = {}
        for i, name in enumerate(self.dof_names):
            key = _canonical(name, aliases)
            if key in self._dof:
                raise ValueError(f"joint names: {name!r} and {self.dof_names[self._dof[key]]!r} name the same "
                                 f"joint; rename one in the URDF")
            self._dof[key] = i
        self._mimic = {_canonical(name, aliases) for name in mimic_names}

    def dof(self, name: str) -> int | None:
        """The DOF index of ``name``; None for a mimic joint; raises UnknownJointError otherwise."""
        key = _canonical(name, self.aliases)
        if key in self._dof:
            return self._dof[key]
        if key in self._mimic:
            return None
        raise UnknownJointError(f"unknown joint {name!r} (known: {', '.join(self.dof_names)})")

    def dofs(self, names) -> tuple[np.ndarray, np.ndarray]:
        """(DOF index of each commandable name, which positions of ``names`` they are).

        Raises UnknownJointError for an unknown name and ValueError for a joint named twice.
        """
        dofs, kept = [], []
        for k, name in enumerate(names):
            dof = self.dof(name)
            if dof is None:
                continue
            if dof in dofs:
                raise ValueError(f"joint {name!r} is named twice")
            dofs.append(dof)
            kept.append(k)
        return np.array(dofs, dtype=np.int64), np.array(kept, dtype=np.int64)


def model_joint_names(model) -> tuple[list, list]:
    """(DOF names in robot_* order, mimic joint names) of every robot in ``model``."""
    dof_names, mimic = [], []
    for art in model.robots:
        dof_names += list(art.dof_name)
        leaders = set(art.dof_name)
        mimic += [name for name, dof in zip(art.joint_name, art.joint_dof) if dof >= 0 and name not in leaders]
    return dof_names, mimic
