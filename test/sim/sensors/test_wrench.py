"""The external wrench on a robot subtree (sensors/wrench.py's kernel) against numpy on the same lists."""
import numpy as np
import pytest

from cond_ros.sim.sensors.wrench import external_wrench


def _numpy_reference(frame, force, position, point_group, link, dof_b, vn_group, dof_count, group, in_subtree,
                     end_force, end_torque, end_pos, end_potential, end_side):
    """The lists JointWrenchProbe.measure built before the kernel, summed by numpy: a zero row, the side-a contacts
    on the subtree, the side-b contacts whose virtual node is on the robot, then the potential ends."""
    world = np.einsum("mij,mi->mj", frame, force)
    forces, points, couples = [np.zeros(3)], [np.zeros(3)], [np.zeros(3)]
    for m in np.flatnonzero((point_group == group) & (link[:, 0] >= 0)):
        if in_subtree[link[m, 0]]:
            forces.append(world[m])
            points.append(position[m])
    for m in np.flatnonzero(link[:, 1] >= 0):
        k = (dof_b[m] - dof_count) // 3
        if in_subtree[link[m, 1]] and 0 <= k < len(vn_group) and vn_group[k] == group:
            forces.append(-world[m])
            points.append(position[m])
    for u, x in zip(end_potential, end_side):
        forces.append(end_force[u, x])
        points.append(end_pos[u, x])
        couples.append(end_torque[u, x])
    forces, points = np.array(forces), np.array(points)
    return forces.sum(axis=0), np.cross(points, forces).sum(axis=0) + np.sum(couples, axis=0)


@pytest.mark.parametrize("seed", range(5))
def test_external_wrench_has_the_bits_of_numpy_on_the_same_lists(seed):
    rng = np.random.default_rng(seed)
    m, links, dof_count, vn = 40, 6, 30, 12
    frame = rng.standard_normal((m, 3, 3))
    force = rng.standard_normal((m, 3)) * 10.0 ** rng.uniform(-3, 2, (m, 1))
    position = rng.standard_normal((m, 3))
    point_group = rng.integers(0, 3, m)
    link = rng.integers(-1, links, (m, 2))
    # side b: a node DOF (below dof_count), or one of the virtual nodes' first DOFs
    dof_b = np.where(rng.random(m) < 0.5, rng.integers(0, dof_count, m), dof_count + 3 * rng.integers(0, vn, m))
    vn_group = rng.integers(0, 3, vn)
    in_subtree = rng.random(links) < 0.6
    end_force, end_torque, end_pos = (rng.standard_normal((4, 2, 3)) for _ in range(3))
    end_potential, end_side = np.array([0, 2, 3], np.int64), np.array([1, 0, 1], np.int64)
    args = (frame, force, position, point_group, link, dof_b, vn_group, dof_count, 1, in_subtree, end_force,
            end_torque, end_pos, end_potential, end_side)
    expected_force, expected_torque = _numpy_reference(*args)
    got_force, got_torque = external_wrench(*args)
    assert np.array_equal(got_force, expected_force)
    assert np.array_equal(got_torque, expected_torque)


def test_external_wrench_of_nothing_is_zero():
    empty = (np.zeros((0, 3, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int64), np.zeros((0, 2), np.int64),
             np.zeros(0, np.int64), np.zeros(0, np.int64))
    force, torque = external_wrench(*empty, 10, 0, np.ones(3, bool), np.zeros((0, 2, 3)), np.zeros((0, 2, 3)),
                                    np.zeros((0, 2, 3)), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert np.array_equal(force, np.zeros(3)) and np.array_equal(torque, np.zeros(3))
