"""COND: contact nodalization and diagonalization with velocity fixed-point iteration.

Lee, Lee & Lee, "Large-Dimensional Multibody Dynamics Simulation Using
Contact Nodalization and Diagonalization" (``shared/papers``), Alg. 1-3.
"""
from __future__ import annotations

import numpy as np

from ...collision.nodalization import ContactSet, contact_keys, keyed_world_forces
from ...dynamics.assembly import AugmentedSystem, LinearSystem
from ...linalg import virtual_node_velocities
from ...validate import ModelError, scalar
from ..base import SimulationError, SolverBase, require_isotropic_friction
from ..friction_cone import PROJECTION_PROXIMAL, PROJECTION_STRICT, project_cone
from .coarse_space import (coarse_basis, coarse_operator, extend_pattern, has_row_pattern, product_terms, row_pattern,
                           rows_are_static)
from .fixed_point import (CoarseSpace, FixedPointOptions, NodeContacts, StepWeights,
                          contact_velocities, velocity_fixed_point, warm_start_owners)
from .weights import (BLOCK_LARGEST_EIGENVALUE, POWER_ITERATIONS, WEIGHTS_BB1, WEIGHTS_BB2, WEIGHTS_BB_ALTERNATING,
                      WEIGHTS_BLOCK, WEIGHTS_FROBENIUS, block_layout, block_weights, frobenius_terms, frobenius_weights,
                      largest_eigenvalue)

PROJECTIONS = {"strict": PROJECTION_STRICT, "proximal": PROJECTION_PROXIMAL}
WEIGHTS = {"frobenius": WEIGHTS_FROBENIUS, "bb1": WEIGHTS_BB1, "bb2": WEIGHTS_BB2,
           "bb": WEIGHTS_BB_ALTERNATING, "block": WEIGHTS_BLOCK}
NO_BLOCKS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))


