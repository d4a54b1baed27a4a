"""Tests of ``cond_ros.sim.dynamics.assembly``: the step's linear system of eq. (1), (9) and (15).

Every expected value comes from a dense NumPy construction written in this file
from the paper's formulas (Sec. II-A and III-A), from finite differences of the
potential energy, or from the block form of eq. (15); none is taken from the
package's own output.

Conventions (see the task brief / ``model.py``): v = [particles 3 each | bodies
6 each (COM linear velocity, world angular velocity)].

    A = M_hat + dt/2 (Je^T K Je + E),  M_hat = 2 M / dt,
    b = M_hat v - C v - Je^T K e + f_ext,

with ``damping`` c adding c Je^T Je to A, and DampingPolicy.GEOMETRIC adding
dt/2 times the diagonal column-absolute-sum projection of the geometric
stiffness on particle ends.
"""
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.transform import Rotation

from cond_ros import sim
from cond_ros.sim.collision.nodalization import build_contact_set
from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.linalg import augmented_matvec
from cond_ros.sim.model import DampingPolicy, PointKind, PotentialType

# Tolerances ---------------------------------------------------------------
ASSEMBLY_RTOL = 1e-10  # code vs dense re-implementation, relative to the largest entry
FD_STEP = 1e-6  # central finite-difference step [m] / [rad]
FD_RTOL = 1e-6  # finite differences vs analytic Jacobian / gradient, relative to the largest entry
MATVEC_RTOL = 1e-12  # matrix-free product vs explicit matrix product
SPD_MIN_REL_EIG = 1e-14  # smallest eigenvalue / largest eigenvalue must exceed this

DT = 0.01
SEEDS = (0, 1, 2)


# ---------------------------------------------------------------------------
# Plain, independent kinematics
# ---------------------------------------------------------------------------
def rotation(quat_wxyz):
    """Rotation matrix of a (w, x, y, z) quaternion, via SciPy (scalar-last convention)."""
    w, x, y, z = quat_wxyz
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def random_quat(rng):
    """A random unit quaternion in (w, x, y, z) order."""
    x, y, z, w = Rotation.random(random_state=rng).as_quat()
    return (w, x, y, z)


def random_inertia(rng):
    """A random SPD body inertia Q diag(d) Q^T (non-spherical)."""
    q = Rotation.random(random_state=rng).as_matrix()
    d = rng.uniform(0.05, 0.5, 3)
    return q @ np.diag(d) @ q.T


def skew(r):
    """[r]x, so that skew(r) @ w == cross(r, w)."""
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def body_rotations(model, quats):
    """World rotation matrices of all bodies."""
    return [rotation(q) for q in quats]


def end_position(model, u, end, pq, bq, brot):
    """World position of end ``end`` of potential ``u`` for particle positions pq, body positions bq, rotations brot."""
    kind = model.potential_kind[u, end]
    idx = model.potential_index[u, end]
    local = model.potential_local[u, end]
    if kind == PointKind.PARTICLE:
        return pq[idx].copy()
    if kind == PointKind.BODY:
        return bq[idx] + brot[idx] @ local
    return local.copy()


def end_jacobian(model, u, end, bq, brot):
    """3 x n Jacobian of an end point's world velocity w.r.t. v (zero for a world point).

    Velocity of a body point at world arm r: v_com + w x r = v_com - [r]x w.
    """
    n = model.dof_count
    jac = np.zeros((3, n))
    kind = model.potential_kind[u, end]
    idx = model.potential_index[u, end]
    if kind == PointKind.PARTICLE:
        jac[:, 3 * idx:3 * idx + 3] = np.eye(3)
    elif kind == PointKind.BODY:
        d = model.body_dof_start + 6 * idx
        r = brot[idx] @ model.potential_local[u, end]
        jac[:, d:d + 3] = np.eye(3)
        jac[:, d + 3:d + 6] = -skew(r)
    return jac


