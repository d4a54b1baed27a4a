"""What the node publishes, as plain arrays (no ROS import): joint states, link and sensor frames,
cable polylines, collider shapes, and which steps each topic is published on."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..sim import ArticulationKinematics, ColliderType, Model, State, quat_to_matrix

WORLD_FRAME = "world"


class RateDivider:
    """Publishes on every ``n``-th step: ``rate`` [Hz] of simulated time > 0, every step at 0, never below."""

    def __init__(self, rate: float, dt: float):
        self.every = 0 if rate < 0 else (1 if rate == 0 else max(1, int(round(1.0 / (rate * dt)))))

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0


@dataclasses.dataclass(frozen=True)
class JointStateLayout:
    """Every moving joint of every robot (mimic joints included): q_joint = multiplier q[dof] + offset."""

    names: list
    dof: np.ndarray
    multiplier: np.ndarray
    offset: np.ndarray

    @classmethod
    def from_model(cls, model: Model) -> "JointStateLayout":
        rows = []  # (dof, is a mimic joint, name, multiplier, offset)
        for r, art in enumerate(model.robots):
            first = int(model.robot_dof_offset[r])
            for link in range(art.link_count):
                name, dof = art.joint_name[link], int(art.joint_dof[link])
                if dof >= 0:
                    rows.append((first + dof, name not in art.dof_name, name, art.joint_multiplier[link],
                                 art.joint_offset[link]))
        rows.sort(key=lambda row: row[:2])  # leaders in DOF order, each followed by its mimic joints
        return cls([row[2] for row in rows], np.array([row[0] for row in rows], np.int64),
                   np.array([row[3] for row in rows], float), np.array([row[4] for row in rows], float))

    def values(self, state: State) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions and velocities in :attr:`names` order."""
        return (self.multiplier * state.robot_q[self.dof] + self.offset,
                self.multiplier * state.robot_qd[self.dof])


def _relative(parent: np.ndarray, child: np.ndarray) -> np.ndarray:
    return np.linalg.solve(parent, child)


def robot_link_poses(model: Model, robot_q: np.ndarray, kinematics: list) -> list:
    """Per robot, the world poses of its links at the joint positions ``robot_q`` (all robots'), (links, 4, 4);
    ``kinematics``: :func:`robot_kinematics` of ``model``, updated in place."""
    out = []
    for r, kin in enumerate(kinematics):
        kin.update(robot_q[model.robot_dof_offset[r]:model.robot_dof_offset[r + 1]])
        out.append(kin.link_pose.copy())
    return out


def link_frames(model: Model, state: State, kinematics: list, sensors=()) -> list:
    """(parent frame, child frame, 4x4 pose of the child in the parent) of every robot link and of each
    F/T sensor frame (``frame: sensor``): the TF tree below ``world``."""
    out = []
    for art, poses in zip(model.robots, robot_link_poses(model, state.robot_q, kinematics)):
        for link in range(art.link_count):
            parent = art.link_parent[link]
            if parent < 0:
                out.append((WORLD_FRAME, art.link_name[link], poses[link]))
            else:
                out.append((art.link_name[parent], art.link_name[link], _relative(poses[parent], poses[link])))
    for sensor in sensors:
        if sensor.spec.frame == "sensor":
            out.append((sensor.spec.child_link, sensor.spec.name, np.array(sensor.spec.sensor_pose)))
    return out


def robot_kinematics(model: Model) -> list:
    return [ArticulationKinematics(art) for art in model.robots]


def sensor_frame_id(spec) -> str:
    """The frame an F/T reading is expressed in (a link, or the sensor's own frame named after it)."""
    return {"child": spec.child_link, "parent": spec.parent_link}.get(spec.frame, spec.name)


def cable_polyline(model: Model, state: State, rod) -> np.ndarray:
    """The cable's centreline: its start, every segment centre, its end [m], (segments + 2, 3)."""
    centres = state.body_q[rod.bodies]
    first, last = rod.bodies[0], rod.bodies[-1]
    axis_first = quat_to_matrix(state.body_quat[first])[:, 2]
    axis_last = quat_to_matrix(state.body_quat[last])[:, 2]
    start = centres[0] - 0.5 * rod.segment_lengths[0] * axis_first
    end = centres[-1] + 0.5 * rod.segment_lengths[-1] * axis_last
    return np.vstack([start, centres, end])


def soft_body_surface(state: State, body) -> np.ndarray:
    """An FEM body's boundary triangles at ``state``: their corners [m], (3 F, 3), three per face in the mesh's
    outward (right-hand) order, as a TRIANGLE_LIST marker takes them."""
    return state.particle_q[body.surface_faces].reshape(-1, 3)


def contact_force_segments(contacts, scale: float) -> np.ndarray:
    """Each contact's force as a segment from its point to point + ``scale`` [m/N] x the force on its node side
    (the moving side: a link, a cable segment, an FEM node): (2 m, 3) points [m], as a LINE_LIST takes them."""
    if contacts is None or contacts.count == 0:
        return np.zeros((0, 3))
    start = contacts.position
    return np.stack([start, start + scale * contacts.world_forces()], axis=1).reshape(-1, 3)


@dataclasses.dataclass(frozen=True)
class ColliderShape:
    """A static collider as a visual: kind (box, sphere, cylinder, capsule, plane), pose, full size [m]."""

    kind: str
    pose: np.ndarray
    size: np.ndarray


def collider_shapes(model: Model) -> list:
    """Static colliders with their full extents (planes as a 4 m x 4 m x 1 mm slab under their surface)."""
    shapes = []
    for i in range(model.collider_count):
        pose = np.eye(4)
        pose[:3, :3] = model.collider_rot[i]
        pose[:3, 3] = model.collider_pos[i]
        kind, size = ColliderType(int(model.collider_type[i])), model.collider_size[i]
        if kind == ColliderType.BOX:
            shapes.append(ColliderShape("box", pose, 2.0 * size))
        elif kind == ColliderType.SPHERE:
            shapes.append(ColliderShape("sphere", pose, np.full(3, 2.0 * size[0])))
        elif kind in (ColliderType.CYLINDER, ColliderType.CAPSULE):
            height = 2.0 * size[1] + (2.0 * size[0] if kind == ColliderType.CAPSULE else 0.0)
            shapes.append(ColliderShape(kind.name.lower(), pose, np.array([2 * size[0], 2 * size[0], height])))
        elif kind == ColliderType.PLANE:
            slab = pose.copy()
            slab[:3, 3] -= pose[:3, 2] * 0.0005
            shapes.append(ColliderShape("plane", slab, np.array([4.0, 4.0, 0.001])))
    return shapes
