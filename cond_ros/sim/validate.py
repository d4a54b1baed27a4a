"""Input checks shared by the builder and the simulator.

Every check raises :class:`ModelError` naming the offending field, before
anything runs, so a bad scene never produces a half-configured simulator.
"""
from __future__ import annotations

import numpy as np


class ModelError(ValueError):
    """An invalid physical parameter; the message names the field."""


def finite_array(name: str, value, shape=None) -> np.ndarray:
    """``value`` as a float64 array with every entry finite (and the given shape)."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{name}: expected numbers, got {value!r}") from exc
    if shape is not None and arr.shape != tuple(shape):
        raise ModelError(f"{name}: expected shape {tuple(shape)}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ModelError(f"{name}: must be finite, got {value!r}")
    return arr


def scalar(name: str, value, *, low=None, high=None, low_open=False) -> float:
    """``value`` as a finite float within [low, high] ((low, high] if ``low_open``)."""
    if isinstance(value, bool):
        raise ModelError(f"{name}: expected a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{name}: expected a number, got {value!r}") from exc
    if not np.isfinite(x):
        raise ModelError(f"{name}: must be finite, got {value!r}")
    if low is not None and (x < low or (low_open and x == low)):
        bound = ">" if low_open else ">="
        raise ModelError(f"{name}: must be {bound} {low}, got {x}")
    if high is not None and x > high:
        raise ModelError(f"{name}: must be <= {high}, got {x}")
    return x


def positive(name: str, value) -> float:
    return scalar(name, value, low=0.0, low_open=True)


def non_negative(name: str, value) -> float:
    return scalar(name, value, low=0.0)


def friction(name: str, mu) -> np.ndarray:
    """A friction spec (scalar mu or (mu1, mu2)) as a (2,) array of non-negative values."""
    arr = finite_array(name, mu)
    if arr.ndim == 0:
        arr = np.array([arr, arr])
    if arr.shape != (2,):
        raise ModelError(f"{name}: expected mu or (mu1, mu2), got {mu!r}")
    if np.any(arr < 0):
        raise ModelError(f"{name}: friction coefficients must be >= 0, got {mu!r}")
    return arr


def spd_matrix(name: str, value) -> np.ndarray:
    """A symmetric positive definite 3x3 matrix."""
    mat = finite_array(name, value, (3, 3))
    if not np.allclose(mat, mat.T, rtol=1e-9, atol=1e-12):
        raise ModelError(f"{name}: must be symmetric, got {mat.tolist()}")
    if np.min(np.linalg.eigvalsh(mat)) <= 0.0:
        raise ModelError(f"{name}: must be positive definite, eigenvalues {np.linalg.eigvalsh(mat).tolist()}")
    return mat


def rotation_matrix(name: str, value) -> np.ndarray:
    rot = finite_array(name, value, (3, 3))
    if not np.allclose(rot @ rot.T, np.eye(3), atol=1e-9) or np.linalg.det(rot) < 0:
        raise ModelError(f"{name}: must be a rotation matrix (orthonormal, det +1)")
    return rot


def unit_quaternion(name: str, value) -> np.ndarray:
    quat = finite_array(name, value, (4,))
    norm = np.linalg.norm(quat)
    if norm < 1e-9:
        raise ModelError(f"{name}: quaternion (w, x, y, z) must be non-zero")
    return quat / norm
