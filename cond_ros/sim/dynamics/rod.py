"""Cosserat-rod cables as chains of rigid segments (the paper's cable, Sec. V-C5: 320 segments, 6 DOF each).

Each segment is a rigid body (solid cylinder, local z along the rod). Consecutive segments are joined
at their common end point by two potentials of form (7):

- stretch/shear: a COUPLING of the two end points, K = diag(kappa G A, kappa G A, E A) / l along the
  segment's axes (kappa: Cowper's shear coefficient of a circular section, 6 (1 + nu) / (7 + 6 nu));
- bend/twist: a ROTATION between the two frames, K = diag(E I, E I, G J) / l.

A chain of rigid segments with these joint springs has the rod's axial compliance L / (E A) and bending
compliance per curvature 1 / (E I); the continuum limit is reached as O(1/N). Damping is stiffness
proportional, C = ``damping_time`` K (internal friction of the cable; it also damps the stiff axial
modes that the midpoint rule would otherwise keep). ``segment_damping`` adds, as the authors' released
implementation does, an absolute damping of every segment's linear and angular velocity (the release
uses 0.01 N s/m and 0.01 N m s/rad per segment; docs/cable_model.md). It is per segment, so the
cable's total damping grows with the segment count; it is what holds the authors' cable straight while
the tool pushes it, and it makes each segment's rotation rows diagonally dominant, which V-FPI needs.

The centre of every segment is a contact node (``add_contact_point(..., node=True)``): contacts act on
the segment's translational DOFs, as on a particle, with the cable radius as the node's sphere radius.
Rod self-contact is node-node (``dynamic_contacts``). Friction therefore acts at the centreline, not at
the surface: it exerts no torque about the cable axis (twist is carried by the rod's own potentials).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from .. import validate as V
from ..builder import Anchor, ModelBuilder, body_point, world_point
from ..model import PointKind
from .elasticity import shear_modulus


@dataclasses.dataclass(frozen=True)
class RodMaterial:
    """Cross-section and material of a round cable.

    Attributes:
        radius: [m]. density: [kg/m^3]. youngs_modulus: E [Pa]. poisson_ratio: nu in [0, 0.5).
        mu: friction coefficient of the cable surface.
        damping_time: C = damping_time * K for every joint potential [s].
        segment_damping: (linear [N s/m], angular [N m s/rad]) damping of every segment's absolute
            velocity, the force -c v_hat on each segment (not per length: the total grows with N).
    """

    radius: float
    density: float
    youngs_modulus: float
    poisson_ratio: float
    mu: float = 0.0
    damping_time: float = 1e-3
    segment_damping: tuple = (0.0, 0.0)

    def __post_init__(self):
        V.positive("rod.radius", self.radius)
        V.positive("rod.density", self.density)
        V.positive("rod.youngs_modulus", self.youngs_modulus)
        V.scalar("rod.poisson_ratio", self.poisson_ratio, low=0.0, high=0.5)
        if self.poisson_ratio >= 0.5:
            raise V.ModelError(f"rod.poisson_ratio: must be < 0.5, got {self.poisson_ratio}")
        V.non_negative("rod.mu", self.mu)
        V.non_negative("rod.damping_time", self.damping_time)
        damping = V.finite_array("rod.segment_damping", self.segment_damping, (2,))
        if np.any(damping < 0.0):
            raise V.ModelError(f"rod.segment_damping: must be >= 0, got {damping.tolist()}")
        object.__setattr__(self, "segment_damping", tuple(float(c) for c in damping))

    @property
    def area(self) -> float:
        return np.pi * self.radius ** 2

    @property
    def second_moment(self) -> float:
        """I of the section about a diameter [m^4]."""
        return np.pi * self.radius ** 4 / 4.0

    @property
    def shear_modulus(self) -> float:
        """G [Pa]."""
        return shear_modulus(self.youngs_modulus, self.poisson_ratio)

    @property
    def shear_coefficient(self) -> float:
        """Cowper's kappa for a solid circular section."""
        nu = self.poisson_ratio
        return 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)

    @property
    def line_density(self) -> float:
        """Mass per length [kg/m]."""
        return self.density * self.area

    def joint_gains(self, segment_length: float):
        """(stretch/shear gains [N/m], bend/twist gains [N m/rad]) of one joint between segments."""
        ea = self.youngs_modulus * self.area
        kga = self.shear_coefficient * self.shear_modulus * self.area
        ei = self.youngs_modulus * self.second_moment
        gj = self.shear_modulus * 2.0 * self.second_moment
        return (np.array([kga, kga, ea]) / segment_length, np.array([ei, ei, gj]) / segment_length)


