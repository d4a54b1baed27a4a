"""Kernels of COND's velocity fixed-point iteration (Alg. 1-3).

All take plain arrays. The iteration loop itself is a kernel too: a step runs
tens of iterations, and per-iteration Python dispatch would cost more than
the arithmetic on small scenes. Its inputs travel in five named groups (numba
takes named tuples of arrays as they are).
"""
from typing import NamedTuple

import numpy as np
from numba import prange

from ...jit import kernel, leaf_kernel, parallel_kernel
from ...linalg import (U1, U2, U3, U4, U5, U6, augmented_matvec, banded_cholesky, dot, jacobian_velocity,
                       solve_banded_cholesky)
from ..friction_cone import project_cone
from .weights import WEIGHTS_BB1, WEIGHTS_BB_ALTERNATING, WEIGHTS_BLOCK, WEIGHTS_FROBENIUS, apply_block_weights

LOCAL_SWEEPS = 8  # Gauss-Seidel sweeps for a node with several contacts (a particle in a crease)
# With the coarse correction the iteration is no longer stationary, and Chebyshev's extrapolation can lock
# into a cycle (theta flat at 0.2 m/s for 2000 iterations when a stiff ball lands on the table); restart it
# after this many iterations without a new smallest theta, following this many plain iterations.
CHEBYSHEV_STALL_ITERATIONS = 10
CHEBYSHEV_RESTART_DELAY = 3


class NodeContacts(NamedTuple):
    """The step's contacts on nodes: their groups by node (``group_start``), the two nodes' first DOFs
    (``dof_b`` -1 for an S-contact), frames (n, t1, t2), friction (mu1, mu2) and offsets phi."""

    group_start: np.ndarray
    dof_a: np.ndarray
    dof_b: np.ndarray
    frame: np.ndarray
    friction: np.ndarray
    offset: np.ndarray


class StepWeights(NamedTuple):
    """W of Sec. IV-C: its ``diagonal``, the dense blocks of ``weights.WEIGHTS_BLOCK`` (empty otherwise) and
    the weight mode (``weights.WEIGHTS_*``)."""

    diagonal: np.ndarray
    block_dof: np.ndarray
    block_size: np.ndarray
    block_ptr: np.ndarray
    block_data: np.ndarray
    mode: int


class CoarseSpace(NamedTuple):
    """The two-level correction's P (n x k; k = 0 for none), A P, P^T A P, P^T b and the rows' nonzero column
    ranges of P and A P (``coarse_space.coarse_operator``)."""

    basis: np.ndarray
    a_basis: np.ndarray
    galerkin: np.ndarray
    b: np.ndarray
    ranges: np.ndarray


class FixedPointOptions(NamedTuple):
    """The settings of one V-FPI solve (``SolverCOND``'s options)."""

    regularization: float
    projection: int
    chebyshev: bool
    chebyshev_start: int
    under_relaxation: float
    tolerance: float
    max_iterations: int


@leaf_kernel
def _contact_velocity(m, dof_a, dof_b, frame, offset, v):
    """u_m = J_c,m v + phi_m: contact m's relative velocity in its frame (n, t1, t2) [m/s], as a tuple.

    Written out: it runs for every contact in every iteration and sweep, and a 3 x 3 ``@`` goes through
    BLAS and allocates (measured on panda_cable at ~270 contacts: V-FPI 3.3 ms a step with it, 2.0 without).
    """
    a = dof_a[m]
    b = dof_b[m]
    r0, r1, r2 = v[a], v[a + 1], v[a + 2]
    if b >= 0:
        r0 -= v[b]
        r1 -= v[b + 1]
        r2 -= v[b + 2]
    return (frame[m, 0, 0] * r0 + frame[m, 0, 1] * r1 + frame[m, 0, 2] * r2 + offset[m, 0],
            frame[m, 1, 0] * r0 + frame[m, 1, 1] * r1 + frame[m, 1, 2] * r2 + offset[m, 1],
            frame[m, 2, 0] * r0 + frame[m, 2, 1] * r1 + frame[m, 2, 2] * r2 + offset[m, 2])


@leaf_kernel
def _apply(m, dof_a, dof_b, frame, w, force, sign, v):
    """v += sign * W J_c,m^T lambda_m (update (24) for one contact)."""
    a = dof_a[m]
    b = dof_b[m]
    for r in range(3):
        f = frame[m, 0, r] * force[m, 0] + frame[m, 1, r] * force[m, 1] + frame[m, 2, r] * force[m, 2]
        v[a + r] += sign * w[a] * f
        if b >= 0:
            v[b + r] -= sign * w[b] * f


