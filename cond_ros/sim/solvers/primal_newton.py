"""Primal Newton: the step's contact problem as one convex minimization over the velocities.

The idea is MuJoCo's Newton solver (Todorov, "Convex and analytically-invertible dynamics with contacts
and constraints", ICRA 2014): with a compliant contact law the step is the minimizer of a convex,
once-differentiable function of the velocity, so Newton's method with an exact line search solves it in
a handful of iterations, each one sparse factorization of the Hessian. It suits systems that are stiff
along chains (a 320-segment cable wound on a post: W A spans ~2e5 for any diagonal W, so V-FPI needs
thousands of iterations per step, and the Delassus operator spans 1e-4 to 1e2, so PGS and APGD stall).

How this maps onto our contact model
------------------------------------
With COND's invertible contact model (Sec. III-E1), lambda_m = Pi_K(-u_m / omega_m), u = J_c v_hat + phi,
the step's equation A v_hat = b + J_c^T lambda(v_hat) (eq. 1) is the stationarity condition of

    f(v) = 1/2 v^T A v - b^T v + sum_m omega_m / 2 ||Pi_K(-u_m / omega_m)||^2,

because the gradient of 1/2 ||Pi_K(y)||^2 is Pi_K(y) for a closed convex cone K. f is convex with a
piecewise-constant generalized Hessian H = A + sum_m J_m^T (dPi_K / omega_m) J_m (open contacts add
nothing, sticking ones I / omega_m, sliding ones a rank-2 PSD block: ``proximal_jacobian``). Each
iteration solves H d = -grad f by a sparse LDL^T (qdldl; the pattern of H is fixed within a step, so
only the first iteration orders and analyses it) and minimizes f exactly along d (f is piecewise
quadratic along a line; its derivative is monotone, so a safeguarded 1-D Newton finds the root).

- ``projection="proximal"`` solves the regularized CCP (36)-(37) exactly as proximal COND defines it.
- ``projection="strict"`` (default) is COND's strict law with the same compliance,
  lambda_m = project_strict(-u_m / omega_m): clamp the normal force, project the tangential one onto the
  disk of radius mu lambda_n (Signorini-Coulomb (11) as omega -> 0). Coulomb friction is not a gradient, so
  each Newton step freezes the disk's radius at mu lambda_n of the current iterate (a Tresca law, which is
  convex) and the iteration is a fixed point in that radius. De Saxce's shift u_n + mu ||u_t|| (the other
  classic way to make it a cone program) feeds a sliding node's own normal velocity back with the gain
  mu^2 and did not converge on the wound cable (mu = 1.3); the frozen radius couples normal and tangential
  forces only through A. Replacing the radius by the new mu lambda_n outright can cycle (period 4, a node
  squeezed between the post and a finger), and a fixed damping of 1/2 leaves a linear tail of rate 1/2, so
  each contact's radius moves by the secant (Aitken) factor 1 / (1 - s) of the way, s = the slope of its
  map r -> mu lambda_n seen over the last iteration, kept within [``min_bound_relaxation``, 1].
  There is no convergence guarantee; the iteration cap bounds the work.
- omega_m = ``regularization`` + ``relative_regularization`` * g_m, with g_m = sum_j J_nj^2 / A_jj a Jacobi
  estimate of the normal row's Delassus diagonal: by default a contact yields by one
  millionth of the velocity change its force would cause on its own. The strict law's tangential rows
  have their own omega_t (``relative_friction_regularization``, 1e-2): it is the width over which the
  Tresca kink is smoothed, and with 1e-6 there Newton crawled through sliding phases of the wound cable
  (20-50 iterations a step). A sticking contact creeps at omega_t lambda_t. omega must be positive: the
  hard law (omega = 0) is not differentiable and Newton has no Hessian for it.

Contacts act on the real contact points (virtual nodes' J_v on their owners, as in the Delassus solvers),
and no virtual-node coupling enters A. Iterations are Newton iterations (factorizations); the residual is the
Newton step ||H^-1 grad f|| left at the returned velocity [m/s], under the law itself (the bound not
relaxed), which is what V-FPI's theta on ||v^{l+1} - v^l|| measures too. Isotropic friction only.
"""
from __future__ import annotations

import numpy as np
import qdldl
import scipy.sparse as sp

from ..collision.nodalization import ContactSet
from ..dynamics.assembly import LinearSystem, assemble
from ..jit import kernel
from ..validate import ModelError, non_negative, scalar
from .base import SolverBase, require_isotropic_friction
from .delassus.operator import contact_jacobian
from .friction_cone import proximal_jacobian, strict_jacobian

