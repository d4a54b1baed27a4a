"""Shadow mode with real rclpy processes: ``cond-ros play`` of a recorded run stands in for the robot (its
/joint_states and its noisy F/T), and a ``mode:=shadow`` node under another name follows it. Its predicted F/T
matches the recorded forces within the sensor's noise, its residual is the real minus the predicted reading at
each real stamp, the RMSE reaches /diagnostics, and a stream that stops or starts over is reported without
stalling the node."""
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import NodeProcess, ros_session, spin_until, stamp_ns  # noqa: E402

from cond_ros.bags import BagReader, record_scene  # noqa: E402
from cond_ros.cosim import validate_config  # noqa: E402

FT_TOPIC = "/cond_sim/ft/wrist_ft"
NOISE_STD = 0.05  # [N] the scene's F/T noise on each force axis
SHADOW = dict(scene="panda_cable_small", mode="shadow", sensor_noise=False, shadow_ft_topics=f"[{FT_TOPIC}]",
              diagnostics_period=0.2, shadow_max_age=0.1)


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    """3 s of the small cable scene's scripted winding, as the robot's recording."""
    path = tmp_path_factory.mktemp("shadow") / "robot"
    record_scene(validate_config(dict(scene="panda_cable_small")), path, duration_s=3.0, progress=False)
    return path


def _wrench(msg) -> np.ndarray:
    w = msg.wrench
    return np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])


def _bag_wrenches(bag, topic) -> dict:
    with BagReader(bag) as reader:
        return {stamp_ns(m): _wrench(m) for _, _, m in reader.messages([topic])}


class ShadowListener:
    """The test's node: the shadow's predicted F/T, residual and diagnostics, and its services."""

    def __init__(self, domain):
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import WrenchStamped
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("shadow_listener", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.predicted, self.residual, self.shadow_status = [], [], []
        self.node.create_subscription(WrenchStamped, "/shadow/ft/wrist_ft", self.predicted.append, 1000)
        self.node.create_subscription(WrenchStamped, "/shadow/ft/wrist_ft/residual", self.residual.append, 1000)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._diagnostics, 100)

    def _diagnostics(self, msg):
        for status in msg.status:
            if status.name == "shadow: shadow":
                self.shadow_status.append((ord(status.level), status.message, {v.key: v.value for v in status.values}))

    def spin_until(self, condition, timeout):
        return spin_until(self.executor, condition, timeout)

    def spin_while(self, process):
        while process.alive():
            self.executor.spin_once(timeout_sec=0.05)

    def pause_answers(self) -> float:
        """Seconds until /shadow/pause (data false: go on) answers."""
        from std_srvs.srv import SetBool
        client = self.node.create_client(SetBool, "/shadow/pause")
        start = time.monotonic()
        assert self.spin_until(client.service_is_ready, 30.0)
        future = client.call_async(SetBool.Request(data=False))
        assert self.spin_until(future.done, 30.0) and future.result().success
        self.node.destroy_client(client)
        return time.monotonic() - start

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def _play(tmp_path, bag, name):
    return NodeProcess(["-m", "cond_ros.cli", "play", str(bag), "--topics", "/joint_states", FT_TOPIC,
                        "--wait-for-subscribers", "30", "--delay", "0.5"], tmp_path / f"{name}.log", timeout=120)


def test_a_played_recording_drives_the_shadow(tmp_path, bag):
    real, truth = _bag_wrenches(bag, FT_TOPIC), _bag_wrenches(bag, FT_TOPIC + "/ground_truth")
    with ros_session() as domain:
        shadow = NodeProcess(["-m", "cond_ros.ros.node", "--ros-args", "-r", "__node:=shadow"],
                             tmp_path / "shadow.log", SHADOW)
        listener = ShadowListener(domain)
        try:
            # before any measurement: up, not stepping, and saying what it waits for
            assert listener.spin_until(lambda: listener.shadow_status, 90.0), shadow.log()
            level, message, _ = listener.shadow_status[-1]
            assert level == 1 and message == "waiting for the first measured joint state"
            player = _play(tmp_path, bag, "play")
            listener.spin_while(player)
            assert player.stop() == 0, player.log()
            time.sleep(0.5)  # past shadow_max_age and two diagnostics periods: the stream has stopped
            listener.shadow_status.clear()
            assert listener.spin_until(lambda: len(listener.shadow_status) >= 2, 10.0)
            level, message, values = listener.shadow_status[-1]
            assert level == 1 and "stale" in message and float(values["measurement_age_s"]) > 0.1, message
            assert listener.pause_answers() < 2.0 and shadow.alive()  # never stalled by the missing stream
            first_pass = len(listener.residual)
            # the same bag again: its stamps go back, the shadow starts over and follows it again
            player = _play(tmp_path, bag, "play_again")
            listener.spin_while(player)
            assert player.stop() == 0, player.log()
            listener.spin_until(lambda: len(listener.residual) >= first_pass + 250, 5.0)
            listener.shadow_status.clear()
            assert listener.spin_until(lambda: listener.shadow_status, 5.0)
            values = listener.shadow_status[-1][2]
        finally:
            listener.close()
            shadow.stop()
    log = shadow.log()
    assert "the shadow starts over" in log and values["stream_restarts"] == "1", log
    # the predicted F/T against the recording's noise-free forces, at the same stamps: the tracking error only
    predicted = {stamp_ns(m): _wrench(m) for m in listener.predicted[:first_pass + 1]}
    common = sorted(set(predicted) & set(truth))
    assert len(common) >= 250, (len(common), log)  # of 300 steps (the first samples may go before discovery)
    error = np.array([predicted[s] - truth[s] for s in common])
    assert np.all(np.sqrt(np.mean(error[:, :3] ** 2, axis=0)) < 0.05), error
    # each residual is the played (noisy) reading minus the prediction at its stamp
    residuals = listener.residual[:first_pass]
    assert len(residuals) >= 250
    for msg in residuals:
        stamp = stamp_ns(msg)
        if stamp in predicted:
            assert np.allclose(_wrench(msg), real[stamp] - predicted[stamp], atol=1e-9)
    # the running RMSE of the second pass, from /diagnostics: the noise and the tracking error, nothing more
    rmse = np.array([float(values[f"wrist_ft_rmse_{axis}"]) for axis in ("fx", "fy", "fz")])
    print(f"shadow: {len(common)} predictions, RMS error against the recorded forces "
          f"{np.sqrt(np.mean(error[:, :3] ** 2, axis=0))} N; residual RMSE of the second pass {rmse} N "
          f"over {values['wrist_ft_residual_samples']} samples")
    assert np.all(rmse > 0.5 * NOISE_STD) and np.all(rmse < 1.5 * NOISE_STD), values
    assert int(values["wrist_ft_residual_samples"]) >= 250


def test_a_shadow_that_would_publish_on_the_real_topic_does_not_start(tmp_path):
    """Under its default name the shadow's own F/T is /cond_sim/ft/wrist_ft: the real topic of a recording made by
    the sim. It exits at once, naming the clash and the way out, before publishing anything."""
    with ros_session():
        node = NodeProcess(["-m", "cond_ros.ros.node"], tmp_path / "clash.log", SHADOW)
        try:
            node.proc.wait(timeout=90)
        finally:
            node.stop()
    log = node.log()
    assert node.proc.returncode not in (0, None), log
    assert f"shadow_ft_topics: {FT_TOPIC} is a topic this node publishes (ft_outputs)" in log, log
    assert "__node:=shadow" in log
