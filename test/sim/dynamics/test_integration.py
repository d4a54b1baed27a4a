"""Tests of the time integration (eq. 4): v_{k+1} = 2 v_hat - v_k, q_{k+1} = q_k + dt v_hat.

Expected values are analytic (constant-acceleration kinematics, the harmonic
oscillator and its implicit-midpoint discretisation) or conservation laws
(angular momentum, energy); none is taken from the package's output.

Scenes without contacts use the "penalty" solver: with no contacts it is a
direct sparse solve of A v_hat = b, so these tests see the integrator without
an iterative solver's tolerance. Free fall is also run with the default COND
solver, to a bound derived from its iteration tolerance.
"""
import contextlib

import numba
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros import sim
from cond_ros.sim.dynamics.integration import advance_state

# Tolerances / bounds ------------------------------------------------------
FREE_FALL_RTOL = 1e-12  # midpoint rule is exact for constant acceleration; relative to max |q|, |v|
QUAT_NORM_TOL = 1e-12
PERIOD_RTOL = 1e-2  # measured period vs 2 pi sqrt(m/k)
DISCRETE_PERIOD_RTOL = 1e-4  # measured period vs implicit-midpoint period 2 pi / ((2/dt) atan(w dt / 2))
ENERGY_RTOL = 1e-6  # linear spring: implicit midpoint conserves the quadratic energy exactly
CONVERGENCE_RATIO = 0.6  # drift(dt/2) <= 0.6 drift(dt): at least first order (0.5) with margin
KE_RTOL = 1e-2  # torque-free body: kinetic energy stays within 1 %


@contextlib.contextmanager
def numba_threads(count):
    """Run numba's parallel kernels on ``count`` threads (None: unchanged) inside the block.

    COND launches parallel kernels a few times per iteration; on a loaded
    machine each launch of a tiny kernel can wait milliseconds for a second
    thread, so tests that only care about the result use one thread.
    """
    default = numba.get_num_threads()
    try:
        if count is not None:
            numba.set_num_threads(count)
        yield
    finally:
        numba.set_num_threads(default)


def quat_wxyz(rot):
    x, y, z, w = rot.as_quat()
    return (w, x, y, z)


def rotation(q):
    w, x, y, z = q
    return Rotation.from_quat([x, y, z, w]).as_matrix()


# ---------------------------------------------------------------------------
# Free fall
# ---------------------------------------------------------------------------
# The direct solve must be exact to round-off; COND stops at its tolerance (1e-8 m/s on the
# iterate change), which bounds the velocity error per step by ~tolerance and the position error
# after N steps by ~N^2 dt tolerance.
COND_FREE_FALL_ATOL = 1e-6
FREE_FALL_SOLVERS = [("penalty", FREE_FALL_RTOL, True), ("cond", COND_FREE_FALL_ATOL, False)]


@pytest.mark.parametrize("solver,tol,relative", FREE_FALL_SOLVERS, ids=["direct", "cond"])
def test_free_fall_is_exact(solver, tol, relative):
    """Particle and rigid body under gravity: q = q0 + v0 t + g t^2 / 2 and v = v0 + g t.

    Exact to round-off with the direct solve (the midpoint rule is exact for
    constant acceleration), and to the iteration tolerance with COND. The body
    spins about a non-principal axis meanwhile; its COM motion is unaffected and
    its quaternion stays unit.
    """
    g = np.array([0.4, -0.3, -9.81])
    bld = sim.ModelBuilder(gravity=g)
    p0, pv0 = np.array([0.1, -0.2, 3.0]), np.array([1.5, 0.5, 4.0])
    b0, bv0 = np.array([-1.0, 2.0, 5.0]), np.array([-0.5, 1.0, 2.0])
    bld.add_particle(p0, mass=0.3, velocity=pv0)
    bld.add_body(b0, mass=2.0, inertia=np.diag([0.1, 0.2, 0.35]), quat=quat_wxyz(Rotation.from_rotvec([0.3, 0.2, 0.1])),
                 velocity=bv0, angular_velocity=(1.0, 2.0, -3.0))
    dt, steps = 0.01, 100
    simulator = sim.Simulator(bld.finalize(), dt=dt, solver=solver)
    for k in range(1, steps + 1):
        with numba_threads(1):
            simulator.step()
        t = k * dt
        st = simulator.state
        for q, v, q0, v0 in ((st.particle_q[0], st.particle_qd[0], p0, pv0),
                             (st.body_q[0], st.body_qd[0, :3], b0, bv0)):
            q_ref = q0 + v0 * t + 0.5 * g * t * t
            v_ref = v0 + g * t
            np.testing.assert_allclose(q, q_ref, rtol=0, atol=tol * (np.max(np.abs(q_ref)) if relative else 1.0))
            np.testing.assert_allclose(v, v_ref, rtol=0, atol=tol * (np.max(np.abs(v_ref)) if relative else 1.0))
    assert abs(np.linalg.norm(simulator.state.body_quat[0]) - 1.0) < QUAT_NORM_TOL
    assert simulator.state.time == pytest.approx(steps * dt, rel=1e-12)


