"""Simulator.step's failures: a singular system inside a solver's kernel is a SimulationError that names the
solver and the time, and the state stays the last good one (issue 32: the node died of a LinAlgError raised
by numba's matrix inverse inside V-FPI, under cond-ros soak's command flood)."""
import numpy as np
import pytest

from cond_ros.scenes.registry import box_on_plane
from cond_ros.sim import SimulationError, Simulator


def test_a_singular_system_is_a_simulation_error_and_keeps_the_state(monkeypatch):
    sim = Simulator(box_on_plane())
    sim.step()
    before = sim.state

    def singular(*args, **kwargs):
        return np.linalg.inv(np.zeros((2, 2)))  # what numba's inverse raises on a singular block
    monkeypatch.setattr(sim.solver, "step", singular)
    with pytest.raises(SimulationError, match=r"Singular matrix \(a singular system\) in the step from t = 0.0100"):
        sim.step()
    assert sim.state is before
    monkeypatch.undo()
    sim.step()  # and it goes on
    assert sim.state.time > before.time


def _pendulum_robot_model():
    from cond_ros.sim import ModelBuilder
    from cond_ros.sim.kinematics.articulation import Articulation

    eye = np.eye(4)
    hinge = eye.copy()
    hinge[2, 3] = 0.5
    art = Articulation(
        name="pendulum", link_name=["base", "arm"], link_parent=np.array([-1, 0]), joint_name=["", "hinge"],
        joint_type=np.array([0, 1]), joint_origin=np.array([eye, hinge]), joint_axis=np.array([[0.0, 0, 1], [0, 1, 0]]),
        joint_dof=np.array([-1, 0]), joint_multiplier=np.ones(2), joint_offset=np.zeros(2),
        link_mass=np.array([0.0, 1.0]), link_com=np.array([[0.0, 0, 0], [0, 0, -0.3]]),
        link_inertia=np.array([np.zeros((3, 3)), 0.01 * np.eye(3)]), dof_count=1, dof_name=["hinge"],
        dof_lower=np.array([-np.inf]), dof_upper=np.array([np.inf]), dof_velocity_limit=np.array([np.inf]),
        dof_effort_limit=np.array([np.inf]), dof_damping=np.zeros(1), dof_friction=np.zeros(1), base_transform=eye,
        geom_link=np.zeros(0, np.int64), geom_type=np.zeros(0, np.int64), geom_origin=np.zeros((0, 4, 4)),
        geom_size=np.zeros((0, 3)))
    builder = ModelBuilder()
    builder.add_particle((0.0, 0.0, 1.0), mass=0.1)
    builder.add_articulation(art)
    return builder.finalize()


@pytest.mark.parametrize("field, value, message", [
    ("particle_force", np.array([[0.0, np.nan, 0.0]]), r"control.particle_force: must be finite"),
    ("particle_force", np.zeros((2, 3)), r"control.particle_force: expected shape \(1, 3\), got \(2, 3\)"),
    ("robot_effort", np.array([np.inf]), r"control.robot_effort: must be finite"),
    ("robot_drive_stiffness", np.array([-1.0]), r"drive gains must be >= 0"),
    ("robot_drive_damping", np.array([np.nan]), r"control.robot_drive_damping: must be finite"),
    ("robot_q_target", ["x"], r"control.robot_q_target: expected numbers"),
])
def test_a_bad_control_is_named_and_leaves_the_state_as_it_was(field, value, message):
    from cond_ros.sim import ModelError

    sim = Simulator(_pendulum_robot_model())
    before = sim.state
    control = sim.model.control()
    setattr(control, field, value)
    with pytest.raises(ModelError, match=message):
        sim.step(control)
    assert sim.state is before


def test_a_control_of_lists_is_taken_and_the_step_reads_its_own_copy():
    sim = Simulator(_pendulum_robot_model())
    control = sim.model.control()
    control.robot_effort = [2.0]  # a list, not an array: converted
    sim.step(control)
    assert sim.state.robot_qd[0] != 0.0
    control = sim.model.control()
    checked = sim._checked_control(control)
    assert checked.robot_effort is not control.robot_effort  # a later write by the caller cannot reach the step
    np.testing.assert_array_equal(checked.robot_effort, control.robot_effort)


@pytest.mark.parametrize("name", ["particle_qd", "robot_q"])
def test_a_non_finite_state_is_a_simulation_error_naming_it(monkeypatch, name):
    sim = Simulator(_pendulum_robot_model())
    before = sim.state
    step = sim.solver.step

    def poisoned(*args, **kwargs):
        state, stats = step(*args, **kwargs)
        getattr(state, name)[0] = np.nan
        return state, stats
    monkeypatch.setattr(sim.solver, "step", poisoned)
    with pytest.raises(SimulationError, match=f"non-finite {name} at t = 0.0100 s"):
        sim.step()
    assert sim.state is before
