"""``cond-ros soak``: the sim node beside a controller that floods it, for a given wall time, sampled each second.

Three processes, each in its own process group and ended with the soak:

- the sim node (``python -m cond_ros.ros.node``) at real time on the chosen scene;
- a flood controller (``python -m cond_ros.ros.soak --flood``): every command topic of the node at ``rate``
  Hz each (JointState commands, a trajectory, forward position, velocity and effort), a burst of
  ``burst`` JointState commands within one second every ``burst_period`` seconds, and every
  ``BAD_EVERY``-th message a bad one (NaN, unknown joint, wrong length, out of limits, empty), by kind;
  ``/joint_command`` alone in the first second, so that the arm follows it and the node refuses the other
  topics' commands for its joints (``command_handover_timeout``);
- this process, which reads the node's resident memory, open file descriptors and threads from
  ``/proc`` every second, and its ``/diagnostics`` (achieved real-time factor, overruns, commands
  accepted and rejected).

It writes ``soak.csv`` (one row a second), ``soak.png`` (memory, real-time factor and accepted commands
over time) and ``soak.json``: the verdict, that after the warm-up (the first tenth, at least 10 s) the
memory grows by less than ``RSS_GROWTH_LIMIT_PCT`` and descriptors and threads do not grow, that the node
lived through it, and the counts behind it. The exit code is 0 only for a passing verdict.
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time

RSS_GROWTH_LIMIT_PCT = 1.0
CLAIM_S = 1.0  # [s] the flood's first second: /joint_command alone
BAD_EVERY = 50  # one message in this many is a bad one
BAD_KINDS = ("nan", "unknown_joint", "wrong_length", "out_of_limits", "empty")  # and a trajectory's own:
TRAJECTORY_DEFECT = "non_increasing_times"
COLUMNS = ("t_s", "rss_mb", "fds", "threads", "real_time_factor", "overruns", "commands_accepted",
           "commands_rejected", "sim_time_s", "iterations", "contacts")
ARM = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1"]


@dataclasses.dataclass(frozen=True)
class SoakOptions:
    scene: str = "panda_cable_small"
    duration_s: float = 600.0
    rate_hz: float = 1000.0
    burst: int = 10_000
    burst_period_s: float = 20.0


# -- the flood controller (its own process) -----------------------------------------------------------------

def _bad(kind: str, msg_type, q):
    """A command of ``msg_type`` (JointState or Float64MultiArray) spoiled in the way ``kind`` names."""
    values = list(q)
    if kind == "nan":
        values[0] = math.nan
    elif kind == "out_of_limits":
        values[0] = 1e3
    elif kind == "wrong_length":
        values = values[:-2]
    elif kind == "empty":
        values = []
    if msg_type.__name__ == "JointState":
        names = ["no_such_joint"] + ARM[1:] if kind == "unknown_joint" else ARM[:len(values)]
        return msg_type(name=names, position=values)
    return msg_type(data=values + ([0.0] if kind == "unknown_joint" else []))  # forward: no names, a length


def flood(options: SoakOptions, report_path: str) -> int:
    """Publish until SIGINT/SIGTERM; write the counts sent (by topic, bad by kind) to ``report_path``."""
    import rclpy
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from ..stop_signals import StopSignals
    from .lifetime import watch_parent
    watch_parent("cond_soak_flood")
    rclpy.init()
    node = rclpy.create_node("cond_soak_flood")
    qos = QoSProfile(depth=10)
    # the node gives each joint to one topic at a time (command_handover_timeout): /joint_command alone for the
    # first CLAIM_S makes it the one the arm follows, as a user's controller would be, and every other topic's
    # commands are then refused for naming joints that /joint_command holds, a path the flood exercises too
    topics = {"/forward_effort_controller/commands": Float64MultiArray,
              "/forward_velocity_controller/commands": Float64MultiArray,
              "/joint_trajectory_controller/joint_trajectory": JointTrajectory,
              "/joint_command": JointState,
              "/forward_position_controller/commands": Float64MultiArray}
    publishers = {topic: node.create_publisher(kind, topic, qos) for topic, kind in topics.items()}
    start_q = []
    node.create_subscription(JointState, "/joint_states", lambda m: start_q or start_q.extend(m.position[:8]), qos)
    sent = dict.fromkeys(topics, 0)
    bad = dict.fromkeys((*BAD_KINDS, TRAJECTORY_DEFECT), 0)
    with StopSignals() as stop:
        while not start_q and not stop():
            rclpy.spin_once(node, timeout_sec=0.1)
        t0 = next_tick = time.monotonic()
        while not stop():
            now = time.monotonic()
            t = now - t0
            in_burst = (t % options.burst_period_s) < 1.0 and t > 1.0
            per_tick = 1 + (int(options.burst / options.rate_hz) if in_burst else 0)
            q = [v + (0.02 * math.sin(2.0 * t) if j < 7 else 0.0) for j, v in enumerate(start_q)]
            for topic, kind in topics.items():
                if t < CLAIM_S and topic != "/joint_command":
                    continue
                for _ in range(per_tick if topic == "/joint_command" else 1):
                    if (sent[topic] + 1) % BAD_EVERY == 0:  # per topic: every topic gets its bad ones
                        which = BAD_KINDS[((sent[topic] + 1) // BAD_EVERY) % len(BAD_KINDS)]
                        if kind is JointTrajectory:
                            which = TRAJECTORY_DEFECT
                            msg = JointTrajectory(joint_names=ARM, points=[
                                JointTrajectoryPoint(positions=q, time_from_start=_duration(0.2)),
                                JointTrajectoryPoint(positions=q, time_from_start=_duration(0.1))])
                        else:
                            msg = _bad(which, kind, q)
                        bad[which] += 1
                    elif kind is JointState:
                        msg = JointState(name=ARM, position=q)
                    elif kind is JointTrajectory:
                        msg = JointTrajectory(joint_names=ARM, points=[
                            JointTrajectoryPoint(positions=q, time_from_start=_duration(0.05))])
                    else:
                        mode = topic.split("_")[1]
                        msg = Float64MultiArray(data=q if mode == "position" else [0.0] * len(q))
                    publishers[topic].publish(msg)
                    sent[topic] += 1
            next_tick += 1.0 / options.rate_hz
            pause = next_tick - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            elif pause < -0.1:  # behind by more than 100 ticks: skip them rather than catch up in a rush
                next_tick = time.monotonic()
    node.destroy_node()
    rclpy.try_shutdown()
    with open(report_path, "w") as fh:
        json.dump(dict(sent=sent, bad=bad, seconds=time.monotonic() - t0 if start_q else 0.0), fh)
    return 0


def _duration(seconds: float):
    from builtin_interfaces.msg import Duration
    return Duration(sec=int(seconds), nanosec=int(round((seconds % 1.0) * 1e9)))


# -- the soak itself ----------------------------------------------------------------------------------------

def proc_sample(pid: int) -> tuple[float, int, int]:
    """(resident memory [MB], open file descriptors, threads) of process ``pid``, from /proc."""
    with open(f"/proc/{pid}/statm") as fh:
        rss_mb = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as fh:
        threads = next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
    return rss_mb, fds, threads


def verdict(rows: list, warmup_s: float) -> dict:
    """The pass/fail of a soak from its per-second rows (dicts of :data:`COLUMNS`)."""
    settled = [r for r in rows if r["t_s"] >= warmup_s]
    if len(settled) < 3:
        return dict(passed=False, problems=[f"fewer than 3 samples after the {warmup_s:.0f} s warm-up"])
    base, tail = settled[0], settled[-min(5, len(settled)):]
    rss_end = sorted(r["rss_mb"] for r in tail)[len(tail) // 2]
    growth = 100.0 * (rss_end - base["rss_mb"]) / base["rss_mb"]
    fds_growth = max(r["fds"] for r in settled) - base["fds"]
    threads_growth = max(r["threads"] for r in settled) - base["threads"]
    problems = []
    if growth >= RSS_GROWTH_LIMIT_PCT:
        problems.append(f"memory grew {growth:.2f} % after the warm-up (limit {RSS_GROWTH_LIMIT_PCT} %)")
    if fds_growth > 0:
        problems.append(f"open file descriptors grew by {fds_growth}")
    if threads_growth > 0:
        problems.append(f"threads grew by {threads_growth}")
    if not rows[-1]["sim_time_s"] > rows[-2]["sim_time_s"]:  # NaN too
        problems.append(f"the simulation was not stepping at the end (sim time {rows[-1]['sim_time_s']} s)")
    return dict(passed=not problems, problems=problems, warmup_s=warmup_s, rss_after_warmup_mb=base["rss_mb"],
                rss_end_mb=rss_end, rss_growth_pct=growth, fds_growth=fds_growth, threads_growth=threads_growth)


def _plot(rows: list, path: str, title: str, faults=()) -> None:
    from matplotlib.figure import Figure
    t = [r["t_s"] for r in rows]
    figure = Figure(figsize=(9, 7), layout="constrained")
    axes = figure.subplots(3, 1, sharex=True)
    axes[0].plot(t, [r["rss_mb"] for r in rows])
    axes[0].set_ylabel("node RSS [MB]")
    axes[1].plot(t, [r["real_time_factor"] for r in rows])
    axes[1].axhline(1.0, color="gray", lw=0.8, ls="--")
    axes[1].set_ylabel("real-time factor")
    for i, fault in enumerate(faults):  # failed steps, each reset by the soak
        axes[1].axvline(fault["t_s"], color="red", lw=0.8, label="failed step, reset" if i == 0 else None)
    if faults:
        axes[1].legend()
    accepted = [r["commands_accepted"] for r in rows]
    axes[2].plot(t[1:], [b - a for a, b in zip(accepted, accepted[1:])], label="accepted")
    rejected = [r["commands_rejected"] for r in rows]
    axes[2].plot(t[1:], [b - a for a, b in zip(rejected, rejected[1:])], label="rejected")
    axes[2].set_ylabel("commands per second")
    axes[2].set_xlabel("wall time [s]")
    axes[2].legend()
    axes[0].set_title(title)
    figure.savefig(path, dpi=110)


ERROR_LEVEL = 2  # diagnostic_msgs/DiagnosticStatus.ERROR


def recovery(node, spin=None, timeout: float = 10.0):
    """A callable that resets the sim and resumes it (``~/reset``, then ``~/pause`` false) from ``node``;
    True when both answered with success within ``timeout`` each. ``spin()`` serves ``node`` once (default:
    ``rclpy.spin_once``)."""
    import rclpy
    from std_srvs.srv import SetBool, Trigger
    spin = spin or (lambda: rclpy.spin_once(node, timeout_sec=0.05))
    reset = node.create_client(Trigger, "/cond_sim/reset")
    pause = node.create_client(SetBool, "/cond_sim/pause")

    def call(client, request) -> bool:
        future = client.call_async(request)
        end = time.monotonic() + timeout
        while not future.done() and time.monotonic() < end:
            spin()
        return future.done() and future.result().success

    return lambda: call(reset, Trigger.Request()) and call(pause, SetBool.Request(data=False))


def _start(args: list, log_path: str, env: dict) -> subprocess.Popen:
    """A child in its own process group that ends with this process, even a SIGKILLed one (as the launcher's
    nodes do: the kernel's parent-death signal, then the child's own watch of its parent)."""
    from .lifetime import PARENT_PID_VARIABLE, parent_death_signal
    with open(log_path, "wb") as log:
        return subprocess.Popen([sys.executable, *args], stdout=log, stderr=subprocess.STDOUT,
                                env=dict(env, **{PARENT_PID_VARIABLE: str(os.getpid())}), start_new_session=True,
                                preexec_fn=parent_death_signal())


def _end(proc: subprocess.Popen, grace: float = 10.0) -> int:
    """SIGINT to the process group, SIGKILL after ``grace``; the exit code."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def run_soak(options: SoakOptions, out_dir: str, log=print) -> dict:
    """Run the soak (module docstring); returns the JSON written to ``out_dir/soak.json``."""
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray

    from ..stop_signals import StopSignals
    from .lifetime import keep_discovery_local
    os.makedirs(out_dir, exist_ok=True)
    keep_discovery_local()  # this process's and its children's
    env = dict(os.environ)
    node_log, flood_log = os.path.join(out_dir, "soak_node.log"), os.path.join(out_dir, "soak_flood.log")
    flood_report = os.path.join(out_dir, "soak_flood.json")
    sim = _start(["-m", "cond_ros.ros.node", "--ros-args", "-p", f"scene:={options.scene}",
                  "-p", "diagnostics_period:=0.5", "-p", "warning_period:=10.0"], node_log, env)
    flooder = None
    rclpy.init()
    listener = rclpy.create_node("cond_soak_sampler")
    latest, faults = {}, []

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith("cond_sim"):
                latest.update({kv.key: kv.value for kv in status.values})
                latest["level"] = status.level if isinstance(status.level, int) else ord(status.level)
                latest["message"] = status.message
    listener.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    recover = recovery(listener)
    rows, stopped_by = [], None
    try:
        with StopSignals() as stop:
            deadline = time.monotonic() + 300.0  # a first start compiles the kernels
            while "commands_accepted" not in latest:
                if sim.poll() is not None or time.monotonic() > deadline or stop():
                    raise RuntimeError(f"the sim node did not come up (exit {sim.poll()}); see {node_log}")
                rclpy.spin_once(listener, timeout_sec=0.1)
            flooder = _start(["-m", "cond_ros.ros.soak", "--flood", "--report", flood_report,
                              "--rate", str(options.rate_hz), "--burst", str(options.burst),
                              "--burst-period", str(options.burst_period_s)], flood_log, env)
            log(f"soak: {options.scene} for {options.duration_s:g} s, a row of {len(COLUMNS)} columns a second to "
                f"{out_dir}/soak.csv")
            t0 = time.monotonic()
            next_sample = t0 + 1.0
            while time.monotonic() - t0 < options.duration_s and not stop():
                rclpy.spin_once(listener, timeout_sec=max(0.0, min(0.1, next_sample - time.monotonic())))
                if time.monotonic() < next_sample:
                    continue
                next_sample += 1.0
                if sim.poll() is not None:
                    raise RuntimeError(f"the sim node exited with {sim.returncode} during the soak; see {node_log}")
                if latest.get("level") == ERROR_LEVEL:  # a failed step paused the node: reset it, as a user would
                    faults.append(dict(t_s=round(time.monotonic() - t0, 1), message=latest["message"],
                                       recovered=recover()))
                    latest["level"] = None
                    log(f"soak: fault at {faults[-1]['t_s']} s: {faults[-1]['message']}; "
                        f"{'reset and resumed' if faults[-1]['recovered'] else 'NOT recovered'}")
                rss, fds, threads = proc_sample(sim.pid)
                rows.append(dict(t_s=round(time.monotonic() - t0, 3), rss_mb=round(rss, 3), fds=fds, threads=threads,
                                 real_time_factor=float(latest.get("achieved_real_time_factor", "nan")),
                                 overruns=int(latest.get("overruns", 0)),
                                 commands_accepted=int(latest.get("commands_accepted", 0)),
                                 commands_rejected=int(latest.get("commands_rejected", 0)),
                                 sim_time_s=float(latest.get("sim_time_s", "nan")),
                                 iterations=int(float(latest.get("iterations", 0))),
                                 contacts=int(float(latest.get("contacts", 0)))))
            stopped_by = stop.name or None
    finally:
        flood_code = _end(flooder) if flooder is not None else None
        alive_at_end = sim.poll() is None
        node_code = _end(sim)
        listener.destroy_node()
        rclpy.try_shutdown()
    with open(os.path.join(out_dir, "soak.csv"), "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    sent = {}
    if os.path.exists(flood_report):
        with open(flood_report) as fh:
            sent = json.load(fh)
    result = verdict(rows, warmup_s=max(10.0, 0.1 * options.duration_s))
    result["faults"] = faults
    if any(not fault["recovered"] for fault in faults):
        result["passed"] = False
        result["problems"].append("a fault was not recovered by ~/reset and ~/pause false")
    if not alive_at_end:
        result["passed"] = False
        result["problems"].append("the sim node was not alive at the end")
    if stopped_by:
        result["passed"] = False
        result.setdefault("problems", []).append(f"stopped early by {stopped_by}")
    seconds = rows[-1]["t_s"] if rows else 0.0
    first = rows[0] if rows else {}
    result.update(
        options=dataclasses.asdict(options), seconds=seconds, node_exit_code=node_code, flood_exit_code=flood_code,
        sent=sent.get("sent", {}), bad_sent_by_kind=sent.get("bad", {}),
        commands_sent_per_s=sum(sent.get("sent", {}).values()) / seconds if seconds else 0.0,
        commands_accepted_per_s=(rows[-1]["commands_accepted"] - first["commands_accepted"]) / seconds if rows else 0,
        commands_rejected=rows[-1]["commands_rejected"] if rows else 0,
        real_time_factor_median=sorted(r["real_time_factor"] for r in rows)[len(rows) // 2] if rows else None,
        overruns=rows[-1]["overruns"] if rows else None)
    if rows:
        _plot(rows, os.path.join(out_dir, "soak.png"),
              f"cond-ros soak: {options.scene}, {seconds:.0f} s, {result['commands_sent_per_s']:.0f} commands/s sent",
              faults)
    with open(os.path.join(out_dir, "soak.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return result


def main(argv=None) -> int:
    """The flood controller's entry (``--flood``); ``cond-ros soak`` is the soak's."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m cond_ros.ros.soak")
    parser.add_argument("--flood", action="store_true", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--rate", type=float, default=SoakOptions.rate_hz)
    parser.add_argument("--burst", type=int, default=SoakOptions.burst)
    parser.add_argument("--burst-period", type=float, default=SoakOptions.burst_period_s)
    args = parser.parse_args(argv)
    return flood(SoakOptions(rate_hz=args.rate, burst=args.burst, burst_period_s=args.burst_period), args.report)


if __name__ == "__main__":
    sys.exit(main())
