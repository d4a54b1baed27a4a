"""The node's cycle without ROS: commands validated and held as the node does, topics named as it names them."""
import numpy as np
import pytest
from bag_helpers import sim_config

from cond_ros.bags import messages
from cond_ros.bags.offline_node import OfflineNode


@pytest.fixture(scope="module")
def node(scenes):
    return OfflineNode(sim_config(scenes[0]), t0_ns=5_000_000_000)


def test_topics_and_stamps(node):
    published = node.start()
    assert [topic for topic, _ in published] == ["/clock", "/joint_states"]
    assert messages.stamp_ns(published[0][1].clock) == 5_000_000_000
    topics = [topic for topic, _ in node.step()]
    assert topics == ["/clock", "/joint_states", "/cond_sim/ft/wrist_ft", "/cond_sim/ft/wrist_ft/ground_truth"]
    assert node.stamp_ns == 5_010_000_000


def test_commands_are_validated_like_the_node(node, monkeypatch):
    """A valid JointState, forward command and trajectory are applied; NaN, unknown joints, a wrong length and
    a non-command topic are dropped and noted, and the held command stays."""
    node.start()
    names = [f"panda_joint{i}" for i in range(1, 8)]
    assert node.command("joint_command", messages.joint_state(names[:1], [0.1], [], 0))
    assert node.commands.position[0] == 0.1
    assert not node.command("joint_command", messages.joint_state(names[:1], [np.nan], [], 0))
    assert not node.command("joint_command", messages.joint_state(["elbow"], [0.0], [], 0))
    assert not node.command("forward_position_controller/commands", messages.float64_multi_array([0.0] * 3))
    assert not node.command("/tf", messages.float64_multi_array([0.0]))
    assert node.commands.position[0] == 0.1 and len(node.rejected) == 4
    assert "finite" in node.rejected[0][2] and "unknown joint 'elbow'" in node.rejected[1][2]
    q = node.sim.model.robot_q.copy()
    # joint_command holds panda_joint1 for command_handover_timeout: a forward command for it is refused, by name
    assert not node.command("forward_position_controller/commands", messages.float64_multi_array(q))
    assert "panda_joint1 follow joint_command (commanded until t = 0.000000 s)" in node.rejected[-1][2]
    monkeypatch.setattr(node.commands, "handover_timeout", 0.0)  # the last command wins
    assert node.command("forward_position_controller/commands", messages.float64_multi_array(q))
    trajectory = messages.joint_trajectory(names[:1], [(100_000_000, [0.2], None), (200_000_000, [0.3], None)],
                                           ns=5_000_000_000)  # stamped in the node's time base: starts at 0
    assert node.command("joint_trajectory_controller/joint_trajectory", trajectory)
    assert abs(node.commands.targets(0.15)[0][0] - 0.25) < 1e-12