class SolverCOND(SolverBase):
    """The COND contact solver.

    Each V-FPI iteration takes a gradient step (20) with a diagonal step-size
    matrix W, solves the surrogate contact problem (23) in one shot per contact
    (Alg. 2, exact because the surrogate Delassus operator is diagonal,
    Prop. 3), and updates the velocity (24); optional Chebyshev acceleration
    (Alg. 3) with the spectral-radius estimate (39).

    Args:
        projection: "strict" (exact Signorini-Coulomb (11); anisotropic cones by
            numeric ellipse projection, Prop. 6) or "proximal" (the convex CCP
            relaxation (28)/(36), isotropic only).
        weights: W of Sec. IV-C: "frobenius" (IV-C1), Barzilai-Borwein "bb1", "bb2" or "bb"
            (alternating) (IV-C2), or "block" (inverse diagonal blocks, scaled; not in the paper, for
            rods and robots whose rows are far from diagonally dominant: see ``weights.py``).
        frobenius_reuse_steps: keep a Frobenius or block W for this many steps while the
            set of contact and virtual nodes is unchanged (the W only affects convergence speed).
        chebyshev: Chebyshev acceleration (Alg. 3).
        chebyshev_start: l_s, the iteration at which acceleration begins.
        under_relaxation: u in (0, 1], applied with Chebyshev.
        tolerance: theta_th on ||v^{l+1} - v^l|| [m/s].
        tolerance_reference_dofs: R > 0: V-FPI also stops when the root-mean-square change per DOF is below the
            one ``tolerance`` allows on R DOFs, so theta_th = tolerance sqrt(max(n, R) / R) on a model of n DOFs (the
            model's, not the step's augmented size, which changes with its contacts): up to R DOFs the paper's
            theta_th, beyond them no tighter a tolerance per DOF than on R (as the RMS norms of ODE codes keep a
            tolerance independent of the system's size). 0 (default): theta_th = ``tolerance`` on any model (the
            paper's Alg. 1). theta's 2-norm over all DOFs grows as sqrt(n) for the same change per DOF, so at a
            fixed theta_th a finer discretization of the same body is solved to a tighter tolerance per DOF, with
            more iterations (panda_cable: 13.8 / 14.1 / 15.5 / 17.0 at 160 / 320 / 640 / 1280 segments).
        max_iterations: l_max.
        regularization: omega of the invertible contact model, Omega_c = omega I
            (Sec. III-E1) [m/(N s)]; 0 for the hard contact model.
        warm_start: start from the previous step's v_hat (virtual nodes from J_v v_hat, Sec. V-A5).
        force_warm_start: also warm-start every virtual-node owner (a rigid body, or a particle with
            several contacts) from the previous step's forces of the same contacts, by solving the
            reduced dynamics (18) on the owner's own block. Not in the paper: V-FPI corrects the mode in
            which an owner and its virtual nodes move together by only ~M_hat / k_v per iteration (a
            0.5 kg box at k_v = 1e5 needs ~2000 iterations per step without it). Only the start changes.
        coarse_correction: after every contact solve, add a Galerkin correction on a small coarse space
            (``coarse_space.py``: each FEM body's polynomial displacement fields of degree <= 2, each
            rigid body's and robot's DOFs) that accounts for the active contacts (``coarse_correction``
            in ``fixed_point.py``). Not in the paper: V-FPI's diagonal W corrects those smooth motions
            of stiff FEM bodies only slowly. The fixed point is unchanged. Needs :meth:`step` (or
            :meth:`prepare` before :meth:`solve`), and a fixed W ("frobenius" or "block").

    Raises :class:`SimulationError` when the iteration diverges (a non-finite theta).

    Limitations:
        Anisotropic friction requires the strict projection. Convergence of the
        strict operator is guaranteed only for completely-nodal systems at small
        dt (Thm. 1); the proximal operator always converges (Thm. 2).
    """

    name = "cond"

    def __init__(self, model, *, projection="strict", weights="frobenius", frobenius_reuse_steps=1, chebyshev=True,
                 chebyshev_start=5, under_relaxation=0.9, tolerance=1e-8, max_iterations=1000, regularization=0.0,
                 warm_start=True, force_warm_start=True, coarse_correction=False, tolerance_reference_dofs=0):
        super().__init__(model)
        if projection not in PROJECTIONS:
            raise ModelError(f"projection: expected one of {sorted(PROJECTIONS)}, got {projection!r}")
        if weights not in WEIGHTS:
            raise ModelError(f"weights: expected one of {sorted(WEIGHTS)}, got {weights!r}")
        if coarse_correction and weights not in ("frobenius", "block"):
            # G's contact rows are the surrogate stiffness 1 / Gamma of one W; a BB W changes every iteration,
            # and on the soft-ball grip V-FPI then diverged (bb1) or stalled (bb, bb2) where plain BB converged
            raise ModelError(f"coarse_correction: needs weights 'frobenius' or 'block' (a fixed W), got {weights!r}")
        self.projection = projection
        self.weights = weights
        self.frobenius_reuse_steps = int(scalar("frobenius_reuse_steps", frobenius_reuse_steps, low=1))
        self.chebyshev = bool(chebyshev)
        self.chebyshev_start = int(scalar("chebyshev_start", chebyshev_start, low=0))
        self.under_relaxation = scalar("under_relaxation", under_relaxation, low=0.0, high=1.0, low_open=True)
        self._set_iteration_options(tolerance, max_iterations, regularization, warm_start)
        reference = scalar("tolerance_reference_dofs", tolerance_reference_dofs, low=0)
        if reference != int(reference):
            raise ModelError(f"tolerance_reference_dofs: expected a whole number of DOFs, got {reference}")
        self.tolerance_reference_dofs = int(reference)
        self.force_warm_start = bool(force_warm_start)
        self.coarse_correction = bool(coarse_correction)
        self._coarse_space = None
        self._last_coarse = None  # (the last basis, its original rows' row_pattern, A_o P's terms)
        self.reset()

    def reset(self) -> None:
        self._v_hat = None
        self._w_cache = None  # (key, age, (diagonal w over original + virtual rows, blocks))
        self._previous_forces = (np.zeros(0, np.int64), np.zeros((0, 3)))  # (sorted contact keys, world forces)

    @property
    def stopping_threshold(self) -> float:
        """theta_th on this solver's model [m/s]: ``tolerance``, widened to the same tolerance per DOF as on
        ``tolerance_reference_dofs`` DOFs on a larger model (read at every solve: ``tolerance`` may be changed after
        the solver is made)."""
        reference = self.tolerance_reference_dofs
        if reference == 0 or self.model.dof_count <= reference:
            return self.tolerance
        return self.tolerance * float(np.sqrt(self.model.dof_count / reference))

    def _weights(self, system: LinearSystem, augmented: AugmentedSystem, contacts: ContactSet):
        """W as (diagonal, (block_dof, block_size, block_ptr, block_data)); cached for reuse (``augmented``:
        ``system.augmented()``)."""
        key = (system.dof_count, system.vn_dof.tobytes(), contacts.dof_a.tobytes(), contacts.dof_b.tobytes())
        cache = self._w_cache
        if cache is not None and cache[0] == key and cache[1] < self.frobenius_reuse_steps:
            self._w_cache = (key, cache[1] + 1, cache[2])
            return cache[2]
        w = np.empty(system.size)
        if self.weights == "block":
            weights = self._block_weights(system, augmented, contacts, w)
        else:
            diag = np.empty(system.size)
            norm2 = np.empty(system.size)
            frobenius_terms(augmented, diag, norm2)
            frobenius_weights(diag, norm2, contacts.dof_a, contacts.dof_b, w)
            weights = (w, NO_BLOCKS)
        self._w_cache = (key, 1, weights)
        return weights

    def _block_weights(self, system: LinearSystem, augmented: AugmentedSystem, contacts: ContactSet, w: np.ndarray):
        pattern = contacts.pattern
        node = np.zeros(system.dof_count, bool)
        for ends in (contacts.dof_a, contacts.dof_b):
            node[ends[(ends >= 0) & (ends < system.dof_count)]] = True
        blocks = block_layout(pattern.group_dof, pattern.group_size, pattern.group_kind, node)
        block_data = np.empty(blocks[2][-1])
        block_weights(system.indptr, system.indices, system.data, system.virtual_node_gain, system.vn_count,
                      contacts.dof_a, contacts.dof_b, *blocks, w, block_data)
        largest = largest_eigenvalue(augmented, w, *blocks, block_data, POWER_ITERATIONS)
        # power iteration approaches the largest eigenvalue from below: keep a margin
        alpha = min(1.0, BLOCK_LARGEST_EIGENVALUE / (1.05 * largest))
        w *= alpha
        block_data *= alpha
        return w, (*blocks, block_data)

    def _warm_start_owners(self, system: LinearSystem, contacts: ContactSet, keys: np.ndarray, v: np.ndarray) -> None:
        """Apply :func:`warm_start_owners` with the previous forces of contacts seen again (``keys``:
        :func:`contact_keys` of ``contacts``)."""
        pattern = contacts.pattern
        warm_start_owners(system.indptr, system.indices, system.data, system.b, system.virtual_node_gain,
                          system.vn_dof, system.vn_size, system.vn_jac, contacts.vn_group, pattern.block_slot,
                          pattern.diag_pair, contacts.dof_a, contacts.dof_b, keys, *self._previous_forces, v)

    def prepare(self, state, contacts: ContactSet) -> None:
        """The step's coarse space (``coarse_correction`` only)."""
        if self.coarse_correction:
            model, last = self.model, self._last_coarse
            basis = coarse_basis(model, state, contacts.vn_dof, contacts.vn_size, contacts.vn_jac,
                                 previous=last[0] if last is not None else None)
            n_o = model.dof_count
            # the nonzeros of the rows on the original DOFs are scanned once per model when those rows are reused,
            # checked against the last step's otherwise, and A_o P's structure is rebuilt only when they change (an
            # FEM body's never do)
            if last is not None and (rows_are_static(model) or has_row_pattern(basis[:n_o], *last[1])):
                original, product = last[1], last[2]
            else:
                original = row_pattern(basis[:n_o], 0)
                pattern = contacts.pattern
                product = product_terms(pattern.indptr, pattern.indices, pattern.row_group, *original, basis.shape[1])
            self._coarse_space = (basis, extend_pattern(original, basis, n_o), product)
            self._last_coarse = (basis, original, product)

    def _coarse_arrays(self, system: LinearSystem, augmented: AugmentedSystem):
        """(P, A P, P^T A P, P^T b, column ranges) of the step (``augmented``: ``system.augmented()``); empty (k = 0)
        without the coarse correction."""
        if not self.coarse_correction:
            return (np.zeros((system.size, 0)), np.zeros((system.size, 0)), np.zeros((0, 0)), np.zeros(0),
                    np.zeros((system.size, 4), np.int64))
        space, self._coarse_space = self._coarse_space, None  # one step's space, never reused
        if space is None or space[0].shape[0] != system.size:
            raise ModelError("SolverCOND: coarse_correction needs the step's coarse space; call step(), or "
                             "prepare(state, contacts) before solve()")
        basis, pattern, product = space
        return (basis, *coarse_operator(system, basis, pattern, product, augmented))

    def initial_guess(self, system: LinearSystem) -> np.ndarray:
        """v^1: the previous v_hat on the original DOFs, J_v v_hat on the virtual nodes (Sec. V-A5)."""
        v = np.zeros(system.size)
        if self.warm_start and self._v_hat is not None and len(self._v_hat) == system.dof_count:
            v[:system.dof_count] = self._v_hat
        if system.vn_count:
            virtual_node_velocities(system.vn_dof, system.vn_size, system.vn_jac, v)
        return v

    def solve(self, system: LinearSystem, contacts: ContactSet, dt: float):
        if self.projection == "proximal":
            require_isotropic_friction(contacts.friction, "SolverCOND with projection='proximal'",
                                       "use projection='strict' (Prop. 6)")
        augmented = system.augmented()
        coarse = self._coarse_arrays(system, augmented)
        v = self.initial_guess(system)
        w, blocks = self._weights(system, augmented, contacts)
        force = np.zeros((contacts.count, 3))
        keys = contact_keys(contacts)
        if self.force_warm_start and system.vn_count:
            self._warm_start_owners(system, contacts, keys, v)
        iterations, residual = velocity_fixed_point(
            augmented,
            NodeContacts(contacts.group_start(), contacts.dof_a, contacts.dof_b, contacts.frame, contacts.friction,
                         contacts.offset),
            StepWeights(w, *blocks, WEIGHTS[self.weights]),
            CoarseSpace(*coarse),
            FixedPointOptions(float(self.regularization), PROJECTIONS[self.projection], bool(self.chebyshev),
                              int(self.chebyshev_start), float(self.under_relaxation), self.stopping_threshold,
                              int(self.max_iterations)),
            v, force)
        if not residual < np.inf:
            raise SimulationError(f"SolverCOND: V-FPI diverged (theta = {residual} at iteration {iterations}, "
                                  f"weights={self.weights!r})")
        self._v_hat = v[:system.dof_count].copy()
        self._previous_forces = keyed_world_forces(keys, contacts.frame, force)
        return v, force, iterations, residual

    def inverse_contact_forces(self, v_hat: np.ndarray, contacts: ContactSet) -> np.ndarray:
        """Contact forces recovered from a velocity alone (invertible model, Sec. III-E1).

        lambda_m = Pi_C(-(J_c,m v_hat + phi_m) / omega); needs ``regularization`` > 0.
        """
        if self.regularization <= 0.0:
            raise ModelError("inverse_contact_forces: needs regularization > 0 (the invertible contact model)")
        u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v_hat)
        mode = PROJECTIONS[self.projection]
        return np.array([project_cone(mode, *(-u[m] / self.regularization), *contacts.friction[m])
                         for m in range(contacts.count)]).reshape(-1, 3)

