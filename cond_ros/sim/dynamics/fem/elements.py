"""Co-rotational linear tetrahedra as potentials of form (7) (Sec. II-A; Moita & Crisfield, ref. [47]).

Per element, F = D_s D_m^-1 maps the rest edges D_m to the current edges D_s; its polar decomposition
F = R S gives the element rotation R. In the rotated frame the strain is the small-strain tensor
eps = sym(R^T F) - I, so psi = V (mu eps:eps + lambda/2 tr(eps)^2) is of form (7) with e = eps (Voigt)
and K = V D. A rigid motion gives R^T F = I, eps = 0: no force, whatever the rotation.

With R held over the step (the outer-product approximation of eq. 8), the element adds
(h + c) R K_e R^T to A (h = theta dt; c: damping policy 1, C = c K) and its elastic force
f_j = -V R sigma g_j to b, where sigma = lambda tr(eps) I + 2 mu eps and g_j are the rest shape-function
gradients. Damping policy 2 also adds h times the diagonal SPD projection (column abs sums, Sec. II-A)
of the dropped geometric stiffness, approximated by the stress stiffness V (g_i . sigma g_j) I of
nonlinear elasticity (the rotation of R with the nodes is what the outer product drops).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ...jit import kernel, parallel_kernel

POLAR_TOLERANCE = 1e-12
POLAR_MAX_ITERATIONS = 30


@kernel
def _det3(m):
    return (m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]) - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
            + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))


@kernel
def _inverse_transpose(m, det, out):
    """out = m^-T (cofactor matrix / det)."""
    s = 1.0 / det
    out[0, 0] = (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]) * s
    out[0, 1] = (m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2]) * s
    out[0, 2] = (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]) * s
    out[1, 0] = (m[0, 2] * m[2, 1] - m[0, 1] * m[2, 2]) * s
    out[1, 1] = (m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0]) * s
    out[1, 2] = (m[0, 1] * m[2, 0] - m[0, 0] * m[2, 1]) * s
    out[2, 0] = (m[0, 1] * m[1, 2] - m[0, 2] * m[1, 1]) * s
    out[2, 1] = (m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]) * s
    out[2, 2] = (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) * s


@kernel
def polar_rotation(f, r, scratch):
    """r = R of F = R S (R proper orthogonal); ``scratch``: a 3x3 work array.

    Scaled Newton (Higham) iteration R <- (g R + R^-T / g) / 2, g = |det R|^(-1/3): quadratic, ~6
    iterations of scalar arithmetic, far cheaper than an SVD. An inverted element (det F <= 0) goes
    through the SVD with the smallest singular direction flipped, which turns it back out (the usual
    inversion-robust choice).
    """
    det = _det3(f)
    size = 0.0
    for a in range(3):
        for b in range(3):
            size = max(size, abs(f[a, b]))
    if det <= 1e-12 * size ** 3:
        u, _, vt = np.linalg.svd(f)
        if _det3(u @ vt) < 0.0:
            u[:, 2] = -u[:, 2]
        r[:] = u @ vt
        return
    r[:] = f
    for _ in range(POLAR_MAX_ITERATIONS):
        _inverse_transpose(r, det, scratch)
        gamma = abs(det) ** (-1.0 / 3.0)
        change = 0.0
        for a in range(3):
            for b in range(3):
                nxt = 0.5 * (gamma * r[a, b] + scratch[a, b] / gamma)
                change = max(change, abs(nxt - r[a, b]))
                r[a, b] = nxt
        if change < POLAR_TOLERANCE:
            break
        det = _det3(r)


@kernel
def shape_gradients(rest_shape_inverse, g):
    """g (4, 3) = rest gradients g_0..g_3 of the linear shape functions as rows: F = sum_j x_j g_j^T."""
    for a in range(3):
        g[1 + a] = rest_shape_inverse[a]
        g[0, a] = -(rest_shape_inverse[0, a] + rest_shape_inverse[1, a] + rest_shape_inverse[2, a])


@kernel
def element_state(particle_q, nodes, rest_shape_inverse, lame, r, sigma, g, f, scratch):
    """Fills r (R), sigma (stress in the rotated frame) and g (rest gradients) of one element.

    ``f`` and ``scratch`` are 3x3 work arrays (no allocation per element: this runs for every element
    every step).
    """
    shape_gradients(rest_shape_inverse, g)
    for a in range(3):
        for b in range(3):
            acc = 0.0
            for j in range(4):
                acc += particle_q[nodes[j], a] * g[j, b]
            f[a, b] = acc
    polar_rotation(f, r, scratch)
    for a in range(3):  # scratch = R^T F
        for b in range(3):
            scratch[a, b] = r[0, a] * f[0, b] + r[1, a] * f[1, b] + r[2, a] * f[2, b]
    trace = scratch[0, 0] + scratch[1, 1] + scratch[2, 2] - 3.0
    for a in range(3):
        for b in range(3):
            eps = 0.5 * (scratch[a, b] + scratch[b, a]) - (1.0 if a == b else 0.0)
            sigma[a, b] = 2.0 * lame[0] * eps + (lame[1] * trace if a == b else 0.0)


@kernel
def rotated_forces(r, sigma, g, volume, q, force):
    """q (4, 3) = R g_j, the rotated gradients; force (4, 3) = -V R sigma g_j, the elastic nodal forces."""
    for j in range(4):
        s0 = sigma[0, 0] * g[j, 0] + sigma[0, 1] * g[j, 1] + sigma[0, 2] * g[j, 2]
        s1 = sigma[1, 0] * g[j, 0] + sigma[1, 1] * g[j, 1] + sigma[1, 2] * g[j, 2]
        s2 = sigma[2, 0] * g[j, 0] + sigma[2, 1] * g[j, 1] + sigma[2, 2] * g[j, 2]
        for a in range(3):
            q[j, a] = r[a, 0] * g[j, 0] + r[a, 1] * g[j, 1] + r[a, 2] * g[j, 2]
            force[j, a] = -volume * (r[a, 0] * s0 + r[a, 1] * s1 + r[a, 2] * s2)


#: elements (pass 1) or nodes (pass 2) per work item of :func:`assemble_tetrahedra`'s parallel loops; a work
#: item allocates its own scratch once
CHUNK = 256


@parallel_kernel
def _element_terms(tet_nodes, rest_shape_inverse, rest_volume, lame, geometric, particle_q, g_all, q_all, force_all,
                   geometric_all):
    """Pass 1 of :func:`assemble_tetrahedra`, element by element (independent): each element's rest gradients
    g (T, 4, 3), rotated gradients q (T, 4, 3), elastic nodal forces (T, 4, 3) and, with ``geometric``, the
    diagonal projection of its stress stiffness per node (T, 4). An element's views cost little beside its
    polar decomposition: this pass takes 2.14 ms on one thread and 1.20 on two (soft_ball)."""
    count = tet_nodes.shape[0]
    for chunk in prange((count + CHUNK - 1) // CHUNK):
        r, sigma, f, scratch = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
        for t in range(chunk * CHUNK, min(count, (chunk + 1) * CHUNK)):
            g = g_all[t]
            element_state(particle_q, tet_nodes[t], rest_shape_inverse[t], lame[t], r, sigma, g, f, scratch)
            volume = rest_volume[t]
            rotated_forces(r, sigma, g, volume, q_all[t], force_all[t])
            if geometric:
                for i in range(4):
                    diagonal = 0.0
                    for j in range(4):
                        acc = 0.0
                        for a in range(3):
                            acc += g[i, a] * (sigma[a, 0] * g[j, 0] + sigma[a, 1] * g[j, 1] + sigma[a, 2] * g[j, 2])
                        diagonal += abs(volume * acc)
                    geometric_all[t, i] = diagonal


@parallel_kernel
def _scatter_rows(rest_volume, lame, damping_time, geometric, h, tet_pairs, block_slot, incidence_ptr, incidence,
                  g_all, q_all, force_all, geometric_all, data, b):
    """Pass 2 of :func:`assemble_tetrahedra`, node by node: the node's rows of A and b, from its elements in
    ascending order. Only the node's own pass writes its rows, and each entry gets its terms in the order of
    the serial loop over elements, so the sums are bit for bit the serial ones.

    It indexes pass 1's arrays and never slices them: a view counts a reference on its parent array
    atomically, several per element and node, and the two threads contended on it (1.85 ms on two threads
    against 1.97 on one; indexed, 0.71 and 1.16 on soft_ball)."""
    nodes = incidence_ptr.shape[0] - 1
    for chunk in prange((nodes + CHUNK - 1) // CHUNK):
        for node in range(chunk * CHUNK, min(nodes, (chunk + 1) * CHUNK)):
            row = 3 * node
            for e in range(incidence_ptr[node], incidence_ptr[node + 1]):
                t = incidence[e] // 4
                i = incidence[e] % 4
                for a in range(3):
                    b[row + a] += force_all[t, i, a]
                scale = (h + damping_time[t]) * rest_volume[t]
                mu, lam = lame[t, 0], lame[t, 1]
                for j in range(4):
                    pair = tet_pairs[t, 4 * i + j]
                    dot = (g_all[t, i, 0] * g_all[t, j, 0] + g_all[t, i, 1] * g_all[t, j, 1]
                           + g_all[t, i, 2] * g_all[t, j, 2])
                    for a in range(3):
                        start = np.uint64(block_slot[pair, a])  # unsigned: no wraparound check (linalg.U1)
                        for c in range(3):
                            k = (lam * q_all[t, i, a] * q_all[t, j, c] + mu * q_all[t, j, a] * q_all[t, i, c]
                                 + (mu * dot if a == c else 0.0))
                            data[start + np.uint64(c)] += scale * k
                if geometric:
                    pair = tet_pairs[t, 5 * i]
                    for a in range(3):
                        data[block_slot[pair, a] + a] += h * geometric_all[t, i]


def node_incidence(tet_nodes: np.ndarray, particle_count: int):
    """(ptr, entries): node p's elements are ``entries[ptr[p]:ptr[p + 1]] // 4``, in ascending order, with the
    node's local index (0-3) in that element as ``entries % 4``."""
    flat = np.asarray(tet_nodes, np.int64).reshape(-1)
    entries = np.argsort(flat, kind="stable").astype(np.int64)  # element-major order kept within a node
    ptr = np.zeros(particle_count + 1, np.int64)
    np.cumsum(np.bincount(flat, minlength=particle_count), out=ptr[1:])
    return ptr, entries


