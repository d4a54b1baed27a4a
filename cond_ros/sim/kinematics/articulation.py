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
import functools

import numpy as np

from ..model import GeometryType

#: points on each rim of a cylinder that stand for it in node-vs-volume contact (:attr:`Articulation.contact_points`):
#: a hexagon. Each point costs its placement, velocity and Jacobian every step; panda_cable's collision took
#: 0.547 ms a step with 6, 0.573 with 8 (the Panda's 16 cylinders; 2026-11-26)
CYLINDER_RIM_POINTS = 6


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

    @functools.cached_property
    def contact_points(self):
        """(geometry index, local point, radius) of the points that stand for the collision primitives in
        node-vs-volume contact: a box's 8 corners, a sphere's centre, a capsule's two end-cap centres, and a
        cylinder's rims, ``CYLINDER_RIM_POINTS`` points on each cap's edge (its corners, as a box's). A
        cylinder taken as the capsule of its radius would reach a radius beyond each flat face: the F/T
        sensor's (37.7 mm radius) reached the tool point and pressed the hand onto a grasped box's top with
        ~100 N (panda_pick). A volume smaller than a cap between the rim points is still caught: its own
        points meet the cylinder's exact signed distance. Static, so built once per articulation."""
        geom, local, radius = [], [], []
        rim = 2.0 * np.pi * np.arange(CYLINDER_RIM_POINTS) / CYLINDER_RIM_POINTS
        for g in range(len(self.geom_link)):
            kind, size = self.geom_type[g], self.geom_size[g]
            if kind == GeometryType.BOX:
                points = [((sx * size[0], sy * size[1], sz * size[2]), 0.0)
                          for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]
            elif kind == GeometryType.SPHERE:
                points = [((0.0, 0.0, 0.0), size[0])]
            elif kind == GeometryType.CAPSULE:
                points = [((0.0, 0.0, -size[1]), size[0]), ((0.0, 0.0, size[1]), size[0])]
            elif kind == GeometryType.CYLINDER:
                points = [((size[0] * np.cos(a), size[0] * np.sin(a), sz * size[1]), 0.0)
                          for sz in (-1, 1) for a in rim]
            else:
                points = []
            for p, rad in points:
                geom.append(g)
                local.append(p)
                radius.append(rad)
        return np.array(geom, np.int64), np.array(local, float).reshape(-1, 3), np.array(radius, float)

    @functools.cached_property
    def dof_limits(self) -> np.ndarray:
        """(n, 2): each DOF's lower and upper limit (+-inf where it has none)."""
        return np.column_stack([self.dof_lower, self.dof_upper])

    @functools.cached_property
    def contact_point_links(self):
        """(link, point in the link's frame) of each of :attr:`contact_points`, for kernels that place them."""
        geom, local, _ = self.contact_points
        origin = self.geom_origin[geom]
        return (self.geom_link[geom].astype(np.int64),
                np.ascontiguousarray(np.einsum("kij,kj->ki", origin[:, :3, :3], local) + origin[:, :3, 3]))

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


# ----------------------------------------------------------------------------
# Kernels. Arrays in world coordinates unless named otherwise.
# ----------------------------------------------------------------------------
from ..jit import kernel  # noqa: E402
from .rigid import cross3  # noqa: E402


@kernel
def _axis_rotation(axis, angle):
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues)."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    out = np.empty((3, 3))
    out[0, 0] = c + x * x * t
    out[0, 1] = x * y * t - z * s
    out[0, 2] = x * z * t + y * s
    out[1, 0] = y * x * t + z * s
    out[1, 1] = c + y * y * t
    out[1, 2] = y * z * t - x * s
    out[2, 0] = z * x * t - y * s
    out[2, 1] = z * y * t + x * s
    out[2, 2] = c + z * z * t
    return out


@kernel
def forward_kinematics(link_parent, joint_type, joint_origin, joint_axis, joint_dof, joint_multiplier, joint_offset,
                       base_transform, q, link_pose, joint_axis_world):
    """World pose of every link (4x4) and world axis of every joint, for joint positions ``q``.

    A URDF child link's frame is its joint's frame after the joint motion, so the joint sits at the
    link frame's origin.
    """
    for link in range(link_parent.shape[0]):
        parent = link_parent[link]
        if parent < 0:
            pose = base_transform @ joint_origin[link]
        else:
            pose = link_pose[parent] @ joint_origin[link]
        rot = np.ascontiguousarray(pose[:3, :3])
        axis = rot @ joint_axis[link]
        joint_axis_world[link] = axis
        dof = joint_dof[link]
        if dof >= 0:
            value = joint_multiplier[link] * q[dof] + joint_offset[link]
            if joint_type[link] == 3:  # PRISMATIC
                pose[:3, 3] += axis * value
            elif joint_type[link] == 1 or joint_type[link] == 2:  # REVOLUTE, CONTINUOUS
                pose[:3, :3] = _axis_rotation(axis, value) @ rot
        link_pose[link] = pose


