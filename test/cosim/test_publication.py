"""Which values the node publishes on which topic (no ROS): names, rates, contact pairs that persist."""
import numpy as np

from cond_ros.cosim.config import validate_config
from cond_ros.cosim.publication import StepOutputs, contact_wrench_topic, ft_topics, resolve_topic, topic_token


def test_topic_names():
    assert topic_token("panda/hand-1") == "panda_hand_1" and topic_token("1st") == "_1st"
    assert ft_topics("wrist ft") == ("~/ft/wrist_ft", "~/ft/wrist_ft/ground_truth")
    assert contact_wrench_topic(("cable0", "cylinder0")) == "~/contact_wrench/cable0/cylinder0"
    assert resolve_topic("~/ft/a") == "/cond_sim/ft/a" and resolve_topic("joint_states") == "/joint_states"
    assert resolve_topic("/clock", namespace="/robot") == "/clock"
    assert resolve_topic("joint_states", namespace="/robot/") == "/robot/joint_states"
    assert resolve_topic("~/markers", node="sim", namespace="robot") == "/robot/sim/markers"


def test_outputs_of_a_step(small_scene):
    """Joint states every step at rate 0, F/T measured only when sampled, ground truth always; a body pair's
    topic appears at its first contact and then carries zeros when the pair is apart."""
    sim = small_scene.simulator
    sim.reset()
    outputs = StepOutputs(small_scene, validate_config({"ft_rate": 0.0, "joint_state_rate": 50.0}))
    assert outputs.joint_state(1, sim.state) is None and outputs.joint_state(2, sim.state) is not None  # 50 Hz
    assert outputs.wrenches(0, None, None) == []
    sim.step()
    sensor = small_scene.sensors[0]
    sensor.reset()
    reading, joint_wrench = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
    first = outputs.wrenches(1, [(reading, joint_wrench)], sim.contacts)
    topics = [out.topic for out in first]
    assert topics[:2] == ["~/ft/wrist_ft", "~/ft/wrist_ft/ground_truth"]
    assert "~/contact_wrench/cable0/cylinder0" in topics
    assert np.array_equal(first[0].values, reading.wrench) and first[0].frame_id == "ft_sensor_link"
    held = dict(reading.__dict__, updated=False)
    later = outputs.wrenches(2, [(type(reading)(**held), joint_wrench)], None)  # not sampled; no contacts now
    assert [out.topic for out in later][0] == "~/ft/wrist_ft/ground_truth"
    pair = next(out for out in later if out.topic == "~/contact_wrench/cable0/cylinder0")
    assert np.array_equal(pair.values, np.zeros(6)) and pair.frame_id == "world"
