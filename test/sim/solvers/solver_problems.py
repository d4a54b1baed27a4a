"""Contact problems shared by the solver tests, and their independent references.

Particle systems (springs from ``ModelBuilder``, assembled by ``cond_ros.sim.dynamics.assembly.assemble``) with
hand-made contact sets, a rigid box on a plane through virtual nodes, the CCP (36) / regularized CCP (37)
solved by clarabel on the dense Delassus operator (``test/reference.py``), and checks of the
Signorini-Coulomb conditions (11) and the dynamics (1).
"""
import pathlib
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.scenes.registry import BOX_MASS
from cond_ros.scenes.registry import box_on_plane as scene_box_on_plane
from cond_ros.sim import Simulator
from cond_ros.sim.builder import ModelBuilder, box_inertia, particle
from cond_ros.sim.collision.nodalization import ContactSet, build_contact_set
from cond_ros.sim.dynamics.assembly import assemble, build_pattern
from cond_ros.sim.solvers.cond.fixed_point import contact_velocities
from cond_ros.sim.solvers.cond.solver import SolverCOND

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # test/, home of reference.py
import reference as ref  # noqa: E402

DT = 0.01
#: solver settings for "converged" runs
TIGHT = dict(tolerance=1e-12, max_iterations=200_000)
#: forces vs reference, relative to max(1, max |lambda|)
FORCE_TOL = 1e-6
#: velocities vs reference, relative to max(1, max |v|)
VELOCITY_TOL = 1e-6
#: residual of A v = b + J^T lambda, relative to max(|b|, |J^T lambda|)
DYNAMICS_TOL = 1e-8
#: Signorini-Coulomb checks (velocities [m/s] and forces relative to max(1, max |lambda|))
SCC_TOL = 1e-8
#: a contact slides when ||u_t|| exceeds this [m/s]
SLIDE_THRESHOLD = 1e-6
#: friction direction / magnitude on sliding contacts, relative to max(1, max |lambda|)
COULOMB_TOL = 1e-6
#: same-answer comparisons between two converged COND runs, relative as above
AGREE_TOL = 1e-8
#: classifying a reference force as open / on the cone boundary, relative to max(1, max |lambda|)
MODE_TOL = 1e-7
#: Frobenius weights vs the dense formula (round-off only)
WEIGHT_TOL = 1e-12


# --------------------------------------------------------------------------- problem builders
def _one_particle():
    builder = ModelBuilder()
    builder.add_particle((0.0, 0.0, 0.0), mass=1.0)
    return builder.finalize()


#: the model that tests make a solver with when they hand it a step's system themselves: solve() reads only
#: the system and the contacts (the model matters to step(), assemble() and prepare())
MODEL = _one_particle()


def nodal_problem(seed, *, n_nodes=10, n_contacts=(2, 6), stiffness=1e5, mass=(0.1, 1.0), mu=(0.0, 1.5),
                  d_fraction=0.4, anisotropic=False, normal_offset=None):
    """A completely-nodal system (Def. 3): particles joined by springs, with S- and D-contacts by hand.

    Each node carries at most one contact; frames are random rotations, offsets phi random with
    tangential parts of mixed size so open, sticking and sliding contacts all occur.
    Returns (system, contacts).
    """
    rng = np.random.default_rng(seed)
    builder = ModelBuilder()
    pos = rng.uniform(-0.5, 0.5, (n_nodes, 3))
    for i in range(n_nodes):
        builder.add_particle(pos[i], mass=10.0 ** rng.uniform(*np.log10(mass)), velocity=rng.normal(size=3))
    pairs = [(i, i + 1) for i in range(n_nodes - 1)]
    pairs += [tuple(rng.choice(n_nodes, 2, replace=False)) for _ in range(n_nodes)]
    for i, j in pairs:
        rest = np.linalg.norm(pos[i] - pos[j]) * rng.uniform(0.8, 1.2)
        builder.add_spring(particle(i), particle(j), stiffness=stiffness * rng.uniform(0.2, 1.0), rest_length=rest,
                           damping=rng.uniform(0.0, 1.0))
    model = builder.finalize()
    pattern = build_pattern(model)
    system = assemble(model, pattern, model.state(), model.control(), DT)

    free = list(rng.permutation(n_nodes))
    dof_a, dof_b = [], []
    for _ in range(rng.integers(n_contacts[0], n_contacts[1] + 1)):
        if len(free) >= 2 and rng.uniform() < d_fraction:
            dof_a.append(3 * free.pop())
            dof_b.append(3 * free.pop())
        elif free:
            dof_a.append(3 * free.pop())
            dof_b.append(-1)
    m = len(dof_a)
    mu1 = rng.uniform(*mu, m)
    mu2 = rng.uniform(*mu, m) if anisotropic else mu1
    offset = rng.normal(size=(m, 3))
    offset[:, 1:] *= rng.choice([0.02, 0.3, 1.0], size=(m, 1))
    if normal_offset is not None:
        offset[:, 0] = normal_offset
    return system, make_contacts(pattern, dof_a, dof_b, Rotation.random(m, random_state=rng).as_matrix(),
                                 np.column_stack([mu1, mu2]), offset)