def test_advance_state_applies_midpoint_update():
    """advance_state: v_{k+1} = 2 v_hat - v_k, q_{k+1} = q_k + dt v_hat, quat = exp(dt w_hat) q_k (world frame)."""
    rng = np.random.default_rng(4)
    bld = sim.ModelBuilder()
    for _ in range(2):
        bld.add_particle(rng.normal(size=3), mass=1.0, velocity=rng.normal(size=3))
    for _ in range(2):
        bld.add_body(rng.normal(size=3), mass=1.0, inertia=np.eye(3), quat=quat_wxyz(Rotation.random(random_state=rng)),
                     velocity=rng.normal(size=3), angular_velocity=rng.normal(size=3))
    model = bld.finalize()
    state = model.state()
    dt = 0.02
    v_hat = rng.normal(size=model.dof_count)
    out = advance_state(model, state, v_hat, dt)
    v_k = state.velocity()
    np.testing.assert_allclose(out.velocity(), 2 * v_hat - v_k, rtol=0, atol=1e-14)
    np.testing.assert_allclose(out.particle_q.ravel(), state.particle_q.ravel() + dt * v_hat[:6], rtol=0, atol=1e-14)
    for j in range(2):
        d = 6 + 6 * j
        np.testing.assert_allclose(out.body_q[j], state.body_q[j] + dt * v_hat[d:d + 3], rtol=0, atol=1e-14)
        r_ref = Rotation.from_rotvec(dt * v_hat[d + 3:d + 6]).as_matrix() @ rotation(state.body_quat[j])
        np.testing.assert_allclose(rotation(out.body_quat[j]), r_ref, rtol=0, atol=1e-12)
    assert out.time == pytest.approx(state.time + dt)
    # the input state is untouched
    np.testing.assert_array_equal(state.velocity(), v_k)


# ---------------------------------------------------------------------------
# Torque-free rigid body
# ---------------------------------------------------------------------------
INERTIA = np.diag([0.1, 0.25, 0.4])
OMEGA0 = np.array([2.0, 1.0, 3.0])  # not along a principal axis (in the body frame below)
SPIN_TIME = 2.0


def spin(dt):
    """Max relative drift of world angular momentum and of kinetic energy over SPIN_TIME."""
    bld = sim.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    bld.add_body((0.0, 0.0, 0.0), mass=1.0, inertia=INERTIA, quat=quat_wxyz(Rotation.from_rotvec([0.3, -0.5, 0.2])),
                 angular_velocity=OMEGA0)
    simulator = sim.Simulator(bld.finalize(), dt=dt, solver="penalty")

    def momentum_energy(st):
        r = rotation(st.body_quat[0])
        iw = r @ INERTIA @ r.T
        w = st.body_qd[0, 3:]
        return iw @ w, 0.5 * w @ iw @ w

    l0, e0 = momentum_energy(simulator.state)
    drift_l = drift_e = 0.0
    for _ in range(int(round(SPIN_TIME / dt))):
        simulator.step()
        momentum, e = momentum_energy(simulator.state)
        drift_l = max(drift_l, np.linalg.norm(momentum - l0) / np.linalg.norm(l0))
        drift_e = max(drift_e, abs(e - e0) / e0)
        assert np.all(simulator.state.body_q[0] == 0.0)  # no force: the COM stays put
    return drift_l, drift_e


