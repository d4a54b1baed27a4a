"""Articulated robots in generalized (joint) coordinates: the kinematic tree and its kernels.

An :class:`Articulation` is plain arrays over links in topological order
(every link's parent comes before it). Link 0 is the root, fixed to the
world at ``base_transform``. Each other link hangs from its parent by one
joint; a joint either owns a DOF (its ``joint_dof`` >= 0), follows another
joint's DOF (mimic: q = multiplier * q[dof] + offset), or is fixed.

Kernels here: forward kinematics, link Jacobians, the CRBA mass matrix and
the bias forces C(q, v) v + g(q) (recursive Newton-Euler), all in numba.
"""
from __future__ import annotations

import dataclasses
import enum

import numpy as np


class JointType(enum.IntEnum):
    """URDF joint types (floating roots are not supported yet)."""

    FIXED = 0
    REVOLUTE = 1
    CONTINUOUS = 2
    PRISMATIC = 3


class GeometryType(enum.IntEnum):
    """Collision primitives of a link (meshes are reduced to these when loading)."""

    NONE = 0
    BOX = 1  # size = half extents
    SPHERE = 2  # size = (radius, 0, 0)
    CAPSULE = 3  # size = (radius, half_length, 0), along local z
    CYLINDER = 4  # size = (radius, half_height, 0), along local z


@dataclasses.dataclass(frozen=True)
class Articulation:
    """A robot's kinematic tree and inertial data (SI units, URDF conventions).

    Attributes:
        name: robot name.
        link_name: names, list of length link_count.
        link_parent: parent link index (-1 for the root), shape (link_count,).
        joint_name: name of the joint above each link ("" for the root), list of length link_count.
        joint_type: :class:`JointType` of the joint above each link, shape (link_count,).
        joint_origin: parent-link frame -> joint frame at q = 0, homogeneous, shape (link_count, 4, 4).
        joint_axis: unit axis in the joint frame, shape (link_count, 3).
        joint_dof: DOF driving each joint (-1 if fixed), shape (link_count,).
        joint_multiplier, joint_offset: q_joint = multiplier * q[dof] + offset (1, 0 unless mimic).
        link_mass: [kg], shape (link_count,).
        link_com: centre of mass in the link frame [m], shape (link_count, 3).
        link_inertia: inertia about the COM in the link frame [kg m^2], shape (link_count, 3, 3).
        dof_count: n, number of generalized coordinates.
        dof_name: the owning joint's name per DOF, list of length n.
        dof_lower, dof_upper: position limits [rad or m] (-inf/inf if none), shape (n,).
        dof_velocity_limit, dof_effort_limit: [rad/s or m/s], [N m or N] (inf if none), shape (n,).
        dof_damping, dof_friction: URDF <dynamics> damping [N m s/rad] and friction [N m], shape (n,).
        base_transform: world <- root link, shape (4, 4).
        geom_link, geom_type, geom_origin, geom_size: collision primitives (link, type, link <- geometry
            transform, size), shapes (geom_count,), (geom_count,), (geom_count, 4, 4), (geom_count, 3).
    """

    name: str
    link_name: list
    link_parent: np.ndarray
    joint_name: list
    joint_type: np.ndarray
    joint_origin: np.ndarray
    joint_axis: np.ndarray
    joint_dof: np.ndarray
    joint_multiplier: np.ndarray
    joint_offset: np.ndarray
    link_mass: np.ndarray
    link_com: np.ndarray
    link_inertia: np.ndarray
    dof_count: int
    dof_name: list
    dof_lower: np.ndarray
    dof_upper: np.ndarray
    dof_velocity_limit: np.ndarray
    dof_effort_limit: np.ndarray
    dof_damping: np.ndarray
    dof_friction: np.ndarray
    base_transform: np.ndarray
    geom_link: np.ndarray
    geom_type: np.ndarray
    geom_origin: np.ndarray
    geom_size: np.ndarray

    @property
    def link_count(self) -> int:
        return len(self.link_name)

    def link_index(self, name: str) -> int:
        try:
            return self.link_name.index(name)
        except ValueError:
            raise KeyError(f"no link {name!r} in {self.name}; links: {', '.join(self.link_name)}") from None

    def dof_index(self, name: str) -> int:
        try:
            return self.dof_name.index(name)
        except ValueError:
            raise KeyError(f"no joint DOF {name!r} in {self.name}; DOFs: {', '.join(self.dof_name)}") from None
