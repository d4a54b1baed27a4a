"""The Delassus operator of the impulse-space baselines against dense references."""
import pathlib
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.solvers.delassus.operator import SparseFactor, build_contact_problem, contact_jacobian
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import DT, box_on_plane, nodal_problem, ref  # noqa: E402


def a_o(system):
    n = system.dof_count
    return sp.csr_matrix((system.data, system.indices, system.indptr), shape=(n, n))


@pytest.mark.parametrize("columns", [1, 5, 70])
def test_sparse_factor_solves_many_right_hand_sides(columns):
    system, _ = nodal_problem(3, n_nodes=40)
    rhs = np.random.default_rng(0).normal(size=(system.dof_count, columns))
    x = SparseFactor(a_o(system)).solve(rhs)
    np.testing.assert_allclose(x, np.linalg.solve(a_o(system).toarray(), rhs), rtol=1e-10, atol=1e-12)


def test_sparse_factor_rejects_an_indefinite_matrix():
    with pytest.raises(ModelError, match="positive definite"):
        SparseFactor(sp.csr_matrix(np.diag([1.0, -2.0, 3.0])))


@pytest.mark.parametrize("seed", range(4))
def test_nodal_delassus_matches_dense_reference(seed):
    system, contacts = nodal_problem(seed)
    j_ref = ref.contact_jacobian(contacts.dof_a, contacts.dof_b, contacts.frame, system.dof_count)
    np.testing.assert_allclose(contact_jacobian(system.dof_count, contacts).toarray(), j_ref.toarray(), atol=1e-15)
    problem = build_contact_problem(system, contacts, regularization=1e-3)
    g_ref, b_ref = ref.delassus(a_o(system), j_ref, system.b)
    scale = np.abs(g_ref).max()
    np.testing.assert_allclose(problem.delassus, g_ref + 1e-3 * np.eye(len(g_ref)), rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(problem.free_velocity, b_ref + contacts.offset.ravel(), rtol=0,
                               atol=1e-10 * np.abs(b_ref).max())
    lam = np.random.default_rng(seed).normal(size=3 * contacts.count)
    v = problem.velocity(lam)
    np.testing.assert_allclose(a_o(system) @ v, system.b + j_ref.T @ lam, rtol=0,
                               atol=1e-9 * np.abs(system.b).max())


def test_virtual_node_contacts_use_the_real_point_jacobian():
    """A box on a plane: each contact's row of J_c is R_m [I, -[r]x] on the body (the point velocity),
    with A_o free of any virtual-node coupling."""
    model, state, contacts, _ = box_on_plane(4)
    system = assemble(model, build_pattern(model), state, model.control(), DT)
    jac = contact_jacobian(system.dof_count, contacts).toarray()
    rng = np.random.default_rng(1)
    twist = rng.normal(size=6)
    arms = contacts.position - state.body_q[0]
    point_velocity = twist[:3] + np.cross(twist[3:], arms)
    np.testing.assert_allclose(jac @ twist, np.einsum("mij,mj->mi", contacts.frame, point_velocity).ravel(),
                               atol=1e-14)
