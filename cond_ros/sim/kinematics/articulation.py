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
from ..jit import kernel, leaf_kernel  # noqa: E402
from .rigid import cross3  # noqa: E402


@leaf_kernel
def _rotate_about_axis(axis, angle, rot, out):
    """out (3 x 3) = Rodrigues' rotation by ``angle`` about the unit ``axis``, times ``rot``."""
    x, y, z = axis[0], axis[1], axis[2]
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    turn = ((c + x * x * t, x * y * t - z * s, x * z * t + y * s),
            (y * x * t + z * s, c + y * y * t, y * z * t - x * s),
            (z * x * t - y * s, z * y * t + x * s, c + z * z * t))
    for i in range(3):
        for j in range(3):
            out[i, j] = turn[i][0] * rot[0, j] + turn[i][1] * rot[1, j] + turn[i][2] * rot[2, j]


@kernel
def forward_kinematics(link_parent, joint_type, joint_origin, joint_axis, joint_dof, joint_multiplier, joint_offset,
                       base_transform, q, link_pose, joint_axis_world):
    """World pose of every link (4x4) and world axis of every joint, for joint positions ``q``.

    A URDF child link's frame is its joint's frame after the joint motion, so the joint sits at the
    link frame's origin. Rigid transforms (bottom row 0 0 0 1) composed as 3 x 3 rotations and translations
    in scalars: as 4 x 4 products, each a BLAS call and a new array, it cost ~8 us for the Panda, and it
    runs several times a step (contacts, sensors, the tool pose).
    """
    rot = np.empty((3, 3))
    for link in range(link_parent.shape[0]):
        parent = link_parent[link]
        frame = base_transform if parent < 0 else link_pose[parent]
        origin = joint_origin[link]
        pose = link_pose[link]
        for i in range(3):
            for j in range(4):
                value = frame[i, 0] * origin[0, j] + frame[i, 1] * origin[1, j] + frame[i, 2] * origin[2, j]
                pose[i, j] = value + frame[i, 3] if j == 3 else value
            pose[3, i] = 0.0
        pose[3, 3] = 1.0
        for i in range(3):
            joint_axis_world[link, i] = (pose[i, 0] * joint_axis[link, 0] + pose[i, 1] * joint_axis[link, 1]
                                         + pose[i, 2] * joint_axis[link, 2])
        dof = joint_dof[link]
        if dof >= 0:
            value = joint_multiplier[link] * q[dof] + joint_offset[link]
            axis = joint_axis_world[link]
            if joint_type[link] == 3:  # PRISMATIC
                for i in range(3):
                    pose[i, 3] += axis[i] * value
            elif joint_type[link] == 1 or joint_type[link] == 2:  # REVOLUTE, CONTINUOUS
                for i in range(3):
                    for j in range(3):
                        rot[i, j] = pose[i, j]
                _rotate_about_axis(axis, value, rot, pose)


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


@leaf_kernel
def _world_inertia(rot, inertia, out):
    """out = R I R^T (3 x 3): a link's inertia about its COM in world axes."""
    for i in range(3):
        row = (rot[i, 0] * inertia[0, 0] + rot[i, 1] * inertia[1, 0] + rot[i, 2] * inertia[2, 0],
               rot[i, 0] * inertia[0, 1] + rot[i, 1] * inertia[1, 1] + rot[i, 2] * inertia[2, 1],
               rot[i, 0] * inertia[0, 2] + rot[i, 1] * inertia[1, 2] + rot[i, 2] * inertia[2, 2])
        for j in range(3):
            out[i, j] = row[0] * rot[j, 0] + row[1] * rot[j, 1] + row[2] * rot[j, 2]


@leaf_kernel
def _com_arm(link_pose, link, com):
    """R c: the world vector from ``link``'s frame origin to its centre of mass (``com`` in the link frame)."""
    return (link_pose[link, 0, 0] * com[0] + link_pose[link, 0, 1] * com[1] + link_pose[link, 0, 2] * com[2],
            link_pose[link, 1, 0] * com[0] + link_pose[link, 1, 1] * com[1] + link_pose[link, 1, 2] * com[2],
            link_pose[link, 2, 0] * com[0] + link_pose[link, 2, 1] * com[1] + link_pose[link, 2, 2] * com[2])


