"""Shadow mode live (issue 33): a recorded run, played at its real pace, drives a shadow node. How close is the
predicted F/T to the recording, and how far behind the measurement does the prediction come?

    python benchmarks/shadow_live.py [--scene panda_cable] [--duration 20] [--rate 1.0] [--repeats 3]

Records DURATION s of the scene's scripted motion (``cond-ros record``: the F/T with the scene's noise, and its
noise-free ground truth), starts ``cond_sim`` in shadow mode under the name ``shadow`` (noise-free) and plays the
bag's /joint_states and F/T with ``cond-ros play``, each in its own process group, on this machine's cores.
The latency of a prediction is the wall time from the arrival of the joint state with stamp s to the arrival of
the predicted F/T with stamp s, both heard by this process. Writes ``results/shadow_live_<scene>.json`` and
``results/shadow_live_<scene>.png`` (the first run: the recording against the prediction, the residual, the
latency). Each of ``--repeats`` playbacks has a new shadow node; the JSON holds each run and the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from cond_ros.bags import AXES, stamp_ns, wrench_values  # attribute access: rclpy's messages too

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
FT_TOPIC = "/cond_sim/ft/wrist_ft"
NS = 1_000_000_000


def _start(command, log_path):
    return subprocess.Popen(command, stdout=open(log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process, grace=10.0):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _bag_series(bag, topic) -> dict:
    from cond_ros.bags import BagReader
    with BagReader(bag) as reader:
        return {_stamp(m): wrench_values(m) for _, _, m in reader.messages([topic])}


def _stamp(msg) -> int:
    return stamp_ns(msg.header.stamp)


def listen(duration_s: float, player, shadow):
    """(predicted {stamp: (arrival, values)}, joint states {stamp: arrival}, residual {stamp: values}, the last
    shadow diagnostics) heard while the player runs, and 2 s after."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import WrenchStamped
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node("shadow_benchmark")
    predicted, joint_states, residual, status = {}, {}, {}, {}
    best_effort = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
    node.create_subscription(WrenchStamped, "/shadow/ft/wrist_ft", lambda m: predicted.setdefault(
        _stamp(m), (time.monotonic(), wrench_values(m))), best_effort)
    node.create_subscription(JointState, "/joint_states",
                             lambda m: joint_states.setdefault(_stamp(m), time.monotonic()), best_effort)
    node.create_subscription(WrenchStamped, "/shadow/ft/wrist_ft/residual",
                             lambda m: residual.setdefault(_stamp(m), wrench_values(m)), best_effort)

    def diagnostics(msg):
        for s in msg.status:
            if s.name == "shadow: shadow":
                status.update({v.key: v.value for v in s.values}, level=ord(s.level), message=s.message)
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + duration_s + 120.0
    while player.poll() is None and time.monotonic() < deadline:
        if shadow.poll() is not None:
            raise SystemExit(f"the shadow node exited with {shadow.returncode}")
        executor.spin_once(timeout_sec=0.05)
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()
    return predicted, joint_states, residual, status


