"""``cond-ros compare --preset``: real robots' F/T layouts (ATI / force_torque_sensor_broadcaster, Franka FR3,
franka_ros ROS 1, multipanda's state arrays), written here with rosbags as each stack writes them, come out
as the sim's wrist sensor would have published the same load.

The expected sensor-frame values are computed here from panda.urdf's XML (the two fixed joints between
ft_sensor_link and panda_tcp) with explicit rotations, not with the package's kinematics."""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from cond_ros.bags.compare import CompareOptions, compare_bags
from cond_ros.bags.io import BagError, BagWriter
from cond_ros.bags.presets import read_preset_series, sensor_convention
from cond_ros.scenes import load_named_scene

ROOT = Path(__file__).resolve().parents[2]
SIM_TOPIC = "/cond_sim/ft/wrist_ft/ground_truth"
K_WRENCH = np.array([1.5, -2.0, 7.0, 0.3, -0.1, 0.05])  # what the robot exerts, about K in K [N, N m]
STAMPS = [1_000_000_000 + k * 10_000_000 for k in range(50)]
FRANKA_STATE_ROS2 = "std_msgs/Header header\nfloat64[6] o_f_ext_hat_k\nfloat64[6] k_f_ext_hat_k\n"
FRANKA_STATE_ROS1 = "Header header\nfloat64[6] O_F_ext_hat_K\nfloat64[6] K_F_ext_hat_K\n"


def _rz(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def expected_in_sensor_frame(k_wrench):
    """The load the tool puts on the sensor (panda_cable's child_to_parent reading in ft_sensor_link), from the
    wrench the robot exerts about K = panda_tcp: opposite, rotated by panda_hand_joint's yaw, and its torque
    moved by K's offset (0.0376 m along the hand's z; the URDF's joint origins, read here)."""
    joints = {j.get("name"): j.find("origin") for j in ET.parse(ROOT / "urdf" / "panda.urdf").getroot()
              .findall("joint")}
    hand, tcp = joints["panda_hand_joint"], joints["panda_tcp_joint"]
    assert hand.get("xyz") == "0 0 0" and tcp.get("rpy") == "0 0 0"
    rotation = _rz(float(hand.get("rpy").split()[2]))
    k_origin = rotation @ np.array([float(v) for v in tcp.get("xyz").split()])
    force, torque = -rotation @ k_wrench[:3], -rotation @ k_wrench[3:]
    return np.concatenate([force, torque + np.cross(k_origin, force)])


def _store(extra=None, ros1=False):
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_KILTED)
    if extra:
        store.register(get_types_from_msg(extra, "franka_msgs/msg/FrankaState"))
    return store