@kernel
def point_jacobian_articulated(link, point, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                               joint_axis_world, out):
    """out (6 x n) = d(linear velocity of world ``point`` fixed to ``link``; angular velocity of ``link``)/d(qdot)."""
    out[:, :] = 0.0
    # scalars only: two temporary arrays per joint cost more than the arithmetic (every robot point, every step)
    j = link
    while j >= 0:
        dof = joint_dof[j]
        if dof >= 0:
            a0 = joint_axis_world[j, 0] * joint_multiplier[j]
            a1 = joint_axis_world[j, 1] * joint_multiplier[j]
            a2 = joint_axis_world[j, 2] * joint_multiplier[j]
            if joint_type[j] == 3:  # PRISMATIC
                out[0, dof] += a0
                out[1, dof] += a1
                out[2, dof] += a2
            else:
                r0 = point[0] - link_pose[j, 0, 3]
                r1 = point[1] - link_pose[j, 1, 3]
                r2 = point[2] - link_pose[j, 2, 3]
                out[0, dof] += a1 * r2 - a2 * r1
                out[1, dof] += a2 * r0 - a0 * r2
                out[2, dof] += a0 * r1 - a1 * r0
                out[3, dof] += a0
                out[4, dof] += a1
                out[5, dof] += a2
        j = link_parent[j]


@kernel
def mass_matrix(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, out):
    """Joint-space mass matrix M(q) = sum_l m J_c^T J_c + J_w^T I_w J_w (the CRBA result, via link Jacobians)."""
    n = out.shape[0]
    out[:, :] = 0.0
    jac = np.empty((6, n))
    for link in range(link_parent.shape[0]):
        if link_mass[link] <= 0.0:
            continue
        rot = np.ascontiguousarray(link_pose[link, :3, :3])
        com = link_pose[link, :3, 3] + rot @ link_com[link]
        point_jacobian_articulated(link, com, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                                   joint_axis_world, jac)
        inertia = rot @ link_inertia[link] @ rot.T
        lin = np.ascontiguousarray(jac[:3])
        ang = np.ascontiguousarray(jac[3:])
        out += link_mass[link] * (lin.T @ lin) + ang.T @ (inertia @ ang)


@kernel
def _add_link_wrench(link, force, torque, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                     joint_axis_world, arm, jac, out):
    """out += J^T (force at the link's COM, world ``arm`` from the link origin; torque): ``torque`` None
    leaves out the angular rows, which adds exact zeros when the robot does not move."""
    point_jacobian_articulated(link, link_pose[link, :3, 3] + arm, link_parent, joint_type, joint_dof,
                               joint_multiplier, link_pose, joint_axis_world, jac)
    if torque is None:
        out += np.ascontiguousarray(jac[:3]).T @ force
    else:
        out += np.ascontiguousarray(jac[:3]).T @ force + np.ascontiguousarray(jac[3:]).T @ torque


@kernel
def gravity_forces(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_pose,
                   joint_axis_world, gravity, jac, out):
    """out += g(q): :func:`bias_forces` at qd = 0, where omega, its rate and the velocity-product
    accelerations are exact zeros, so every link's force is m (0 - gravity) and its torque zero, and the
    non-zero sums are bit for bit those of the full recursion. ``jac``: (6, n) scratch."""
    force = np.empty(3)
    for link in range(link_parent.shape[0]):
        if link_mass[link] <= 0.0:
            continue
        arm = np.ascontiguousarray(link_pose[link, :3, :3]) @ link_com[link]
        for e in range(3):
            force[e] = link_mass[link] * (0.0 - gravity[e])
        _add_link_wrench(link, force, None, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                         joint_axis_world, arm, jac, out)


