"""Plain data: the static ``Model``, the time-varying ``State`` and the ``Control`` input.

Layout of the generalized velocity ``v`` (the paper's ``v_hat`` has the same
layout, extended by virtual nodes during a step, eq. 15):

- particles first, 3 DOF each (world linear velocity) [m/s];
- then free rigid bodies, 6 DOF each: COM linear velocity then angular
  velocity, both in world coordinates [m/s, rad/s];
- then the joints of each robot (:class:`~cond_ros.sim.kinematics.articulation.Articulation`),
  in generalized coordinates [rad/s or m/s].

Nothing in ``Model`` changes during a run; build it with
:class:`cond_ros.sim.builder.ModelBuilder`.
"""
from __future__ import annotations

import dataclasses
import enum
import weakref

import numpy as np


class PointKind(enum.IntEnum):
    """What a potential's end point is attached to."""

    NONE = 0
    WORLD = 1  # a fixed point in the world
    PARTICLE = 2  # a particle node
    BODY = 3  # a point fixed on a rigid body (local coordinates)
    ROBOT_LINK = 4  # a point fixed on a robot link (index: the robot; potential_link: the link)


class PotentialType(enum.IntEnum):
    """Potentials of the form (7), psi = 1/2 e^T K e."""

    NONE = 0
    DISTANCE = 1  # e = |p_a - p_b| - rest_length, 1-D spring
    COUPLING = 2  # e = F_a^T (p_a - p_b), 3-D zero-length coupling, gains along end a's axes
    ROTATION = 3  # e = Log(R_rest^T R_a^T R_b), relative rotation (bend/twist), gains along R_a R_rest


class DampingPolicy(enum.IntEnum):
    """The paper's two choices for E(q) in eq. (8)-(9)."""

    CONSTANT = 0  # user damping along the constraint, E = (2 c / dt) Je^T Je
    GEOMETRIC = 1  # plus the diagonal SPD projection of the geometric stiffness


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


class ColliderType(enum.IntEnum):
    """Kind of a static collider; the value is stored in ``collider_type``."""

    NONE = 0
    PLANE = 1
    BOX = 2
    SPHERE = 3
    CAPSULE = 4
    CYLINDER = 5