PROJECTIONS = ("strict", "proximal")
LINE_SEARCH_ITERATIONS = 50
#: the line search stops when |f'(alpha)| falls below this fraction of |f'(0)|
LINE_SEARCH_TOLERANCE = 1e-12


@kernel
def contact_columns(count, dof_count, j_indptr, j_indices, j_data):
    """Per contact: the sorted DOFs its three rows of J_c touch, and those rows as a dense (columns, 3) block.

    Returns (ptr, columns, rows): contact m owns ``columns[ptr[m]:ptr[m+1]]`` and ``rows[ptr[m] + a, r]`` is
    J_c[3 m + r, columns[ptr[m] + a]].
    """
    mark = np.full(dof_count, -1, np.int64)
    ptr = np.zeros(count + 1, np.int64)
    for m in range(count):
        width = 0
        for r in range(3 * m, 3 * m + 3):
            for p in range(j_indptr[r], j_indptr[r + 1]):
                if mark[j_indices[p]] != m:
                    mark[j_indices[p]] = m
                    width += 1
        ptr[m + 1] = ptr[m] + width
    columns = np.empty(ptr[count], np.int64)
    rows = np.zeros((ptr[count], 3))
    where = np.empty(dof_count, np.int64)
    for m in range(count):
        k = ptr[m]
        for r in range(3 * m, 3 * m + 3):
            for p in range(j_indptr[r], j_indptr[r + 1]):
                if mark[j_indices[p]] != -2 - m:
                    mark[j_indices[p]] = -2 - m
                    columns[k] = j_indices[p]
                    k += 1
        columns[ptr[m]:ptr[m + 1]] = np.sort(columns[ptr[m]:ptr[m + 1]])
        for a in range(ptr[m], ptr[m + 1]):
            where[columns[a]] = a
        for r in range(3):
            for p in range(j_indptr[3 * m + r], j_indptr[3 * m + r + 1]):
                rows[where[j_indices[p]], r] += j_data[p]
    return ptr, columns, rows


@kernel
def _add_row(i, j, mark, indices, k):
    """Puts row i into column j's list at ``indices[k]`` unless it is below the diagonal (i > j) or already
    there (``mark[i] == j``); returns the next free slot."""
    if i <= j and mark[i] != j:
        mark[i] = j
        indices[k] = i
        return k + 1
    return k


@kernel
def hessian_pattern(dof_count, a_indptr, a_indices, ptr, columns):
    """The upper triangle of H = A + J_c^T D J_c in CSC (column j: rows i <= j, sorted) for any D, and where
    every term lands in its ``data``.

    Returns (indptr, indices, a_slot, c_slot_ptr, c_slot): A's CSR entry p adds to data[a_slot[p]] (-1: below
    the diagonal); contact m's term between its columns a and b adds to data[c_slot[c_slot_ptr[m] + a * w + b]]
    (w its column count; -1 where columns[a] < columns[b]).
    """
    count = ptr.shape[0] - 1
    touching = np.zeros(dof_count + 1, np.int64)  # contacts touching each column, CSR
    for k in range(ptr[count]):
        touching[columns[k] + 1] += 1
    for j in range(dof_count):
        touching[j + 1] += touching[j]
    contact_of = np.empty(ptr[count], np.int64)
    fill = touching[:dof_count].copy()
    for m in range(count):
        for k in range(ptr[m], ptr[m + 1]):
            contact_of[fill[columns[k]]] = m
            fill[columns[k]] += 1
    mark = np.full(dof_count, -1, np.int64)
    indptr = np.zeros(dof_count + 1, np.int64)
    capacity = a_indptr[dof_count]
    for m in range(count):
        capacity += (ptr[m + 1] - ptr[m]) ** 2
    indices = np.empty(capacity, np.int64)
    for j in range(dof_count):  # the rows i <= j of column j: A's, then every touching contact's
        k = indptr[j]
        for p in range(a_indptr[j], a_indptr[j + 1]):
            k = _add_row(a_indices[p], j, mark, indices, k)
        for q in range(touching[j], touching[j + 1]):
            m = contact_of[q]
            for kk in range(ptr[m], ptr[m + 1]):
                k = _add_row(columns[kk], j, mark, indices, k)
        indices[indptr[j]:k] = np.sort(indices[indptr[j]:k])
        indptr[j + 1] = k
    indices = indices[:indptr[dof_count]].copy()
    a_slot = np.full(a_indptr[dof_count], -1, np.int64)
    c_slot_ptr = np.zeros(count + 1, np.int64)
    for m in range(count):
        w = ptr[m + 1] - ptr[m]
        c_slot_ptr[m + 1] = c_slot_ptr[m] + w * w
    c_slot = np.full(c_slot_ptr[count], -1, np.int64)
    slot = np.empty(dof_count, np.int64)
    for j in range(dof_count):
        for p in range(indptr[j], indptr[j + 1]):
            slot[indices[p]] = p
        for p in range(a_indptr[j], a_indptr[j + 1]):
            if a_indices[p] <= j:
                a_slot[p] = slot[a_indices[p]]
        for q in range(touching[j], touching[j + 1]):
            m = contact_of[q]
            w = ptr[m + 1] - ptr[m]
            a = 0
            while columns[ptr[m] + a] != j:
                a += 1
            for b in range(w):
                if columns[ptr[m] + b] <= j:
                    c_slot[c_slot_ptr[m] + a * w + b] = slot[columns[ptr[m] + b]]
    return indptr, indices, a_slot, c_slot_ptr, c_slot


