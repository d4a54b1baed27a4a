"""Inverse kinematics for a tool frame: damped least squares on the position and orientation error.

Used to turn Cartesian tool targets (the cable-winding trajectory, pick-and-place waypoints) into
joint targets for the robot's drives.
"""
from __future__ import annotations

import numpy as np

from ..validate import ModelError
from .articulation import ArticulationKinematics


def rotation_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """World rotation vector taking ``current`` to ``target`` (log map of target current^T)."""
    rel = target @ current.T
    cos = np.clip((np.trace(rel) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    axis = np.array([rel[2, 1] - rel[1, 2], rel[0, 2] - rel[2, 0], rel[1, 0] - rel[0, 1]])
    if angle < 1e-9:
        return 0.5 * axis
    if np.pi - angle < 1e-6:  # axis from the symmetric part when sin(angle) ~ 0
        values, vectors = np.linalg.eigh(0.5 * (rel + rel.T))
        return angle * vectors[:, np.argmax(values)]
    return angle / (2.0 * np.sin(angle)) * axis


def solve_ik(kin: ArticulationKinematics, link: int, target: np.ndarray, q0, *, offset=np.eye(4), dofs=None,
             orientation=True, tolerance=1e-10, max_iterations=200, damping=1e-6) -> np.ndarray:
    """Joint positions placing ``link`` @ ``offset`` at the 4x4 world pose ``target``.

    Args:
        kin: kinematics of the robot (its configuration is left at the solution).
        link: index of the link carrying the tool frame.
        target: desired world pose of the tool frame (position only if ``orientation`` is False).
        q0: start configuration (the previous waypoint, for continuity).
        offset: tool frame in the link frame.
        dofs: indices of the joints IK may move (default: all); others keep q0.
        tolerance: on the stacked position [m] and rotation [rad] error norm.
        damping: Levenberg-Marquardt damping (squared) on the joint step.

    Raises:
        ModelError: if the target is not reached (unreachable, or blocked by joint limits).
    """
    art = kin.art
    q = np.array(q0, dtype=float)
    dofs = np.arange(art.dof_count) if dofs is None else np.asarray(dofs)
    lower, upper = art.dof_lower[dofs], art.dof_upper[dofs]
    rows = slice(0, 6) if orientation else slice(0, 3)
    error = np.inf
    for _ in range(max_iterations):
        kin.update(q)
        pose = kin.link_pose[link] @ offset
        err = np.concatenate([target[:3, 3] - pose[:3, 3], rotation_error(pose[:3, :3], target[:3, :3])])[rows]
        error = np.linalg.norm(err)
        if error < tolerance:
            return q
        jac = kin.jacobian(link, pose[:3, 3])[rows][:, dofs]
        step = jac.T @ np.linalg.solve(jac @ jac.T + damping * np.eye(jac.shape[0]), err)
        q[dofs] = np.clip(q[dofs] + step, lower, upper)
    raise ModelError(f"ik: target for link {art.link_name[link]!r} not reached (residual {error:.3g}); "
                     f"unreachable or blocked by joint limits")
