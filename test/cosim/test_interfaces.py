"""The topic conventions of users' stacks (no ROS): joint interface presets, F/T presets and their values."""
import numpy as np
import pytest

from cond_ros.cosim.config import ConfigError, validate_config
from cond_ros.cosim.interfaces import (JOINT_INTERFACES, external_wrench_at, joint_interface, parse_ft_output,
                                       stiffness_link)
from cond_ros.cosim.publication import StepOutputs
from cond_ros.scenes import edited_scene

WRIST_FT = {"name": "wrist_ft", "robot": "panda", "parent_link": "ft_sensor_link", "child_link": "panda_hand",
            "frame": "parent", "measure_direction": "child_to_parent"}
ALL_FT = ["native", "ati_netft", "franka_fr3_base", "franka_fr3_stiffness"]


def test_joint_interface_presets():
    """The topic-based plugin's and Isaac's default topics; given topics replace the preset's; only native has
    the node's own command topics."""
    assert joint_interface("topic_based") == JOINT_INTERFACES["topic_based"]
    assert (JOINT_INTERFACES["topic_based"].joint_states, JOINT_INTERFACES["topic_based"].joint_commands) == (
        "/robot_joint_states", "/robot_joint_commands")
    assert JOINT_INTERFACES["isaac"].joint_commands == "/isaac_joint_commands"
    assert JOINT_INTERFACES["native"].native_commands and not JOINT_INTERFACES["isaac"].native_commands
    custom = joint_interface("topic_based", "/sim/joint_states", "")
    assert (custom.joint_states, custom.joint_commands) == ("/sim/joint_states", "/robot_joint_commands")


@pytest.mark.parametrize("values, problem", [
    ({"interface": "ros2_control"}, "interface: expected one of native, topic_based, isaac, got 'ros2_control'"),
    ({"joint_states_topic": "/a//b"}, "joint_states_topic: '/a//b' is not a valid topic name"),
    ({"joint_commands_topic": "/{sensor}"}, "joint_commands_topic: {sensor} is for ft_outputs only"),
    ({"ft_outputs": ["netft"]}, "ft_outputs: unknown F/T preset 'netft' in 'netft' (known: native, ati_netft,"),
    ({"ft_outputs": ["ati_netft=my topic"]}, "ft_outputs: the topic of 'ati_netft=my topic': 'my topic' is not"),
    ({"ft_outputs": ["native=/ft"]}, "native F/T topics keep their names"),
    ({"ft_outputs": ["ati_netft", "franka_fr3_base=/force_torque_sensor_broadcaster/wrench"]},
     "ft_outputs: two outputs on one topic"),
])
def test_bad_interface_parameters(values, problem):
    with pytest.raises(ConfigError) as err:
        validate_config(values)
    assert problem in str(err.value)


def test_ft_output_entries():
    assert parse_ft_output("ati_netft") == ("ati_netft", "/force_torque_sensor_broadcaster/wrench")
    assert parse_ft_output("ati_netft=/netft_data") == ("ati_netft", "/netft_data")
    assert parse_ft_output("franka_fr3_base=~/{sensor}/o_f_ext") == ("franka_fr3_base", "~/{sensor}/o_f_ext")
    assert validate_config({"ft_outputs": ALL_FT}).ft_outputs == tuple(ALL_FT)


def test_external_wrench_moves_to_the_stiffness_frame():
    """The tool pressed down on a table 0.1 m in -x of K: the table pushes the tool up with 5 N. The robot
    pushes down with 5 N, which about K is a torque of 0.5 N m about -y (r = (-0.1, 0, 0), F = (0, 0, -5),
    r x F = (0, -0.5, 0)); a pure couple on the tool stays a couple of the opposite sign."""
    force, torque = external_wrench_at([0, 0, 5.0], [0, 0, 0], [0.4, 0, 0.2], [0.5, 0, 0.2])
    assert np.allclose(force, [0, 0, -5.0]) and np.allclose(torque, [0, -0.5, 0])
    force, torque = external_wrench_at([0, 0, 0], [0, 0, 2.0], [0.4, 0, 0.2], [0.5, 0, 0.2])
    assert np.allclose(force, 0) and np.allclose(torque, [0, 0, -2.0])


@pytest.fixture(scope="module")
def held_box():
    """panda_pick with a wrist F/T sensor, run to the end of its hold (the 0.4 kg box lifted and still)."""
    scene = edited_scene("panda_pick", lambda data: data.__setitem__("sensors", [dict(WRIST_FT)]))
    sim, sensor = scene.simulator, scene.sensors[0]
    while sim.state.time < 5.0 - 1e-9:
        sim.step(scene.control(sim.state.time))
        reading = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
    return scene, reading