@kernel
def mass_matrix(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, out):
    """Joint-space mass matrix M(q) = sum_l m J_c^T J_c + J_w^T I_w J_w (the CRBA result, via link Jacobians).
    Scalar loops: with a BLAS product and a new array for each 3 x 3 and 3 x n product it cost ~14 us for
    the Panda, every step."""
    n = out.shape[0]
    out[:, :] = 0.0
    jac = np.empty((6, n))
    inertia = np.empty((3, 3))
    turned = np.empty((3, n))  # I_w J_w
    point = np.empty(3)
    for link in range(link_parent.shape[0]):
        mass = link_mass[link]
        if mass <= 0.0:
            continue
        arm = _com_arm(link_pose, link, link_com[link])
        for e in range(3):
            point[e] = link_pose[link, e, 3] + arm[e]
        point_jacobian_articulated(link, point, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                                   joint_axis_world, jac)
        _world_inertia(link_pose[link], link_inertia[link], inertia)
        for e in range(3):
            for j in range(n):
                turned[e, j] = inertia[e, 0] * jac[3, j] + inertia[e, 1] * jac[4, j] + inertia[e, 2] * jac[5, j]
        for i in range(n):
            for j in range(n):
                out[i, j] += (mass * (jac[0, i] * jac[0, j] + jac[1, i] * jac[1, j] + jac[2, i] * jac[2, j])
                              + (jac[3, i] * turned[0, j] + jac[4, i] * turned[1, j] + jac[5, i] * turned[2, j]))


@leaf_kernel
def _add_link_wrench(link, point, force, torque, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                     joint_axis_world, jac, out):
    """out += J^T (force at world ``point`` on ``link``; torque): J the link's 6 x n Jacobian at that point,
    into ``jac``."""
    point_jacobian_articulated(link, point, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                               joint_axis_world, jac)
    for j in range(out.shape[0]):
        out[j] += ((jac[0, j] * force[0] + jac[1, j] * force[1] + jac[2, j] * force[2])
                   + (jac[3, j] * torque[0] + jac[4, j] * torque[1] + jac[5, j] * torque[2]))


@kernel
def bias_forces(link_parent, joint_type, joint_dof, joint_multiplier, link_mass, link_com, link_inertia, link_pose,
                joint_axis_world, qd, gravity, out):
    """C(q, qd) qd + g(q) by recursive Newton-Euler with zero joint acceleration, projected by link Jacobians.
    Scalar arithmetic: with numpy products on 3-vectors and 3 x 3 matrices it cost ~17 us for the Panda."""
    n_links = link_parent.shape[0]
    out[:] = 0.0
    jac = np.empty((6, out.shape[0]))
    omega = np.zeros((n_links, 3))
    omega_dot = np.zeros((n_links, 3))  # velocity-product angular accelerations
    acc = np.zeros((n_links, 3))  # velocity-product acceleration of each link frame origin
    inertia = np.empty((3, 3))
    point = np.empty(3)
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
            moved = (joint_axis_world[link, 0] * rate, joint_axis_world[link, 1] * rate,
                     joint_axis_world[link, 2] * rate)
            coriolis = cross3(w_p, moved)
            for e in range(3):
                if joint_type[link] == 3:  # PRISMATIC: the axis turns with the parent
                    acc[link, e] += 2.0 * coriolis[e]
                else:
                    omega[link, e] += moved[e]
                    omega_dot[link, e] += coriolis[e]
        if link_mass[link] <= 0.0:
            continue
        w = (omega[link, 0], omega[link, 1], omega[link, 2])
        wd = (omega_dot[link, 0], omega_dot[link, 1], omega_dot[link, 2])
        arm = _com_arm(link_pose, link, link_com[link])
        turn = cross3(wd, arm)
        spin = cross3(w, cross3(w, arm))
        _world_inertia(link_pose[link], link_inertia[link], inertia)
        spun = (inertia[0, 0] * w[0] + inertia[0, 1] * w[1] + inertia[0, 2] * w[2],
                inertia[1, 0] * w[0] + inertia[1, 1] * w[1] + inertia[1, 2] * w[2],
                inertia[2, 0] * w[0] + inertia[2, 1] * w[1] + inertia[2, 2] * w[2])
        gyro = cross3(w, spun)
        for e in range(3):
            force[e] = link_mass[link] * (acc[link, e] + turn[e] + spin[e] - gravity[e])
            torque[e] = (inertia[e, 0] * wd[0] + inertia[e, 1] * wd[1] + inertia[e, 2] * wd[2]) + gyro[e]
            point[e] = link_pose[link, e, 3] + arm[e]
        _add_link_wrench(link, point, force, torque, link_parent, joint_type, joint_dof, joint_multiplier, link_pose,
                         joint_axis_world, jac, out)


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
