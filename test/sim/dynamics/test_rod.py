"""Cosserat-rod cable: statics against beam theory, and bad input.

Statics use a test-only direct solver (scipy's sparse LU of the step's A, no contacts), so they test
the rod model independently of how COND converges on it.
"""
import numpy as np
import pytest
import scipy.sparse.linalg as spla

from cond_ros.sim import ModelBuilder, ModelError, Simulator
from cond_ros.sim.builder import world_point
from cond_ros.sim.dynamics.rod import RodMaterial, add_rod, clamp_rod_end
from cond_ros.sim.kinematics.rigid import quat_to_matrix
from cond_ros.sim.model import DampingPolicy
from cond_ros.sim.solvers.base import SolverBase


class DirectSolver(SolverBase):
    """Test-only: solves the step's A v = b exactly (valid only without contacts)."""

    name = "direct"

    def solve(self, system, contacts, dt):
        assert contacts.count == 0
        v = spla.spsolve(system.matrix().tocsc(), system.rhs())
        return v, np.zeros((0, 3)), 1, 0.0


def direct_simulator(model, dt):
    return Simulator(model, dt=dt, solver=DirectSolver(model))


def tip_point(sim, rod):
    rot = quat_to_matrix(sim.state.body_quat[rod.bodies[-1]])
    return sim.state.body_q[rod.bodies[-1]] + rot @ np.array([0.0, 0.0, 0.5 * rod.segment_length])


def cantilever_deflection(segments, steps=150):
    length = 0.05
    mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=1e8, poisson_ratio=0.3, damping_time=0.02)
    b = ModelBuilder()
    rod = add_rod(b, (0.0, 0.0, 0.5), (length, 0.0, 0.5), segments, mat)
    clamp_rod_end(b, rod, "start", world_point((0.0, 0.0, 0.5)))
    sim = direct_simulator(b.finalize(damping_policy=DampingPolicy.GEOMETRIC), 0.01)
    sim.run(steps)
    # the midpoint rule keeps a tiny sign-flipping rotation of the stiff segments; average two steps
    before = tip_point(sim, rod)
    sim.step()
    assert np.abs(sim.state.body_qd[:, :3]).max() < 1e-4  # at rest (tip motion per step < 1e-6 m)
    tip = 0.5 * (before + tip_point(sim, rod))
    w = mat.line_density * 9.81
    euler_bernoulli = w * length ** 4 / (8.0 * mat.youngs_modulus * mat.second_moment)
    return 0.5 - tip[2], euler_bernoulli, length


def test_cantilever_tip_deflection_matches_euler_bernoulli_and_converges():
    errors = []
    for n in (10, 20, 40, 80):
        deflection, reference, length = cantilever_deflection(n)
        assert reference < 0.01 * length  # small-deflection regime
        errors.append(deflection / reference - 1.0)
    print("cantilever relative errors (N = 10, 20, 40, 80):", errors)
    # joints at segment boundaries: the discrete chain is stiffer/softer by O(1/N) and converges
    assert abs(errors[-1]) < 0.05
    assert all(abs(b) < abs(a) for a, b in zip(errors, errors[1:])), errors
    assert abs(errors[-1]) < 0.6 * abs(errors[-2])


@pytest.mark.parametrize("theta", [0.5, 0.6])
def test_axial_stretch_matches_ea(theta):
    """A vertical rod hanging from a clamp stretches by w L^2 / (2 E A) under its own weight (any theta)."""
    length, n = 0.4, 40
    mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=2.954e6, poisson_ratio=0.49, damping_time=0.02)
    b = ModelBuilder()
    rod = add_rod(b, (0.0, 0.0, 1.0), (0.0, 0.0, 1.0 - length), n, mat)
    clamp_rod_end(b, rod, "start", world_point((0.0, 0.0, 1.0)))
    sim = direct_simulator(b.finalize(damping_policy=DampingPolicy.GEOMETRIC, integration_theta=theta), 0.01)
    sim.run(200)
    stretch = (1.0 - length) - tip_point(sim, rod)[2]
    w = mat.line_density * 9.81
    # the chain's N joints carry the weight below them: sum_k w (L - k l) / (E A / l) = w L^2 (N + 1) / (2 N E A)
    reference = w * length ** 2 / (2.0 * mat.youngs_modulus * mat.area) * (n + 1) / n
    assert stretch == pytest.approx(reference, rel=1e-3)