@dataclasses.dataclass(frozen=True)
class Rod:
    """Indices of a rod added to a :class:`ModelBuilder` (see :func:`add_rod`).

    Attributes:
        bodies: the segments' body indices, from the start to the end, (segments,).
        contact_points: the node contact point of each segment (-1 where contact is off), (segments,).
        joints: (coupling, rotation) potential indices of each inner joint, (segments - 1, 2).
        segment_lengths: each segment's length [m], (segments,). material: the :class:`RodMaterial`.
        start, end: end points at rest [m]. rotation: the first segment's rest orientation (local z along the rod).
    """

    bodies: np.ndarray
    contact_points: np.ndarray
    joints: np.ndarray
    segment_lengths: np.ndarray
    material: RodMaterial
    start: np.ndarray
    end: np.ndarray
    rotation: np.ndarray

    @property
    def segments(self) -> int:
        return len(self.bodies)

    @property
    def segment_length(self) -> float:
        """Mean segment length [m]."""
        return float(np.mean(self.segment_lengths))

    @property
    def mass(self) -> float:
        return self.material.line_density * float(np.sum(self.segment_lengths))

    def end_segment(self, which: str) -> int:
        """Index (along the rod) of the segment at its start or end."""
        if which not in ("start", "end"):
            raise V.ModelError(f"rod end: expected 'start' or 'end', got {which!r}")
        return 0 if which == "start" else self.segments - 1

    def end_anchor(self, which: str) -> Anchor:
        """The rod's start or end point as a potential anchor on its first or last segment."""
        k = self.end_segment(which)
        half = 0.5 * self.segment_lengths[k]
        return body_point(int(self.bodies[k]), (0.0, 0.0, -half if which == "start" else half))


def _matrix_to_quat(rot: np.ndarray) -> np.ndarray:
    x, y, z, w = Rotation.from_matrix(rot).as_quat()
    return np.array([w, x, y, z])


def _frames_along(tangents: np.ndarray) -> np.ndarray:
    """Rotations whose z axes are ``tangents``, x parallel-transported from segment to segment (no twist)."""
    frames = np.empty((len(tangents), 3, 3))
    z = tangents[0]
    helper = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(helper, z)
    for k, z in enumerate(tangents):
        x = x - (x @ z) * z
        x /= np.linalg.norm(x)
        frames[k] = np.column_stack([x, np.cross(z, x), z])
    return frames


def add_rod(builder: ModelBuilder, start, end, segments: int, material: RodMaterial, **kwargs) -> Rod:
    """A straight rod from ``start`` to ``end`` (its rest shape) of ``segments`` rigid segments.

    Keyword arguments are those of :func:`add_rod_polyline`.
    """
    p0 = V.finite_array("rod.start", start, (3,))
    p1 = V.finite_array("rod.end", end, (3,))
    n = int(V.scalar("rod.segments", segments, low=2))
    if np.linalg.norm(p1 - p0) <= 0.0:
        raise V.ModelError("rod: start and end coincide")
    return add_rod_polyline(builder, np.linspace(p0, p1, n + 1), None, material, **kwargs)


