"""The static wrench transform: against the physics of a force applied at a point."""
import numpy as np

from cond_ros.bags.frames import WrenchTransform


def test_against_a_point_force():
    """A force F at point x gives, in any frame, torque (x - origin) x F about that frame's origin: express the
    same load in two frames independently and check that the transform maps one onto the other."""
    rng = np.random.default_rng(0)
    pose_s = WrenchTransform.from_xyz_rpy(rng.normal(size=3), rng.normal(size=3))  # S in world
    pose_t = WrenchTransform.from_xyz_rpy(rng.normal(size=3), rng.normal(size=3))  # T in world
    force, point = rng.normal(size=3), rng.normal(size=3)  # world

    def in_frame(pose):
        r, p = pose.rotation, pose.translation
        return np.concatenate([r.T @ force, r.T @ np.cross(point - p, force)])

    r_ts = pose_t.rotation.T @ pose_s.rotation  # pose of S in T
    p_ts = pose_t.rotation.T @ (pose_s.translation - pose_t.translation)
    transform = WrenchTransform(r_ts, p_ts)
    assert np.allclose(transform.apply(in_frame(pose_s)[None]), in_frame(pose_t), atol=1e-12)


def test_identity_pure_rotation_and_rpy_round_trip():
    """Identity changes nothing; a quarter turn about z maps x to y; to_dict gives back the rpy."""
    values = np.arange(12.0).reshape(2, 6)
    assert np.array_equal(WrenchTransform.identity().apply(values), values)
    quarter = WrenchTransform.from_xyz_rpy([0, 0, 0], [0, 0, np.pi / 2])
    assert np.allclose(quarter.apply([[1, 0, 0, 0, 0, 1]]), [[0, 1, 0, 0, 0, 1]])
    offset = WrenchTransform.from_xyz_rpy([0.1, 0, 0], [0.2, -0.3, 0.4])
    assert np.allclose(offset.to_dict()["rpy"], [0.2, -0.3, 0.4]) and offset.to_dict()["translation"] == [0.1, 0, 0]
    shifted = WrenchTransform.from_xyz_rpy([0, 0, 0.5], [0, 0, 0]).apply([[2.0, 0, 0, 0, 0, 0]])
    assert np.allclose(shifted, [[2, 0, 0, 0, 1.0, 0]])  # p x f = (0, 0, 0.5) x (2, 0, 0)
