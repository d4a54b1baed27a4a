"""What the viewer draws, as plain arrays (no viser import): the scene's static layout, built once, and one
:class:`Frame` per sample of the simulation, taken from a state that the stepping thread has already replaced.

``Simulator.state`` is replaced, never mutated, by each step, and each sensor's ``last`` reading is replaced
whole too: a viewer thread that holds those references reads a consistent step without a lock and without
ever holding the physics.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import trimesh

from ..cosim import ColliderShape, collider_shapes, robot_kinematics, robot_link_poses
from ..sim import ColliderType, GeometryType, Model, State, matrix_to_quat

ROBOT_COLOR = (200, 200, 205)
CABLE_COLOR = (230, 130, 30)
SOFT_BODY_COLOR = (70, 140, 230)
BODY_COLOR = (120, 190, 120)
COLLIDER_COLOR = (150, 150, 160)


@dataclasses.dataclass(frozen=True)
class Mesh:
    """Triangles in a local frame: vertices (V, 3) [m], faces (F, 3)."""

    vertices: np.ndarray
    faces: np.ndarray


@dataclasses.dataclass(frozen=True)
class RobotLayout:
    name: str
    link_names: list
    link_meshes: dict  # link index -> Mesh in the link frame (links without geometry have none)
    source: str  # "visual meshes" or "collision primitives"


@dataclasses.dataclass(frozen=True)
class CableLayout:
    name: str
    radius: float
    segment_lengths: np.ndarray
    bodies: np.ndarray


@dataclasses.dataclass(frozen=True)
class SoftBodyLayout:
    name: str
    faces: np.ndarray  # (F, 3) indices into ``nodes``
    nodes: np.ndarray  # the particle index of each surface vertex
    node_count: int  # of the whole tetrahedral mesh


@dataclasses.dataclass(frozen=True)
class Layout:
    """The parts of a scene that never change: what each moving thing looks like, and the static colliders."""

    dt: float
    robots: list
    cables: list
    soft_bodies: list
    bodies: list  # (body index, Mesh in the body frame) of free rigid bodies with a shape
    colliders: list  # ColliderShape
    sensors: list  # F/T sensor names


@dataclasses.dataclass(frozen=True)
class Frame:
    """One sample of the simulation, world coordinates [m, N, N m]."""

    step: int
    time: float
    link_poses: list  # per robot: (links, 4, 4)
    cable_poses: list  # per cable: (segment centres (S, 3), quaternions w x y z (S, 4))
    soft_body_vertices: list  # per soft body: (surface nodes, 3)
    body_poses: list  # per entry of Layout.bodies: (position (3,), quaternion (4,))
    contact_points: np.ndarray  # (C, 3)
    contact_forces: np.ndarray  # (C, 3), on the moving side
    ft: list  # per sensor: (world pose of its reading frame (4, 4), force (3,), torque (3,)) world axes, or None
    iterations: int = 0
    residual: float = 0.0
    real_time_factor: float = 0.0


def _primitive(kind: int, size: np.ndarray) -> trimesh.Trimesh | None:
    if kind == GeometryType.BOX:
        return trimesh.creation.box(extents=2.0 * size)
    if kind == GeometryType.SPHERE:
        return trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    if kind == GeometryType.CAPSULE:
        return trimesh.creation.capsule(height=2.0 * size[1], radius=size[0], count=[12, 12])
    if kind == GeometryType.CYLINDER:
        return trimesh.creation.cylinder(radius=size[0], height=2.0 * size[1], sections=16)
    return None


def _merge(parts: list) -> Mesh | None:
    if not parts:
        return None
    mesh = trimesh.util.concatenate(parts)
    return Mesh(np.asarray(mesh.vertices, np.float32), np.asarray(mesh.faces, np.uint32))


def _collision_meshes(art) -> dict:
    """Each link's collision primitives (the ones the contacts use) merged into one mesh in the link frame."""
    parts: dict = {}
    for g in range(len(art.geom_link)):
        mesh = _primitive(int(art.geom_type[g]), art.geom_size[g])
        if mesh is not None:
            mesh.apply_transform(art.geom_origin[g])
            parts.setdefault(int(art.geom_link[g]), []).append(mesh)
    return {link: _merge(meshes) for link, meshes in parts.items()}


def _visual_meshes(art, urdf_path: str) -> dict:
    """Each link's URDF visual geometry (boxes, cylinders, spheres and meshes trimesh can load), in the link
    frame; empty when the URDF has no visual geometry or its meshes cannot be found."""
    import yourdfpy
    try:
        urdf = yourdfpy.URDF.load(urdf_path, build_scene_graph=False, load_meshes=False)
    except Exception:  # noqa: BLE001 (the physics loaded the file; the viewer then falls back to primitives)
        return {}
    out = {}
    for link, name in enumerate(art.link_name):
        parts = []
        for visual in urdf.link_map[name].visuals if name in urdf.link_map else []:
            geometry, mesh = visual.geometry, None
            if geometry.box is not None:
                mesh = trimesh.creation.box(extents=geometry.box.size)
            elif geometry.cylinder is not None:
                mesh = trimesh.creation.cylinder(radius=geometry.cylinder.radius, height=geometry.cylinder.length)
            elif geometry.sphere is not None:
                mesh = trimesh.creation.icosphere(subdivisions=2, radius=geometry.sphere.radius)
            elif geometry.mesh is not None:
                try:
                    mesh = trimesh.load(urdf._filename_handler(geometry.mesh.filename), force="mesh")
                except Exception:  # noqa: BLE001 (a missing mesh file: this link's primitives stand in)
                    return {}
                if geometry.mesh.scale is not None:
                    mesh.apply_scale(geometry.mesh.scale)
            if mesh is not None:
                if visual.origin is not None:
                    mesh.apply_transform(visual.origin)
                parts.append(mesh)
        if parts:
            out[link] = _merge(parts)
    return out