# --------------------------------------------------------------------------- the compliant solver's step data
THETA = 0.5  # the nodal problems' integration theta (ModelBuilder's default)
TAU = 0.02  # b = k tau in the stiffness sweeps [s]


def limit_consistent_step_data(contacts, seed):
    """Start-of-step data (a = J_c v_k, gaps) under which the compliant program's k -> inf limit is the
    nodal problem's own hard CCP.

    The nodal problems come with random offsets phi, not with gaps. The compliant bias on the normal
    row is s = theta k g / (k dt + b) - phi_n - (1 - theta) a_n; with b = k tau it equals
    theta g / (dt + tau) - phi_n - (1 - theta) a_n for every k, so the gap
    g = (dt + tau) (phi_n + (1 - theta) a_n) / theta makes s = 0 exactly: then q = u_free and the
    program differs from the CCP (36) only by the compliance C = theta / (k (dt + tau)) on the normal
    diagonal, an O(1/k) perturbation of a strongly convex program. a is arbitrary (random here).
    """
    a = np.random.default_rng(100 + seed).normal(size=(contacts.count, 3))
    gap = (DT + TAU) * (contacts.offset[:, 0] + (1.0 - THETA) * a[:, 0]) / THETA
    return a, gap


def make_contacts(pattern, dof_a, dof_b, frame, friction, offset):
    """A ContactSet of node contacts without virtual nodes (the solver reads dof_a/b, frame, friction, offset)."""
    m = len(dof_a)
    index = np.arange(m, dtype=np.int64)
    dof_a = np.asarray(dof_a, np.int64)
    return ContactSet(
        pattern=pattern, count=m, dof_a=dof_a, dof_b=np.asarray(dof_b, np.int64),
        frame=np.ascontiguousarray(frame, dtype=float), friction=np.ascontiguousarray(friction, dtype=float),
        offset=np.ascontiguousarray(offset, dtype=float), gap=np.zeros(m), position=np.zeros((m, 3)),
        collider=np.full(m, -1, np.int64), source_kind=np.zeros(m, np.int64), source_index=index,
        force=np.zeros((m, 3)), point_dof=dof_a.copy(), point_size=np.full(m, 3, np.int64),
        point_jac=np.tile(np.eye(3), (m, 1, 1)), point_group=dof_a // 3, vn_dof=np.zeros(0, np.int64),
        vn_size=np.zeros(0, np.int64), vn_jac=np.zeros((0, 3, 3)), vn_group=np.zeros(0, np.int64))


def dense(system, contacts):
    """(A, b, J) of eq. (15) as dense arrays."""
    j = ref.contact_jacobian(contacts.dof_a, contacts.dof_b, contacts.frame, system.size).toarray()
    return system.matrix().toarray(), system.rhs(), j


def ccp_reference(system, contacts, regularization=0.0):
    """lambda of the CCP (36) (with A_c + omega I: the invertible model (37)) and v = A^-1 (b + J^T lambda)."""
    a, b, j = dense(system, contacts)
    a_c, b_c = ref.delassus(a, j, b)
    lam = ref.cone_qp(a_c + regularization * np.eye(len(a_c)), b_c + contacts.offset.ravel(), contacts.friction)
    return lam.reshape(-1, 3), np.linalg.solve(a, b + j.T @ lam)


def solve(system, contacts, **options):
    v, force, iterations, residual = SolverCOND(MODEL, **options).solve(system, contacts, DT)
    return v, force, iterations, residual


def force_scale(force):
    return max(1.0, float(np.abs(force).max(initial=0.0)))


def assert_dynamics(system, contacts, v, force):
    """A v = b + J^T lambda (eq. 1 / 15) to DYNAMICS_TOL."""
    a, b, j = dense(system, contacts)
    jt_lam = j.T @ force.ravel()
    scale = max(np.abs(b).max(), np.abs(jt_lam).max())
    assert np.abs(a @ v - b - jt_lam).max() <= DYNAMICS_TOL * scale


def assert_signorini_coulomb(contacts, v, force):
    """(11)-(12) for u = J v + phi: lambda_n >= 0, u_n >= 0, lambda_n u_n = 0, ||lambda_t|| <= mu lambda_n,
    lambda_t = -mu lambda_n u_t / ||u_t|| while sliding, u_t = 0 strictly inside the cone (isotropic mu)."""
    u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v)
    mu = contacts.friction[:, 0]
    scale = force_scale(force)
    lam_t = np.hypot(force[:, 1], force[:, 2])
    ut = np.hypot(u[:, 1], u[:, 2])
    assert np.all(force[:, 0] >= 0.0)
    assert np.all(u[:, 0] >= -SCC_TOL)
    assert np.all(np.abs(force[:, 0] * u[:, 0]) <= SCC_TOL * scale)
    assert np.all(lam_t <= mu * force[:, 0] + SCC_TOL * scale)
    slide = ut > SLIDE_THRESHOLD
    bound = (mu * force[:, 0] / np.maximum(ut, 1e-300))[slide, None]
    np.testing.assert_allclose(force[slide, 1:], -bound * u[slide, 1:],
                               rtol=0, atol=COULOMB_TOL * scale)
    stick = (force[:, 0] > SCC_TOL * scale) & (lam_t < mu * force[:, 0] - COULOMB_TOL * scale)
    assert np.all(ut[stick] <= SLIDE_THRESHOLD)