@leaf_kernel
def _gamma(m, dof_a, dof_b, w, regularization):
    """The diagonal surrogate Delassus entry of contact m (Prop. 3, eq. 25) plus Omega."""
    gamma = w[dof_a[m]] + regularization
    if dof_b[m] >= 0:
        gamma += w[dof_b[m]]
    return gamma


def _solve_surrogate_contacts(group_start, dof_a, dof_b, frame, friction, offset, regularization, projection,
                             local_sweeps, w, v_star, v_out, force):
    """Alg. 2: per-node solve of the diagonal surrogate problem (23), then update (24); v_out = v_star on entry.

    Contacts are grouped so that groups touch disjoint nodes (group_start), so they run in parallel.
    A group of one contact is solved in one shot (Prop. 4/5). Contacts sharing a node (a particle
    touching several colliders, a rod node touching the post and another turn) form a larger group whose
    surrogate problem couples only its own contacts (Gamma = w R_i R_j^T); it is solved exactly enough
    by projected Gauss-Seidel sweeps over that group alone.
    """
    for g in prange(group_start.shape[0] - 1):
        first = group_start[g]
        last = group_start[g + 1]
        single = last - first == 1
        # A group's sweeps start from the previous outer iteration's forces (still in ``force``): restarting
        # from zero each time leaves the group short of its solution after a fixed number of sweeps, and
        # V-FPI then converges to a wrong fixed point.
        if not single:
            for m in range(first, last):
                _apply(m, dof_a, dof_b, frame, w, force, 1.0, v_out)
        source = v_star if single else v_out  # a group's contacts see each other's latest forces
        for _ in range(1 if single else local_sweeps):
            for m in range(first, last):
                # lambda_m of Alg. 2, then (24). Written out rather than through the helpers: this runs for
                # every contact in every iteration, and even leaf-kernel calls cost ~3x its arithmetic
                # (panda_cable, 153 contacts: ~5 us an iteration written out, 14 us through calls)
                if not single:
                    _apply(m, dof_a, dof_b, frame, w, force, -1.0, v_out)
                # unsigned node offsets: no wraparound check at each load and store (linalg.U1); b < 0: no node b
                has_b = dof_b[m] >= 0
                a = np.uint64(dof_a[m])
                b = np.uint64(dof_b[m]) if has_b else a
                gamma = w[a] + regularization  # eq. (25) plus Omega
                r0, r1, r2 = source[a], source[a + U1], source[a + U2]
                if has_b:
                    gamma += w[b]
                    r0 -= source[b]
                    r1 -= source[b + U1]
                    r2 -= source[b + U2]
                u0 = frame[m, 0, 0] * r0 + frame[m, 0, 1] * r1 + frame[m, 0, 2] * r2 + offset[m, 0]
                u1 = frame[m, 1, 0] * r0 + frame[m, 1, 1] * r1 + frame[m, 1, 2] * r2 + offset[m, 1]
                u2 = frame[m, 2, 0] * r0 + frame[m, 2, 1] * r1 + frame[m, 2, 2] * r2 + offset[m, 2]
                lam_n, lam_t1, lam_t2 = project_cone(projection, -u0 / gamma, -u1 / gamma, -u2 / gamma,
                                                     friction[m, 0], friction[m, 1])
                force[m, 0] = lam_n
                force[m, 1] = lam_t1
                force[m, 2] = lam_t2
                for r in range(U3):
                    f = frame[m, 0, r] * lam_n + frame[m, 1, r] * lam_t1 + frame[m, 2, r] * lam_t2
                    v_out[a + r] += w[a] * f
                    if has_b:
                        v_out[b + r] -= w[b] * f


solve_surrogate_contacts_serial = kernel(_solve_surrogate_contacts)
solve_surrogate_contacts_parallel = parallel_kernel(_solve_surrogate_contacts)
PARALLEL_MIN_GROUPS = 2000  # below this, thread start-up costs more than the contacts


