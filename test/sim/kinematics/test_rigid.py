"""Rigid-body kinematics kernels against scipy's rotations (an independent implementation)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.sim.kinematics.rigid import matrix_to_quat, quat_to_matrix


def _wxyz(xyzw):
    """scipy's (x, y, z, w) as (w, x, y, z)."""
    x, y, z, w = xyzw
    return np.array([w, x, y, z])


@pytest.mark.parametrize("seed", range(5))
def test_matrix_to_quat_matches_scipy_on_random_rotations(seed):
    for rot in Rotation.random(200, random_state=seed):
        # the same quaternion, sign included (scipy's branch choice: the largest component positive)
        matrix = rot.as_matrix()
        np.testing.assert_allclose(matrix_to_quat(matrix), _wxyz(Rotation.from_matrix(matrix).as_quat()), rtol=0,
                                   atol=1e-14)


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, -1, 1)])
@pytest.mark.parametrize("angle", [0.0, 1e-9, 2.0, np.pi - 1e-6, np.pi])
def test_matrix_to_quat_on_each_branch(axis, angle):
    """Half turns put the largest term on the diagonal (each of Shepperd's branches), ties included (an axis
    along x + y); zero puts it on the trace. Same quaternion as scipy's, sign included."""
    rotvec = angle * np.asarray(axis, float) / np.linalg.norm(axis)
    rot = Rotation.from_rotvec(rotvec)
    q = np.array(matrix_to_quat(rot.as_matrix()))
    assert abs(np.linalg.norm(q) - 1.0) < 1e-15
    np.testing.assert_allclose(quat_to_matrix(q), rot.as_matrix(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(q, _wxyz(Rotation.from_matrix(rot.as_matrix()).as_quat()), rtol=0, atol=1e-14)


def test_matrix_to_quat_reads_the_rotation_block_of_a_pose():
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_euler("xyz", [0.3, -1.2, 2.5]).as_matrix()
    pose[:3, 3] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(matrix_to_quat(pose), matrix_to_quat(np.ascontiguousarray(pose[:3, :3])), atol=0)


def test_cross_vectors_has_np_cross_bits():
    """The F/T sensor's cross products: bit for bit numpy's, which the stored force traces were made with."""
    from cond_ros.sim.kinematics.rigid import cross_vectors
    rng = np.random.default_rng(7)
    for a, b in rng.normal(size=(200, 2, 3)) * 10.0 ** rng.integers(-6, 6, size=(200, 2, 1)):
        np.testing.assert_array_equal(cross_vectors(a, b), np.cross(a, b))