@dataclasses.dataclass(frozen=True)
class Model:
    """Static description of a scene (arrays are read-only during a run).

    Attributes:
        gravity: gravitational acceleration [m/s^2], shape (3,).
        particle_count: number of particle nodes.
        particle_q: initial particle positions [m], shape (particle_count, 3).
        particle_qd: initial particle velocities [m/s], shape (particle_count, 3).
        particle_mass: [kg], shape (particle_count,), > 0.
        particle_radius: contact radius [m], shape (particle_count,), >= 0.
        particle_mu: friction coefficients (mu1, mu2) of each particle's surface, shape (particle_count, 2).
        body_count: number of free rigid bodies.
        body_q: initial COM positions [m], shape (body_count, 3).
        body_quat: initial orientations, unit quaternions (w, x, y, z), shape (body_count, 4).
        body_qd: initial (linear, angular) world velocities, shape (body_count, 6).
        body_mass: [kg], shape (body_count,).
        body_inertia: inertia about the COM in body coordinates [kg m^2], shape (body_count, 3, 3).
        body_damping: (linear [N s/m], angular [N m s/rad]) isotropic damping of each body's absolute world
            velocity, the force -c v_hat (the authors' per-segment cable damping), shape (body_count, 2).
        rod_body_start, rod_bodies: rod r's segments, in order along it, are
            ``rod_bodies[rod_body_start[r]:rod_body_start[r + 1]]``; shapes (rod_count + 1,), (segments,).
        contact_point_body: body owning each contact point, shape (contact_point_count,).
        contact_point_local: point in body coordinates [m], shape (contact_point_count, 3).
        contact_point_radius: [m], shape (contact_point_count,).
        contact_point_mu: friction (mu1, mu2) of each contact point's surface, shape (contact_point_count, 2).
        potential_type: :class:`PotentialType`, shape (potential_count,).
        potential_kind: :class:`PointKind` of the two ends, shape (potential_count, 2).
        potential_index: particle/body/robot index of the two ends (-1 for world), shape (potential_count, 2).
        potential_link: robot link of a ROBOT_LINK end (-1 otherwise), shape (potential_count, 2).
        potential_local: end points in world/body/link coordinates [m] (ignored for particles),
            shape (potential_count, 2, 3).
        potential_stiffness: diagonal of K of eq. (7) in the potential's frame (``potentials``) [N/m or
            N m/rad]; DISTANCE uses the first entry, shape (potential_count, 3).
        potential_rest_length: [m] (DISTANCE only), shape (potential_count,).
        potential_rest_rotation: R_a^T R_b at rest (ROTATION only), shape (potential_count, 3, 3).
        potential_damping: viscous damping C along e's axes [N s/m or N m s/rad], shape (potential_count, 3).
        damping_policy: :class:`DampingPolicy` for E(q).
        collider_type, collider_pos, collider_rot, collider_size: static colliders (see ``collision``).
        collider_mu: (mu1, mu2) along the collider's contact frame (t1, t2), shape (collider_count, 2).
        virtual_node_gain: k_v of eq. (14) [N s/m].
        contact_margin: detection distance beyond touching [m].
        restitution: Newton restitution coefficient in [0, 1] (0 = inelastic).
        penetration_recovery: fraction of a penetration removed per step, in (0, 1].
        robots: the articulated robots (fixed base), a tuple of ``Articulation``.
        robot_dof_offset: first index of each robot in the robot_* arrays, shape (robot_count + 1,).
        robot_q: initial joint positions of all robots [rad or m], shape (robot_dof_count,).
        robot_drive_stiffness, robot_drive_damping: default implicit PD drive gains per joint
            [N m/rad, N m s/rad] (a Control may override them), shape (robot_dof_count,).
        robot_mu: friction (mu1, mu2) of each robot's link surfaces, shape (robot_count, 2).
        shape_body, shape_type, shape_pos, shape_rot, shape_size, shape_mu: volumes fixed to bodies, against
            which other bodies' and robots' contact points are tested (D-contacts); ``shape_type`` uses the
            collider types, pose in body coordinates, shapes (shape_count,), ..., (shape_count, 2).
        contact_point_node: the point is its body's centre and its contacts act on the body's
            translational DOFs directly (a rod segment's centreline node), shape (contact_point_count,).
        integration_theta: theta of v_hat = theta v_{k+1} + (1 - theta) v_k, in [0.5, 1]. 0.5 is the paper's
            midpoint rule (eq. 4, energy-conserving); above it the step damps stiff modes that the midpoint
            rule keeps flipping sign every step (amplification -(1 - theta) / theta at infinite stiffness).
        contact_point_chain, contact_point_arc: chain id (-1 for none) and arc position [m] of node points,
            for self-contact between nodes of one chain that are far apart along it.
        particle_contact: the particle is a contact node (FEM surface nodes and free particles; interior FEM
            nodes are not), shape (particle_count,).
        particle_object: deformable object (FEM body) of each particle, -1 for a free particle; nodes of one
            object touch each other only when they were far apart at rest (self-contact), (particle_count,).
        tet_nodes: particle indices of each co-rotational tetrahedron (``fem.elements``), shape (tet_count, 4).
        tet_rest_shape_inverse: D_m^-1, the inverse of the rest edge matrix [1/m], shape (tet_count, 3, 3).
        tet_rest_volume: [m^3], shape (tet_count,).
        tet_lame: Lame's (mu, lambda) [Pa], shape (tet_count, 2).
        tet_damping_time: c of the element damping C = c K_e [s], shape (tet_count,).
    """

    gravity: np.ndarray
    particle_count: int
    particle_q: np.ndarray
    particle_qd: np.ndarray
    particle_mass: np.ndarray
    particle_radius: np.ndarray
    particle_mu: np.ndarray
    body_count: int
    body_q: np.ndarray
    body_quat: np.ndarray
    body_qd: np.ndarray
    body_mass: np.ndarray
    body_inertia: np.ndarray
    contact_point_count: int
    contact_point_body: np.ndarray
    contact_point_local: np.ndarray
    contact_point_radius: np.ndarray
    contact_point_mu: np.ndarray
    potential_count: int
    potential_type: np.ndarray
    potential_kind: np.ndarray
    potential_index: np.ndarray
    potential_local: np.ndarray
    potential_stiffness: np.ndarray
    potential_rest_length: np.ndarray
    potential_damping: np.ndarray
    potential_link: np.ndarray
    potential_rest_rotation: np.ndarray
    damping_policy: int
    collider_count: int
    collider_type: np.ndarray
    collider_pos: np.ndarray
    collider_rot: np.ndarray
    collider_size: np.ndarray
    collider_mu: np.ndarray
    virtual_node_gain: float
    contact_margin: float
    restitution: float
    penetration_recovery: float
    robots: tuple = ()
    robot_dof_offset: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(1, np.int64))
    robot_q: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_drive_stiffness: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_drive_damping: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_mu: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    shape_body: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    shape_type: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    shape_pos: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    shape_rot: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3, 3)))
    shape_size: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    shape_mu: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    contact_point_node: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, bool))
    contact_point_chain: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    contact_point_arc: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    integration_theta: float = 0.5
    particle_contact: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, bool))
    particle_object: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    tet_nodes: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 4), np.int64))
    tet_rest_shape_inverse: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3, 3)))
    tet_rest_volume: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    tet_lame: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    tet_damping_time: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    body_damping: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    rod_body_start: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(1, np.int64))
    rod_bodies: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def tet_count(self) -> int:
        return len(self.tet_nodes)

    @property
    def body_dof_start(self) -> int:
        """Index of the first rigid-body DOF in ``v``."""
        return 3 * self.particle_count

    @property
    def robot_dof_start(self) -> int:
        """Index of the first robot joint DOF in ``v``."""
        return 3 * self.particle_count + 6 * self.body_count

    @property
    def robot_dof_count(self) -> int:
        return int(self.robot_dof_offset[-1])

    @property
    def dof_count(self) -> int:
        """Number of generalized velocities (without virtual nodes)."""
        return 3 * self.particle_count + 6 * self.body_count + self.robot_dof_count

    def robot_group(self, r: int) -> int:
        """Index of robot ``r``'s DOF group (groups: particles, then bodies, then robots)."""
        return self.particle_count + self.body_count + r

    def group_sizes(self) -> np.ndarray:
        """DOF count of each DOF group: particles (3), bodies (6), robots (their joint count)."""
        return np.concatenate([np.full(self.particle_count, 3), np.full(self.body_count, 6),
                               np.diff(self.robot_dof_offset)]).astype(np.int64)

    def group_dofs(self) -> np.ndarray:
        """First DOF of each DOF group (:meth:`group_sizes`' order)."""
        size = self.group_sizes()
        return np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64) if len(size) else np.zeros(0, np.int64)

    def state(self) -> "State":
        """A fresh :class:`State` at the model's initial configuration."""
        return State(
            time=0.0,
            particle_q=self.particle_q.copy(),
            particle_qd=self.particle_qd.copy(),
            body_q=self.body_q.copy(),
            body_quat=self.body_quat.copy(),
            body_qd=self.body_qd.copy(),
            robot_q=self.robot_q.copy(),
            robot_qd=np.zeros(self.robot_dof_count),
        )

    def control(self) -> "Control":
        """A zero :class:`Control`; robot drives hold the initial joint positions with the default gains."""
        return Control(
            particle_force=np.zeros((self.particle_count, 3)),
            body_wrench=np.zeros((self.body_count, 6)),
            robot_q_target=self.robot_q.copy(),
            robot_qd_target=np.zeros(self.robot_dof_count),
            robot_effort=np.zeros(self.robot_dof_count),
            robot_drive_stiffness=self.robot_drive_stiffness.copy(),
            robot_drive_damping=self.robot_drive_damping.copy(),
        )