def potential_errors(model, pq, bq, brot):
    """List of e_u (1-D array each) from the definitions DISTANCE: |d| - L0, COUPLING: d."""
    out = []
    for u in range(model.potential_count):
        d = end_position(model, u, 0, pq, bq, brot) - end_position(model, u, 1, pq, bq, brot)
        if model.potential_type[u] == PotentialType.DISTANCE:
            out.append(np.array([np.linalg.norm(d) - model.potential_rest_length[u]]))
        else:
            out.append(d)
    return out


def potential_energy(model, pq, bq, brot):
    """psi = sum_u 1/2 k_u |e_u|^2 (eq. 7 with K = k I)."""
    return sum(0.5 * k[0] * e @ e for k, e in zip(model.potential_stiffness, potential_errors(model, pq, bq, brot)))


def error_jacobian(model, pq, bq, brot):
    """Stacked analytic Je (rows: all potentials' error components) and the row slices of each potential."""
    rows, slices, start = [], [], 0
    for u in range(model.potential_count):
        ja = end_jacobian(model, u, 0, bq, brot)
        jb = end_jacobian(model, u, 1, bq, brot)
        d = end_position(model, u, 0, pq, bq, brot) - end_position(model, u, 1, pq, bq, brot)
        if model.potential_type[u] == PotentialType.DISTANCE:
            n = d / np.linalg.norm(d)
            je = n[None, :] @ (ja - jb)
        else:
            je = ja - jb
        rows.append(je)
        slices.append(slice(start, start + je.shape[0]))
        start += je.shape[0]
    return (np.vstack(rows) if rows else np.zeros((0, model.dof_count))), slices