def assert_ccp_optimality(contacts, v, force):
    """KKT of the CCP (36), i.e. the relaxed SCC (28), for u = J v + phi: lambda in the cone, u in the dual
    cone (u_n >= mu ||u_t||), lambda . u = 0 per contact, and lambda_t = -mu lambda_n u_t / ||u_t|| on a
    contact that slips with a normal force."""
    u = contact_velocities(contacts.dof_a, contacts.dof_b, contacts.frame, contacts.offset, v)
    mu = contacts.friction[:, 0]
    ut = np.hypot(u[:, 1], u[:, 2])
    scale = force_scale(force)
    assert np.all(np.hypot(force[:, 1], force[:, 2]) <= mu * force[:, 0] + SCC_TOL * scale)
    assert np.all(u[:, 0] >= mu * ut - SCC_TOL), u
    assert np.all(np.abs(np.einsum("mi,mi->m", force, u)) <= SCC_TOL * scale), (force, u)
    slip = (ut > SLIDE_THRESHOLD) & (force[:, 0] > SCC_TOL * scale)
    np.testing.assert_allclose(force[slip, 1:], -(mu * force[:, 0] / np.maximum(ut, 1e-300))[slip, None] * u[slip, 1:],
                               rtol=0, atol=COULOMB_TOL * scale)


def assert_box_rests_with_its_weight(make_solver, steps=20):
    """The 0.5 kg cube of ``cond_ros.scenes.registry.box_on_plane`` on four corners (redundant contacts: G has
    rank 6 of 12): every step's normal forces carry exactly its weight, and it stays at rest. ``make_solver(model)``
    makes the solver."""
    model = scene_box_on_plane()
    sim = Simulator(model, dt=0.01, solver=make_solver(model))
    for _ in range(steps):
        stats = sim.step()
        normal = sim.contacts.world_forces()[:, 2].sum()
        assert normal == pytest.approx(BOX_MASS * 9.81, rel=1e-6)
        assert stats.iterations < sim.solver.max_iterations
    assert np.linalg.norm(sim.state.body_qd[0]) < 1e-6


def assert_warm_start_converges_at_once(solver, system, contacts, force_tol):
    """Solving the same problem again from the solver's own warm start takes at most 2 iterations."""
    first = solver.solve(system, contacts, DT)
    second = solver.solve(system, contacts, DT)
    assert second[2] <= 2 < first[2]
    np.testing.assert_allclose(second[1], first[1], rtol=0, atol=force_tol * force_scale(first[1]))


def assert_bit_identical_runs(make_solver, system, contacts):
    """Two fresh solvers on the same input return the same bits (velocities, forces, iterations, residual)."""
    runs = [make_solver().solve(system, contacts, DT) for _ in range(2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][2:] == runs[1][2:]


def contact_modes(contacts, force, tol):
    """Counts of (open, sticking, sliding) contacts of a force solution."""
    mu = contacts.friction[:, 0]
    open_ = force[:, 0] <= tol
    slide = ~open_ & (np.hypot(force[:, 1], force[:, 2]) >= mu * force[:, 0] - tol)
    return int(open_.sum()), int((~open_ & ~slide).sum()), int(slide.sum())


def box_on_plane(n_points, mu=0.3):
    """A 0.5 kg box (half extent 0.1 m) sliding and spinning on a plane, 1 mm into it, touching at
    ``n_points`` bottom points (2: an edge, 3: a triangle, 4: the corners); every contact is on a
    virtual node (eq. 14). Returns (model, state, contacts, system)."""
    points = {2: [(-0.1, 0.0), (0.1, 0.0)], 3: [(-0.1, -0.1), (0.1, -0.1), (0.0, 0.1)],
              4: [(-0.1, -0.1), (0.1, -0.1), (-0.1, 0.1), (0.1, 0.1)]}[n_points]
    builder = ModelBuilder()
    body = builder.add_body((0.0, 0.0, 0.099), mass=0.5, inertia=box_inertia(0.5, (0.1, 0.1, 0.1)),
                            velocity=(0.8, 0.4, -0.2), angular_velocity=(0.3, -0.2, 1.0))
    for x, y in points:
        builder.add_contact_point(body, (x, y, -0.1), mu=mu)
    builder.add_collider_plane(mu=mu)
    model = builder.finalize()
    state = model.state()
    contacts = build_contact_set(model, build_pattern(model), state, DT)
    system = SolverCOND(model).assemble(state, model.control(), contacts, DT)
    return model, state, contacts, system