@kernel
def solve_surrogate_contacts(group_start, dof_a, dof_b, frame, friction, offset, regularization, projection,
                             local_sweeps, w, v_star, v_out, force):
    """:func:`_solve_surrogate_contacts`, threaded only for many contact groups (identical results)."""
    if group_start.shape[0] - 1 >= PARALLEL_MIN_GROUPS:
        solve_surrogate_contacts_parallel(group_start, dof_a, dof_b, frame, friction, offset, regularization,
                                          projection, local_sweeps, w, v_star, v_out, force)
    else:
        solve_surrogate_contacts_serial(group_start, dof_a, dof_b, frame, friction, offset, regularization,
                                        projection, local_sweeps, w, v_star, v_out, force)


@kernel
def owner_block_inverses(data, slots, owner_size, owner_vn_start, vn_jac, kv):
    """(A_o,gg)^-1 of each virtual-node owner g: its diagonal block of ``data`` (which holds A_o + k_v J^T J,
    eq. 15) without its nodes' k_v J^T J; zero-padded to the widest owner, shape (owners, width, width)."""
    width = vn_jac.shape[2]
    out = np.zeros((owner_size.shape[0], width, width))
    for g in range(owner_size.shape[0]):
        size = owner_size[g]
        block = np.empty((size, size))
        for r in range(size):
            for c in range(size):
                block[r, c] = data[slots[g, r] + c]
        for k in range(owner_vn_start[g], owner_vn_start[g + 1]):
            for r in range(size):
                for c in range(size):
                    block[r, c] -= kv * (vn_jac[k, 0, r] * vn_jac[k, 0, c] + vn_jac[k, 1, r] * vn_jac[k, 1, c]
                                         + vn_jac[k, 2, r] * vn_jac[k, 2, c])
        out[g, :size, :size] = np.linalg.inv(block)
    return out


@kernel
def owner_force_warm_start(indptr, indices, data, b, kv, owner_dof, owner_size, owner_inverse, owner_vn_start,
                           vn_jac, vn_force, v):
    """Initial velocities of virtual-node owners and their nodes from guessed node forces (world, [N]).

    In the mode where an owner and its virtual nodes move together the k_v terms of (15) cancel, so
    V-FPI corrects that mode by only ~M_hat / k_v per iteration. Starting there from the reduced
    dynamics (18) with the previous step's contact forces, A_o,gg v_g = b_g - (off-diagonal A_o v)_g
    + sum J_v^T f, and the nodes at v_v = J_v v_g + f / k_v (17), leaves V-FPI only the change of the forces.
    """
    n_o = indptr.shape[0] - 1
    for g in range(owner_dof.shape[0]):
        dof = owner_dof[g]
        size = owner_size[g]
        res = np.zeros(size)
        for r in range(size):
            acc = b[dof + r]
            for p in range(indptr[dof + r], indptr[dof + r + 1]):
                acc -= data[p] * v[indices[p]]
            res[r] = acc
        for k in range(owner_vn_start[g], owner_vn_start[g + 1]):
            # data holds A_o + k_v J^T J: add back k_v J^T J v_g, then the node force
            pv = kv * jacobian_velocity(v, dof, size, vn_jac[k]) + vn_force[k]
            for r in range(size):
                res[r] += vn_jac[k, 0, r] * pv[0] + vn_jac[k, 1, r] * pv[1] + vn_jac[k, 2, r] * pv[2]
        for r in range(size):
            acc = 0.0
            for c in range(size):
                acc += owner_inverse[g, r, c] * res[c]
            v[dof + r] += acc
        for k in range(owner_vn_start[g], owner_vn_start[g + 1]):
            pv = jacobian_velocity(v, dof, size, vn_jac[k])
            base = n_o + 3 * k
            for e in range(3):
                v[base + e] = pv[e] + vn_force[k, e] / kv


