"""``cond-ros bench ros_panda_cable``: the node under the demo launch's load, timed end to end.

The sim node runs in this process (so each step's wall times are at hand); the demo controller and a
latency probe run as child processes, as a user's controller would. The probe stamps every
/joint_states and F/T message it receives with the system-wide monotonic clock, which this process reads
too, so the step-to-publish latency is measured from the end of the physics step to the message's arrival
in another process. Results: the achieved real-time factor over the run, overruns, and those latencies
(median, 99th percentile), beside the node-internal publish time.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

RSS_EVERY_STEPS = 100  # 1 s of sim time at the cable scenes' 10 ms


def _percentiles(values_ms) -> dict:
    values = np.asarray(values_ms, dtype=float)
    if len(values) == 0:
        return dict(median=None, p99=None)
    return dict(median=float(np.median(values)), p99=float(np.percentile(values, 99)))


def _rss_mb() -> float:
    """This process's resident set size now (Linux: /proc/self/statm), in MB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _memory(samples) -> dict:
    """Peak RSS, and the growth from the end of the run's first tenth (caches, the first messages and
    arrays are made by then) to its end: a leak shows as growth that scales with the run's length."""
    if not samples:
        return dict(rss_peak_mb=None, rss_growth_mb=None, rss_samples=[])
    rss = [mb for _, mb in samples]
    settled = samples[len(samples) // 10][1]
    return dict(rss_peak_mb=max(rss), rss_growth_mb=rss[-1] - settled,
                rss_samples=[[round(t, 1), round(mb, 1)] for t, mb in samples])


def _wait_for_peers(node, executor, timeout: float = 60.0) -> None:
    """Spin until the controller and the probe subscribe to /joint_states, the probe to the first F/T topic,
    and the controller publishes."""
    from ..cosim import JOINT_COMMAND_TOPIC
    ft = [node.wrench_pubs[topic] for topic in node.outputs.ft_topic_names[:1]]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (node.joint_state_pub.get_subscription_count() >= 2 and all(p.get_subscription_count() for p in ft)
                and node.count_publishers(JOINT_COMMAND_TOPIC) >= 1):
            return
        executor.spin_once(timeout_sec=0.1)
    raise RuntimeError("the demo controller or the latency probe did not connect within "
                       f"{timeout:.0f} s; see their output above")


def bench_ros_panda_cable(*, duration: float = 10.0, scene: str = "panda_cable", real_time_factor: float = 1.0,
                          quiet: bool = True) -> dict:
    """Run ``duration`` simulated seconds of the demo launch (sim + winding controller) and time it."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from tqdm import tqdm

    from .lifetime import keep_discovery_local
    from .node import SimNode

    keep_discovery_local()  # this process's and its children's
    env = dict(os.environ)
    probe_file = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    quiet_output = subprocess.DEVNULL if quiet else None
    children = [
        subprocess.Popen([sys.executable, "-m", "cond_ros.ros.demo_controller", "--ros-args", "-p", f"scene:={scene}"],
                         env=env, stdout=quiet_output, stderr=quiet_output),
    ]
    rss = []  # (wall s since play, RSS MB), every RSS_EVERY_STEPS steps
    try:
        with rclpy.init(args=[]):
            node = SimNode(parameter_overrides=[Parameter("scene", value=scene), Parameter("start_paused", value=True),
                                                Parameter("real_time_factor", value=float(real_time_factor))])
            ft_topic = node.resolve_topic_name(node.outputs.ft_topic_names[0]) if node.outputs.ft_topic_names else ""
            children.append(subprocess.Popen([sys.executable, "-m", "cond_ros.ros.bench", probe_file, ft_topic],
                                             env=env, stdout=quiet_output, stderr=quiet_output))
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            _wait_for_peers(node, executor)
            steps = int(round(duration / node.sim.dt))
            progress = tqdm(total=steps, desc=f"ros {scene}", unit="step", disable=quiet)

            # preallocated and written through (np.zeros' pages become resident only when first written): a
            # dict of tuples grew this process by ~1.7 MB a minute and untouched zeros by ~0.2, read as the node's
            stamps = np.full(steps, -1, np.int64)
            times = np.full((steps, 3), np.nan)  # step start, physics done, published: wall times of this process
            recorded = [0]

            def record(stamp_ns, start, stepped, published):
                k = recorded[0]
                if k < steps:
                    stamps[k], times[k] = stamp_ns, (start, stepped, published)
                    recorded[0] = k + 1
                if k % RSS_EVERY_STEPS == 0:
                    rss.append((published - wall0, _rss_mb()))
                progress.update()
            node.on_step = record
            wall0 = time.monotonic()
            node.pause(False)
            node.spin(executor, stop=lambda: node.clock.steps >= steps)
            wall = time.monotonic() - wall0
            progress.close()
            summary = node.pacer.summary()
            segments = [len(rod.bodies) for rod in node.scene.cables]
            dt = node.sim.dt
    finally:
        for child in children:
            child.send_signal(signal.SIGINT)  # the probe writes its file when its spin ends
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    with open(probe_file) as fh:
        received = {topic: {int(k): v for k, v in arrivals.items()} for topic, arrivals in json.load(fh).items()}
    os.unlink(probe_file)
    stamps, times = stamps[:recorded[0]], times[:recorded[0]]

    def latency_ms(arrivals):
        return [1e3 * (arrivals[int(k)] - t[1]) for k, t in zip(stamps, times) if int(k) in arrivals]
    latency, ft_latency = latency_ms(received["joint_states"]), latency_ms(received["ft"])
    publish = 1e3 * (times[:, 2] - times[:, 1])
    step = 1e3 * (times[:, 1] - times[:, 0])
    return {"scene": scene, "cable_segments": segments, "dt_s": dt, "duration_s": steps * dt, "steps": steps,
            "wall_s": wall, "target_real_time_factor": real_time_factor,
            "realtime_factor": steps * dt / wall if wall > 0 else None, "overruns": summary["overruns"],
            "step_ms": _percentiles(step), "publish_ms": _percentiles(publish),
            "step_to_subscriber_latency_ms": _percentiles(latency), "latency_samples": len(latency),
            "ft_topic": ft_topic, "step_to_ft_subscriber_latency_ms": _percentiles(ft_latency),
            **_memory(rss), "machine_cores": os.cpu_count()}


def probe(out_path: str, ft_topic: str = "") -> None:
    """Child process: record the monotonic arrival time of every /joint_states and ``ft_topic`` message by
    stamp until SIGINT or SIGTERM (rclpy's handlers end the spin), then write them to ``out_path`` as JSON
    ({"joint_states": {stamp: time}, "ft": {stamp: time}})."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.node import Node
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import JointState

    from ..cosim import NS_PER_S
    from .lifetime import is_stop, note_interrupts
    arrivals = {"joint_states": {}, "ft": {}}
    note_interrupts()  # the SIGINT that ends it can land in rclpy's take_message as a cause-less RuntimeError
    try:
        with rclpy.init(args=[]):
            node = Node("cond_latency_probe")

            def arrived(where):
                def on_message(msg):
                    where[msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec] = time.monotonic()
                return on_message
            node.create_subscription(JointState, "joint_states", arrived(arrivals["joint_states"]), 100)
            if ft_topic:
                node.create_subscription(WrenchStamped, ft_topic, arrived(arrivals["ft"]), 100)
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            try:
                executor.spin()
            except Exception as exc:
                if not is_stop(exc, node.context):
                    raise
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    with open(out_path, "w") as fh:
        json.dump(arrivals, fh)


if __name__ == "__main__":
    probe(*sys.argv[1:3])
