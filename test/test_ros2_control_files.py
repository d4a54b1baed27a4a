"""``urdf/panda.ros2_control.xacro`` and ``config/ros2_control/panda_controllers.yaml``: what a ros2_control
user runs against the sim. The xacro is expanded by xacro itself (the PyPI package) and read back with
ElementTree; the expected joints come from panda.urdf's own XML, the topics from the node's presets and the
initial values from the panda_cable scene."""
import os
import xml.etree.ElementTree as ET

import pytest
import yaml

from cond_ros.cosim.interfaces import JOINT_INTERFACES
from cond_ros.sim.kinematics.urdf import load_urdf

xacro = pytest.importorskip("xacro")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
XACRO = os.path.join(ROOT, "urdf", "panda.ros2_control.xacro")
CONTROLLERS = os.path.join(ROOT, "config", "ros2_control", "panda_controllers.yaml")


def expand(**args) -> ET.Element:
    return ET.fromstring(xacro.process_file(XACRO, mappings=args).toxml())


def hardware_parameters(robot: ET.Element) -> dict:
    hardware = robot.find("ros2_control/hardware")
    return {"plugin": hardware.findtext("plugin"), **{p.get("name"): p.text for p in hardware.findall("param")}}


def test_every_moving_joint_with_its_mimic_and_the_plugin_topics():
    robot = expand()
    urdf = ET.parse(os.path.join(ROOT, "urdf", "panda.urdf")).getroot()
    moving = [j.get("name") for j in urdf.findall("joint") if j.get("type") != "fixed"]
    block = robot.find("ros2_control")
    assert [j.get("name") for j in block.findall("joint")] == moving
    mimic = {j.get("name"): j.find("mimic").get("joint") for j in urdf.findall("joint") if j.find("mimic") is not None}
    declared = {j.get("name"): {p.get("name"): p.text for p in j.findall("param")} for j in block.findall("joint")}
    assert {name: params["mimic"] for name, params in declared.items() if "mimic" in params} == mimic
    for joint in block.findall("joint"):
        assert [c.get("name") for c in joint.findall("command_interface")] == ["position"]
        assert [s.get("name") for s in joint.findall("state_interface")] == ["position", "velocity"]
    params = hardware_parameters(robot)
    preset = JOINT_INTERFACES["topic_based"]
    assert params["plugin"] == "joint_state_topic_hardware_interface/JointStateTopicSystem"
    assert (params["joint_commands_topic"], params["joint_states_topic"]) == (preset.joint_commands,
                                                                              preset.joint_states)
    isaac = hardware_parameters(expand(joint_commands_topic="/isaac_joint_commands",
                                       joint_states_topic="/isaac_joint_states"))
    assert (isaac["joint_commands_topic"], isaac["joint_states_topic"]) == (
        JOINT_INTERFACES["isaac"].joint_commands, JOINT_INTERFACES["isaac"].joint_states)


def test_initial_values_are_the_cable_scene_start(tmp_path):
    """Until the first state arrives the plugin reports initial_value; it must be where the sim starts, or
    a controller activated early holds the arm elsewhere. The expanded file still loads as the same robot."""
    with open(os.path.join(ROOT, "config", "panda_cable.yaml")) as fh:
        start = yaml.safe_load(fh)["robots"][0]["q"]
    robot = expand()
    values = [float(j.find("state_interface[@name='position']/param[@name='initial_value']").text)
              for j in robot.find("ros2_control").findall("joint")]
    assert values == start + [start[7]]  # finger joint 2 mimics joint 1
    expanded = tmp_path / "panda_ros2_control.urdf"
    expanded.write_text(ET.tostring(robot, encoding="unicode"))
    art, plain = load_urdf(str(expanded)), load_urdf(os.path.join(ROOT, "urdf", "panda.urdf"))
    assert art.joint_name == plain.joint_name and art.dof_name == plain.dof_name


def test_controllers_use_what_the_xacro_declares():
    with open(CONTROLLERS) as fh:
        config = yaml.safe_load(fh)
    manager = config["controller_manager"]["ros__parameters"]
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    trajectory = config["joint_trajectory_controller"]["ros__parameters"]
    assert manager["joint_trajectory_controller"]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    block = expand().find("ros2_control")
    commanded = {j.get("name"): [c.get("name") for c in j.findall("command_interface")] for j in block.findall("joint")}
    for joint in trajectory["joints"]:
        assert set(trajectory["command_interfaces"]) <= set(commanded[joint])
    assert trajectory["joints"] == [f"panda_joint{i}" for i in range(1, 8)]
