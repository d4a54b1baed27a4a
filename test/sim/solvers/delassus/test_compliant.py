"""The compliant (Drumwright, L-stable) contact solver: hard limit, static deflection, stability, scenes."""
import pathlib
import sys

import numpy as np
import pytest

from cond_ros.scenes.registry import box_on_plane
from cond_ros.sim.builder import ModelBuilder
from cond_ros.sim.simulator import Simulator
from cond_ros.sim.solvers.delassus.compliant import SolverCompliant
from cond_ros.sim.solvers.delassus.operator import contact_jacobian
from cond_ros.sim.validate import ModelError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # solver_problems.py
from solver_problems import (DT, MODEL, TAU, THETA, ccp_reference, force_scale,  # noqa: E402
                             limit_consistent_step_data, nodal_problem)

GRAVITY = 9.81
CONVERGED = dict(tolerance=1e-14, max_iterations=200_000)


@pytest.mark.parametrize("seed", range(6))
def test_high_stiffness_approaches_the_hard_ccp_like_one_over_k(seed):
    """Forces on nodal problems (open, sticking, sliding contacts) tend to the clarabel CCP reference with
    an error that falls 10x per 10x stiffness (O(1/k)), and is < 1e-5 (relative) at k = 1e9."""
    system, contacts = nodal_problem(seed)
    lam_ref, _ = ccp_reference(system, contacts)
    a, gap = limit_consistent_step_data(contacts, seed)
    errors = []
    for k in (1e7, 1e8, 1e9):
        solver = SolverCompliant(MODEL, stiffness=k, damping=k * TAU, **CONVERGED)
        solver.set_step_data(a, gap, THETA)
        _, force, _, _ = solver.solve(system, contacts, DT)
        errors.append(np.abs(force - lam_ref).max() / force_scale(lam_ref))
    assert errors[2] < 1e-5, errors
    assert 5.0 < errors[0] / errors[1] < 20.0, errors
    assert 5.0 < errors[1] / errors[2] < 20.0, errors


@pytest.mark.parametrize("seed", range(3))
def test_frictionless_forces_obey_the_implicit_spring_damper_law(seed):
    """With mu = 0 the solution is the spring-damper at the end of the step, checked from its definition:
    u_{k+1} = (J_c v_hat - (1 - theta) a) / theta, x_{k+1} = g + dt u_{k+1,n},
    lambda_n = max(0, -(k x_{k+1} + b u_{k+1,n}))."""
    system, contacts = nodal_problem(seed, mu=(0.0, 0.0))
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(contacts.count, 3))
    gap = np.where(np.arange(contacts.count) % 2 == 0, -0.5, 0.5)  # deep in / far (u_free ~ 10 m/s)
    k, b = 1e5, 3e3
    solver = SolverCompliant(MODEL, stiffness=k, damping=b, **CONVERGED)
    solver.set_step_data(a, gap, THETA)
    v_hat, force, _, _ = solver.solve(system, contacts, DT)
    j_v = (contact_jacobian(system.dof_count, contacts) @ v_hat).reshape(-1, 3)
    u_next = (j_v[:, 0] - (1.0 - THETA) * a[:, 0]) / THETA
    law = np.maximum(0.0, -(k * (gap + DT * u_next) + b * u_next))
    assert np.any(law > 0.0) and np.any(law == 0.0)  # both active and open contacts are exercised
    np.testing.assert_allclose(force[:, 0], law, rtol=0, atol=1e-8 * force_scale(force))
    np.testing.assert_allclose(force[:, 1:], 0.0, atol=1e-12)


def drop_particle(stiffness, damping, *, steps, height=0.0, velocity=0.0, mass=0.5, radius=0.05, tolerance=1e-8,
                  theta=0.5):
    """A particle above a plane (bottom ``height`` above it, moving down at ``velocity``) stepped at 10 ms;
    returns the bottom's height over time [m] and the simulator."""
    builder = ModelBuilder()
    builder.add_particle((0.0, 0.0, radius + height), mass=mass, radius=radius, velocity=(0.0, 0.0, -velocity))
    builder.add_collider_plane()
    model = builder.finalize(integration_theta=theta)
    solver = SolverCompliant(model, stiffness=stiffness, damping=damping, tolerance=tolerance)
    sim = Simulator(model, dt=0.01, solver=solver)
    heights = []
    for _ in range(steps):
        sim.step()
        heights.append(sim.state.particle_q[0, 2] - radius)
    return np.array(heights), sim