@pytest.mark.parametrize("theta", [0.5, 0.6])
def test_segment_damping_gives_the_terminal_velocity_and_the_discrete_decay(theta):
    """A free cable falls, every segment against its own linear damping c, towards v_t = m_seg g / c; a
    spinning segment's angular velocity decays by the theta rule's exact factor per step."""
    n, c_lin, c_ang, dt = 10, 0.01, 0.01, 0.01
    mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=2.954e6, poisson_ratio=0.49,
                      segment_damping=(c_lin, c_ang))
    b = ModelBuilder()
    rod = add_rod(b, (0.0, 0.0, 1.0), (0.4, 0.0, 1.0), n, mat)
    sim = direct_simulator(b.finalize(damping_policy=DampingPolicy.GEOMETRIC, integration_theta=theta), dt)
    m_seg = mat.line_density * 0.4 / n
    sim.run(100)  # 16 time constants m / c
    np.testing.assert_allclose(sim.state.body_qd[rod.bodies, 2], -m_seg * 9.81 / c_lin, rtol=1e-6)

    spin = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    i_axis = 2e-9
    spin.add_body((0.0, 0.0, 0.0), mass=1e-4, inertia=np.diag([1e-9, 1e-9, i_axis]), angular_velocity=(0.0, 0.0, 3.0),
                  damping=(0.0, c_ang * 1e-6))
    sim = direct_simulator(spin.finalize(integration_theta=theta), dt)
    sim.step()
    # I (w1 - w0) / dt = -c (theta w1 + (1 - theta) w0)
    factor = (i_axis / dt - (1.0 - theta) * c_ang * 1e-6) / (i_axis / dt + theta * c_ang * 1e-6)
    assert sim.state.body_qd[0, 5] == pytest.approx(3.0 * factor, rel=1e-9)


def test_bad_segment_damping_names_the_field():
    with pytest.raises(ModelError, match="rod.segment_damping"):
        RodMaterial(radius=0.002, density=1259.0, youngs_modulus=1e6, poisson_ratio=0.3, segment_damping=(-0.1, 0.0))
    with pytest.raises(ModelError, match="body\\[0\\].damping"):
        ModelBuilder().add_body((0, 0, 0), mass=1.0, inertia=np.eye(3), damping=(0.0, float("nan")))


@pytest.mark.parametrize("kwargs, field", [
    (dict(radius=-1.0), "rod.radius"),
    (dict(density=0.0), "rod.density"),
    (dict(youngs_modulus=float("nan")), "rod.youngs_modulus"),
    (dict(poisson_ratio=0.5), "rod.poisson_ratio"),
    (dict(mu=-0.1), "rod.mu"),
])
def test_bad_material_names_the_field(kwargs, field):
    args = dict(radius=0.002, density=1259.0, youngs_modulus=1e6, poisson_ratio=0.3)
    args.update(kwargs)
    with pytest.raises(ModelError, match=field):
        RodMaterial(**args)


def test_bad_rod_geometry():
    mat = RodMaterial(radius=0.002, density=1259.0, youngs_modulus=1e6, poisson_ratio=0.3)
    with pytest.raises(ModelError, match="coincide"):
        add_rod(ModelBuilder(), (0, 0, 0), (0, 0, 0), 10, mat)
    with pytest.raises(ModelError, match="segments"):
        add_rod(ModelBuilder(), (0, 0, 0), (1, 0, 0), 1, mat)