@kernel
def fill_hessian(a_data, a_slot, ptr, rows, c_slot_ptr, c_slot, hessian_blocks, out):
    """out = the upper triangle of A + sum_m J_m^T hessian_blocks[m] J_m in the pattern of ``hessian_pattern``."""
    out[:] = 0.0
    for p in range(a_data.shape[0]):
        if a_slot[p] >= 0:
            out[a_slot[p]] += a_data[p]
    for m in range(ptr.shape[0] - 1):
        w = ptr[m + 1] - ptr[m]
        block = hessian_blocks[m]
        if block[0, 0] == 0.0 and block[1, 1] == 0.0 and block[2, 2] == 0.0:
            continue  # an open contact (a PSD block with a zero diagonal is zero)
        for a in range(w):
            ja = rows[ptr[m] + a]
            da0 = block[0, 0] * ja[0] + block[1, 0] * ja[1] + block[2, 0] * ja[2]
            da1 = block[0, 1] * ja[0] + block[1, 1] * ja[1] + block[2, 1] * ja[2]
            da2 = block[0, 2] * ja[0] + block[1, 2] * ja[1] + block[2, 2] * ja[2]
            for b in range(w):
                s = c_slot[c_slot_ptr[m] + a * w + b]
                if s >= 0:
                    jb = rows[ptr[m] + b]
                    out[s] += da0 * jb[0] + da1 * jb[1] + da2 * jb[2]


@kernel
def contact_law(strict, y_n, y_t1, y_t2, mu, radius, out):
    """lambda(y) at y = -u / omega and its Jacobian (into ``out``): the cone projection, or (strict) the
    clamp-and-disk law with the friction bound ``radius`` held fixed."""
    if strict:
        return strict_jacobian(y_n, y_t1, y_t2, radius, out)
    return proximal_jacobian(y_n, y_t1, y_t2, mu, out)


@kernel
def contact_forces(strict, u, omega, mu, radius, force, hessian_blocks):
    """lambda_m = law(-W_m^-1 u_m) and the Hessian blocks -d lambda_m / d u_m = d law W_m^-1, W_m =
    diag(omega[m, 0], omega[m, 1], omega[m, 1]) (symmetric: the law's Jacobian does not mix n and t when the
    two differ, which only the strict law allows)."""
    jac = np.empty((3, 3))
    inv = np.empty(3)
    for m in range(mu.shape[0]):
        inv[0] = 1.0 / omega[m, 0]
        inv[1] = inv[2] = 1.0 / omega[m, 1]
        k = 3 * m
        n, t1, t2 = contact_law(strict, -u[k] * inv[0], -u[k + 1] * inv[1], -u[k + 2] * inv[2], mu[m], radius[m],
                                jac)
        force[k], force[k + 1], force[k + 2] = n, t1, t2
        for i in range(3):
            for j in range(3):
                hessian_blocks[m, i, j] = jac[i, j] * inv[j]
    return 0