@dataclasses.dataclass
class State:
    """Time-varying state.

    Attributes:
        time: simulation time [s].
        particle_q, particle_qd: positions [m] and velocities [m/s], (particle_count, 3).
        body_q: COM positions [m], (body_count, 3).
        body_quat: orientations (w, x, y, z), (body_count, 4).
        body_qd: world (linear, angular) velocities, (body_count, 6).
        robot_q, robot_qd: joint positions and velocities of all robots, (robot_dof_count,).
    """

    time: float
    particle_q: np.ndarray
    particle_qd: np.ndarray
    body_q: np.ndarray
    body_quat: np.ndarray
    body_qd: np.ndarray
    robot_q: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_qd: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    def copy(self) -> "State":
        return State(self.time, self.particle_q.copy(), self.particle_qd.copy(), self.body_q.copy(),
                     self.body_quat.copy(), self.body_qd.copy(), self.robot_q.copy(), self.robot_qd.copy())

    def velocity(self) -> np.ndarray:
        """The generalized velocity vector ``v`` (see module docstring)."""
        return np.concatenate([self.particle_qd.ravel(), self.body_qd.ravel(), self.robot_qd])


@dataclasses.dataclass
class Control:
    """External inputs, held constant over a step.

    Attributes:
        particle_force: [N], (particle_count, 3).
        body_wrench: force at the COM [N] and torque [N m], world frame, (body_count, 6).
        robot_q_target, robot_qd_target: drive targets [rad, rad/s or m, m/s], (robot_dof_count,).
        robot_effort: feed-forward joint effort [N m or N], (robot_dof_count,).
        robot_drive_stiffness, robot_drive_damping: PD gains; 0 stiffness gives velocity control, both 0
            effort control, (robot_dof_count,).
    """

    particle_force: np.ndarray
    body_wrench: np.ndarray
    robot_q_target: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_qd_target: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_effort: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_drive_stiffness: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    robot_drive_damping: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))


_per_model = {}


def per_model(model: Model, make, *args):
    """``make(model, *args)``, computed once per model and arguments: a model's arrays are read-only during a
    run (``Model``), and rebuilding such constants every step cost ~0.25 ms of panda_cable's collision step.
    Entries are keyed by ``id(model)`` and dropped when the model is collected, before its id can be reused."""
    entry = _per_model.get(id(model))
    if entry is None:
        entry = _per_model[id(model)] = {}
        weakref.finalize(model, _per_model.pop, id(model), None)
    key = (make, *args)
    if key not in entry:
        entry[key] = make(model, *args)
    return entry[key]