def add_rod_polyline(builder: ModelBuilder, points, segment_length, material: RodMaterial, *, chain: int = 0,
                     contact_skip_start: float = 0.0, contact_skip_end: float = 0.0) -> Rod:
    """A rod whose rest shape is the polyline ``points``, resampled into segments of ~``segment_length``.

    ``segment_length`` None keeps the given points as the segment ends. The rest shape carries no
    bending or twist energy (a cable laid along a curve keeps that curve when unloaded).

    Args:
        chain: self-contact chain id (>= 0; node points of one chain touch when far apart along it).
        contact_skip_start, contact_skip_end: lengths [m] at either end without contact nodes (held in
            a gripper or glued to a post).
    """
    pts = V.finite_array("rod.points", points)
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 2:
        raise V.ModelError(f"rod.points: expected (k >= 2, 3) points, got shape {pts.shape}")
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    if np.any(steps <= 0.0):
        raise V.ModelError("rod.points: consecutive points coincide")
    arc_at = np.concatenate([[0.0], np.cumsum(steps)])
    length = float(arc_at[-1])
    if segment_length is not None:
        n = max(2, int(round(length / V.positive("rod.segment_length", segment_length))))
        s = np.linspace(0.0, length, n + 1)
        pts = np.column_stack([np.interp(s, arc_at, pts[:, k]) for k in range(3)])
    n = len(pts) - 1
    if n < 2:
        raise V.ModelError(f"rod.segments: need at least 2, got {n}")
    if material.radius * 2.0 > length:
        raise V.ModelError(f"rod: radius {material.radius} m is too large for length {length} m")
    chords = np.diff(pts, axis=0)
    seg_lengths = np.linalg.norm(chords, axis=1)
    frames = _frames_along(chords / seg_lengths[:, None])
    bodies, contact_points, arcs = [], [], np.concatenate([[0.0], np.cumsum(seg_lengths)])
    for i in range(n):
        seg = seg_lengths[i]
        mass = material.line_density * seg
        r2 = material.radius ** 2
        inertia = np.diag([mass * (3.0 * r2 + seg ** 2) / 12.0] * 2 + [mass * r2 / 2.0])
        b = builder.add_body(0.5 * (pts[i] + pts[i + 1]), mass=mass, inertia=inertia, quat=_matrix_to_quat(frames[i]),
                             damping=material.segment_damping)
        bodies.append(b)
        arc = 0.5 * (arcs[i] + arcs[i + 1])
        if arc < contact_skip_start or arc > arcs[-1] - contact_skip_end:
            contact_points.append(-1)
            continue
        contact_points.append(builder.add_contact_point(b, (0.0, 0.0, 0.0), radius=material.radius, mu=material.mu,
                                                        node=True, chain=chain, arc=arc))
    builder.add_rod_segments(bodies)
    joints = []
    for i in range(n - 1):
        a, b = bodies[i], bodies[i + 1]
        # a joint's gains use the mean length of the two segments it joins
        linear, angular = material.joint_gains(0.5 * (seg_lengths[i] + seg_lengths[i + 1]))
        joints.append((
            builder.add_coupling(body_point(a, (0.0, 0.0, 0.5 * seg_lengths[i])),
                                 body_point(b, (0.0, 0.0, -0.5 * seg_lengths[i + 1])),
                                 stiffness=linear, damping=material.damping_time * linear),
            builder.add_rotation_coupling(body_point(a), body_point(b), stiffness=angular,
                                          damping=material.damping_time * angular),
        ))
    return Rod(np.array(bodies, np.int64), np.array(contact_points, np.int64),
               np.array(joints, np.int64).reshape(-1, 2), seg_lengths, material, pts[0].copy(),
               pts[-1].copy(), frames[0].copy())


def clamp_rod_end(builder: ModelBuilder, rod: Rod, which: str, anchor: Anchor, *, stiffness_scale: float = 1.0,
                  rotation: bool = True):
    """Weld the rod's start or end to ``anchor`` (a world point, a body point or a robot-link point).

    The weld is one more rod joint (same gains, times ``stiffness_scale``) between the rod's end point and
    the anchor, position and orientation, held at their relative pose at build time. With ``rotation``
    False it holds the position only (a ball joint: the end turns freely, as both ends of the authors'
    released cable do). Returns the (coupling, rotation) potential indices (rotation -1 for a ball joint).
    """
    scale = V.positive("clamp.stiffness_scale", stiffness_scale)
    end = rod.end_anchor(which)
    linear, angular = rod.material.joint_gains(rod.segment_lengths[rod.end_segment(which)])
    linear, angular = scale * linear, scale * angular
    damping = rod.material.damping_time
    coupling = builder.add_coupling(end, anchor, stiffness=linear, damping=damping * linear)
    if not rotation:
        return coupling, -1
    frame = world_point((0.0, 0.0, 0.0)) if anchor.kind == PointKind.WORLD else anchor._replace(local=(0.0, 0.0, 0.0))
    return coupling, builder.add_rotation_coupling(body_point(end.index), frame, stiffness=angular,
                                                   damping=damping * angular)