@kernel
def exact_line_search(strict, slope, curvature, u, du, omega, mu, radius):
    """The alpha > 0 minimizing f(v + alpha d): the root of the monotone f'(alpha) = slope + alpha curvature -
    du . lambda(u + alpha du), with slope = d . (A v - b), curvature = d^T A d and du = J_c d.

    f' is piecewise linear between the contacts' mode changes, so 1-D Newton is exact once the modes
    settle; a bracket [lo, hi] keeps it safe. Returns (alpha, evaluations)."""
    jac = np.empty((3, 3))
    inv = np.empty(3)
    lo, hi = 0.0, np.inf
    alpha = 1.0
    start = -1.0
    for evaluation in range(LINE_SEARCH_ITERATIONS):
        value = slope + alpha * curvature
        second = curvature
        for m in range(mu.shape[0]):
            inv[0] = 1.0 / omega[m, 0]
            inv[1] = inv[2] = 1.0 / omega[m, 1]
            k = 3 * m
            n, t1, t2 = contact_law(strict, -(u[k] + alpha * du[k]) * inv[0], -(u[k + 1] + alpha * du[k + 1]) * inv[1],
                                    -(u[k + 2] + alpha * du[k + 2]) * inv[2], mu[m], radius[m], jac)
            value -= du[k] * n + du[k + 1] * t1 + du[k + 2] * t2
            for i in range(3):
                for j in range(3):
                    second += du[k + i] * jac[i, j] * inv[j] * du[k + j]
        if start < 0.0:
            start = abs(value) + abs(slope)
        if value < 0.0:
            lo = alpha
        else:
            hi = alpha
        if abs(value) <= LINE_SEARCH_TOLERANCE * start:
            return alpha, evaluation + 1
        step = alpha - value / second
        if not lo < step < hi:
            step = 2.0 * lo if hi == np.inf else 0.5 * (lo + hi)
        if abs(step - alpha) <= 1e-15 * alpha:
            return step, evaluation + 1
        alpha = step
    return alpha, LINE_SEARCH_ITERATIONS


