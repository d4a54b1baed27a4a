"""Command validation (every bad input names its problem) and the command the sim applies."""
import numpy as np
import pytest

from cond_ros.cosim.commands import (CommandError, CommandState, DriveMode, JointLimits, forward_targets,
                                   joint_state_targets, joint_trajectory)
from cond_ros.cosim.joint_names import JointNameMap, model_joint_names

ARM = [f"panda_joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def model(small_scene):
    return small_scene.simulator.model


@pytest.fixture(scope="module")
def names(model):
    return JointNameMap(*model_joint_names(model))


@pytest.fixture(scope="module")
def limits(model):
    return JointLimits.from_model(model)


def test_joint_state_position_command(names, limits, model):
    """Positions (with fer_ names) give a position command; velocities and efforts ride along."""
    q = model.robot_q[:7] + 0.01
    targets = joint_state_targets(names, limits, [n.replace("panda_", "fer_") for n in ARM], q, [0.1] * 7, [])
    assert targets.mode == DriveMode.POSITION
    np.testing.assert_array_equal(targets.dofs, np.arange(7))
    np.testing.assert_array_equal(targets.position, q)
    assert targets.effort is None


def test_joint_state_modes(names, limits):
    """No positions: velocity mode; only efforts: effort mode."""
    assert joint_state_targets(names, limits, ["panda_joint1"], [], [0.2], []).mode == DriveMode.VELOCITY
    assert joint_state_targets(names, limits, ["panda_joint1"], [], [], [1.0]).mode == DriveMode.EFFORT


@pytest.mark.parametrize("names_, position, velocity, effort, problem", [
    (["panda_joint1"], [float("nan")], [], [], "must be finite"),
    (["panda_joint1"], [float("inf")], [], [], "must be finite"),
    (["panda_joint1", "panda_joint2"], [0.0], [], [], "1 values for 2 joints"),
    (["elbow"], [0.0], [], [], "unknown joint 'elbow'"),
    (["panda_joint4"], [0.5], [], [], "position 0.5 of panda_joint4 is outside its limits"),
    (["panda_joint1"], [], [99.0], [], "velocity 99.0 of panda_joint1"),
    (["panda_joint5"], [], [], [-50.0], "effort -50.0 of panda_joint5"),
    (["panda_joint1"], [], [], [], "all empty"),
    ([], [], [], [], "all empty"),
    (["panda_joint1", "fer_joint1"], [0.0, 0.0], [], [], "named twice"),
    (["panda_finger_joint2"], [0.01], [], [], "only mimic joints"),
    (["panda_joint1"], ["x"], [], [], "expected numbers"),
])
def test_joint_state_rejections(names, limits, names_, position, velocity, effort, problem):
    """Each kind of bad JointState command is rejected, saying what is wrong."""
    with pytest.raises(CommandError, match=problem):
        joint_state_targets(names, limits, names_, position, velocity, effort)


def test_forward_command(limits, model):
    """Float64MultiArray: one value per commanded joint, checked against that mode's limits."""
    dofs = np.arange(8)
    targets = forward_targets(limits, dofs, DriveMode.POSITION, list(model.robot_q))
    np.testing.assert_array_equal(targets.position, model.robot_q)
    with pytest.raises(CommandError, match="7 values for 8 joints"):
        forward_targets(limits, dofs, DriveMode.POSITION, [0.0] * 7)
    with pytest.raises(CommandError, match="7 values for 8 joints"):
        forward_targets(limits, dofs, DriveMode.VELOCITY, [0.0] * 7)
    with pytest.raises(CommandError, match="finite"):
        forward_targets(limits, dofs, DriveMode.EFFORT, [0.0] * 7 + [float("nan")])
    with pytest.raises(CommandError, match="effort 100.0 of panda_finger_joint1"):
        forward_targets(limits, dofs, DriveMode.EFFORT, [0.0] * 7 + [100.0])


def test_trajectory_from_current_target(names, limits, model):
    """A trajectory whose first point lies ahead starts from the current target and interpolates linearly."""
    current = model.robot_q.copy()
    goal = current[:2] + 0.1
    traj = joint_trajectory(names, limits, ARM[:2], [(1.0, goal, [])], start=2.0, now=2.0, current=current)
    q, qd = traj.sample(2.5)
    np.testing.assert_allclose(q, current[:2] + 0.05)
    np.testing.assert_allclose(qd, [0.1, 0.1])
    q, qd = traj.sample(10.0)
    np.testing.assert_array_equal(q, goal)
    np.testing.assert_array_equal(qd, [0.0, 0.0])


def test_trajectory_with_velocities(names, limits, model):
    """Given velocities are interpolated too; the stamp sets the start."""
    current = model.robot_q.copy()
    points = [(0.0, current[:1], [0.0]), (1.0, current[:1] + 0.2, [0.4])]
    traj = joint_trajectory(names, limits, ARM[:1], points, start=5.0, now=4.0, current=current)
    np.testing.assert_allclose(traj.times, [5.0, 6.0])
    np.testing.assert_allclose(traj.sample(5.5)[1], [0.2])


@pytest.mark.parametrize("points, problem", [
    ([], "no points"),
    ([(1.0, [0.0], []), (0.5, [0.0], [])], "must be >= 0 and increase"),
    ([(-1.0, [0.0], [])], "must be >= 0 and increase"),
    ([(1.0, [float("nan")], [])], "finite"),
    ([(1.0, [], [])], "0 values for 1 joints"),
    ([(1.0, [9.0], [])], "position 9.0 of panda_joint1"),
    ([(1.0, [0.0], [0.0]), (2.0, [0.0], [])], "every point or for none"),
])
def test_trajectory_rejections(names, limits, model, points, problem):
    """Empty, unordered, non-finite, short, out-of-limit or half-specified trajectories are rejected."""
    with pytest.raises(CommandError, match=problem):
        joint_trajectory(names, limits, ["panda_joint1"], points, start=0.0, now=0.0, current=model.robot_q)


def test_trajectory_in_the_past(names, limits, model):
    """A trajectory that ended before now is rejected."""
    with pytest.raises(CommandError, match="before the current time"):
        joint_trajectory(names, limits, ["panda_joint1"], [(1.0, [0.0], [])], start=1.0, now=3.0,
                         current=model.robot_q)


def test_control_reproduces_the_script(small_scene):
    """The script's targets sent as a position command give the script's own Control, bit for bit."""
    model, script = small_scene.simulator.model, small_scene.script
    state = CommandState(model)
    expected = script.control(1.23)
    state.apply(joint_state_targets(JointNameMap(*model_joint_names(model)), state.limits,
                                    model.robots[0].dof_name, expected.robot_q_target, expected.robot_qd_target, []))
    control = state.control(1.23, model.robot_q, gravity_compensation=True)
    for field in ("robot_q_target", "robot_qd_target", "robot_effort", "robot_drive_stiffness",
                  "robot_drive_damping"):
        np.testing.assert_array_equal(getattr(control, field), getattr(expected, field))


def test_modes_set_drive_gains(limits, model):
    """Velocity mode zeroes K_p, effort mode both gains; a direct command takes joints off a trajectory."""
    state = CommandState(model)
    names = JointNameMap(*model_joint_names(model))
    state.follow(joint_trajectory(names, limits, ARM[:2], [(1.0, model.robot_q[:2] + 0.1, [])], start=0.0, now=0.0,
                                  current=model.robot_q))
    state.apply(forward_targets(limits, np.array([1]), DriveMode.VELOCITY, [0.3]))
    state.apply(forward_targets(limits, np.array([2]), DriveMode.EFFORT, [1.5]))
    control = state.control(0.5, model.robot_q, gravity_compensation=False)
    assert control.robot_drive_stiffness[1] == 0.0 and control.robot_drive_damping[1] > 0.0
    assert control.robot_drive_stiffness[2] == 0.0 and control.robot_drive_damping[2] == 0.0
    assert control.robot_qd_target[1] == 0.3 and control.robot_effort[2] == 1.5
    assert control.robot_q_target[0] == pytest.approx(model.robot_q[0] + 0.05)  # joint 1 still follows
    state.reset()
    np.testing.assert_array_equal(state.control(0.5, model.robot_q, gravity_compensation=False).robot_q_target,
                                  model.robot_q)


def test_a_joint_follows_one_topic_until_the_handover_timeout(limits, model):
    """As ros2_control gives a joint's command interface to one controller: a second topic's command for a joint
    the first commanded less than the timeout ago is refused, by name, and changes nothing; the first topic
    always gets through, the second once the first has been quiet for the timeout, and a reset frees all."""
    state = CommandState(model, handover_timeout=0.5)
    q = model.robot_q.copy()
    state.apply(forward_targets(limits, np.arange(8), DriveMode.POSITION, q), "forward_position_controller/commands",
                0.0)
    with pytest.raises(CommandError, match=r"panda_joint1 and 7 more follow forward_position_controller/commands "
                                           r"\(commanded until t = 0\.000000 s\); another topic takes a joint over "
                                           r"0\.5 s after that \(parameter command_handover_timeout"):
        state.apply(forward_targets(limits, np.arange(8), DriveMode.EFFORT, [0.0] * 8),
                    "forward_effort_controller/commands", 0.2)
    assert (state.mode == DriveMode.POSITION).all()
    state.apply(forward_targets(limits, np.arange(8), DriveMode.POSITION, q), "forward_position_controller/commands",
                0.3)  # its own topic: always, and the joints are held until 0.3 + 0.5
    with pytest.raises(CommandError, match="panda_joint3 follow"):
        state.apply(forward_targets(limits, np.array([2]), DriveMode.VELOCITY, [0.1]), "joint_command", 0.79)
    state.apply(forward_targets(limits, np.array([2]), DriveMode.VELOCITY, [0.1]), "joint_command", 0.8)
    assert state.mode[2] == DriveMode.VELOCITY and state.source[2] == "joint_command"
    assert state.source[1] == "forward_position_controller/commands"
    state.reset()
    state.apply(forward_targets(limits, np.array([1]), DriveMode.EFFORT, [0.0]), "joint_command", 0.0)


def test_a_trajectory_holds_its_joints_until_its_end(names, limits, model):
    """The trajectory topic commands its joints until its last point (plus the timeout), not only when it came;
    a command without a topic (the node's own hold) and a timeout of 0 are never refused."""
    state = CommandState(model, handover_timeout=0.5)
    state.follow(joint_trajectory(names, limits, ARM[:2], [(2.0, model.robot_q[:2] + 0.1, [])], start=0.0, now=0.0,
                                  current=model.robot_q), "joint_trajectory_controller/joint_trajectory", 0.0)
    effort = forward_targets(limits, np.array([0]), DriveMode.EFFORT, [0.0])
    with pytest.raises(CommandError, match=r"panda_joint1 and 1 more follow joint_trajectory_controller/joint_traj"
                                           r"ectory \(commanded until t = 2\.000000 s\)"):
        state.check_claim(np.array([0, 1]), "joint_command", 2.4)
    state.check_claim(np.array([0, 1]), "joint_command", 2.5)
    state.check_claim(np.array([2]), "joint_command", 0.0)  # a joint the trajectory does not drive
    state.apply(effort)  # no topic: not refused, and it takes the joint off the trajectory
    assert state.mode[0] == DriveMode.EFFORT
    state.handover_timeout = 0.0
    state.apply(forward_targets(limits, np.array([1]), DriveMode.VELOCITY, [0.0]), "forward_velocity_controller/"
                "commands", 0.1)
    assert state.mode[1] == DriveMode.VELOCITY