def test_franka_external_wrench_of_a_held_box(held_box):
    """Holding a 0.4 kg box still, the robot exerts the box's weight upwards on it: O_F_ext_hat_K is
    (0, 0, m g) in the base frame (Franka's sign: what the robot exerts is positive), with the torque of that
    force about K; in K (the TCP, z down) the same force points along -z. frame_ids: the robot's root link
    and K's link."""
    scene, reading = held_box
    sim = scene.simulator
    outputs = StepOutputs(scene, validate_config({"ft_outputs": ALL_FT[::-1]}))  # native last: its own frames
    by_topic = {out.topic: out for out in outputs.wrenches(1, [reading], sim.contacts)}
    assert by_topic["~/ft/wrist_ft/ground_truth"].frame_id == by_topic["~/ft/wrist_ft"].frame_id == "ft_sensor_link"
    base = by_topic["/franka_robot_state_broadcaster/external_wrench_in_base_frame"]
    stiff = by_topic["/franka_robot_state_broadcaster/external_wrench_in_stiffness_frame"]
    weight = sim.model.body_mass[0] * 9.81
    assert base.frame_id == "panda_link0" and stiff.frame_id == "panda_tcp"
    assert np.allclose(base.values[:3], [0, 0, weight], atol=0.01 * weight)
    art = sim.model.robots[0]
    _, tcp_offset = stiffness_link(art, art.link_index("panda_hand"), "")
    k_pose = reading[1].child_pose @ tcp_offset
    box_to_k = sim.state.body_q[0] - k_pose[:3, 3]
    assert np.allclose(base.values[3:], np.cross(box_to_k, [0, 0, weight]), atol=2e-3)
    assert np.allclose(stiff.values[:3], k_pose[:3, :3].T @ base.values[:3])
    assert stiff.values[2] < -0.99 * weight  # K's z points down from the hand
    # what the wrist sensor carries is the box and the hand, so the external wrench is the smaller
    assert by_topic["~/ft/wrist_ft"].values[2] > 2.0 * weight


def test_ati_sign_does_not_follow_the_scene(held_box):
    """ati_netft reports the load the tool side applies on the sensor (child_to_parent) whatever the scene's
    measure_direction; native follows the scene."""
    scene, (reading, joint_wrench) = held_box
    outputs = StepOutputs(scene, validate_config({"ft_outputs": ["native", "ati_netft"]}))
    flipped = type(reading)(**dict(reading.__dict__, wrench=-reading.wrench, true_wrench=-reading.true_wrench))
    as_scene = {o.topic: o.values for o in outputs.wrenches(1, [(reading, joint_wrench)], None)}
    outputs._parent_to_child = [True]  # the same sensor declared parent_to_child reads the opposite wrench
    as_flipped = {o.topic: o.values for o in outputs.wrenches(1, [(flipped, joint_wrench)], None)}
    ati = "/force_torque_sensor_broadcaster/wrench"
    assert np.array_equal(as_scene[ati], reading.wrench) and np.array_equal(as_flipped[ati], reading.wrench)
    assert np.array_equal(as_flipped["~/ft/wrist_ft"], -reading.wrench)


def test_stiffness_frame_must_be_on_the_tool(small_scene):
    """K defaults to the TCP fixed below the sensor; a link that moves against the tool, or none, is an error
    that names the parameter."""
    art = small_scene.simulator.model.robots[0]
    hand = art.link_index("panda_hand")
    assert art.link_name[stiffness_link(art, hand, "")[0]] == "panda_tcp"
    assert stiffness_link(art, hand, "panda_hand")[0] == hand
    for name, problem in (("panda_link3", "is not fixed below"), ("panda_leftfinger", "is not fixed below"),
                          ("tool0", "has no link 'tool0'")):
        with pytest.raises(ConfigError, match=f"franka_stiffness_frame: .*{problem}"):
            StepOutputs(small_scene, validate_config({"ft_outputs": ["franka_fr3_stiffness"],
                                                      "franka_stiffness_frame": name}))


def test_several_sensors_need_a_sensor_placeholder():
    def two_sensors(data):
        data["sensors"] = [dict(WRIST_FT), dict(WRIST_FT, name="second ft")]
    scene = edited_scene("panda_pick", two_sensors)
    with pytest.raises(ConfigError, match="ft_outputs: 'ati_netft' would publish 2 sensors on one topic"):
        StepOutputs(scene, validate_config({"ft_outputs": ["ati_netft"]}))
    outputs = StepOutputs(scene, validate_config({"ft_outputs": ["native", "ati_netft=/{sensor}/wrench"]}))
    assert [out.topic for out in outputs.ft] == ["~/ft/wrist_ft", "~/ft/second_ft", "/wrist_ft/wrench",
                                                 "/second_ft/wrench"]