@kernel
def warm_start_owners(indptr, indices, data, b, kv, vn_dof, vn_size, vn_jac, vn_group, block_slot, diag_pair,
                      dof_a, dof_b, keys, old_keys, old_forces, v):
    """:func:`owner_force_warm_start` of every virtual-node owner with the previous forces (world, sorted
    by ``old_keys``) of the contacts seen again (``keys``: ``contact_keys`` of this step's contacts).

    Virtual nodes are created owner by owner, so each owner's nodes are one contiguous run of ``vn_dof``.
    """
    n_o = indptr.shape[0] - 1
    n_vn = vn_dof.shape[0]
    owners = 0
    for k in range(n_vn):
        if k == 0 or vn_dof[k] != vn_dof[k - 1]:
            owners += 1
    bounds = np.empty(owners + 1, np.int64)
    g = 0
    for k in range(n_vn):
        if k == 0 or vn_dof[k] != vn_dof[k - 1]:
            bounds[g] = k
            g += 1
    bounds[owners] = n_vn
    starts = bounds[:owners]
    owner_dof = vn_dof[starts]
    owner_size = vn_size[starts]
    slots = np.empty((owners, block_slot.shape[1]), np.int64)
    for g in range(owners):
        slots[g] = block_slot[diag_pair[vn_group[starts[g]]]]
    inverse = owner_block_inverses(data, slots, owner_size, bounds, vn_jac, kv)
    vn_force = np.zeros((n_vn, 3))
    if old_keys.shape[0]:
        # a contact's force acts on its side a and, reversed, on its side b (a robot link touching an FEM
        # node has its virtual node on side b)
        for side in range(2):
            for m in range(keys.shape[0]):
                end = dof_a[m] if side == 0 else dof_b[m]
                if end < n_o:
                    continue
                pos = min(np.searchsorted(old_keys, keys[m]), old_keys.shape[0] - 1)
                if old_keys[pos] != keys[m]:
                    continue
                for e in range(3):
                    vn_force[(end - n_o) // 3, e] = old_forces[pos, e] if side == 0 else -old_forces[pos, e]
    owner_force_warm_start(indptr, indices, data, b, kv, owner_dof, owner_size, inverse, bounds, vn_jac, vn_force, v)


@kernel
def chebyshev_weight(iteration, chebyshev_start, rho, nu):
    """nu_{l+1} of Alg. 3 (line 7) from the spectral-radius estimate rho (39) and the previous nu_l."""
    if iteration < chebyshev_start:
        return 1.0
    if iteration == chebyshev_start:
        return 2.0 / (2.0 - rho * rho)
    return 4.0 / (4.0 - rho * rho * nu)


@kernel
def contact_coarse_rows(coarse, ranges, dof_a, dof_b, frame):
    """J_c,m P in contact m's frame, shape (m, 3, k): how each coarse column moves contact m (n, t1, t2), and
    the [first, last) columns outside which contact m's rows are zero, shape (m, 2).

    Fixed within a solve, so :func:`coarse_correction` reads them instead of rebuilding them per iteration.
    ``ranges`` is :func:`~cond_ros.sim.solvers.cond.coarse_space.coarse_operator`'s.
    """
    k = coarse.shape[1]
    rows = np.zeros((dof_a.shape[0], 3, k))
    span = np.zeros((dof_a.shape[0], 2), np.int64)
    for m in range(dof_a.shape[0]):
        a = dof_a[m]
        b = dof_b[m]
        first = k
        last = 0
        for c in range(3):
            for end in (a, b):
                if end >= 0 and ranges[end + c, 1] > ranges[end + c, 0]:
                    first = min(first, ranges[end + c, 0])
                    last = max(last, ranges[end + c, 1])
        last = min(last, k)
        if last <= first:
            continue
        span[m, 0] = first
        span[m, 1] = last
        for e in range(3):
            for c in range(3):
                f = frame[m, e, c]
                for j in range(first, last):
                    rel = coarse[a + c, j]
                    if b >= 0:
                        rel -= coarse[b + c, j]
                    rows[m, e, j] += f * rel
    return rows, span


# the state of coarse_correction's factor of G (``factor_state[0]``; ``factor_state[1]``: its bandwidth)
FACTOR_STALE = 0  # G changed since the factor (or there is none yet)
FACTOR_CHOLESKY = 1  # the factor is G's banded Cholesky
FACTOR_NOT_DEFINITE = 2  # G had a non-positive pivot: np.linalg.solve on G itself
FACTOR_NON_FINITE = 3  # G holds an inf or a NaN (a blown-up iterate's weights): no correction from then on


@leaf_kernel
def _subtract_transposed_product(coarse_a, ranges, v, rhs):
    """rhs -= (A P)^T v over the rows' column ranges of A P (``ranges[:, 2:]``), each entry of rhs in row order.

    A run of rows with the same six columns (a rod: nearly all of them) keeps those six sums in registers:
    through memory each update waits on the last one's store (panda_cable, 320 segments: 10.0 -> 5.2 us, the
    same bits).
    """
    n = coarse_a.shape[0]
    r = 0
    while r < n:
        # unsigned column offsets: numba checks a signed index for a negative value to wrap (linalg.U1)
        lo = np.uint64(ranges[r, 2])
        hi = np.uint64(ranges[r, 3])
        if hi != lo + U6:
            for j in range(lo, hi):
                rhs[j] -= coarse_a[r, j] * v[r]
            r += 1
            continue
        a0, a1, a2 = rhs[lo], rhs[lo + U1], rhs[lo + U2]
        a3, a4, a5 = rhs[lo + U3], rhs[lo + U4], rhs[lo + U5]
        while r < n and np.uint64(ranges[r, 2]) == lo and np.uint64(ranges[r, 3]) == hi:
            x = v[r]
            a0 -= coarse_a[r, lo] * x
            a1 -= coarse_a[r, lo + U1] * x
            a2 -= coarse_a[r, lo + U2] * x
            a3 -= coarse_a[r, lo + U3] * x
            a4 -= coarse_a[r, lo + U4] * x
            a5 -= coarse_a[r, lo + U5] * x
            r += 1
        rhs[lo], rhs[lo + U1], rhs[lo + U2] = a0, a1, a2
        rhs[lo + U3], rhs[lo + U4], rhs[lo + U5] = a3, a4, a5


@kernel
def coarse_correction(coarse, coarse_a, matrix, factor, factor_state, counted_weight, coarse_b, ranges, contact_rows,
                      contact_span, dof_a, dof_b, frame, offset, regularization, w, force, in_coarse, v_star, v_next):
    """The two-level correction of V-FPI (not in the paper), in place on the plain update ``v_next``.

    v_next += P G^-1 P^T (b + J_c^T lambda - A v_next), with G = P^T A P plus the surrogate stiffness (the
    response -J dv / Gamma of Alg. 2, Prop. 3) of each contact in ``in_coarse``: its normal row, and its
    tangent rows scaled by |lambda_t| / |lambda_t trial| (1 while sticking, falling as it slides, so that
    G changes continuously across stick and slip). Without the contact rows the correction moves a
    body against its contacts and diverges. The correction vanishes at the fixed point, where
    A v = b + J_c^T lambda, so the solution is unchanged. ``ranges`` is
    :func:`~cond_ros.sim.solvers.cond.coarse_space.coarse_operator`'s; ``contact_rows`` and ``contact_span`` are
    :func:`contact_coarse_rows`'.

    G is kept up to date across iterations rather than rebuilt: ``matrix`` holds it (P^T A P at the first
    call) with each contact counted at the tangent weight in ``counted_weight`` (< 0: not counted yet), and
    only a contact that joins, or whose weight changed (a sliding one), is added again. Sticking contacts,
    most of a wound cable's, then cost nothing here (panda_cable: 76 us an iteration at 205 contacts before).
    So is G's factor (``factor``, the same shape; ``factor_state``: ``FACTOR_*`` and the bandwidth, both
    [FACTOR_STALE, 0] at a solve's start): it is refactored only in an iteration that changed G (panda_cable,
    160 segments: the factorization was 1.2 of the 7.2 us an iteration of the correction).
    """
    k = coarse.shape[1]
    rhs = coarse_b.copy()
    for m in range(dof_a.shape[0]):
        if not in_coarse[m]:
            continue
        first = contact_span[m, 0]
        last = contact_span[m, 1]
        for i in range(first, last):
            rhs[i] += (contact_rows[m, 0, i] * force[m, 0] + contact_rows[m, 1, i] * force[m, 1]
                       + contact_rows[m, 2, i] * force[m, 2])
        gamma = _gamma(m, dof_a, dof_b, w, regularization)
        u = _contact_velocity(m, dof_a, dof_b, frame, offset, v_star)
        trial = np.hypot(u[1], u[2]) / gamma
        tangent_weight = 1.0 if trial <= 0.0 else min(1.0, np.hypot(force[m, 1], force[m, 2]) / trial)
        if counted_weight[m] < 0.0:  # joins G: its whole surrogate stiffness
            normal_stiffness = 1.0 / gamma
            tangent_stiffness = tangent_weight / gamma
        elif tangent_weight == counted_weight[m]:
            continue
        else:  # in G at another tangent weight: the difference
            normal_stiffness = 0.0
            tangent_stiffness = (tangent_weight - counted_weight[m]) / gamma
        counted_weight[m] = tangent_weight
        factor_state[0] = FACTOR_STALE
        for i in range(first, last):
            x0 = normal_stiffness * contact_rows[m, 0, i]
            x1 = tangent_stiffness * contact_rows[m, 1, i]
            x2 = tangent_stiffness * contact_rows[m, 2, i]
            for j in range(i, last):  # G is symmetric
                value = x0 * contact_rows[m, 0, j] + x1 * contact_rows[m, 1, j] + x2 * contact_rows[m, 2, j]
                matrix[i, j] += value
                if j != i:
                    matrix[j, i] += value
    _subtract_transposed_product(coarse_a, ranges, v_next, rhs)
    for i in range(k):  # a blown-up iterate, which np.linalg.solve rejects: no correction, theta stops the loop
        if not abs(rhs[i]) < np.inf:
            return
    if factor_state[0] == FACTOR_STALE:
        factor_state[0] = FACTOR_CHOLESKY
        for i in range(k):
            for j in range(k):
                if not abs(matrix[i, j]) < np.inf:  # and it stays so: G is only ever added to
                    factor_state[0] = FACTOR_NON_FINITE
        if factor_state[0] == FACTOR_CHOLESKY:
            factor_state[1] = banded_cholesky(matrix, factor)
            if factor_state[1] < 0:
                factor_state[0] = FACTOR_NOT_DEFINITE
    if factor_state[0] == FACTOR_NON_FINITE:
        return
    if factor_state[0] == FACTOR_CHOLESKY:
        delta = solve_banded_cholesky(factor, factor_state[1], rhs)
    else:
        delta = np.linalg.solve(matrix, rhs)
    for r in range(coarse.shape[0]):
        acc = 0.0
        for j in range(np.uint64(ranges[r, 0]), np.uint64(ranges[r, 1])):  # unsigned: linalg.U1
            acc += coarse[r, j] * delta[j]
        v_next[r] += acc


@kernel
def velocity_fixed_point(system, contacts, step_weights, coarse_space, options, v, force):
    """COND's V-FPI (Alg. 1, with Alg. 3 when ``chebyshev``), in place on the warm-started ``v`` and
    ``force``; the inputs are an :class:`~cond_ros.sim.dynamics.assembly.AugmentedSystem` (``system``),
    :class:`NodeContacts`, :class:`StepWeights`, :class:`CoarseSpace` and :class:`FixedPointOptions`.

    W is ``weights`` on the diagonal plus the dense blocks ``block_*`` (empty unless WEIGHTS_BLOCK,
    see ``weights.py``); the diagonal is also the source of the Barzilai-Borwein start step.
    ``coarse`` (n x k; k = 0 for none) is the coarse space of :func:`coarse_correction` with
    ``coarse_a`` = A P, ``galerkin`` = P^T A P, ``coarse_b`` = P^T b and ``coarse_ranges`` the rows' nonzero
    column ranges of P and A P (``coarse_space.coarse_operator``). G holds every contact that has
    had lambda_n > 0 in this solve, and the correction is skipped in an iteration in which that set grows
    (a contact just gained would make G wrong by its whole stiffness). A contact keeps its row after it
    lets go: with the row dropped, a contact at the edge of its active set (fingers closed onto their
    joint limit) was pushed in by the correction, out by the next, and V-FPI cycled for all 2000 iterations.
    The correction restarts Chebyshev when theta stalls.
    A non-finite theta (the iteration diverged) stops the loop at once and is returned as the residual.
    Returns (iterations, final residual theta).
    """
    b = system.b
    group_start, dof_a, dof_b, frame, friction, offset = contacts
    weights, block_dof, block_size, block_ptr, block_data, weight_mode = step_weights
    coarse, coarse_a, galerkin, coarse_b, coarse_ranges = coarse_space
    regularization, projection, chebyshev, chebyshev_start, under_relaxation, tolerance, max_iterations = options
    n = v.shape[0]
    w = weights.copy()
    alpha = np.inf
    for i in range(n):
        alpha = min(alpha, weights[i])
    av = np.empty(n)
    augmented_matvec(system, v, av)
    v_prev = v.copy()
    av_prev = av.copy()
    v_star = np.empty(n)
    v_next = np.empty(n)
    diff = np.empty(n)
    v_plain = np.empty(n)
    step = np.empty(n)
    nu = 1.0
    rho = 0.0
    theta = np.inf
    theta_prev = np.inf
    iterations = 0
    two_level = coarse.shape[1] > 0
    diagonal_w = block_dof.shape[0] == 0
    barzilai_borwein = weight_mode != WEIGHTS_FROBENIUS and weight_mode != WEIGHTS_BLOCK
    in_coarse = np.zeros(force.shape[0], np.bool_)
    contact_rows, contact_span = contact_coarse_rows(coarse, coarse_ranges, dof_a, dof_b, frame)
    coarse_matrix = galerkin.copy()
    coarse_factor = np.empty_like(coarse_matrix)
    factor_state = np.array([FACTOR_STALE, 0])
    counted_weight = np.full(force.shape[0], -1.0)
    theta_best = np.inf
    best_iteration = 0
    for it in range(max_iterations):
        iterations = it + 1
        if barzilai_borwein:
            if it > 0:
                diff[:] = v - v_prev
                z = av - av_prev
                sz = dot(diff, z)
                if sz > 0.0:
                    use_bb1 = weight_mode == WEIGHTS_BB1 or (weight_mode == WEIGHTS_BB_ALTERNATING and it % 2 == 1)
                    alpha = dot(diff, diff) / sz if use_bb1 else sz / dot(z, z)
            w[:] = alpha
        if diagonal_w:  # (20), one pass (the same arithmetic as the general case below)
            for i in range(n):
                x = v[i] - w[i] * (av[i] - b[i])
                v_star[i] = x
                v_next[i] = x
        else:
            for i in range(n):
                diff[i] = av[i] - b[i]
            apply_block_weights(w, block_dof, block_size, block_ptr, block_data, diff, step)
            for i in range(n):
                v_star[i] = v[i] - step[i]
                v_next[i] = v_star[i]
        solve_surrogate_contacts(group_start, dof_a, dof_b, frame, friction, offset, regularization, projection,
                                 LOCAL_SWEEPS, w, v_star, v_next, force)
        if it == max_iterations - 1:  # kept for the end, in case the loop does not converge (below)
            v_plain[:] = v_next
        if two_level:
            joined = False
            for m in range(force.shape[0]):
                if force[m, 0] > 0.0 and not in_coarse[m]:
                    in_coarse[m] = True
                    joined = True
            if it > 0 and not joined:
                coarse_correction(coarse, coarse_a, coarse_matrix, coarse_factor, factor_state, counted_weight,
                                  coarse_b, coarse_ranges, contact_rows, contact_span, dof_a, dof_b, frame, offset,
                                  regularization, w, force, in_coarse, v_star, v_next)
        if chebyshev:
            nu = chebyshev_weight(it, chebyshev_start, rho, nu)
        # Alg. 3 with under-relaxation, theta, and the shift v_prev <- v <- v_next, in one pass
        square = 0.0
        for i in range(n):
            x = v_next[i]
            if chebyshev:
                x = nu * (v[i] + under_relaxation * (x - v[i]) - v_prev[i]) + v_prev[i]
            d = x - v[i]
            square += d * d
            v_prev[i] = v[i]
            v[i] = x
        theta = np.sqrt(square)
        if two_level:
            if theta < theta_best:
                theta_best = theta
                best_iteration = it
            elif it - best_iteration >= CHEBYSHEV_STALL_ITERATIONS and it >= chebyshev_start:
                chebyshev_start = it + 1 + CHEBYSHEV_RESTART_DELAY
                theta_best = theta
                best_iteration = it
        if theta_prev < np.inf and theta_prev > 0.0:
            rho = min(theta / theta_prev, 1.0)  # (39)
        theta_prev = theta
        if theta < tolerance:  # before the next A v: the last iterate needs none
            break
        if not theta < np.inf:  # a non-finite iterate: stop (SolverCOND.solve raises SimulationError)
            break
        if barzilai_borwein:
            av_prev[:] = av
        augmented_matvec(system, v, av)
    if theta >= tolerance:
        # Not converged within l_max: return the last plain update, which satisfies the contact
        # conditions of its surrogate problem, rather than an extrapolated Chebyshev iterate.
        v[:] = v_plain
    return iterations, theta


@kernel
def contact_velocities(dof_a, dof_b, frame, offset, v):
    """u_m = J_c,m v + phi_m in the contact frames, (m, 3)."""
    out = np.empty((dof_a.shape[0], 3))
    for m in range(dof_a.shape[0]):
        out[m, 0], out[m, 1], out[m, 2] = _contact_velocity(m, dof_a, dof_b, frame, offset, v)
    return out