def assemble_tetrahedra(tet_nodes, rest_shape_inverse, rest_volume, lame, damping_time, geometric, particle_q, h,
                        tet_pairs, block_slot, incidence, data, b):
    """Adds every element's (h + c) R K_e R^T to A and its elastic force to b (see module docstring).

    R K_ij R^T = V (lambda q_i q_j^T + mu q_j q_i^T + mu (q_i . q_j) I) with q = R g (R I R^T = I).
    ``tet_pairs[t, 4 i + j]`` is the pattern's block of nodes (i, j); particle p's DOFs are 3p..3p+2;
    ``incidence`` is :func:`node_incidence`. Elements scatter into shared blocks, so the work runs in two
    parallel passes that each write disjoint data: per element (rotation, stress, forces), then per node (its
    rows, its elements in ascending order). Every sum is then the serial loop's, whatever the thread count.
    """
    count = tet_nodes.shape[0]
    g_all, q_all, force_all = np.empty((count, 4, 3)), np.empty((count, 4, 3)), np.empty((count, 4, 3))
    geometric_all = np.empty((count if geometric else 0, 4))
    _element_terms(tet_nodes, rest_shape_inverse, rest_volume, lame, geometric, particle_q, g_all, q_all, force_all,
                   geometric_all)
    _scatter_rows(rest_volume, lame, damping_time, geometric, h, tet_pairs, block_slot, incidence[0], incidence[1],
                  g_all, q_all, force_all, geometric_all, data, b)


@kernel
def elastic_forces(tet_nodes, rest_shape_inverse, rest_volume, lame, particle_q, out):
    """out (particle_count, 3) = the elements' elastic forces on the nodes [N] (no damping)."""
    out[:] = 0.0
    r, sigma, f, scratch = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    g, q, force = np.empty((4, 3)), np.empty((4, 3)), np.empty((4, 3))
    for t in range(tet_nodes.shape[0]):
        element_state(particle_q, tet_nodes[t], rest_shape_inverse[t], lame[t], r, sigma, g, f, scratch)
        rotated_forces(r, sigma, g, rest_volume[t], q, force)
        for j in range(4):
            for a in range(3):
                out[tet_nodes[t, j], a] += force[j, a]


@kernel
def element_stresses(tet_nodes, rest_shape_inverse, lame, particle_q, out):
    """out (T, 3, 3) = each element's stress rotated to the world, R sigma R^T [Pa]."""
    r, sigma, f, scratch = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    g = np.empty((4, 3))
    for t in range(tet_nodes.shape[0]):
        element_state(particle_q, tet_nodes[t], rest_shape_inverse[t], lame[t], r, sigma, g, f, scratch)
        out[t] = r @ sigma @ r.T
