"""``ModelBuilder``: collect a scene in plain Python lists, then ``finalize()`` a ``Model``.

Every ``add_*`` method validates its arguments at once, so a bad value is
reported where it was written (the error names the field), not during a step.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import validate as V
from .kinematics.articulation import Articulation, ArticulationKinematics
from .kinematics.rigid import quat_to_matrix
from .model import ColliderType, DampingPolicy, Model, PointKind, PotentialType


class Anchor(NamedTuple):
    """One end of a potential: a world point, a particle, a point on a body or on a robot link."""

    kind: PointKind
    index: int
    local: tuple
    link: object = -1  # ROBOT_LINK only: link index or name


def world_point(p) -> Anchor:
    return Anchor(PointKind.WORLD, -1, tuple(V.finite_array("world_point", p, (3,))))


def particle(i: int) -> Anchor:
    return Anchor(PointKind.PARTICLE, int(i), (0.0, 0.0, 0.0))


def body_point(body: int, local=(0.0, 0.0, 0.0)) -> Anchor:
    return Anchor(PointKind.BODY, int(body), tuple(V.finite_array("body_point.local", local, (3,))))


def robot_link_point(robot: int, link, local=(0.0, 0.0, 0.0)) -> Anchor:
    """A point on link ``link`` (name or index) of robot ``robot``, in that link's frame."""
    return Anchor(PointKind.ROBOT_LINK, int(robot), tuple(V.finite_array("robot_link_point.local", local, (3,))),
                  link)


def box_inertia(mass: float, half_extents) -> np.ndarray:
    """Inertia of a solid box about its centre [kg m^2]."""
    hx, hy, hz = 2.0 * np.asarray(half_extents, dtype=float)
    return mass / 12.0 * np.diag([hy**2 + hz**2, hx**2 + hz**2, hx**2 + hy**2])


def sphere_inertia(mass: float, radius: float) -> np.ndarray:
    return 0.4 * mass * radius**2 * np.eye(3)


def _frame_from_normal(normal) -> np.ndarray:
    """A rotation whose local z is ``normal`` and local x is as close to world x as possible."""
    n = normal / np.linalg.norm(normal)
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = ref - n * (ref @ n)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(n, x), n])


