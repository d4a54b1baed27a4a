"""A rigid body bolted to the world through a 6-axis F/T sensor, and the wrench that sensor reads.

The paper's soft-gripper object (Sec. V-C6) is "connected to" an ATI Gamma: it is a dynamic body whose
only support is the sensor. We model the sensor as what it physically is, a stiff elastic element: a
zero-length translational coupling and a rotational coupling of form (7) between a point of the body and
the same point fixed in the world. The reading is the force and couple those two potentials transmitted
during the step, taken from the step's solved velocities (the same linearization the solver used), so a
body at rest reads exactly its weight plus what the environment pushes on it.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation

from ..builder import ModelBuilder, body_point, world_point
from ..dynamics.potentials import PotentialEnds, potential_forces
from ..model import Model, State


@dataclasses.dataclass(frozen=True)
class BodyMount:
    """A body on a stiff 6-axis mount; ``point`` [m] is the sensor's reference point in the world."""

    name: str
    body: int
    point: np.ndarray
    translation: int  # potential index of the translational coupling (end a: body, end b: world)
    rotation: int  # potential index of the rotational coupling (end a: world, end b: body)

    def wrench(self, model: Model, state_start: State, state_end: State, dt: float):
        """(force [N], torque [N m] about ``point``), world axes: what the body pushed on the sensor
        during the step from ``state_start`` to ``state_end``."""
        which = [self.translation, self.rotation]
        ends = PotentialEnds(model, state_start, max([6] + [art.dof_count for art in model.robots]), potentials=which)
        theta = model.integration_theta
        v_hat = theta * state_end.velocity() + (1.0 - theta) * state_start.velocity()
        force, torque = potential_forces(model, ends, v_hat, dt, potentials=which)
        f = force[0, 1]  # the world ends' share: what goes into the sensor
        tau = torque[1, 0] + np.cross(ends.pos[0, 1] - self.point, f)
        return f.copy(), tau


def mount_body(builder: ModelBuilder, body: int, local_point, *, name: str, stiffness, damping,
               rotation_stiffness, rotation_damping) -> BodyMount:
    """Holds ``body`` where it is now by a stiff mount at its ``local_point`` (body coordinates).

    Gains are 3 per-axis values along the body's axes: [N/m], [N s/m], [N m/rad], [N m s/rad]. The mount
    is preloaded with the body's weight, so a body left alone starts and stays at rest: started unloaded,
    it would ring in the mount's stiff mode, which the midpoint rule (theta = 0.5) does not damp. Call
    before ``finalize``; the body's pose must already be set.
    """
    local = np.asarray(local_point, float)
    pose = builder.anchor_pose(body_point(body, local))
    rot, at = pose[:3, :3], pose[:3, 3]
    com = builder.anchor_pose(body_point(body))[:3, 3]
    weight = builder.body_mass(body) * np.asarray(builder.gravity, float)
    k = np.broadcast_to(np.asarray(stiffness, float), 3)
    k_rot = np.broadcast_to(np.asarray(rotation_stiffness, float), 3)
    # translation: -R K e = -weight at rest, e = R^T (p_body - p_world)
    point = at - rot @ ((rot.T @ weight) / k)
    translation = builder.add_coupling(body_point(body, local), world_point(point), stiffness=k, damping=damping)
    # rotation: the support acts at the mount point, off the COM, so the couple -(p - com) x (-weight)
    # must come from the rotational spring: -R_rest K e = couple, e = Log(R_rest^T R)
    couple = np.cross(at - com, weight)
    rest = rot
    for _ in range(3):  # e ~ |couple| / k_rot is tiny: a fixed point of R_rest = R Exp(-e) converges at once
        e = -(rest.T @ couple) / k_rot
        rest = rot @ Rotation.from_rotvec(-e).as_matrix()
    rotation = builder.add_rotation_coupling(world_point(at), body_point(body), stiffness=k_rot,
                                             damping=rotation_damping, rest_rotation=rest)
    return BodyMount(name, body, at, translation, rotation)
