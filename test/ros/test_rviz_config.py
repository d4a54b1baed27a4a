"""config/panda_cable.rviz shows what cond_sim publishes: each display's topic is one the node of the
panda_cable scenes publishes, with the QoS it needs, in the node's world frame (RViz itself needs a ROS 2
distribution; this checks the file against the node's own topic names, not against a copy of them)."""
import yaml

from cond_ros.cosim import WORLD_FRAME, StepOutputs, build_scene, resolve_topic, validate_config
from cond_ros.resources import packaged_file


def _displays():
    with open(packaged_file("config/panda_cable.rviz")) as fh:
        config = yaml.safe_load(fh)
    manager = config["Visualization Manager"]
    assert manager["Global Options"]["Fixed Frame"] == WORLD_FRAME
    return {d["Class"].split("/")[-1]: d for d in manager["Displays"]}


def test_every_display_reads_a_topic_of_the_node():
    displays = _displays()
    assert all(d["Class"].startswith("rviz_default_plugins/") for d in displays.values())
    for scene in ("panda_cable", "panda_cable_small"):
        config = validate_config({"scene": scene})
        built = build_scene(config, script=False)
        (robot, _), = built.robot_files
        description = displays["RobotModel"]["Description Topic"]
        assert description["Value"] == resolve_topic(f"~/robot_description/{robot}")
        assert description["Durability Policy"] == "Transient Local" and description["Depth"] == 1
        assert displays["RobotModel"]["Collision Enabled"] is True  # the URDF has collision shapes only
        assert displays["MarkerArray"]["Topic"]["Value"] == resolve_topic("~/markers")
        ft_topics = [resolve_topic(t) for t in StepOutputs(built, config).ft_topic_names]
        assert displays["Wrench"]["Topic"]["Value"] == ft_topics[0]  # the measured one (the other: ground truth)