class ModelBuilder:
    """Scene assembly. Methods are prefix-first (``add_body``, ``add_shape_box``...)."""

    def __init__(self, *, gravity=(0.0, 0.0, -9.81)):
        self.gravity = V.finite_array("gravity", gravity, (3,))
        self._particles = []  # (q, qd, mass, radius, mu, contact, object)
        self._tets = []  # (nodes, rest shape inverse, rest volume, (mu, lambda), damping time)
        self._object_count = 0
        self._bodies = []  # (q, quat, qd, mass, inertia, damping)
        self._rods = []  # body indices of each rod's segments, in order along it
        self._contact_points = []  # (body, local, radius, mu, node, chain, arc)
        # (type, (kind a, kind b), (idx a, idx b), (local a, local b), k (3), rest, damping (3), (link a, link b),
        #  rest rotation)
        self._potentials = []
        self._colliders = []  # (type, pos, rot, size, mu)
        self._robots = []  # (articulation, q, drive stiffness, drive damping, mu)
        self._shapes = []  # (body, collider type, local pos, local rot, size, mu)

    # -- nodes and bodies -------------------------------------------------
    def add_particle(self, pos, *, mass, radius=0.0, velocity=(0.0, 0.0, 0.0), mu=0.0, contact=True,
                     deformable_object=-1) -> int:
        """Add a particle node; returns its index.

        ``contact``: the node is tested for contacts. ``deformable_object``: the id (from
        :meth:`new_deformable_object`) of the FEM body the node belongs to, or -1.
        """
        i = len(self._particles)
        if not -1 <= int(deformable_object) < self._object_count:
            raise V.ModelError(f"particle[{i}].deformable_object: unknown object {deformable_object}")
        self._particles.append((
            V.finite_array(f"particle[{i}].pos", pos, (3,)),
            V.finite_array(f"particle[{i}].velocity", velocity, (3,)),
            V.positive(f"particle[{i}].mass", mass),
            V.non_negative(f"particle[{i}].radius", radius),
            V.friction(f"particle[{i}].mu", mu),
            bool(contact), int(deformable_object),
        ))
        return i

    def new_deformable_object(self) -> int:
        """A fresh id for the nodes of one FEM body (their self-contact test uses it)."""
        self._object_count += 1
        return self._object_count - 1

    def add_tetrahedron(self, nodes, *, lame, damping_time=0.0) -> int:
        """A co-rotational linear tetrahedron on four particles, at rest in their current positions.

        Args:
            nodes: four particle indices, positively oriented (see ``fem.mesh``).
            lame: Lame's (mu, lambda) [Pa]. damping_time: C = damping_time K_e [s].
        """
        t = len(self._tets)
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        if len(nodes) != 4 or len(set(nodes.tolist())) != 4 or np.any((nodes < 0) | (nodes >= len(self._particles))):
            raise V.ModelError(f"tet[{t}].nodes: four distinct particle indices < {len(self._particles)}, "
                               f"got {nodes.tolist()}")
        x = np.array([self._particles[i][0] for i in nodes])
        rest = (x[1:] - x[0]).T
        volume = np.linalg.det(rest) / 6.0
        if not volume > 1e-9 * np.mean(np.linalg.norm(rest, axis=0)) ** 3:
            raise V.ModelError(f"tet[{t}]: nodes {nodes.tolist()} are inverted or degenerate (volume {volume:.3g} m^3)")
        self._tets.append((nodes, np.linalg.inv(rest), volume,
                           np.array([V.positive(f"tet[{t}].lame mu", lame[0]),
                                     V.non_negative(f"tet[{t}].lame lambda", lame[1])]),
                           V.non_negative(f"tet[{t}].damping_time", damping_time)))
        return t

    def add_body(self, pos, *, mass, inertia, quat=(1.0, 0.0, 0.0, 0.0),
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), damping=(0.0, 0.0)) -> int:
        """Add a free rigid body (6 DOF, maximal coordinates); returns its index.

        Args:
            pos: COM position [m].
            mass: [kg], > 0.
            inertia: 3x3 inertia about the COM in body coordinates [kg m^2], SPD.
            quat: orientation (w, x, y, z).
            velocity, angular_velocity: initial world velocities [m/s], [rad/s].
            damping: (linear [N s/m], angular [N m s/rad]) isotropic damping of the body's absolute world
                velocity, a force -c v_hat (a drag on the body, not between bodies).
        """
        b = len(self._bodies)
        damping = V.finite_array(f"body[{b}].damping", damping, (2,))
        if np.any(damping < 0.0):
            raise V.ModelError(f"body[{b}].damping: must be >= 0, got {damping.tolist()}")
        self._bodies.append((
            V.finite_array(f"body[{b}].pos", pos, (3,)),
            V.unit_quaternion(f"body[{b}].quat", quat),
            np.concatenate([V.finite_array(f"body[{b}].velocity", velocity, (3,)),
                            V.finite_array(f"body[{b}].angular_velocity", angular_velocity, (3,))]),
            V.positive(f"body[{b}].mass", mass),
            V.spd_matrix(f"body[{b}].inertia", inertia),
            damping,
        ))
        return b

    def add_rod_segments(self, bodies) -> int:
        """Declare ``bodies`` the segments of one rod, in order along it; returns the rod's index.

        The dynamics do not use this; COND's coarse correction does (smooth motions along the rod).
        """
        bodies = np.asarray(bodies, dtype=np.int64).reshape(-1)
        for b in bodies:
            self._check_body("add_rod_segments.bodies", int(b))
        taken = {int(b) for rod in self._rods for b in rod}
        if len(set(bodies.tolist())) != len(bodies) or taken & set(bodies.tolist()):
            raise V.ModelError("add_rod_segments: a body can be a segment of one rod only, once")
        self._rods.append(bodies.copy())
        return len(self._rods) - 1

    def add_contact_point(self, body: int, local, *, radius=0.0, mu=0.0, node=False, chain=-1, arc=0.0) -> int:
        """A point (sphere of ``radius``) on ``body`` tested against colliders and moving volumes.

        Contacts on it go through virtual nodes, unless ``node``: then the point must be the body's centre
        and its contacts act directly on the body's translational DOFs as on a particle (no friction
        torque; a rod segment's centreline node). Node points of one ``chain`` (>= 0) at arc positions
        ``arc`` [m] are tested against each other (self-contact) when their arcs differ enough.
        """
        self._check_body("add_contact_point.body", body)
        j = len(self._contact_points)
        local = V.finite_array(f"contact_point[{j}].local", local, (3,))
        if node and np.any(local != 0.0):
            raise V.ModelError(f"contact_point[{j}].local: a node point must be the body's centre (0, 0, 0), "
                               f"got {local.tolist()}")
        self._contact_points.append((
            int(body), local,
            V.non_negative(f"contact_point[{j}].radius", radius),
            V.friction(f"contact_point[{j}].mu", mu),
            bool(node), int(chain), V.scalar(f"contact_point[{j}].arc", arc),
        ))
        return j

    def add_shape_box(self, body: int, half_extents, *, center=(0.0, 0.0, 0.0), mu=0.0) -> list:
        """The eight corners of a box on ``body`` as contact points (vertex-volume contact)."""
        h = V.finite_array("add_shape_box.half_extents", half_extents, (3,))
        if np.any(h <= 0):
            raise V.ModelError(f"add_shape_box.half_extents: must be > 0, got {h.tolist()}")
        c = V.finite_array("add_shape_box.center", center, (3,))
        corners = [c + h * np.array([sx, sy, sz]) for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]
        points = [self.add_contact_point(body, p, mu=mu) for p in corners]
        self._shapes.append((int(body), int(ColliderType.BOX), c, np.eye(3), h, V.friction("add_shape_box.mu", mu)))
        return points

    def add_shape_sphere(self, body: int, radius, *, center=(0.0, 0.0, 0.0), mu=0.0) -> int:
        """A sphere on ``body``: a contact point with radius, and a volume other points collide with."""
        r = V.positive("add_shape_sphere.radius", radius)
        point = self.add_contact_point(body, center, radius=r, mu=mu)
        self._shapes.append((int(body), int(ColliderType.SPHERE), V.finite_array("add_shape_sphere.center", center,
                                                                                  (3,)),
                             np.eye(3), np.array([r, 0.0, 0.0]), V.friction("add_shape_sphere.mu", mu)))
        return point

    def add_articulation(self, articulation, *, q=None, drive_stiffness=0.0, drive_damping=0.0, mu=0.5) -> int:
        """Add a fixed-base robot in joint coordinates; returns its index.

        Args:
            articulation: an :class:`~cond_ros.sim.kinematics.articulation.Articulation` (e.g. from ``load_urdf``).
            q: initial joint positions (default: 0 clipped into the limits).
            drive_stiffness, drive_damping: default implicit PD gains per joint (scalar or per joint)
                [N m/rad, N m s/rad]; 0 and 0 leave the joints to effort control.
            mu: friction of the link surfaces (scalar or (mu1, mu2)); a contact uses the larger of the
                two surfaces' coefficients.
        """
        r = len(self._robots)
        if not isinstance(articulation, Articulation):
            raise V.ModelError(f"robot[{r}]: expected an Articulation, got {type(articulation).__name__}")
        n = articulation.dof_count
        if q is None:
            q = np.clip(np.zeros(n), articulation.dof_lower, articulation.dof_upper)
        q = V.finite_array(f"robot[{r}].q", q, (n,))
        outside = np.flatnonzero((q < articulation.dof_lower - 1e-12) | (q > articulation.dof_upper + 1e-12))
        if len(outside):
            i = outside[0]
            raise V.ModelError(f"robot[{r}].q: joint {articulation.dof_name[i]!r} starts at {q[i]}, outside its "
                               f"limits [{articulation.dof_lower[i]}, {articulation.dof_upper[i]}]")
        gains = []
        for name, value in (("drive_stiffness", drive_stiffness), ("drive_damping", drive_damping)):
            arr = np.broadcast_to(V.finite_array(f"robot[{r}].{name}", value), (n,)).astype(float)
            if np.any(arr < 0):
                raise V.ModelError(f"robot[{r}].{name}: must be >= 0")
            gains.append(arr)
        self._robots.append((articulation, q, gains[0], gains[1], V.friction(f"robot[{r}].mu", mu)))
        return r

    # -- potentials of form (7) -------------------------------------------
    def add_spring(self, a: Anchor, b: Anchor, *, stiffness, rest_length=None, damping=0.0) -> int:
        """Distance spring psi = k/2 (|p_a - p_b| - L0)^2; ``rest_length`` defaults to the current distance."""
        return self._add_potential(PotentialType.DISTANCE, a, b, stiffness, rest_length, damping)

    def add_coupling(self, a: Anchor, b: Anchor, *, stiffness, damping=0.0) -> int:
        """Zero-length coupling psi = 1/2 e^T K e, e = R_a^T (p_a - p_b) (attach a node to a body or the world).

        ``stiffness`` and ``damping`` are a scalar (isotropic) or 3 gains along end a's axes (the world's
        for a world point or a particle).
        """
        return self._add_potential(PotentialType.COUPLING, a, b, stiffness, 0.0, damping)

    def add_rotation_coupling(self, a: Anchor, b: Anchor, *, stiffness, damping=0.0, rest_rotation=None) -> int:
        """Rotational spring psi = 1/2 e^T K e, e = Log(R_rest^T R_a^T R_b), between the frames of two ends.

        Ends are body or robot-link frames (or the world). ``stiffness``/``damping``: scalar or 3 gains
        [N m/rad, N m s/rad] about the axes of R_a R_rest; ``rest_rotation`` (R_a^T R_b at rest) defaults
        to the current relative rotation.
        """
        for name, end in (("a", a), ("b", b)):
            if isinstance(end, Anchor) and end.kind == PointKind.PARTICLE:
                raise V.ModelError(f"add_rotation_coupling.{name}: a particle has no orientation")
        return self._add_potential(PotentialType.ROTATION, a, b, stiffness, 0.0, damping, rest_rotation)

    # -- static colliders -------------------------------------------------
    def add_collider_plane(self, *, normal=(0.0, 0.0, 1.0), point=(0.0, 0.0, 0.0), rot=None, mu=0.0) -> int:
        """Infinite plane; with ``rot`` given, its local z is the normal and local x the mu1 direction."""
        if rot is None:
            n = V.finite_array("plane.normal", normal, (3,))
            if np.linalg.norm(n) < 1e-12:
                raise V.ModelError("plane.normal: must be non-zero")
            rot = _frame_from_normal(n)
        return self._add_collider(ColliderType.PLANE, point, rot, (0.0, 0.0, 0.0), mu)

    def add_collider_box(self, pos, half_extents, *, rot=np.eye(3), mu=0.0) -> int:
        return self._add_collider(ColliderType.BOX, pos, rot, self._sizes("box.half_extents", half_extents, 3), mu)

    def add_collider_sphere(self, pos, radius, *, mu=0.0) -> int:
        return self._add_collider(ColliderType.SPHERE, pos, np.eye(3), (V.positive("sphere.radius", radius), 0, 0), mu)

    def add_collider_capsule(self, pos, radius, half_length, *, rot=np.eye(3), mu=0.0) -> int:
        """Capsule whose segment runs along its local z."""
        size = (V.positive("capsule.radius", radius), V.non_negative("capsule.half_length", half_length), 0.0)
        return self._add_collider(ColliderType.CAPSULE, pos, rot, size, mu)

    def add_collider_cylinder(self, pos, radius, half_height, *, rot=np.eye(3), mu=0.0) -> int:
        """Finite solid cylinder whose axis is its local z."""
        size = (V.positive("cylinder.radius", radius), V.positive("cylinder.half_height", half_height), 0.0)
        return self._add_collider(ColliderType.CYLINDER, pos, rot, size, mu)

    # -- finalize ---------------------------------------------------------
    def finalize(self, *, virtual_node_gain=1e5, contact_margin=0.005, restitution=0.0,
                 penetration_recovery=0.5, damping_policy=DampingPolicy.CONSTANT, integration_theta=0.5) -> Model:
        """Freeze the scene into a :class:`Model` of numpy arrays.

        Args:
            virtual_node_gain: k_v of eq. (14) [N s/m]; larger is more exact (Prop. 2).
            contact_margin: contacts are generated this far before touching [m].
            restitution: Newton restitution coefficient in [0, 1].
            penetration_recovery: fraction of a penetration removed per step, in (0, 1].
            damping_policy: E(q) policy of eq. (8).
            integration_theta: 0.5 = the paper's midpoint rule; up to 1 damps stiff modes (``Model``).
        """
        theta = V.scalar("integration_theta", integration_theta, low=0.5, high=1.0)
        kv = V.positive("virtual_node_gain", virtual_node_gain)
        margin = V.non_negative("contact_margin", contact_margin)
        rest = V.scalar("restitution", restitution, low=0.0, high=1.0)
        beta = V.scalar("penetration_recovery", penetration_recovery, low=0.0, high=1.0, low_open=True)
        try:
            policy = DampingPolicy(damping_policy)
        except ValueError as exc:
            raise V.ModelError(f"damping_policy: unknown value {damping_policy!r}") from exc

        def stack(rows, col, shape, dtype=np.float64):
            if not rows:
                return np.zeros((0,) + shape, dtype=dtype)
            return np.ascontiguousarray(np.array([r[col] for r in rows], dtype=dtype).reshape((-1,) + shape))

        rod_start = np.concatenate([[0], np.cumsum([len(b) for b in self._rods])]).astype(np.int64)
        rod_bodies = np.concatenate([np.zeros(0, np.int64)] + self._rods).astype(np.int64)
        P, B, C, U, G = self._particles, self._bodies, self._contact_points, self._potentials, self._colliders
        T = self._tets
        return Model(
            gravity=self.gravity.copy(),
            particle_count=len(P), particle_q=stack(P, 0, (3,)), particle_qd=stack(P, 1, (3,)),
            particle_mass=stack(P, 2, ()), particle_radius=stack(P, 3, ()), particle_mu=stack(P, 4, (2,)),
            body_count=len(B), body_q=stack(B, 0, (3,)), body_quat=stack(B, 1, (4,)), body_qd=stack(B, 2, (6,)),
            body_mass=stack(B, 3, ()), body_inertia=stack(B, 4, (3, 3)), body_damping=stack(B, 5, (2,)),
            contact_point_count=len(C), contact_point_body=stack(C, 0, (), np.int64),
            contact_point_local=stack(C, 1, (3,)), contact_point_radius=stack(C, 2, ()),
            contact_point_mu=stack(C, 3, (2,)), contact_point_node=stack(C, 4, (), bool),
            contact_point_chain=stack(C, 5, (), np.int64), contact_point_arc=stack(C, 6, ()),
            potential_count=len(U), potential_type=stack(U, 0, (), np.int64),
            potential_kind=stack(U, 1, (2,), np.int64),
            potential_index=stack(U, 2, (2,), np.int64), potential_local=stack(U, 3, (2, 3)),
            potential_stiffness=stack(U, 4, (3,)), potential_rest_length=stack(U, 5, ()),
            potential_damping=stack(U, 6, (3,)), potential_link=stack(U, 7, (2,), np.int64),
            potential_rest_rotation=stack(U, 8, (3, 3)), damping_policy=int(policy),
            collider_count=len(G), collider_type=stack(G, 0, (), np.int64), collider_pos=stack(G, 1, (3,)),
            collider_rot=stack(G, 2, (3, 3)), collider_size=stack(G, 3, (3,)), collider_mu=stack(G, 4, (2,)),
            virtual_node_gain=kv, contact_margin=margin, restitution=rest, penetration_recovery=beta,
            robots=tuple(r[0] for r in self._robots),
            robot_dof_offset=np.concatenate([[0], np.cumsum([r[0].dof_count for r in self._robots])]).astype(np.int64),
            robot_q=np.concatenate([np.zeros(0)] + [r[1] for r in self._robots]),
            robot_drive_stiffness=np.concatenate([np.zeros(0)] + [r[2] for r in self._robots]),
            robot_drive_damping=np.concatenate([np.zeros(0)] + [r[3] for r in self._robots]),
            robot_mu=np.array([r[4] for r in self._robots]).reshape(-1, 2),
            shape_body=stack(self._shapes, 0, (), np.int64), shape_type=stack(self._shapes, 1, (), np.int64),
            shape_pos=stack(self._shapes, 2, (3,)), shape_rot=stack(self._shapes, 3, (3, 3)),
            shape_size=stack(self._shapes, 4, (3,)), shape_mu=stack(self._shapes, 5, (2,)), integration_theta=theta,
            particle_contact=stack(P, 5, (), bool), particle_object=stack(P, 6, (), np.int64),
            tet_nodes=stack(T, 0, (4,), np.int64), tet_rest_shape_inverse=stack(T, 1, (3, 3)),
            tet_rest_volume=stack(T, 2, ()), tet_lame=stack(T, 3, (2,)), tet_damping_time=stack(T, 4, ()),
            rod_body_start=rod_start, rod_bodies=rod_bodies,
        )

    def body_mass(self, body: int) -> float:
        """Mass [kg] of a body added so far."""
        self._check_body("body_mass", body)
        return float(self._bodies[int(body)][3])

    def anchor_pose(self, a: Anchor) -> np.ndarray:
        """World pose (4x4) of an anchor's point and frame in the configuration built so far."""
        return self._anchor_pose(a, self._check_anchor("anchor_pose", a))

    # -- helpers ------------------------------------------------------------
    def _check_body(self, name, body):
        if not (0 <= int(body) < len(self._bodies)):
            raise V.ModelError(f"{name}: no body {body} (have {len(self._bodies)})")

    def _check_anchor(self, name, a: Anchor) -> int:
        """Validates an anchor; returns its robot link index (-1 unless ROBOT_LINK)."""
        if not isinstance(a, Anchor):
            raise V.ModelError(f"{name}: expected an Anchor (world_point/particle/body_point/robot_link_point), "
                               f"got {a!r}")
        if a.kind == PointKind.PARTICLE and not (0 <= a.index < len(self._particles)):
            raise V.ModelError(f"{name}: no particle {a.index} (have {len(self._particles)})")
        if a.kind == PointKind.BODY:
            self._check_body(name, a.index)
        if a.kind != PointKind.ROBOT_LINK:
            return -1
        if not (0 <= a.index < len(self._robots)):
            raise V.ModelError(f"{name}: no robot {a.index} (have {len(self._robots)})")
        art = self._robots[a.index][0]
        if isinstance(a.link, str):
            if a.link not in art.link_name:
                raise V.ModelError(f"{name}: robot {a.index} has no link {a.link!r}")
            return art.link_index(a.link)
        if not (0 <= int(a.link) < art.link_count):
            raise V.ModelError(f"{name}: robot {a.index} has no link {a.link} (have {art.link_count})")
        return int(a.link)

    def _anchor_pose(self, a: Anchor, link: int) -> np.ndarray:
        """World pose (4x4) of an anchor's point and frame in the builder's initial configuration."""
        pose = np.eye(4)
        if a.kind == PointKind.PARTICLE:
            pose[:3, 3] = self._particles[a.index][0]
        elif a.kind == PointKind.BODY:
            pose[:3, :3] = quat_to_matrix(self._bodies[a.index][1])
            pose[:3, 3] = self._bodies[a.index][0]
        elif a.kind == PointKind.ROBOT_LINK:
            kin = ArticulationKinematics(self._robots[a.index][0])
            kin.update(self._robots[a.index][1])
            pose = kin.link_pose[link].copy()
        pose[:3, 3] = pose[:3, :3] @ np.asarray(a.local) + pose[:3, 3]
        return pose

    def _add_potential(self, ptype, a, b, stiffness, rest_length, damping, rest_rotation=None) -> int:
        u = len(self._potentials)
        name = f"potential[{u}]"
        links = (self._check_anchor(f"{name}.a", a), self._check_anchor(f"{name}.b", b))
        if a.kind == PointKind.WORLD and b.kind == PointKind.WORLD:
            raise V.ModelError(f"{name}: both ends are world points; the potential would act on nothing")
        pose_a, pose_b = self._anchor_pose(a, links[0]), self._anchor_pose(b, links[1])
        if rest_length is None:  # the current distance, once the anchors are known to exist
            rest_length = float(np.linalg.norm(pose_a[:3, 3] - pose_b[:3, 3]))
        if rest_rotation is None:
            rest_rotation = pose_a[:3, :3].T @ pose_b[:3, :3]
        gains = []
        for field, value in (("stiffness", stiffness), ("damping", damping)):
            arr = np.broadcast_to(V.finite_array(f"{name}.{field}", value), (3,)).astype(float) \
                if np.ndim(value) == 0 else V.finite_array(f"{name}.{field}", value, (3,))
            if np.any(arr < 0):
                raise V.ModelError(f"{name}.{field}: must be >= 0, got {arr.tolist()}")
            gains.append(arr)
        self._potentials.append((
            int(ptype), (int(a.kind), int(b.kind)), (a.index, b.index), (a.local, b.local), gains[0],
            V.non_negative(f"{name}.rest_length", rest_length), gains[1], links,
            V.rotation_matrix(f"{name}.rest_rotation", rest_rotation),
        ))
        return u

    @staticmethod
    def _sizes(name, value, n):
        arr = V.finite_array(name, value, (n,))
        if np.any(arr <= 0):
            raise V.ModelError(f"{name}: must be > 0, got {arr.tolist()}")
        return arr

    def _add_collider(self, ctype, pos, rot, size, mu) -> int:
        c = len(self._colliders)
        self._colliders.append((
            int(ctype),
            V.finite_array(f"collider[{c}].pos", pos, (3,)),
            V.rotation_matrix(f"collider[{c}].rot", rot),
            V.finite_array(f"collider[{c}].size", size, (3,)),
            V.friction(f"collider[{c}].mu", mu),
        ))
        return c