def _body_meshes(model: Model, rod_bodies: set) -> list:
    """(body, Mesh) of each free rigid body with box or sphere shapes; cable segments are drawn as the cable."""
    parts: dict = {}
    for s in range(len(model.shape_body)):
        body = int(model.shape_body[s])
        if body in rod_bodies:
            continue
        kind, size = int(model.shape_type[s]), model.shape_size[s]
        if kind == ColliderType.BOX:
            mesh = trimesh.creation.box(extents=2.0 * size)
        elif kind == ColliderType.SPHERE:
            mesh = trimesh.creation.icosphere(subdivisions=2, radius=size[0])
        else:
            continue
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = model.shape_rot[s], model.shape_pos[s]
        mesh.apply_transform(pose)
        parts.setdefault(body, []).append(mesh)
    return [(body, _merge(meshes)) for body, meshes in sorted(parts.items())]


def scene_layout(scene) -> Layout:
    """The :class:`Layout` of a loaded :class:`~cond_ros.scenes.Scene`."""
    model = scene.simulator.model
    files = list(scene.robot_files) or [(art.name, None) for art in model.robots]  # (scene's name, URDF path)
    robots = []
    for art, (name, urdf) in zip(model.robots, files):
        meshes = _visual_meshes(art, urdf) if urdf else {}
        source = "visual meshes" if meshes else "collision primitives"
        robots.append(RobotLayout(name, list(art.link_name), meshes or _collision_meshes(art), source))
    cables = [CableLayout(f"cable{i}", float(rod.material.radius), np.asarray(rod.segment_lengths, float),
                          np.asarray(rod.bodies)) for i, rod in enumerate(scene.cables)]
    soft = []
    for i, body in enumerate(scene.soft_bodies):
        nodes, faces = np.unique(body.surface_faces, return_inverse=True)
        soft.append(SoftBodyLayout(f"soft_body{i}", faces.reshape(-1, 3).astype(np.uint32), nodes,
                                   len(body.particles)))
    rod_bodies = {int(b) for rod in scene.cables for b in rod.bodies}
    return Layout(scene.simulator.dt, robots, cables, soft, _body_meshes(model, rod_bodies),
                  list(collider_shapes(model)), [s.spec.name for s in scene.sensors])


class FrameSampler:
    """Makes :class:`Frame` objects of a scene; has its own kinematics, so it may run on another thread than
    the stepping one."""

    def __init__(self, scene, layout: Layout):
        self.scene = scene
        self.layout = layout
        self.kinematics = robot_kinematics(scene.simulator.model)

    def link_poses(self, robot_q: np.ndarray) -> list:
        return robot_link_poses(self.scene.simulator.model, robot_q, self.kinematics)

    def frame(self, step: int, state: State, contacts, stats=None, real_time_factor: float = 0.0) -> Frame:
        """The frame of ``state`` (and the step's ``contacts``, solver ``stats`` and the sensors' last
        readings)."""
        ft = []
        for sensor in self.scene.sensors:
            last = sensor.last
            if last is None:
                ft.append(None)
                continue
            reading, wrench = last
            pose = sensor.reading_pose(wrench)
            rot = pose[:3, :3]
            ft.append((pose, rot @ reading.true_wrench[:3], rot @ reading.true_wrench[3:]))
        if contacts is not None and contacts.count > 0:
            points, forces = np.array(contacts.position), np.array(contacts.world_forces())
        else:
            points, forces = np.zeros((0, 3)), np.zeros((0, 3))
        return Frame(step, float(state.time), self.link_poses(state.robot_q),
                     [(state.body_q[c.bodies].copy(), state.body_quat[c.bodies].copy()) for c in self.layout.cables],
                     [state.particle_q[s.nodes].copy() for s in self.layout.soft_bodies],
                     [(state.body_q[b].copy(), state.body_quat[b].copy()) for b, _ in self.layout.bodies],
                     points, forces, ft,
                     iterations=int(stats.iterations) if stats is not None else 0,
                     residual=float(stats.residual) if stats is not None else 0.0,
                     real_time_factor=real_time_factor)


def collider_mesh(shape: ColliderShape) -> Mesh:
    """A static collider as triangles in its own frame (capsules drawn as their cylinder plus end spheres)."""
    size = shape.size
    if shape.kind in ("box", "plane"):
        mesh = trimesh.creation.box(extents=size)
    elif shape.kind == "sphere":
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=size[0] / 2)
    elif shape.kind == "capsule":
        mesh = trimesh.creation.capsule(height=size[2] - size[0], radius=size[0] / 2, count=[16, 16])
    else:
        mesh = trimesh.creation.cylinder(radius=size[0] / 2, height=size[2], sections=32)
    return Mesh(np.asarray(mesh.vertices, np.float32), np.asarray(mesh.faces, np.uint32))


def wxyz(rotation: np.ndarray) -> np.ndarray:
    return np.asarray(matrix_to_quat(rotation), float)


def nice_scale(largest: float, length: float) -> float:
    """A round force scale [m/N] that draws ``largest`` [N] at most ``length`` [m] long (1, 2 or 5 x 10^k)."""
    if not largest > 0:
        return length
    raw = length / largest
    exponent = math.floor(math.log10(raw))
    for mantissa in (5.0, 2.0, 1.0):
        if mantissa * 10 ** exponent <= raw:
            return mantissa * 10 ** exponent
    return 10 ** exponent
