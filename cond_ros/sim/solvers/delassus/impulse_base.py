"""``ImpulseSolverBase``: what the impulse-space (I-FPI, Delassus-based) solvers share around their
iteration: assembling A without virtual-node coupling, the step's contact problem (``delassus.ContactProblem``),
the warm start from the previous step's forces, and the velocity from the forces.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...collision.nodalization import ContactSet, contact_keys, keyed_world_forces
from ...dynamics.assembly import LinearSystem, assemble
from ..base import SolverBase
from .operator import ContactProblem, build_contact_problem


class ImpulseSolverBase(SolverBase):
    """The common part of the impulse-space (I-FPI, Delassus-based) solvers.

    Subclasses implement :meth:`solve_contacts`. A is assembled without virtual-node coupling and
    factorized every step; the previous step's forces of contacts seen again are the warm start.

    Args:
        tolerance: on the velocity-space residual ||A^-1 J_c^T (lambda^{l+1} - lambda^l)|| [m/s].
        max_iterations: iteration cap per step.
        regularization: omega, added to the diagonal of G (the same Omega_c as COND's) [m/(N s)].
        warm_start: start from the previous step's forces of the same contacts.
    """

    name = "impulse"

    def __init__(self, model, *, tolerance=1e-8, max_iterations=1000, regularization=0.0, warm_start=True):
        super().__init__(model)
        self._set_iteration_options(tolerance, max_iterations, regularization, warm_start)
        self.reset()

    def reset(self) -> None:
        self._previous = (np.zeros(0, np.int64), np.zeros((0, 3)))  # sorted contact keys, world forces
        self.delassus_ms = 0.0

    def assemble(self, state, control, contacts, dt) -> LinearSystem:
        return assemble(self.model, contacts.pattern, state, control, dt)

    def initial_forces(self, contacts: ContactSet) -> np.ndarray:
        """lambda^0: the previous step's forces of the same contacts, re-expressed in today's frames."""
        force = np.zeros((contacts.count, 3))
        keys_old, world_old = self._previous
        if self.warm_start and len(keys_old) and contacts.count:
            keys = contact_keys(contacts)
            pos = np.minimum(np.searchsorted(keys_old, keys), len(keys_old) - 1)
            found = keys_old[pos] == keys
            force[found] = np.einsum("mij,mj->mi", contacts.frame[found], world_old[pos[found]])
        return force

    def solve_contacts(self, problem: ContactProblem, force: np.ndarray):
        """Solve the contact problem from the start ``force`` (m, 3): return (force, iterations, residual)."""
        raise NotImplementedError

    def solve(self, system: LinearSystem, contacts: ContactSet, dt: float):
        if contacts.count == 0:
            v = spla.spsolve(sp.csc_matrix((system.data, system.indices, system.indptr),
                                                shape=(system.dof_count,) * 2), system.b)
            self.delassus_ms = 0.0
            self._previous = (np.zeros(0, np.int64), np.zeros((0, 3)))
            return np.atleast_1d(v), np.zeros((0, 3)), 0, 0.0
        problem = build_contact_problem(system, contacts, self.regularization)
        self.delassus_ms = problem.factor_ms + problem.delassus_ms
        force, iterations, residual = self.solve_contacts(problem, self.initial_forces(contacts))
        force = np.asarray(force, float).reshape(contacts.count, 3)
        keys = contact_keys(contacts)
        self._previous = keyed_world_forces(keys, contacts.frame, np.ascontiguousarray(force))
        return problem.velocity(force.reshape(-1)), force, iterations, residual