def test_torque_free_body_conserves_angular_momentum():
    """Spinning about a non-principal axis: world angular momentum drift is bounded and shrinks with dt.

    Eq. (4) treats the gyroscopic term C_k v_k explicitly, so the scheme is
    first order in L: the local error is O(dt^2 |w|^2 |L|), and over T the drift
    is bounded by dt T |w0|^2 (relative). Halving dt must reduce the drift by at
    least CONVERGENCE_RATIO. Kinetic energy stays within KE_RTOL.
    """
    dt = 0.01
    bound = dt * SPIN_TIME * (OMEGA0 @ OMEGA0)
    drift_l, drift_e = spin(dt)
    drift_l_half, drift_e_half = spin(dt / 2)
    assert drift_l < bound
    assert drift_l_half < bound / 2
    assert drift_l_half <= CONVERGENCE_RATIO * drift_l
    assert drift_e < KE_RTOL and drift_e_half < KE_RTOL
    assert drift_e_half <= drift_e


def test_zero_angular_velocity_keeps_orientation():
    """A body at rest without gravity keeps its orientation and stays at rest exactly."""
    bld = sim.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    q0 = quat_wxyz(Rotation.from_rotvec([0.1, 0.7, -0.4]))
    bld.add_body((1.0, 2.0, 3.0), mass=1.0, inertia=INERTIA, quat=q0)
    simulator = sim.Simulator(bld.finalize(), dt=0.01, solver="penalty")
    simulator.run(10)
    np.testing.assert_allclose(rotation(simulator.state.body_quat[0]), rotation(q0), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(simulator.state.body_qd, 0.0)


# ---------------------------------------------------------------------------
# Harmonic oscillator
# ---------------------------------------------------------------------------
MASS, STIFFNESS = 0.5, 2000.0
ANCHOR = np.array([0.2, -0.1, 1.0])
AXIS = np.array([1.0, 2.0, -2.0]) / 3.0


def test_distance_spring_period():
    """Particle on a stiff DISTANCE spring to a world point, released stretched along the spring.

    The motion stays on the spring axis, where e is linear in the position, so it
    is a harmonic oscillator: the period is 2 pi sqrt(m/k) within 1 %, and equals
    the implicit-midpoint period 2 pi / ((2/dt) atan(w dt/2)) within 1e-4.
    """
    rest, amplitude, dt, steps = 0.5, 0.05, 1e-3, 1000
    bld = sim.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    bld.add_particle(ANCHOR + (rest + amplitude) * AXIS, mass=MASS)
    bld.add_spring(sim.particle(0), sim.world_point(ANCHOR), stiffness=STIFFNESS, rest_length=rest)
    simulator = sim.Simulator(bld.finalize(), dt=dt, solver="penalty")
    x = [amplitude]
    for _ in range(steps):
        simulator.step()
        x.append((simulator.state.particle_q[0] - ANCHOR) @ AXIS - rest)
    x = np.array(x)
    t = dt * np.arange(len(x))
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    crossings = t[up] - x[up] * dt / (x[up + 1] - x[up])  # linear interpolation of upward zero crossings
    assert len(crossings) >= 8
    period = np.mean(np.diff(crossings))
    omega = np.sqrt(STIFFNESS / MASS)
    assert period == pytest.approx(2 * np.pi / omega, rel=PERIOD_RTOL)
    discrete = 2 * np.pi / ((2 / dt) * np.arctan(omega * dt / 2))
    assert period == pytest.approx(discrete, rel=DISCRETE_PERIOD_RTOL)
    assert np.max(np.abs(x)) <= amplitude * (1 + 1e-9)


def test_coupling_spring_energy_conserved():
    """Zero-rest-length COUPLING spring (3-D elliptic orbit): |E - E0| / E0 < 1e-6 over 1000 steps.

    psi is quadratic, so the midpoint rule of eq. (4) (implicit midpoint here)
    conserves E = m |v|^2 / 2 + k |x - x0|^2 / 2.
    """
    dt, steps = 1e-3, 1000
    bld = sim.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    bld.add_particle(ANCHOR + 0.05 * AXIS, mass=MASS, velocity=(0.3, -0.8, 0.5))
    bld.add_coupling(sim.particle(0), sim.world_point(ANCHOR), stiffness=STIFFNESS)
    simulator = sim.Simulator(bld.finalize(), dt=dt, solver="penalty")

    def energy(st):
        d = st.particle_q[0] - ANCHOR
        v = st.particle_qd[0]
        return 0.5 * MASS * v @ v + 0.5 * STIFFNESS * d @ d

    e0 = energy(simulator.state)
    worst = 0.0
    for _ in range(steps):
        simulator.step()
        worst = max(worst, abs(energy(simulator.state) - e0) / e0)
    assert worst < ENERGY_RTOL


# ---------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------
DROP_STEPS = 50
# max_iterations bounds the runtime; steps that stop at the cap are deterministic too. The penalty
# solver runs the frictionless scene: its explicit friction is unstable on this light box
# (see test_penalty_defaults_box_drop_stays_finite).
DROP_SOLVERS = [("cond", {"max_iterations": 100}, True), ("penalty", {}, False)]


def drop_scene(mass=0.5, friction=True):
    """A tilted, spinning box dropped on a floor, plus a particle sliding on it (mu 0.3-0.6 or frictionless)."""
    scale = 1.0 if friction else 0.0
    bld = sim.ModelBuilder()
    half = (0.1, 0.15, 0.05)
    box = bld.add_body((0.0, 0.0, 0.3), mass=mass, inertia=sim.box_inertia(mass, half),
                       quat=quat_wxyz(Rotation.from_rotvec([0.2, 0.1, 0.4])), velocity=(0.2, 0.0, -0.5),
                       angular_velocity=(0.5, -1.0, 0.3))
    bld.add_shape_box(box, half, mu=0.5 * scale)
    bld.add_particle((0.5, 0.0, 0.05), mass=0.1, radius=0.02, velocity=(0.1, 0.0, 0.0), mu=0.3 * scale)
    bld.add_collider_plane(mu=0.6 * scale)
    return bld.finalize()


def run_drop(simulator, threads=None):
    """DROP_STEPS steps, on ``threads`` numba threads (None: the default); returns the contact counts."""
    with numba_threads(threads):
        return [simulator.step().contact_count for _ in range(DROP_STEPS)]


def state_bytes(st):
    return [getattr(st, f).tobytes() for f in ("particle_q", "particle_qd", "body_q", "body_quat", "body_qd")]


@pytest.mark.parametrize("solver,options,friction", DROP_SOLVERS, ids=["cond", "penalty"])
def test_box_drop_is_bit_identical(solver, options, friction):
    """Two Simulators on the same scene with contacts produce bit-identical states after 50 steps.

    The first runs on numba's default thread count, the second on one thread
    (parallel kernels must not depend on scheduling), and the first again after
    ``reset()`` (warm starts cleared), also on one thread.
    """
    model = drop_scene(friction=friction)
    first = sim.Simulator(model, dt=0.01, solver=solver, solver_options=options)
    counts = run_drop(first)
    assert max(counts) >= 3, "the box never landed: the test would not exercise contacts"
    reference = first.state
    second = sim.Simulator(model, dt=0.01, solver=solver, solver_options=options)
    run_drop(second, threads=1)
    assert state_bytes(second.state) == state_bytes(reference)
    assert second.state.time == reference.time
    first.reset()
    run_drop(first, threads=1)
    assert state_bytes(first.state) == state_bytes(reference)


def test_penalty_defaults_box_drop_stays_finite():
    """The penalty baseline with its default gains keeps a 0.5 kg box dropped on a frictional floor finite.

    Its docstring promises that "large gains stay stable at 10 ms steps"; the
    contact stiffness and damping are implicit, but the friction is explicit.
    """
    simulator = sim.Simulator(drop_scene(), dt=0.01, solver="penalty")
    simulator.run(DROP_STEPS)
    assert np.all(np.isfinite(simulator.state.body_qd))