def test_resting_particle_sinks_by_the_static_deflection():
    """A 0.5 kg particle resting on the plane settles at penetration m g / k (defaults, then softer)."""
    for stiffness, damping in ((1e6, 2e4), (1e5, 2e3)):
        heights, sim = drop_particle(stiffness, damping, steps=60)
        deflection = 0.5 * GRAVITY / stiffness
        assert abs(-heights[-1] - deflection) <= 0.01 * deflection
        assert abs(sim.state.particle_qd[0, 2]) < 1e-9


@pytest.mark.parametrize("damping,theta", [(0.0, 1.0), (2e10, 0.5), (0.0, 0.5)])
def test_stiff_landing_stays_bounded(damping, theta):
    """L-stability: at k = 1e12, dt = 10 ms, a particle landing at 1 m/s stays bounded: it never sinks
    more than a step's travel, never rises above its start, and comes to rest at the static deflection
    m g / k = 5 pm (the solver tolerance, which moves positions by ~tolerance x dt, is tightened).

    theta = 1 is the paper's implicit Euler: at rest within a few steps even undamped. With the midpoint
    rule (theta = 1/2) the undamped contact bounces (the k -> inf map x_{j+1} = (x_j - x_{j-1}) / 2 has
    complex roots of modulus 0.71) but the bounces decay; b = 2 k dt removes them."""
    heights, sim = drop_particle(1e12, damping, steps=80, height=0.02, velocity=1.0, tolerance=1e-14, theta=theta)
    deflection = 0.5 * GRAVITY / 1e12
    assert np.all(np.isfinite(heights))
    assert heights.min() > -0.01  # at most one step of travel (dt x 1 m/s)
    assert heights[1:].max() < 0.02
    assert np.all(np.abs(heights[-10:]) < 1e-9)
    if damping > 0.0 or theta == 1.0:
        assert np.all(np.abs(-heights[-10:] - deflection) <= 0.01 * deflection)
        assert abs(sim.state.particle_qd[0, 2]) < 1e-9


def test_default_landing_is_shallow_and_does_not_bounce():
    """Defaults: a particle landing at 1 m/s penetrates < 0.1 mm and never lifts off again."""
    heights, _ = drop_particle(1e6, 2e4, steps=60, height=0.01, velocity=1.0)
    assert heights.min() > -1e-4
    lowest = int(np.argmin(heights))
    assert np.all(heights[lowest:] < 1e-6)  # stays in contact after first touch


def test_box_on_plane_normal_forces_carry_the_weight():
    """The resting 0.5 kg cube: the four normal forces sum to m g within 1e-4 N, penetration < 0.1 mm."""
    model = box_on_plane()
    sim = Simulator(model, dt=0.01, solver=SolverCompliant(model))
    for _ in range(40):
        stats = sim.step()
    force = sim.contacts.world_forces().sum(axis=0)
    assert sim.contacts.count == 4
    assert abs(force[2] - 0.5 * GRAVITY) <= 1e-4
    assert np.all(np.abs(force[:2]) <= 1e-4)
    assert stats.max_penetration < 1e-4


@pytest.mark.parametrize("option,value", [("stiffness", 0.0), ("stiffness", -1.0), ("stiffness", "stiff"),
                                          ("damping", -1.0), ("damping", float("nan")), ("tolerance", 0.0),
                                          ("max_iterations", 0), ("regularization", -1e-3)])
def test_bad_options_raise_model_error_naming_the_option(option, value):
    with pytest.raises(ModelError, match=option):
        SolverCompliant(MODEL, **{option: value})


def test_solve_without_start_of_step_data_raises():
    system, contacts = nodal_problem(0)
    with pytest.raises(ModelError, match="set_step_data"):
        SolverCompliant(MODEL).solve(system, contacts, DT)


def test_same_input_gives_bit_identical_output():
    system, contacts = nodal_problem(2)
    a, gap = limit_consistent_step_data(contacts, 2)
    outputs = []
    for _ in range(2):
        solver = SolverCompliant(MODEL, stiffness=1e6, damping=2e4)
        solver.set_step_data(a, gap, THETA)
        outputs.append(solver.solve(system, contacts, DT))
    (v1, f1, it1, r1), (v2, f2, it2, r2) = outputs
    assert np.array_equal(v1, v2) and np.array_equal(f1, f2) and it1 == it2 and r1 == r2
    states = []
    for _ in range(2):
        model = box_on_plane(velocity=(0.3, 0.1, 0.0))
        sim = Simulator(model, dt=0.01, solver=SolverCompliant(model))
        for _ in range(10):
            sim.step()
        states.append((sim.state.body_q.copy(), sim.state.body_qd.copy(), sim.contacts.force.copy()))
    for x, y in zip(*states):
        assert np.array_equal(x, y)
