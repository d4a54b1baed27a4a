"""Rigid-body kinematics kernels: quaternions, point Jacobians, integration.

Velocities are world-frame (linear COM velocity, angular velocity); the
Jacobian of a point at world offset r from the COM is [I, -[r]x].
"""
import numpy as np

from ..jit import kernel, leaf_kernel


@kernel
def quat_to_matrix(q):
    """Rotation matrix of the unit quaternion q = (w, x, y, z)."""
    out = np.empty((3, 3))
    quat_to_matrix_into(q[0], q[1], q[2], q[3], out)
    return out


@leaf_kernel
def quat_to_matrix_into(w, x, y, z, out):
    """:func:`quat_to_matrix` of (w, x, y, z) into ``out`` (3, 3), for kernels that call it per element."""
    out[0, 0] = 1 - 2 * (y * y + z * z)
    out[0, 1] = 2 * (x * y - w * z)
    out[0, 2] = 2 * (x * z + w * y)
    out[1, 0] = 2 * (x * y + w * z)
    out[1, 1] = 1 - 2 * (x * x + z * z)
    out[1, 2] = 2 * (y * z - w * x)
    out[2, 0] = 2 * (x * z - w * y)
    out[2, 1] = 2 * (y * z + w * x)
    out[2, 2] = 1 - 2 * (x * x + y * y)


@kernel
def matrix_to_quat(rot):
    """The unit quaternion (w, x, y, z) of rotation matrix ``rot`` (3 x 3, or the rotation block of a larger
    one). Shepperd's method: the square root is taken of the largest of 1 + 2 r_ii - trace (i = x, y, z) and
    1 + trace, first largest on a tie, so no component is found by dividing by a small one; that component
    comes out positive. These are scipy's choices, so the sign is scipy's too: a tool pointing down (a half
    turn, w ~ 0) keeps x > 0 instead of flipping sign as w wiggles through zero. One call costs ~1 us where
    scipy's Rotation.from_matrix(...).as_quat() costs ~60 (it checks and batches in Python)."""
    trace = rot[0, 0] + rot[1, 1] + rot[2, 2]
    if rot[0, 0] >= rot[1, 1] and rot[0, 0] >= rot[2, 2] and rot[0, 0] >= trace:
        w, x, y, z = rot[2, 1] - rot[1, 2], 1.0 - trace + 2.0 * rot[0, 0], rot[1, 0] + rot[0, 1], rot[2, 0] + rot[0, 2]
    elif rot[1, 1] >= rot[2, 2] and rot[1, 1] >= trace:
        w, x, y, z = rot[0, 2] - rot[2, 0], rot[0, 1] + rot[1, 0], 1.0 - trace + 2.0 * rot[1, 1], rot[2, 1] + rot[1, 2]
    elif rot[2, 2] >= trace:
        w, x, y, z = rot[1, 0] - rot[0, 1], rot[0, 2] + rot[2, 0], rot[1, 2] + rot[2, 1], 1.0 - trace + 2.0 * rot[2, 2]
    else:
        w, x, y, z = 1.0 + trace, rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]
    scale = 1.0 / np.sqrt(w * w + x * x + y * y + z * z)
    return w * scale, x * scale, y * scale, z * scale


@leaf_kernel
def cross3(a, b):
    """a x b of 3-tuples, with np.cross's operations in its order (the same bits) and no array per call."""
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


def cross_vectors(a, b) -> np.ndarray:
    """a x b of two 3-vectors as an array, for Python callers: :func:`cross3`'s (np.cross's) bits without
    np.cross's ~10 us of argument handling."""
    return np.array(cross3((a[0], a[1], a[2]), (b[0], b[1], b[2])))


@leaf_kernel
def quat_integrate_into(w, x, y, z, omega0, omega1, omega2, dt, out, row):
    """The unit quaternion (w, x, y, z) advanced by the world angular velocity (omega0, omega1, omega2) over
    ``dt``, exp(omega dt) * q renormalised, into ``out[row]``: written into the caller's array, as kernels call it
    per body (two arrays made per body cost ~0.1 us each)."""
    angle = np.sqrt(omega0 ** 2 + omega1 ** 2 + omega2 ** 2) * dt
    if angle < 1e-12:
        # Second-order small-angle form keeps the step smooth through zero rotation.
        half = 0.5 * dt
        dw, dx, dy, dz = 1.0 - angle * angle / 8.0, omega0 * half, omega1 * half, omega2 * half
    else:
        s = np.sin(0.5 * angle) / (angle / dt)
        dw, dx, dy, dz = np.cos(0.5 * angle), omega0 * s, omega1 * s, omega2 * s
    o0 = dw * w - dx * x - dy * y - dz * z
    o1 = dw * x + dx * w + dy * z - dz * y
    o2 = dw * y - dx * z + dy * w + dz * x
    o3 = dw * z + dx * y - dy * x + dz * w
    norm = np.sqrt(o0 ** 2 + o1 ** 2 + o2 ** 2 + o3 ** 2)
    out[row, 0], out[row, 1], out[row, 2], out[row, 3] = o0 / norm, o1 / norm, o2 / norm, o3 / norm


@kernel
def point_jacobian(size, arm):
    """The 3 x size Jacobian [I, -[arm]x] (or I for a particle)."""
    jac = np.zeros((3, size))
    jac[0, 0] = 1.0
    jac[1, 1] = 1.0
    jac[2, 2] = 1.0
    if size == 6:
        jac[0, 4] = arm[2]
        jac[0, 5] = -arm[1]
        jac[1, 3] = -arm[2]
        jac[1, 5] = arm[0]
        jac[2, 3] = arm[1]
        jac[2, 4] = -arm[0]
    return jac


@kernel
def rotation_log(rot):
    """The rotation vector (axis * angle) of a rotation matrix, robust near 0 and pi."""
    out = np.empty(3)
    rotation_log_into(rot, out)
    return out


@leaf_kernel
def rotation_log_into(rot, out):
    """:func:`rotation_log` of ``rot`` into ``out`` (3,), for kernels that call it per element (no array made)."""
    cos_angle = min(1.0, max(-1.0, 0.5 * (rot[0, 0] + rot[1, 1] + rot[2, 2] - 1.0)))
    angle = np.arccos(cos_angle)
    vee0, vee1, vee2 = rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]
    if angle < 1e-6:
        out[0], out[1], out[2] = 0.5 * vee0, 0.5 * vee1, 0.5 * vee2  # sin(angle) ~ angle
        return
    if angle < np.pi - 1e-6:
        scale = angle / (2.0 * np.sin(angle))
        out[0], out[1], out[2] = scale * vee0, scale * vee1, scale * vee2
        return
    # Near pi: the axis from the diagonal of (R + I) / 2 = a a^T.
    k = 0
    for j in range(1, 3):
        if rot[j, j] > rot[k, k]:
            k = j
    out[k] = np.sqrt(max(0.0, 0.5 * (rot[k, k] + 1.0)))
    for j in range(3):
        if j != k:
            out[j] = 0.5 * (rot[j, k] + rot[k, j]) / (2.0 * out[k])
    norm = np.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2)
    sign = -1.0 if out[0] * vee0 + out[1] * vee1 + out[2] * vee2 < 0.0 else 1.0
    for j in range(3):
        out[j] = angle * (sign * (out[j] / norm))