@kernel
def bias_forces(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, qd, gravity, out):
    """C(q, qd) qd + g(q) by recursive Newton-Euler with zero joint acceleration, projected by link Jacobians."""
    n_links = link_parent.shape[0]
    out[:] = 0.0
    jac = np.empty((6, out.shape[0]))
    if not np.any(qd != 0.0):
        gravity_forces(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_pose,
                       joint_axis_world, gravity, jac, out)
        return
    omega = np.zeros((n_links, 3))
    omega_dot = np.zeros((n_links, 3))  # velocity-product angular accelerations
    acc = np.zeros((n_links, 3))  # velocity-product acceleration of each link frame origin
    force = np.empty(3)
    torque = np.empty(3)
    for link in range(n_links):
        parent = link_parent[link]
        w_p = wd_p = a_p = r = (0.0, 0.0, 0.0)
        if parent >= 0:
            w_p = (omega[parent, 0], omega[parent, 1], omega[parent, 2])
            wd_p = (omega_dot[parent, 0], omega_dot[parent, 1], omega_dot[parent, 2])
            a_p = (acc[parent, 0], acc[parent, 1], acc[parent, 2])
            r = (link_pose[link, 0, 3] - link_pose[parent, 0, 3], link_pose[link, 1, 3] - link_pose[parent, 1, 3],
                 link_pose[link, 2, 3] - link_pose[parent, 2, 3])
        turn = cross3(wd_p, r)
        spin = cross3(w_p, cross3(w_p, r))
        for e in range(3):
            omega[link, e] = w_p[e]
            omega_dot[link, e] = wd_p[e]
            acc[link, e] = a_p[e] + turn[e] + spin[e]
        dof = joint_dof[link]
        if dof >= 0:
            rate = joint_multiplier[link] * qd[dof]
            axis = joint_axis_world[link]
            moved = (axis[0] * rate, axis[1] * rate, axis[2] * rate)
            coriolis = cross3(w_p, moved)
            for e in range(3):
                if joint_type[link] == 3:  # PRISMATIC: the axis turns with the parent
                    acc[link, e] += 2.0 * coriolis[e]
                else:
                    omega[link, e] += moved[e]
                    omega_dot[link, e] += coriolis[e]
        if link_mass[link] <= 0.0:
            continue
        w = omega[link]
        wd = omega_dot[link]
        w3 = (w[0], w[1], w[2])
        rot = np.ascontiguousarray(link_pose[link, :3, :3])
        arm = rot @ link_com[link]
        arm3 = (arm[0], arm[1], arm[2])
        turn = cross3((wd[0], wd[1], wd[2]), arm3)
        spin = cross3(w3, cross3(w3, arm3))
        inertia = rot @ link_inertia[link] @ rot.T
        gyro = inertia @ w
        gyro = cross3(w3, (gyro[0], gyro[1], gyro[2]))
        rotational = inertia @ wd
        for e in range(3):
            force[e] = link_mass[link] * (acc[link, e] + turn[e] + spin[e] - gravity[e])
            torque[e] = rotational[e] + gyro[e]
        _add_link_wrench(link, force, torque, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                         joint_axis_world, arm, jac, out)


class ArticulationKinematics:
    """Per-configuration evaluation of an :class:`Articulation` (thin Python wrapper over the kernels)."""

    def __init__(self, articulation: Articulation):
        self.art = articulation
        n_links = articulation.link_count
        self.link_pose = np.zeros((n_links, 4, 4))
        self.joint_axis_world = np.zeros((n_links, 3))
        self.q = None  # the configuration of the last update

    def update(self, q) -> None:
        """Forward kinematics at ``q``; the other methods use this configuration."""
        a = self.art
        self.q = np.array(q, dtype=np.float64)
        forward_kinematics(a.link_parent, a.joint_type, a.joint_origin, a.joint_axis, a.joint_dof,
                           a.joint_multiplier, a.joint_offset, a.base_transform, self.q, self.link_pose,
                           self.joint_axis_world)

    def jacobian(self, link: int, point) -> np.ndarray:
        """6 x n Jacobian (linear velocity of world ``point`` on ``link``; the link's angular velocity)."""
        a = self.art
        out = np.zeros((6, a.dof_count))
        point_jacobian_articulated(link, np.asarray(point, dtype=np.float64), a.link_parent, a.joint_type,
                                   a.joint_dof, a.joint_multiplier, self.link_pose, self.joint_axis_world, out)
        return out

    def mass_matrix(self) -> np.ndarray:
        a = self.art
        out = np.zeros((a.dof_count, a.dof_count))
        mass_matrix(a.link_parent, a.joint_type, a.joint_dof, a.joint_multiplier, a.link_mass, a.link_com,
                    a.link_inertia, self.link_pose, self.joint_axis_world, out)
        return out

    def bias_forces(self, qd, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        """C(q, qd) qd + g(q) [N m or N] at the configuration of the last :meth:`update`."""
        a = self.art
        out = np.zeros(a.dof_count)
        bias_forces(a.link_parent, a.joint_type, a.joint_dof, a.joint_multiplier, a.link_mass, a.link_com,
                    a.link_inertia, self.link_pose, self.joint_axis_world, np.asarray(qd, dtype=np.float64),
                    np.asarray(gravity, dtype=np.float64), out)
        return out