def perturbed(model, pq, bq, brot, dof, h):
    """Configuration moved by h along generalized coordinate ``dof``.

    Particle and body COM coordinates are translated; a body's angular coordinates
    are a world-frame rotation vector, R <- exp([h e_i]x) R, matching the world angular velocity.
    """
    pq, bq, brot = pq.copy(), bq.copy(), [r.copy() for r in brot]
    if dof < model.body_dof_start:
        pq[dof // 3, dof % 3] += h
    else:
        j, c = divmod(dof - model.body_dof_start, 6)
        if c < 3:
            bq[j, c] += h
        else:
            rv = np.zeros(3)
            rv[c - 3] = h
            brot[j] = Rotation.from_rotvec(rv).as_matrix() @ brot[j]
    return pq, bq, brot


def body_rotation_geometric(model, u, pq, bq, brot, diag):
    """Adds the projected rotational geometric stiffness of potential u's body ends (isotropic gains)."""
    d = end_position(model, u, 0, pq, bq, brot) - end_position(model, u, 1, pq, bq, brot)
    k = model.potential_stiffness[u, 0]
    if model.potential_type[u] == PotentialType.DISTANCE:
        length = np.linalg.norm(d)
        tension = k * (length - model.potential_rest_length[u]) * d / length
    else:
        tension = k * d
    for x, sign in ((0, -1.0), (1, 1.0)):
        if model.potential_kind[u, x] != PointKind.BODY:
            continue
        j = model.potential_index[u, x]
        arm = brot[j] @ model.potential_local[u, x]
        force = sign * tension

        # exp([t]x) r = r + t x r + 1/2 t x (t x r) + O(t^3), and t x (t x r) = t (t . r) - r (t . t):
        # g(t) = -f . p(t) has the Hessian -(f r^T + r f^T) / 2 + (f . r) I
        hess = -0.5 * (np.outer(force, arm) + np.outer(arm, force)) + (force @ arm) * np.eye(3)
        dof = model.body_dof_start + 6 * j + 3
        diag[dof:dof + 3] += np.abs(hess).sum(axis=0)


def geometric_diagonal(model, pq, bq, brot):
    """dt/2-free diagonal of the GEOMETRIC policy, written from the definition.

    For a DISTANCE potential the Hessian of e w.r.t. the stacked world positions
    of its non-world ends is S (x) G0 with G0 = (I - n n^T) / l and
    S = [[1, -1], [-1, 1]] (two ends) or [[1]] (one end). The geometric stiffness
    is k e times that; its SPD projection is the diagonal matrix of column
    absolute sums, applied on the particle ends. A body end adds the rotational
    Hessian of -f . p(theta), p = c + exp([theta]x) r, with f the force on that end,
    from the exponential series, projected the same way on its rotational DOFs.
    """
    diag = np.zeros(model.dof_count)
    for u in range(model.potential_count):
        body_rotation_geometric(model, u, pq, bq, brot, diag)
        if model.potential_type[u] != PotentialType.DISTANCE:
            continue
        d = end_position(model, u, 0, pq, bq, brot) - end_position(model, u, 1, pq, bq, brot)
        length = np.linalg.norm(d)
        n = d / length
        e = length - model.potential_rest_length[u]
        g0 = (np.eye(3) - np.outer(n, n)) / length
        ends = [x for x in range(2) if model.potential_kind[u, x] != PointKind.WORLD]
        signs = np.array([1.0, -1.0])[: len(ends)] if len(ends) == 2 else np.array([1.0])
        hess = model.potential_stiffness[u, 0] * e * np.kron(np.outer(signs, signs), g0)
        colsum = np.abs(hess).sum(axis=0)
        for slot, x in enumerate(ends):
            if model.potential_kind[u, x] == PointKind.PARTICLE:
                i = model.potential_index[u, x]
                diag[3 * i:3 * i + 3] += colsum[3 * slot:3 * slot + 3]
    return diag


def dense_system(model, state, control, dt):
    """A and b of eq. (9) built densely from the formulas, independently of the package."""
    n = model.dof_count
    a = np.zeros((n, n))
    b = np.zeros(n)
    g = model.gravity
    for i in range(model.particle_count):
        s = slice(3 * i, 3 * i + 3)
        m = model.particle_mass[i]
        a[s, s] = 2.0 * m / dt * np.eye(3)
        b[s] = 2.0 * m / dt * state.particle_qd[i] + m * g + control.particle_force[i]
    brot = body_rotations(model, state.body_quat)
    for j in range(model.body_count):
        d = model.body_dof_start + 6 * j
        lin, ang = slice(d, d + 3), slice(d + 3, d + 6)
        m = model.body_mass[j]
        iw = brot[j] @ model.body_inertia[j] @ brot[j].T  # world inertia
        w = state.body_qd[j, 3:]
        a[lin, lin] = 2.0 * m / dt * np.eye(3)
        a[ang, ang] = 2.0 / dt * iw
        b[lin] = 2.0 * m / dt * state.body_qd[j, :3] + m * g + control.body_wrench[j, :3]
        # d/dt (I_w w) = I_w dw/dt + w x (I_w w): C(q, v) v = w x I_w w
        b[ang] = 2.0 / dt * iw @ w - np.cross(w, iw @ w) + control.body_wrench[j, 3:]
    je, slices = error_jacobian(model, state.particle_q, state.body_q, brot)
    errs = potential_errors(model, state.particle_q, state.body_q, brot)
    for u in range(model.potential_count):
        ju = je[slices[u]]
        k = model.potential_stiffness[u, 0]  # isotropic gains in these scenes
        c = model.potential_damping[u, 0]
        a += (0.5 * dt * k + c) * ju.T @ ju
        b -= ju.T @ (k * errs[u])
    if model.damping_policy == DampingPolicy.GEOMETRIC:
        a += np.diag(0.5 * dt * geometric_diagonal(model, state.particle_q, state.body_q, brot))
    return a, b


# ---------------------------------------------------------------------------
# Scenes
# ---------------------------------------------------------------------------
def random_scene(seed, policy=DampingPolicy.CONSTANT):
    """Particles, three bodies and every kind of potential end pairing, with random values."""
    rng = np.random.default_rng(seed)
    bld = sim.ModelBuilder(gravity=rng.normal(0.0, 5.0, 3))
    n_p = 4
    for _ in range(n_p):
        bld.add_particle(rng.uniform(-1, 1, 3), mass=rng.uniform(0.1, 2.0), velocity=rng.normal(0, 1, 3))
    n_b = 3
    for _ in range(n_b):
        bld.add_body(rng.uniform(-1, 1, 3), mass=rng.uniform(0.5, 3.0), inertia=random_inertia(rng),
                     quat=random_quat(rng), velocity=rng.normal(0, 1, 3), angular_velocity=rng.normal(0, 2, 3))

    def bp(j):
        return sim.body_point(j, rng.uniform(-0.3, 0.3, 3))

    def wp():
        return sim.world_point(rng.uniform(-1.5, 1.5, 3))

    def spring(a, b):
        # rest length away from the current length, so e != 0 (stretched or compressed)
        bld.add_spring(a, b, stiffness=rng.uniform(10, 1000), rest_length=rng.uniform(0.1, 1.0),
                       damping=rng.uniform(0, 5))

    def couple(a, b):
        bld.add_coupling(a, b, stiffness=rng.uniform(10, 1000), damping=rng.uniform(0, 5))

    spring(sim.particle(0), sim.particle(1))
    spring(sim.particle(1), sim.particle(2))
    spring(sim.particle(2), bp(0))
    spring(bp(1), sim.particle(3))
    spring(bp(0), bp(2))
    spring(sim.particle(3), wp())
    spring(wp(), bp(1))
    couple(sim.particle(0), bp(1))
    couple(bp(2), wp())
    couple(sim.particle(2), sim.particle(3))
    couple(bp(0), bp(1))
    couple(bp(2), bp(2))  # two points of the same body: a coupling inside one diagonal block
    model = bld.finalize(damping_policy=policy)
    control = sim.Control(particle_force=rng.normal(0, 3, (n_p, 3)), body_wrench=rng.normal(0, 3, (n_b, 6)))
    return model, control


def assembled(model, control, dt=DT):
    pattern = build_pattern(model)
    system = assemble(model, pattern, model.state(), control, dt)
    return pattern, system


def assert_close_rel(actual, expected, rtol, what):
    """|actual - expected| <= rtol * max|expected| entrywise."""
    scale = max(np.max(np.abs(expected)), 1e-300)
    err = np.max(np.abs(actual - expected)) if np.size(expected) else 0.0
    assert err <= rtol * scale, f"{what}: max abs error {err:.3e} > {rtol:.0e} * {scale:.3e}"


# ---------------------------------------------------------------------------
# Eq. (9): A and b
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("policy", [DampingPolicy.CONSTANT, DampingPolicy.GEOMETRIC])
@pytest.mark.parametrize("seed", SEEDS)
def test_assemble_matches_dense_construction(seed, policy):
    """A and b of a random scene equal the dense eq. (9) built in the test (1e-10 relative)."""
    model, control = random_scene(seed, policy)
    _, system = assembled(model, control)
    a_ref, b_ref = dense_system(model, model.state(), control, DT)
    assert system.vn_count == 0
    assert system.size == model.dof_count
    assert_close_rel(system.matrix().toarray(), a_ref, ASSEMBLY_RTOL, "A")
    assert_close_rel(system.b, b_ref, ASSEMBLY_RTOL, "b")
    np.testing.assert_array_equal(system.rhs(), system.b)


def test_geometric_policy_only_changes_particle_diagonal():
    """GEOMETRIC - CONSTANT is a non-negative diagonal on particle and body rotation DOFs, dt/2 of the projection."""
    model_c, control = random_scene(5, DampingPolicy.CONSTANT)
    model_g, _ = random_scene(5, DampingPolicy.GEOMETRIC)
    diff = assembled(model_g, control)[1].matrix().toarray() - assembled(model_c, control)[1].matrix().toarray()
    off = diff - np.diag(np.diag(diff))
    assert np.max(np.abs(off)) == 0.0
    body = np.arange(model_g.body_dof_start, model_g.dof_count).reshape(-1, 6)
    assert np.all(np.diag(diff)[body[:, :3].ravel()] == 0.0)  # translations untouched
    assert np.all(np.diag(diff) >= 0.0)
    brot = body_rotations(model_g, model_g.body_quat)
    expected = 0.5 * DT * geometric_diagonal(model_g, model_g.particle_q, model_g.body_q, brot)
    assert_close_rel(np.diag(diff), expected, ASSEMBLY_RTOL, "geometric diagonal")
    assert np.any(expected > 0.0)


def test_geometric_hessian_formula_matches_finite_differences():
    """The (I - n n^T)/l block used by the test's GEOMETRIC reference is the FD Hessian of |p_a - p_b|."""
    rng = np.random.default_rng(11)
    pa, pb = rng.normal(size=3), rng.normal(size=3)
    d = pa - pb
    length = np.linalg.norm(d)
    n = d / length
    hess_ref = (np.eye(3) - np.outer(n, n)) / length
    h = 1e-4
    hess_fd = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            def f(si, sj):
                x = pa.copy()
                x[i] += si * h
                x[j] += sj * h
                return np.linalg.norm(x - pb)
            hess_fd[i, j] = (f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / (4 * h * h)
    assert_close_rel(hess_fd, hess_ref, 1e-5, "Hessian of distance")


@pytest.mark.parametrize("seed", SEEDS)
def test_error_jacobian_matches_finite_differences(seed):
    """The test's analytic Je (used by the dense reference) equals central differences of e(q).

    Particles and body COMs are translated; body orientations are perturbed by
    small world-frame rotation vectors (the coordinates paired with world angular velocity).
    """
    model, _ = random_scene(seed)
    pq, bq = model.particle_q, model.body_q
    brot = body_rotations(model, model.body_quat)
    je, _ = error_jacobian(model, pq, bq, brot)
    je_fd = np.empty_like(je)
    for dof in range(model.dof_count):
        ep = np.concatenate(potential_errors(model, *perturbed(model, pq, bq, brot, dof, FD_STEP)))
        em = np.concatenate(potential_errors(model, *perturbed(model, pq, bq, brot, dof, -FD_STEP)))
        je_fd[:, dof] = (ep - em) / (2 * FD_STEP)
    assert_close_rel(je, je_fd, FD_RTOL, "Je")


@pytest.mark.parametrize("seed", SEEDS)
def test_potential_force_is_minus_energy_gradient(seed):
    """The potential part of the assembled b is -d psi/dq, psi = sum 1/2 k |e|^2, by central differences.

    The potential part is b minus the inertia/gravity/control part written in the
    test; the gradient w.r.t. body rotations uses world-frame rotation vectors.
    """
    model, control = random_scene(seed)
    _, system = assembled(model, control)
    no_pot = dataclasses.replace(model, potential_count=0)
    _, b_inertia = dense_system(no_pot, model.state(), control, DT)
    force_code = system.b - b_inertia
    pq, bq = model.particle_q, model.body_q
    brot = body_rotations(model, model.body_quat)
    grad = np.empty(model.dof_count)
    for dof in range(model.dof_count):
        grad[dof] = (potential_energy(model, *perturbed(model, pq, bq, brot, dof, FD_STEP))
                     - potential_energy(model, *perturbed(model, pq, bq, brot, dof, -FD_STEP))) / (2 * FD_STEP)
    assert_close_rel(force_code, -grad, FD_RTOL, "Je^T K e vs -grad psi")


def test_single_particle_world_spring_by_hand():
    """One particle on a COUPLING spring to a world point: A and b by hand (scalar formulas)."""
    m, k, c, dt = 0.7, 300.0, 2.0, 0.02
    p, v, anchor, f, g = (np.array([0.1, 0.2, 0.3]), np.array([1.0, -2.0, 0.5]), np.array([0.0, 0.5, -0.1]),
                          np.array([0.3, 0.0, -1.0]), np.array([0.0, 0.0, -9.81]))
    bld = sim.ModelBuilder(gravity=g)
    bld.add_particle(p, mass=m, velocity=v)
    bld.add_coupling(sim.particle(0), sim.world_point(anchor), stiffness=k, damping=c)
    model = bld.finalize()
    control = sim.Control(particle_force=f[None, :], body_wrench=np.zeros((0, 6)))
    _, system = assembled(model, control, dt)
    a_ref = (2 * m / dt + dt / 2 * k + c) * np.eye(3)
    b_ref = 2 * m / dt * v + m * g + f - k * (p - anchor)
    assert_close_rel(system.matrix().toarray(), a_ref, ASSEMBLY_RTOL, "A")
    assert_close_rel(system.b, b_ref, ASSEMBLY_RTOL, "b")


# ---------------------------------------------------------------------------
# Structure: symmetric pattern, SPD
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("policy", [DampingPolicy.CONSTANT, DampingPolicy.GEOMETRIC])
@pytest.mark.parametrize("seed", SEEDS + (7, 8))
def test_pattern_symmetric_and_matrix_spd(seed, policy):
    """The CSR pattern is structurally symmetric without duplicates, and A is SPD (eq. 9)."""
    model, control = random_scene(seed, policy)
    pattern, system = assembled(model, control)
    n = model.dof_count
    assert pattern.indptr.shape == (n + 1,)
    for i in range(n):
        row = pattern.indices[pattern.indptr[i]:pattern.indptr[i + 1]]
        assert len(np.unique(row)) == len(row), f"duplicate column in row {i}"
        assert np.all((row >= 0) & (row < n))
    struct = sp.csr_matrix((np.ones(pattern.nnz), pattern.indices, pattern.indptr), shape=(n, n)).toarray()
    np.testing.assert_array_equal(struct, struct.T)
    a = system.matrix().toarray()
    assert np.max(np.abs(a - a.T)) <= ASSEMBLY_RTOL * np.max(np.abs(a))
    eig = np.linalg.eigvalsh(0.5 * (a + a.T))
    assert eig[0] > SPD_MIN_REL_EIG * eig[-1], f"smallest eigenvalue {eig[0]:.3e}"


def test_empty_model_assembles_to_empty_system():
    """A scene without DOFs gives a 0 x 0 system."""
    model = sim.ModelBuilder().finalize()
    pattern, system = assembled(model, model.control())
    assert system.matrix().shape == (0, 0)
    assert system.b.shape == (0,)
    assert pattern.nnz == 0


# ---------------------------------------------------------------------------
# Eq. (15): virtual nodes
# ---------------------------------------------------------------------------
BOX_HALF = np.array([0.2, 0.15, 0.1])
BOX_GAP = 0.002  # bottom face above the floor [m], inside the default contact margin
PARTICLE_RADIUS = 0.01


def resting_scene():
    """A box resting flat on the floor (z = 0), a particle in the floor/wall corner, and a spring between them.

    The particle touches two planes; whether its contacts act on its own node or
    through particle virtual nodes (J_v = I) is the contact module's choice, and
    the reference below handles both.
    """
    bld = sim.ModelBuilder()
    yaw = Rotation.from_euler("z", 0.7)
    x, y, z, w = yaw.as_quat()
    box = bld.add_body((1.0, 0.5, BOX_HALF[2] + BOX_GAP), mass=0.8, inertia=sim.box_inertia(0.8, BOX_HALF),
                       quat=(w, x, y, z), velocity=(0.05, -0.02, -0.01), angular_velocity=(0.0, 0.0, 0.3))
    bld.add_shape_box(box, BOX_HALF, mu=0.5)
    bld.add_particle((0.0 + PARTICLE_RADIUS + 0.001, 0.3, PARTICLE_RADIUS + 0.001), mass=0.2,
                     radius=PARTICLE_RADIUS, velocity=(-0.01, 0.0, -0.01))
    bld.add_spring(sim.particle(0), sim.body_point(box, (0.2, 0.0, 0.1)), stiffness=200.0, rest_length=0.5,
                   damping=1.0)
    bld.add_collider_plane(normal=(0, 0, 1), point=(0, 0, 0), mu=0.4)
    bld.add_collider_plane(normal=(1, 0, 0), point=(0, 0, 0), mu=0.4)
    return bld.finalize(virtual_node_gain=3e4)


def virtual_jacobian_reference(model, state, contacts):
    """J_v (3 n_v x n_o) from each virtual node's source point, built from the model in the test."""
    n_o = model.dof_count
    virtual = np.flatnonzero(contacts.dof_a >= n_o)
    jv = np.zeros((3 * len(virtual), n_o))
    owners = []
    for m in virtual:
        k = (contacts.dof_a[m] - n_o) // 3
        rows = slice(3 * k, 3 * k + 3)
        idx = contacts.source_index[m]
        if contacts.source_kind[m] == 0:  # particle
            jv[rows, 3 * idx:3 * idx + 3] = np.eye(3)
            owners.append(("particle", idx))
        else:
            body = model.contact_point_body[idx]
            r = rotation(state.body_quat[body]) @ model.contact_point_local[idx]
            d = model.body_dof_start + 6 * body
            jv[rows, d:d + 3] = np.eye(3)
            jv[rows, d + 3:d + 6] = -skew(r)
            owners.append(("corner", idx))
    return jv, owners


def resting_system():
    model = resting_scene()
    state = model.state()
    control = model.control()
    pattern = build_pattern(model)
    contacts = build_contact_set(model, pattern, state, DT)
    system = assemble(model, pattern, state, control, DT, contacts.vn_dof, contacts.vn_size, contacts.vn_jac,
                      contacts.vn_group)
    return model, state, control, contacts, system


def test_virtual_nodes_are_the_expected_points():
    """Each of the four bottom box corners gets one virtual node (eq. 14); the particle's two contacts act on it.

    The particle (touching floor and wall) may use its own node or particle
    virtual nodes; either way every contact acts on a node of the augmented v.
    """
    model, state, _, contacts, system = resting_system()
    rot = rotation(state.body_quat[0])
    corner_z = state.body_q[0, 2] + model.contact_point_local @ rot[2]
    bottom = set(np.flatnonzero(corner_z < model.contact_margin).tolist())
    assert len(bottom) == 4
    assert contacts.count == 6
    _, owners = virtual_jacobian_reference(model, state, contacts)
    corners = sorted(idx for kind, idx in owners if kind == "corner")
    particle_vns = [idx for kind, idx in owners if kind == "particle"]
    assert corners == sorted(bottom)
    assert set(particle_vns) <= {0}
    assert system.vn_count == 4 + len(particle_vns)
    assert system.size == model.dof_count + 3 * system.vn_count
    # contacts not on a virtual node act on the particle's own DOFs
    direct = contacts.dof_a[contacts.dof_a < model.dof_count]
    assert np.all(direct == 0)
    assert len(direct) + len(particle_vns) == 2


def test_augmented_matrix_matches_block_form_of_eq15():
    """LinearSystem.matrix() == [[A_o + kv Jv^T Jv, -kv Jv^T], [-kv Jv, kv I]] built densely."""
    model, state, control, contacts, system = resting_system()
    a_o, b_o = dense_system(model, state, control, DT)
    jv, _ = virtual_jacobian_reference(model, state, contacts)
    kv = model.virtual_node_gain
    n_v = jv.shape[0]
    a_ref = np.block([[a_o + kv * jv.T @ jv, -kv * jv.T], [-kv * jv, kv * np.eye(n_v)]])
    a = system.matrix().toarray()
    assert_close_rel(a, a_ref, ASSEMBLY_RTOL, "augmented A")
    assert_close_rel(system.rhs(), np.concatenate([b_o, np.zeros(n_v)]), ASSEMBLY_RTOL, "augmented b")


def test_augmented_matrix_is_spd_and_reduces_to_original():
    """Prop. 1: the augmented A is SPD; eliminating the virtual nodes (Schur complement) gives back A_o."""
    model, state, control, contacts, system = resting_system()
    a = system.matrix().toarray()
    n_o = model.dof_count
    assert np.max(np.abs(a - a.T)) <= ASSEMBLY_RTOL * np.max(np.abs(a))
    eig = np.linalg.eigvalsh(a)
    assert eig[0] > SPD_MIN_REL_EIG * eig[-1]
    a_o_ref, _ = dense_system(model, state, control, DT)
    schur = a[:n_o, :n_o] - a[:n_o, n_o:] @ np.linalg.solve(a[n_o:, n_o:], a[n_o:, :n_o])
    assert_close_rel(schur, a_o_ref, 1e-9, "Schur complement")


def test_augmented_matvec_matches_matrix_product():
    """The matrix-free augmented_matvec equals matrix() @ x for random x."""
    model, _, _, _, system = resting_system()
    a = system.matrix()
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = rng.normal(size=system.size)
        out = np.full(system.size, np.nan)
        augmented_matvec(system.augmented(), x, out)
        ref = a @ x
        assert_close_rel(out, ref, MATVEC_RTOL, "augmented_matvec")


def random_virtual_nodes(model, rng, count):
    """Virtual nodes on random owners (particles: J_v = I; bodies: J_v = [I, -[r]x] with random arm r)."""
    owners = rng.integers(0, model.particle_count + model.body_count, count)
    owners.sort()  # owner by owner, as the contact module creates them
    vn_dof = np.where(owners < model.particle_count, 3 * owners,
                      model.body_dof_start + 6 * (owners - model.particle_count)).astype(np.int64)
    vn_size = np.where(owners < model.particle_count, 3, 6).astype(np.int64)
    vn_arm = np.where((owners < model.particle_count)[:, None], 0.0, rng.uniform(-0.4, 0.4, (count, 3)))
    vn_jac = np.zeros((count, 3, 6))
    vn_jac[:, :, :3] = np.eye(3)
    for k in range(count):
        if vn_size[k] == 6:
            vn_jac[k, :, 3:] = -skew(vn_arm[k])
    return vn_dof, vn_size, vn_jac, owners.astype(np.int64), vn_arm


def virtual_jacobian_from_arrays(model, vn_dof, vn_size, vn_arm):
    jv = np.zeros((3 * len(vn_dof), model.dof_count))
    for k, (dof, size, arm) in enumerate(zip(vn_dof, vn_size, vn_arm)):
        jv[3 * k:3 * k + 3, dof:dof + 3] = np.eye(3)
        if size == 6:
            jv[3 * k:3 * k + 3, dof + 3:dof + 6] = -skew(arm)
    return jv


@pytest.mark.parametrize("seed", SEEDS)
def test_hand_made_virtual_nodes_eq15(seed):
    """Random scene with virtual nodes on particles and bodies: matrix() is eq. (15), SPD, and matvec agrees."""
    model, control = random_scene(seed)
    rng = np.random.default_rng(100 + seed)
    vn = random_virtual_nodes(model, rng, 9)
    pattern = build_pattern(model)
    system = assemble(model, pattern, model.state(), control, DT, *vn[:4])
    a_o, b_o = dense_system(model, model.state(), control, DT)
    jv = virtual_jacobian_from_arrays(model, vn[0], vn[1], vn[4])
    kv = model.virtual_node_gain
    a_ref = np.block([[a_o + kv * jv.T @ jv, -kv * jv.T], [-kv * jv, kv * np.eye(jv.shape[0])]])
    a = system.matrix().toarray()
    assert_close_rel(a, a_ref, ASSEMBLY_RTOL, "augmented A")
    assert_close_rel(system.rhs(), np.concatenate([b_o, np.zeros(jv.shape[0])]), ASSEMBLY_RTOL, "augmented b")
    eig = np.linalg.eigvalsh(a)
    assert eig[0] > SPD_MIN_REL_EIG * eig[-1]
    for _ in range(3):
        x = rng.normal(size=system.size)
        out = np.full(system.size, np.nan)
        augmented_matvec(system.augmented(), x, out)
        assert_close_rel(out, a_ref @ x, MATVEC_RTOL, "augmented_matvec")