def plot(path, scene, real, truth, predicted, residual, latency):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stamps = sorted(set(predicted) & set(truth))
    t = np.array(stamps) / NS
    fig, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    for axis, color in zip(range(3), ("C0", "C1", "C2")):
        name = "xyz"[axis]
        axes[0].plot(t, [real[s][axis] for s in stamps], color="0.7", lw=0.6)
        axes[0].plot(t, [predicted[s][1][axis] for s in stamps], color=color, lw=1.2, label=f"f{name} predicted")
        res = sorted(residual)
        axes[1].plot(np.array(res) / NS, [residual[s][axis] for s in res], color=color, lw=0.8, label=f"f{name}")
    axes[0].set_ylabel("force [N]")
    axes[0].set_title(f"{scene}: a played recording (grey: its noisy F/T) shadowed live")
    axes[0].legend(loc="upper left", fontsize=8, ncol=3)
    axes[1].set_ylabel("residual [N]\n(real - predicted)")
    axes[1].legend(loc="upper left", fontsize=8, ncol=3)
    lat = sorted(latency)
    axes[2].plot(np.array(lat) / NS, [latency[s] * 1e3 for s in lat], lw=0.6, color="k")
    axes[2].set_ylabel("joint state to\nprediction [ms]")
    axes[2].set_xlabel("time [s] (the recording's stamps)")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def run_once(args, bag, truth, work: str, k: int):
    """One shadow node following one playback: (its numbers, predicted, residual, latency per stamp)."""
    log = os.path.join(work, f"shadow{k}.log")
    shadow = _start([sys.executable, "-m", "cond_ros.ros.node", "--ros-args", "-r", "__node:=shadow", "-p",
                     "mode:=shadow", "-p", f"scene:={args.scene}", "-p", "sensor_noise:=false", "-p",
                     f"shadow_ft_topics:=[{FT_TOPIC}]", "-p", "marker_rate:=-1.0"], log)
    player = None
    try:
        deadline = time.monotonic() + 300.0
        while "shadow of the measured joint states" not in open(log).read():
            if shadow.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(open(log).read())
            time.sleep(0.2)
        player = _start(["cond-ros", "play", bag, "--topics", "/joint_states", FT_TOPIC, "--rate", str(args.rate),
                         "--wait-for-subscribers", "30", "--delay", "1.0"], os.path.join(work, f"play{k}.log"))
        predicted, joint_states, residual, status = listen(args.duration / args.rate, player, shadow)
    finally:
        if player is not None:
            _stop(player)
        _stop(shadow)
    stamps = sorted(set(predicted) & set(truth))
    error = np.array([predicted[s][1] - truth[s] for s in stamps])
    latency = {s: predicted[s][0] - joint_states[s] for s in predicted if s in joint_states}
    lat = np.array(list(latency.values()))
    out = dict(steps_predicted=len(predicted), steps_recorded=len(truth),
               predicted_minus_recorded_rms={a: float(np.sqrt(np.mean(error[:, i] ** 2))) for i, a in enumerate(AXES)},
               residual_rmse={a: float(status.get(f"wrist_ft_rmse_{a}", "nan")) for a in AXES},
               residual_samples=int(status.get("wrist_ft_residual_samples", 0)),
               steps_extrapolated=int(status.get("steps_extrapolated", 0)),
               latency_ms=dict(median=float(np.median(lat) * 1e3), p99=float(np.percentile(lat, 99) * 1e3),
                               max=float(lat.max() * 1e3)),
               last_status=status.get("message"))
    return out, predicted, residual, latency


def _medians(runs: list) -> dict:
    """The median over the runs of each number (per axis where there are axes)."""
    def median(get):
        return float(np.median([get(r) for r in runs]))
    return dict(predicted_minus_recorded_rms={a: median(lambda r: r["predicted_minus_recorded_rms"][a]) for a in AXES},
                residual_rmse={a: median(lambda r: r["residual_rmse"][a]) for a in AXES},
                steps_extrapolated=median(lambda r: r["steps_extrapolated"]),
                latency_ms={q: median(lambda r: r["latency_ms"][q]) for q in ("median", "p99", "max")})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", default="panda_cable")
    parser.add_argument("--duration", type=float, default=20.0, help="simulated seconds recorded and played")
    parser.add_argument("--rate", type=float, default=1.0, help="playback speed (1: the recording's pace)")
    parser.add_argument("--repeats", type=int, default=3, help="playbacks, each with a new shadow node")
    args = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(90 + os.getpid() % 10))
    work = tempfile.mkdtemp(prefix="shadow_live.")
    bag = os.path.join(work, "robot")
    subprocess.run(["cond-ros", "record", args.scene, "--out", bag, "--duration", str(args.duration), "--quiet"],
                   check=True)
    real, truth = _bag_series(bag, FT_TOPIC), _bag_series(bag, FT_TOPIC + "/ground_truth")
    runs = [run_once(args, bag, truth, work, k) for k in range(args.repeats)]
    out = dict(scene=args.scene, duration_s=args.duration, rate=args.rate, machine_cores=os.cpu_count(),
               median=_medians([r[0] for r in runs]), runs=[r[0] for r in runs])
    os.makedirs(RESULTS, exist_ok=True)
    name = f"shadow_live_{args.scene}"
    with open(os.path.join(RESULTS, f"{name}.json"), "w") as fh:
        json.dump(out, fh, indent=2)
    plot(os.path.join(RESULTS, f"{name}.png"), args.scene, real, truth, *runs[0][1:])
    print(json.dumps(out["median"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
