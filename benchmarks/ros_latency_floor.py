"""What rclpy itself costs on this machine: /joint_states latency from a bare publisher, without the simulator.

    python benchmarks/ros_latency_floor.py [--busy-ms 0 1.5 4] [--messages 3000]

The floor under ``cond-ros bench ros_panda_cable``'s step-to-subscriber latency. A publisher in this process
sends a 9-joint sensor_msgs/JointState every 10 ms, stamped like the node's; the same latency probe as the
node benchmark (``cond_ros.ros.bench``, a separate process with a SingleThreadedExecutor) stamps each arrival
with the system-wide monotonic clock. For each ``--busy-ms`` the publisher then keeps its core busy that long
after each message, as the node does with its F/T sensor and other outputs, and sleeps out the rest of the
10 ms. Prints and writes median and p99 per setting to ``results/ros_latency_floor.json``. Needs the ros extra;
set ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of your own.
"""
import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
PERIOD_S = 0.01


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def measure(node, executor, busy_ms: float, messages: int) -> dict:
    from sensor_msgs.msg import JointState

    from cond_ros.ros.node import DEFAULT_QOS
    probe_file = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    probe = subprocess.Popen([sys.executable, "-m", "cond_ros.ros.bench", probe_file], start_new_session=True)
    publisher = node.create_publisher(JointState, "joint_states", DEFAULT_QOS)
    try:
        deadline = time.monotonic() + 60.0
        while publisher.get_subscription_count() < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the latency probe did not subscribe within 60 s")
            executor.spin_once(timeout_sec=0.1)
        time.sleep(1.0)  # discovery settles
        names = [f"joint{i}" for i in range(9)]
        sent = {}
        for k in range(messages):
            start = time.monotonic()
            msg = JointState(name=names, position=[0.0] * 9, velocity=[0.0] * 9)
            ns = (k + 1) * int(PERIOD_S * 1e9)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
            sent[ns] = time.monotonic()
            publisher.publish(msg)
            _busy(busy_ms * 1e-3)
            executor.spin_once(timeout_sec=0.0)
            time.sleep(max(0.0, PERIOD_S - (time.monotonic() - start)))
    finally:
        probe.send_signal(signal.SIGINT)  # the probe writes its file when its spin ends
        try:
            probe.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.wait()
        node.destroy_publisher(publisher)
    with open(probe_file) as fh:
        received = {int(k): v for k, v in json.load(fh).items()}
    os.unlink(probe_file)
    latency = np.array([1e3 * (received[k] - t) for k, t in sent.items() if k in received])
    if len(latency) == 0:
        raise RuntimeError("the probe received none of the messages")
    return {"busy_ms": busy_ms, "received": len(latency), "sent": messages,
            "median_ms": float(np.median(latency)), "p99_ms": float(np.percentile(latency, 99))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy-ms", type=float, nargs="+", default=[0.0, 1.5, 4.0])
    parser.add_argument("--messages", type=int, default=3000)
    args = parser.parse_args()
    if args.messages < 100 or any(b < 0 or b > 8 for b in args.busy_ms):
        sys.exit("ros_latency_floor: --messages must be >= 100 and --busy-ms within [0, 8] (of the 10 ms period)")
    try:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
    except ImportError as exc:
        sys.exit(f"ros_latency_floor: needs the ros extra (pip install 'cond_ros[ros]'): {exc}")
    rows = []
    with rclpy.init(args=[]):
        node = rclpy.create_node("cond_latency_floor")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        for busy in args.busy_ms:
            rows.append(measure(node, executor, busy, args.messages))
            print(f"busy {busy:.1f} ms after each publish: latency median {rows[-1]['median_ms']:.2f} ms, "
                  f"p99 {rows[-1]['p99_ms']:.2f} ms ({rows[-1]['received']}/{args.messages} received)", flush=True)
        node.destroy_node()
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "ros_latency_floor.json"
    out.write_text(json.dumps({"period_s": PERIOD_S, "machine_cores": os.cpu_count(), "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