class SolverPrimalNewton(SolverBase):
    """Newton's method on the step's convex primal problem (module docstring).

    Args:
        projection: "strict" (Signorini-Coulomb (11), with omega) or "proximal" (the CCP (36)).
        tolerance: on the Newton step left, ||H^-1 grad f|| [m/s] (what COND's theta bounds).
        max_iterations: Newton iterations per step.
        regularization: omega added to every contact [m/(N s)].
        relative_regularization: omega's part relative to each contact's Jacobi Delassus estimate.
        relative_friction_regularization: the same for the tangential rows of the strict law (the proximal law
            uses the normal one): a sticking contact creeps at omega_t lambda_t.
        min_bound_relaxation: the least fraction of the way the strict law's friction bound moves to
            mu lambda_n per iteration (the secant factor is clipped to it; 1: always outright, which can cycle).
        warm_start: start from the previous step's v_hat.
    """

    name = "primal_newton"

    def __init__(self, model, *, projection="strict", tolerance=1e-8, max_iterations=50, regularization=0.0,
                 relative_regularization=1e-6, relative_friction_regularization=1e-2, min_bound_relaxation=0.2,
                 warm_start=True):
        super().__init__(model)
        if projection not in PROJECTIONS:
            raise ModelError(f"projection: expected one of {list(PROJECTIONS)}, got {projection!r}")
        self.projection = projection
        self._set_iteration_options(tolerance, max_iterations, regularization, warm_start)
        self.relative_regularization = non_negative("relative_regularization", relative_regularization)
        self.relative_friction_regularization = non_negative("relative_friction_regularization",
                                                             relative_friction_regularization)
        relative = min(self.relative_regularization, self.relative_friction_regularization)
        if self.regularization == 0.0 and relative == 0.0:
            raise ModelError("SolverPrimalNewton: regularization is 0 and relative_regularization or "
                             "relative_friction_regularization is 0; the hard contact law has no Hessian, give "
                             "omega > 0 (e.g. relative_regularization=1e-6)")
        self.min_bound_relaxation = scalar("min_bound_relaxation", min_bound_relaxation, low=0.0, high=1.0,
                                           low_open=True)
        self.reset()

    def reset(self) -> None:
        self._v_hat = None
        self._pattern = None  # ((A's indptr, indices, contact ptr, columns), hessian_pattern's output) of the last step
        self._factor = None  # its qdldl factor: a step with the same pattern only refactors numerically

    def _structure(self, n: int, system: LinearSystem, ptr: np.ndarray, columns: np.ndarray):
        """The Hessian's pattern for these contacts, and the last step's factor if the pattern is the same
        (consecutive steps mostly see the same contacts: ordering and analysis are then skipped)."""
        cached = self._pattern
        key = (system.indptr, system.indices, ptr, columns)
        if cached is not None and all(len(x) == len(y) and np.array_equal(x, y) for x, y in zip(cached[0], key)):
            return cached[1], self._factor
        pattern = hessian_pattern(n, system.indptr, system.indices, ptr, columns)
        self._pattern = (key, pattern)
        self._factor = None
        return pattern, None

    def assemble(self, state, control, contacts, dt) -> LinearSystem:
        return assemble(self.model, contacts.pattern, state, control, dt)

    def _friction_bound(self, u: np.ndarray, omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """mu lambda_n at u: the strict law's friction bound, held fixed for one Newton step."""
        if self.projection == "proximal":
            return np.zeros(len(mu))
        return mu * np.maximum(0.0, -u[0::3] / omega[:, 0])

    def solve(self, system: LinearSystem, contacts: ContactSet, dt: float):
        n = system.dof_count
        a = sp.csr_matrix((system.data, system.indices, system.indptr), shape=(n, n))
        if contacts.count == 0:
            v = qdldl.Solver(sp.triu(a, format="csc"), upper=True).solve(system.b)
            self._v_hat = v.copy()
            return v, np.zeros((0, 3)), 1, 0.0
        require_isotropic_friction(contacts.friction, "SolverPrimalNewton", "use cond with projection='strict'")
        count = contacts.count
        jacobian = contact_jacobian(n, contacts)
        mu = np.ascontiguousarray(contacts.friction[:, 0])
        phi = contacts.offset.reshape(-1)
        normal = jacobian[0::3]
        strict = self.projection == "strict"
        delassus_estimate = normal.multiply(normal) @ (1.0 / a.diagonal())
        omega = np.empty((count, 2))
        omega[:, 0] = self.regularization + self.relative_regularization * delassus_estimate
        omega[:, 1] = omega[:, 0] if not strict else (self.regularization + self.relative_friction_regularization
                                                      * delassus_estimate)
        ptr, columns, rows = contact_columns(count, n, jacobian.indptr.astype(np.int64),
                                             jacobian.indices.astype(np.int64), jacobian.data)
        (indptr, indices, a_slot, c_slot_ptr, c_slot), factor = self._structure(n, system, ptr, columns)
        hessian = sp.csc_matrix((np.zeros(len(indices)), indices, indptr), shape=(n, n))
        transposed = jacobian.T.tocsr()
        v = self._v_hat.copy() if self.warm_start and self._v_hat is not None and len(self._v_hat) == n else np.zeros(n)
        force = np.zeros(3 * count)
        blocks = np.zeros((count, 3, 3))
        iterations, residual, bound, previous = 0, np.inf, None, None
        law_force, law_blocks = np.zeros(3 * count), np.zeros((count, 3, 3))
        u = jacobian @ v + phi
        residual_free = a @ v - system.b
        for iterations in range(1, self.max_iterations + 1):
            target = self._friction_bound(u, omega, mu)
            relaxed = strict and iterations > 1
            if relaxed:
                last_bound, last_target = previous
                moved = bound - last_bound
                slope = (target - last_target) / np.where(moved == 0.0, 1.0, moved) * (moved != 0.0)
                share = np.clip(1.0 / np.maximum(1.0 - slope, 1e-300), self.min_bound_relaxation, 1.0)
                previous = (bound, target)
                bound = bound + share * (target - bound)
            else:
                previous = (np.zeros(count), target)  # (bound, target) of this iteration, for the next secant
                bound = target
            contact_forces(strict, u, omega, mu, bound, force, blocks)
            fill_hessian(system.data, a_slot, ptr, rows, c_slot_ptr, c_slot, blocks, hessian.data)
            if factor is None:
                factor = qdldl.Solver(hessian, upper=True)
                self._factor = factor
            else:
                factor.update(hessian, upper=True)
            direction = -factor.solve(residual_free - transposed @ force)
            law_direction = direction
            if relaxed:  # converged means: no step left under the law itself, not under the relaxed bound
                contact_forces(strict, u, omega, mu, target, law_force, law_blocks)
                law_direction = -factor.solve(residual_free - transposed @ law_force)
            residual = float(np.linalg.norm(law_direction))
            if residual <= self.tolerance:
                # still take the step: lambda = -u / omega turns a velocity error e into a force error e / omega,
                # and after a Newton step e is second order (a box on its corners read 10 % off its weight
                # at a 1e-8 m/s residual without it)
                v += law_direction
                break
            a_direction, u_direction = a @ direction, jacobian @ direction
            alpha, _ = exact_line_search(strict, float(direction @ residual_free), float(direction @ a_direction), u,
                                         u_direction, omega, mu, bound)
            # J v + phi and A v - b move linearly: updated, not recomputed (two sparse products an iteration)
            v += alpha * direction
            u += alpha * u_direction
            residual_free += alpha * a_direction
        u = jacobian @ v + phi
        contact_forces(strict, u, omega, mu, self._friction_bound(u, omega, mu), force, blocks)
        self._v_hat = v.copy()
        return v, force.reshape(count, 3), iterations, residual
