"""A static transform of wrenches from one sensor frame into another.

A wrench measured in frame S (force f, torque tau about S's origin) is the same physical load as
f' = R f and tau' = R tau + p x f' in frame T, where R rotates S's axes into T's and p is S's origin in
T's coordinates (the pose of S in T). For the comparison, S is the sim's frame and T the real sensor's.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation


@dataclasses.dataclass(frozen=True)
class WrenchTransform:
    """The pose of the source frame in the target frame: ``rotation`` (3, 3) and ``translation`` (3,) [m]."""

    rotation: np.ndarray
    translation: np.ndarray

    @classmethod
    def from_xyz_rpy(cls, xyz, rpy) -> "WrenchTransform":
        """From a position [m] and fixed-axis roll, pitch, yaw [rad] (URDF convention, as the scene files)."""
        xyz = np.asarray(xyz, dtype=np.float64).reshape(3)
        rpy = np.asarray(rpy, dtype=np.float64).reshape(3)
        if not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(rpy))):
            raise ValueError(f"transform: expected finite numbers, got xyz {xyz.tolist()} rpy {rpy.tolist()}")
        return cls(Rotation.from_euler("xyz", rpy).as_matrix(), xyz)

    @classmethod
    def identity(cls) -> "WrenchTransform":
        return cls(np.eye(3), np.zeros(3))

    def apply(self, values: np.ndarray) -> np.ndarray:
        """Wrenches (n, 6) in the source frame -> the same wrenches (n, 6) in the target frame."""
        values = np.asarray(values, dtype=np.float64).reshape(-1, 6)
        force = values[:, :3] @ self.rotation.T
        torque = values[:, 3:] @ self.rotation.T + np.cross(self.translation, force)
        return np.hstack([force, torque])

    def to_dict(self) -> dict:
        return dict(translation=self.translation.tolist(),
                    rpy=Rotation.from_matrix(self.rotation).as_euler("xyz").tolist())
