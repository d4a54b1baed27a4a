"""A robot in joint coordinates inside the step (eq. 9): free motion, drives, joint limits, link contacts.

The reference dynamics are written independently here: the point-mass double pendulum's textbook
equations of motion (integrated with scipy at tight tolerance) and its analytic gravity torques.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from cond_ros import sim
from cond_ros.sim.collision.nodalization import SOURCE_JOINT_LIMIT
from cond_ros.sim.dynamics.robots import kinematics_at, robot_kinematics
from cond_ros.sim.kinematics.articulation import Articulation, ArticulationKinematics
from cond_ros.sim.model import GeometryType

G = 9.81
LENGTHS = (0.5, 0.4)
MASSES = (1.0, 0.7)
TINY_INERTIA = 1e-9  # [kg m^2]: links are point masses for the analytic reference
ENERGY_REL_TOL_10MS = 2e-3  # measured 1.1e-3 (small swing, 10 s)
LIMIT_TOL = 1e-4  # [rad]


def pendulum(lower=-np.inf, upper=np.inf, tip_sphere=None) -> Articulation:
    """Planar double pendulum hanging along -z, joints about y, point masses at the link tips."""
    n = 2
    links = n + 1
    origin = np.tile(np.eye(4), (links, 1, 1))
    origin[2][2, 3] = -LENGTHS[0]
    mass = np.array([0.0, *MASSES])
    com = np.array([[0, 0, 0], [0, 0, -LENGTHS[0]], [0, 0, -LENGTHS[1]]], float)
    inertia = np.zeros((links, 3, 3))
    inertia[1:] = TINY_INERTIA * np.eye(3)
    geom = dict(geom_link=np.zeros(0, np.int64), geom_type=np.zeros(0, np.int64), geom_origin=np.zeros((0, 4, 4)),
                geom_size=np.zeros((0, 3)))
    if tip_sphere is not None:
        tip = np.eye(4)
        tip[2, 3] = -LENGTHS[1]
        geom = dict(geom_link=np.array([2]), geom_type=np.array([int(GeometryType.SPHERE)]),
                    geom_origin=tip[None], geom_size=np.array([[tip_sphere, 0, 0]]))
    return Articulation(
        name="pendulum", link_name=["base", "upper", "lower"], link_parent=np.array([-1, 0, 1]),
        joint_name=["", "j1", "j2"], joint_type=np.array([0, 1, 1]), joint_origin=origin,
        joint_axis=np.tile([0.0, 1.0, 0.0], (links, 1)), joint_dof=np.array([-1, 0, 1]),
        joint_multiplier=np.ones(links), joint_offset=np.zeros(links), link_mass=mass, link_com=com,
        link_inertia=inertia, dof_count=n, dof_name=["j1", "j2"], dof_lower=np.full(n, lower),
        dof_upper=np.full(n, upper), dof_velocity_limit=np.full(n, np.inf), dof_effort_limit=np.full(n, np.inf),
        dof_damping=np.zeros(n), dof_friction=np.zeros(n), base_transform=np.eye(4), **geom)


def analytic_rhs(t, y):
    """Point-mass double pendulum; angles from the downward vertical, positive about +y (x = l sin q)."""
    q1, q2, w1, w2 = y
    m1, m2 = MASSES
    l1, l2 = LENGTHS
    d = q1 - (q1 + q2)  # relative angle in absolute terms: theta1 - theta2
    th1, th2 = q1, q1 + q2
    w_th1, w_th2 = w1, w1 + w2
    den = m1 + m2 * np.sin(d) ** 2
    a1 = (-m2 * l1 * w_th1 ** 2 * np.sin(d) * np.cos(d) - m2 * l2 * w_th2 ** 2 * np.sin(d)
          - (m1 + m2) * G * np.sin(th1) + m2 * G * np.sin(th2) * np.cos(d)) / (l1 * den)
    a2 = ((m1 + m2) * (l1 * w_th1 ** 2 * np.sin(d) - G * np.sin(th2) + G * np.sin(th1) * np.cos(d))
          + m2 * l2 * w_th2 ** 2 * np.sin(d) * np.cos(d)) / (l2 * den)
    return [w1, w2, a1, a2 - a1]


def analytic_gravity_torque(q):
    """dV/dq of the point masses, V = -g (m1 l1 cos q1 + m2 (l1 cos q1 + l2 cos(q1 + q2)))."""
    m1, m2 = MASSES
    l1, l2 = LENGTHS
    t2 = m2 * G * l2 * np.sin(q[0] + q[1])
    return np.array([(m1 + m2) * G * l1 * np.sin(q[0]) + t2, t2])


def energy(model, state):
    art = model.robots[0]
    kin = ArticulationKinematics(art)
    kin.update(state.robot_q)
    kinetic = 0.5 * state.robot_qd @ kin.mass_matrix() @ state.robot_qd
    height = [(kin.link_pose[k, :3, :3] @ art.link_com[k] + kin.link_pose[k, :3, 3])[2] for k in range(3)]
    return kinetic + G * float(np.dot(art.link_mass, height))


def simulate(articulation, q0, dt, seconds, *, control=None, gains=(0.0, 0.0), colliders=None, record=None):
    builder = sim.ModelBuilder()
    builder.add_articulation(articulation, q=q0, drive_stiffness=gains[0], drive_damping=gains[1])
    if colliders:
        colliders(builder)
    model = builder.finalize()
    simulator = sim.Simulator(model, dt=dt)
    control = control(model) if control else model.control()
    out = []
    for _ in range(int(round(seconds / dt))):
        stats = simulator.step(control)
        if record:
            out.append(record(model, simulator, stats))
    return model, simulator, out


def test_free_double_pendulum_matches_analytic_equations():
    """With no drives, the simulated double pendulum follows the textbook equations of motion.

    The midpoint scheme with linearized gravity is first order here, so at dt = 1 ms the angles
    stay within 2e-3 rad of a tight scipy integration over 1 s.
    """
    q0 = np.array([0.6, -0.4])
    _, _, path = simulate(pendulum(), q0, 1e-3, 1.0, record=lambda m, s, st: (s.state.time, *s.state.robot_q))
    path = np.array(path)
    ref = solve_ivp(analytic_rhs, (0, path[-1, 0]), [*q0, 0, 0], t_eval=path[:, 0], rtol=1e-11, atol=1e-12)
    assert np.max(np.abs(path[:, 1:] - ref.y[:2].T)) < 2e-3


def test_double_pendulum_energy_bound_shrinks_with_dt():
    """Frictionless double pendulum, 10 s: |E - E0| / |E0| <= 2e-3 at dt = 10 ms and halves with dt."""
    errors = []
    for dt in (0.01, 0.005):
        model, s0, _ = simulate(pendulum(), [0.4, -0.2], dt, 0.0)
        e0 = energy(model, s0.state)
        _, _, energies = simulate(pendulum(), [0.4, -0.2], dt, 10.0, record=lambda m, s, st: energy(m, s.state))
        errors.append(np.max(np.abs(np.array(energies) - e0)) / abs(e0))
    assert errors[0] <= ENERGY_REL_TOL_10MS
    assert errors[1] <= 0.6 * errors[0]


def test_pd_drive_steady_state_error_is_set_by_the_gains():
    """A PD-held pendulum settles where K_p (q* - q) = g(q) (analytic gravity torques, solved by fsolve)."""
    target = np.array([0.3, 0.2])
    kp = np.array([400.0, 150.0])

    def control(model):
        c = model.control()
        c.robot_q_target[:] = target
        return c
    _, simulator, _ = simulate(pendulum(), target, 0.01, 5.0, control=control, gains=(kp, 20.0))
    expected = fsolve(lambda q: kp * (target - q) - analytic_gravity_torque(q), target, xtol=1e-13)
    assert np.all(np.abs(expected - target) > 1e-3)  # the error is real, not zero
    np.testing.assert_allclose(simulator.state.robot_q, expected, atol=1e-6)


def test_joint_limit_holds_against_a_command_beyond_it():
    """Driving joint 1 toward 1.2 rad with a 0.5 rad upper limit: it stops at the limit, which pushes back
    with exactly the drive's excess torque (complementarity, not a spring).

    The impact step is inelastic on the end-of-step velocity, so the midpoint position update may pass
    the limit by at most (approach speed) dt / 2 in that one step; then the limit holds to 1e-4 rad.
    """
    kp = 300.0

    def control(model):
        c = model.control()
        c.robot_q_target[:] = [1.2, 0.0]
        return c

    def record(model, simulator, stats):
        return simulator.state.robot_q.copy()
    dt = 0.01
    _, simulator, qs = simulate(pendulum(lower=-0.5, upper=0.5), [0.0, 0.0], dt, 3.0, control=control,
                                gains=(kp, 30.0), record=record)
    qs = np.array(qs)
    speed = np.abs(np.diff(qs[:, 0])).max() / dt
    assert qs[:, 0].max() <= 0.5 + 0.5 * speed * dt
    assert np.all(np.abs(qs[-100:, 0] - 0.5) < LIMIT_TOL)
    contacts = simulator.contacts
    limit = np.flatnonzero(contacts.source_kind == SOURCE_JOINT_LIMIT)
    assert len(limit) >= 1
    force = contacts.force[limit, 0].sum()
    q = simulator.state.robot_q
    excess = kp * (1.2 - q[0]) - analytic_gravity_torque(q)[0]
    assert force == pytest.approx(excess, rel=1e-3)


def test_link_contact_keeps_the_tip_above_the_floor():
    """A pendulum swinging down onto a floor through a sphere on its tip: contacts act through virtual
    nodes on the link. The impact may sink by at most (impact speed) dt / 2 (inelastic end-of-step
    condition, see ``contacts``); once resting, by less than 1e-4 m."""
    radius = 0.03
    floor = -(LENGTHS[0] + LENGTHS[1]) + 0.05

    def colliders(builder):
        builder.add_collider_plane(point=(0, 0, floor - radius), mu=0.5)

    def record(model, simulator, stats):
        return stats.max_penetration
    dt = 0.01
    _, simulator, pen = simulate(pendulum(tip_sphere=radius), [1.0, 0.0], dt, 3.0, colliders=colliders,
                                 record=record)
    drop = (LENGTHS[0] + LENGTHS[1]) * (1.0 - np.cos(1.0)) + 0.05  # fall height of the tip, an upper bound
    assert max(pen) <= 0.5 * np.sqrt(2.0 * G * drop) * dt
    assert max(pen[-50:]) < 1e-4
    assert np.linalg.norm(simulator.state.robot_qd) < 1e-2


def test_pd_held_panda_under_gravity_matches_pinocchio_statics():
    """The Panda held by PD drives sags to where K_p (q* - q) = g(q); g from Pinocchio (independent)."""
    pin = pytest.importorskip("pinocchio")
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "urdf", "panda.urdf")
    try:
        model_pin = pin.buildModelFromUrdf(path, mimic=True)  # the second finger follows the first
    except TypeError:
        pytest.skip("this Pinocchio cannot reduce mimic joints")
    assert model_pin.nq == 8
    data = model_pin.createData()
    art = sim.load_urdf(path, mesh_primitives=False)
    target = np.array([0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.02])
    kp = np.array([300, 300, 300, 300, 100, 100, 50, 200.0])
    builder = sim.ModelBuilder()
    builder.add_articulation(art, q=target, drive_stiffness=kp, drive_damping=0.2 * kp)
    simulator = sim.Simulator(builder.finalize())
    for _ in range(400):
        simulator.step()
    expected = fsolve(lambda q: kp * (target - q) - pin.computeGeneralizedGravity(model_pin, data, q), target,
                      xtol=1e-13)
    assert np.max(np.abs(expected - target)) > 1e-3  # a visible, gain-set sag
    np.testing.assert_allclose(simulator.state.robot_q, expected, atol=1e-6)


def test_panda_link_points_move_with_their_jacobians():
    """Every collision point of the Panda: its Jacobian is the central difference of its position in q, and its
    velocity is that Jacobian times qd (the points and Jacobians come from one kernel call per robot)."""
    from cond_ros.sim.dynamics.robots import robot_contact_points
    from cond_ros.sim.kinematics.urdf import load_urdf
    rng = np.random.default_rng(5)
    b = sim.ModelBuilder()
    art = load_urdf("urdf/panda.urdf")
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.3, 1.8, 0.7, 0.02, 0.02])[:art.dof_count]
    b.add_articulation(art, q=q)
    model = b.finalize()
    state = model.state()
    state.robot_qd[:] = rng.normal(size=len(q))
    width = art.dof_count + 1  # zero-padded beyond the robot's joints
    pos, _, vel, _, dof, size, jac, _, node, link = robot_contact_points(model, state, width)
    assert len(pos) > 50 and not node.any() and np.all(size == len(q)) and np.all(link >= 0)
    def positions(joints):
        shifted = model.state()
        shifted.robot_q[:] = joints
        return robot_contact_points(model, shifted, width)[0]
    step = 1e-6
    numeric = np.stack([(positions(q + step * e) - positions(q - step * e)) / (2 * step) for e in np.eye(len(q))],
                       axis=2)
    np.testing.assert_allclose(jac[:, :, :len(q)], numeric, atol=1e-6)
    assert not jac[:, :, len(q):].any()
    np.testing.assert_allclose(vel, np.einsum("kij,j->ki", jac[:, :, :len(q)], state.robot_qd), atol=1e-12)


def _gravity_torques(art, q):
    kin = ArticulationKinematics(art)
    kin.update(q)
    return kin.bias_forces(np.zeros(art.dof_count), (0.0, 0.0, -G))


@pytest.mark.parametrize("urdf", ["pendulum", "urdf/panda.urdf", "urdf/two_finger_gripper.urdf"])
def test_gravity_hessian_is_the_derivative_of_the_gravity_torques(urdf):
    """The closed-form d g / d q (revolute and prismatic joints, a mimic finger, a fixed flange) against
    central differences of g(q) from the recursive Newton-Euler pass. The gripper's joints all slide: its g
    does not depend on q."""
    from cond_ros.sim.dynamics.robots import gravity_hessian
    art = pendulum() if urdf == "pendulum" else sim.load_urdf(urdf)
    rng = np.random.default_rng(3)
    lower = np.where(np.isfinite(art.dof_lower), art.dof_lower, -np.pi)
    upper = np.where(np.isfinite(art.dof_upper), art.dof_upper, np.pi)
    for _ in range(5):
        q = rng.uniform(lower, upper)
        kin = ArticulationKinematics(art)
        kin.update(q)
        hessian = np.empty((art.dof_count, art.dof_count))
        gravity_hessian(art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier, art.link_mass,
                        art.link_com, kin.link_pose, kin.joint_axis_world, np.array([0.0, 0.0, -G]), hessian)
        step = 1e-6
        numeric = np.column_stack([(_gravity_torques(art, q + step * e) - _gravity_torques(art, q - step * e))
                                   / (2 * step) for e in np.eye(art.dof_count)])
        scale = max(1.0, np.abs(numeric).max())
        if urdf.endswith("gripper.urdf"):
            assert not hessian.any() and np.abs(numeric).max() < 1e-9
            continue
        assert np.abs(numeric).max() > 0.1  # gravity does load these joints
        np.testing.assert_allclose(hessian, numeric, rtol=0, atol=1e-7 * scale)
        np.testing.assert_array_equal(hessian, hessian.T)


def test_panda_gravity_hessian_matches_pinocchio():
    """The same derivative from Pinocchio's computeGeneralizedGravityDerivatives (independent). That algorithm
    takes no mimic joints: Pinocchio's model has both fingers free, and ours (finger 2 = finger 1) is its
    restriction, d2V/dq2 = S^T H S with S mapping our 8 DOFs to its 9."""
    pin = pytest.importorskip("pinocchio")
    from cond_ros.sim.dynamics.robots import gravity_hessian
    model_pin = pin.buildModelFromUrdf("urdf/panda.urdf")
    data = model_pin.createData()
    art = sim.load_urdf("urdf/panda.urdf", mesh_primitives=False)
    assert art.dof_count == 8 and model_pin.nq == 9
    q = np.array([0.3, -0.6, 0.2, -2.1, 0.4, 1.5, 0.7, 0.03])
    kin = ArticulationKinematics(art)
    kin.update(q)
    hessian = np.empty((8, 8))
    gravity_hessian(art.link_parent, art.joint_type, art.joint_dof, art.joint_multiplier, art.link_mass,
                    art.link_com, kin.link_pose, kin.joint_axis_world, np.array([0.0, 0.0, -G]), hessian)
    restriction = np.vstack([np.eye(8), np.eye(8)[7]])
    expected = restriction.T @ pin.computeGeneralizedGravityDerivatives(model_pin, data, restriction @ q) @ restriction
    assert np.abs(expected).max() > 1.0
    np.testing.assert_allclose(hessian, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_kinematics_are_reused_only_at_their_own_joint_positions():
    """``kinematics_at`` hands back the step's forward kinematics for the state they were computed at, and
    computes new ones for any other joint positions (a reused pose must never be stale)."""
    bld = sim.ModelBuilder()
    bld.add_articulation(pendulum(), q=(0.3, -0.2))
    model = bld.finalize()
    state = model.state()
    kinematics = robot_kinematics(model, state)
    assert kinematics_at(model, state, kinematics) is kinematics
    moved = state.copy()
    moved.robot_q[0] += 0.1
    fresh = kinematics_at(model, moved, kinematics)
    assert fresh is not kinematics
    expected = ArticulationKinematics(model.robots[0])
    expected.update(moved.robot_q)
    np.testing.assert_array_equal(fresh[0].link_pose, expected.link_pose)
    assert kinematics_at(model, state, None)[0].q.tolist() == state.robot_q.tolist()