def _header(store, ns, frame):
    time = store.types["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
    fields = dict(stamp=time, frame_id=frame)
    if "seq" in store.types["std_msgs/msg/Header"].__dataclass_fields__:
        fields["seq"] = 0
    return store.types["std_msgs/msg/Header"](**fields)


def _wrench_msg(store, ns, frame, values):
    vector, wrench = store.types["geometry_msgs/msg/Vector3"], store.types["geometry_msgs/msg/Wrench"]
    return store.types["geometry_msgs/msg/WrenchStamped"](
        header=_header(store, ns, frame), wrench=wrench(force=vector(*values[:3]), torque=vector(*values[3:])))


def write_real_bag(path, layout):
    """A bag as the robot's stack records it: ``wrench`` topics in ROS 2 (mcap) or ROS 1, or a FrankaState
    array; plus a JointState topic that no preset reads."""
    ros1 = layout == "franka-ros1"
    extra = FRANKA_STATE_ROS1 if ros1 else (FRANKA_STATE_ROS2 if layout == "multipanda" else None)
    store = _store(extra, ros1)
    topic, frame, values = {
        "ati-netft": ("/force_torque_sensor_broadcaster/wrench", "ft_sensor_link",
                      expected_in_sensor_frame(K_WRENCH)),
        "franka-fr3": ("/franka_robot_state_broadcaster/external_wrench_in_stiffness_frame", "fr3_hand_tcp", K_WRENCH),
        "franka-ros1": ("/franka_state_controller/F_ext", "panda_K", K_WRENCH),
        "multipanda": ("/panda/franka_robot_state_broadcaster/robot_state", "panda_link0", K_WRENCH),
    }[layout]
    if ros1:
        from rosbags.rosbag1 import Writer
        writer = Writer(Path(path))
        serialize = store.serialize_ros1
    else:
        from rosbags.rosbag2 import StoragePlugin, Writer
        writer = Writer(Path(path), version=9, storage_plugin=StoragePlugin.MCAP)
        serialize = store.serialize_cdr
    with writer:
        if layout == "multipanda":
            state = store.types["franka_msgs/msg/FrankaState"]
            connection = writer.add_connection(topic, state.__msgtype__, typestore=store)
            for ns in STAMPS:
                msg = state(header=_header(store, ns, frame), o_f_ext_hat_k=np.zeros(6), k_f_ext_hat_k=values)
                writer.write(connection, ns, serialize(msg, state.__msgtype__))
        else:
            msgtype = "geometry_msgs/msg/WrenchStamped"
            connection = writer.add_connection(topic, msgtype, typestore=store)
            for ns in STAMPS:
                writer.write(connection, ns, serialize(_wrench_msg(store, ns, frame, values), msgtype))
        other = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
        joint_state = store.types["sensor_msgs/msg/JointState"](header=_header(store, STAMPS[0], ""), name=[],
                                                                position=np.zeros(0), velocity=np.zeros(0),
                                                                effort=np.zeros(0))
        writer.write(other, STAMPS[0], serialize(joint_state, "sensor_msgs/msg/JointState"))
    return path, topic


@pytest.fixture(scope="module")
def convention():
    return sensor_convention(load_named_scene("panda_cable_small", script=False))


@pytest.fixture(scope="module")
def sim_bag(tmp_path_factory):
    """What the sim publishes for the same load: the expected reading on its F/T ground-truth topic."""
    from cond_ros.bags.io import typestore
    path = tmp_path_factory.mktemp("sim") / "sim"
    store = typestore()
    with BagWriter(path) as writer:
        for ns in STAMPS:
            writer.write(SIM_TOPIC, ns, _wrench_msg(store, ns, "ft_sensor_link", expected_in_sensor_frame(K_WRENCH)))
    return path


LAYOUTS = ["ati-netft", "franka-fr3", "franka-ros1", "multipanda"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_gives_the_sensor_reading(tmp_path, layout, convention, sim_bag):
    """Each stack's recording of one load reads back as the sim's sensor reading of it, and compares with the
    sim's topic at zero error."""
    suffix = ".bag" if layout == "franka-ros1" else ""
    bag, topic = write_real_bag(tmp_path / f"real{suffix}", layout)
    series = read_preset_series(bag, layout, convention)
    assert series.topic == topic and series.frame_id == "ft_sensor_link"
    assert np.allclose(series.values, expected_in_sensor_frame(K_WRENCH), atol=1e-12)
    comparison = compare_bags(bag, sim_bag, CompareOptions(real_topic=None, preset=layout, window_s=0.1),
                              convention=convention)
    assert all(m.rmse < 1e-9 for m in comparison.overall.values())


def test_the_transform_is_not_trivial(convention):
    """The check above would pass with any frame if K and the sensor frame coincided: they do not."""
    expected = expected_in_sensor_frame(K_WRENCH)
    assert not np.allclose(expected[:3], -K_WRENCH[:3]) and not np.allclose(expected[3:], -K_WRENCH[3:], atol=0.01)
    assert np.allclose(convention.k_in_sensor.translation, [0, 0, 0.0376])


def test_state_topic_of_a_ros1_bag_also_serves(tmp_path, convention):
    """franka_ros's FrankaState (K_F_ext_hat_K) on a ROS 1 bag, given as --real-topic with the ros1 preset."""
    from rosbags.rosbag1 import Writer
    store = _store(FRANKA_STATE_ROS1, ros1=True)
    state = store.types["franka_msgs/msg/FrankaState"]
    path = tmp_path / "states.bag"
    with Writer(path) as writer:
        connection = writer.add_connection("/franka_state_controller/franka_states", state.__msgtype__,
                                           typestore=store)
        for ns in STAMPS:
            msg = state(header=_header(store, ns, "panda_link0"), O_F_ext_hat_K=np.zeros(6), K_F_ext_hat_K=K_WRENCH)
            writer.write(connection, ns, store.serialize_ros1(msg, state.__msgtype__))
    series = read_preset_series(path, "franka-ros1", convention, topic="/franka_state_controller/franka_states")
    assert np.allclose(series.values, expected_in_sensor_frame(K_WRENCH), atol=1e-12)


def _compare_cli(*args):
    return subprocess.run([sys.executable, "-m", "cond_ros.cli", "compare", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_cli_with_a_preset(tmp_path, sim_bag):
    bag, _ = write_real_bag(tmp_path / "real.bag", "franka-ros1")
    out = tmp_path / "report"
    result = _compare_cli(bag, sim_bag, "--preset", "franka-ros1", "--scene", "panda_cable_small", "--window", "0.1",
                          "--out", out, "--json", "--no-plots")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["real"]["topic"] == "/franka_state_controller/F_ext"
    assert max(axis["rmse"] for axis in report["overall"].values()) < 1e-9


def test_bad_preset_input_exits_2_and_writes_nothing(tmp_path, sim_bag):
    bag, _ = write_real_bag(tmp_path / "real", "franka-fr3")
    out = tmp_path / "report"
    cases = [
        (["--preset", "franka-fr3"], "--preset franka-fr3 needs --scene"),
        (["--preset", "ati-netft", "--scene", "panda_cable_small"],
         "[/force_torque_sensor_broadcaster/wrench]: no such topic; the bag has: /franka_robot_state_broadcaster/"),
        (["--preset", "franka-fr3", "--scene", "panda_cable_small", "--real-topic", "/joint_states"],
         "[/joint_states]: is sensor_msgs/msg/JointState: neither a WrenchStamped nor a state message"),
        (["--preset", "franka-fr3", "--scene", "panda_cable_small", "--transform", "0", "0", "0", "0", "0", "0"],
         "a --transform would move it twice"),
        (["--preset", "franka_fr3", "--scene", "panda_cable_small"], "invalid choice: 'franka_fr3'"),
        (["--preset", "multipanda", "--scene", "panda_cable_small"], "no topic with a k_f_ext_hat_k or K_F_ext_hat_K"),
    ]
    for args, problem in cases:
        result = _compare_cli(bag, sim_bag, *args, "--out", out)
        assert result.returncode == 2 and problem in result.stderr, (args, result.stderr)
        assert not out.exists()
    with pytest.raises(BagError, match="no such bag"):
        read_preset_series(tmp_path / "missing.bag", "franka-ros1", None)


def test_base_frame_wrench_with_the_arms_pose(tmp_path, convention):
    """franka-fr3-base: O_F_ext_hat_K (base axes, torque about K) while the arm moves; the bag's joint states,
    interpolated to each stamp, give the sensor's pose. Expected from Pinocchio's forward kinematics of
    panda.urdf (its own parser), not the package's."""
    import pinocchio as pin
    from rosbags.rosbag2 import StoragePlugin, Writer
    store = _store()
    start = np.array([0.1, 0.3, -0.2, -2.0, 0.4, 2.2, 0.9])
    end = start + np.array([0.3, -0.2, 0.25, 0.3, -0.5, 0.2, -0.6])
    names = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "other_robot_joint"]
    path = tmp_path / "fr3_base"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        wrench = writer.add_connection("/franka_robot_state_broadcaster/external_wrench_in_base_frame",
                                       "geometry_msgs/msg/WrenchStamped", typestore=store)
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
        for ns, q in ((STAMPS[0], start), (STAMPS[-1], end)):
            msg = store.types["sensor_msgs/msg/JointState"](
                header=_header(store, ns, ""), name=names, position=np.concatenate([q, [0.02, 5.0]]),
                velocity=np.zeros(0), effort=np.zeros(0))
            writer.write(joints, ns, store.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
        for ns in STAMPS:
            writer.write(wrench, ns, store.serialize_cdr(_wrench_msg(store, ns, "fr3_link0", K_WRENCH),
                                                         "geometry_msgs/msg/WrenchStamped"))
    series = read_preset_series(path, "franka-fr3-base", convention)
    model = pin.buildModelFromUrdf(str(ROOT / "urdf" / "panda.urdf"))
    data = model.createData()
    sensor_id, tcp_id = model.getFrameId("ft_sensor_link"), model.getFrameId("panda_tcp")
    for k, ns in enumerate(STAMPS):
        s = (ns - STAMPS[0]) / (STAMPS[-1] - STAMPS[0])
        q = pin.neutral(model)
        arm = start + s * (end - start)
        for i in range(7):
            q[model.joints[model.getJointId(f"panda_joint{i + 1}")].idx_q] = arm[i]
        pin.framesForwardKinematics(model, data, q)
        sensor, tcp = data.oMf[sensor_id], data.oMf[tcp_id]
        force = sensor.rotation.T @ -K_WRENCH[:3]
        k_in_sensor = sensor.rotation.T @ (tcp.translation - sensor.translation)
        torque = sensor.rotation.T @ -K_WRENCH[3:] + np.cross(k_in_sensor, force)
        assert np.allclose(series.values[k], np.concatenate([force, torque]), atol=1e-9), k
    assert series.frame_id == "ft_sensor_link"
    with pytest.raises(BagError, match=r"\[/no_joints\]: no such topic"):
        read_preset_series(path, "franka-fr3-base", convention, joint_states_topic="/no_joints")
