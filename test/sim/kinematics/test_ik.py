"""IK places the Panda's tool point at reachable poses (checked by forward kinematics)."""
import os

import numpy as np
import pytest

from cond_ros.sim import ArticulationKinematics, ModelError, load_urdf
from cond_ros.sim.kinematics.ik import rotation_error, solve_ik

PANDA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "urdf", "panda.urdf")


def test_rotation_error_is_the_rotation_vector():
    """rotation_error recovers angle * axis for random rotations, including angles near pi."""
    from scipy.spatial.transform import Rotation
    rng = np.random.default_rng(0)
    for angle in [1e-12, 0.3, 2.0, np.pi - 1e-8]:
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        start = Rotation.random(random_state=1).as_matrix()
        target = Rotation.from_rotvec(angle * axis).as_matrix() @ start
        err = rotation_error(start, target)
        assert np.allclose(Rotation.from_rotvec(err).as_matrix() @ start, target, atol=1e-7)


def test_ik_reaches_poses_produced_by_forward_kinematics():
    """Poses of the TCP at random configurations are reached again from a different start to 1e-9."""
    art = load_urdf(PANDA, mesh_primitives=False)
    kin = ArticulationKinematics(art)
    tcp = art.link_index("panda_tcp")
    rng = np.random.default_rng(3)
    arm = np.arange(7)
    home = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.0])
    for _ in range(5):
        q = home.copy()
        q[arm] += rng.uniform(-0.4, 0.4, 7)
        kin.update(q)
        target = kin.link_pose[tcp].copy()
        solution = solve_ik(kin, tcp, target, home, dofs=arm)
        kin.update(solution)
        assert np.linalg.norm(kin.link_pose[tcp][:3, 3] - target[:3, 3]) < 1e-9
        assert np.linalg.norm(rotation_error(kin.link_pose[tcp][:3, :3], target[:3, :3])) < 1e-9


def test_ik_reports_an_unreachable_target():
    """A target 3 m away raises ModelError naming the link."""
    art = load_urdf(PANDA, mesh_primitives=False)
    kin = ArticulationKinematics(art)
    target = np.eye(4)
    target[:3, 3] = (3.0, 0.0, 0.5)
    with pytest.raises(ModelError, match="panda_tcp"):
        solve_ik(kin, art.link_index("panda_tcp"), target, np.zeros(art.dof_count), dofs=np.arange(7),
                 max_iterations=50)
