"""Starting the ROS programs: bad parameters stop cond_sim before it does anything, `cond-ros launch`
runs the demo (the robot winds, F/T flows) and stops cleanly, and the ROS benchmark reports its numbers."""
import json

import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import NodeProcess, Observer, ros_session, start_sim  # noqa: E402


@pytest.mark.parametrize("parameters, problems", [
    (dict(dt=-0.01, steps_per_trigger=0, lockstep=3), ["dt", "steps_per_trigger", "lockstep"]),
    (dict(scene="no_such_scene"), ["unknown scene 'no_such_scene'", "panda_cable_small"]),
    (dict(real_time_factor="fast", solver="pgs2"), ["real_time_factor: expected a finite float", "solver"]),
    (dict(command_joints="[elbow, wrist]"), ["command_joints", "unknown joint 'elbow'"]),
    (dict(record_bag="/proc/bag"), ["record_bag: the directory /proc is not writable"]),  # a traceback before
    (dict(mode="shadow", lockstep=True), ["lockstep: a shadow follows the measured joint states"]),
    (dict(mode="shadow", shadow_ft_topics="[/cond_sim/ft/wrist_ft]"),
     ["shadow_ft_topics: /cond_sim/ft/wrist_ft is a topic this node publishes", "__node:=shadow"]),
    # YAML reads {sensor} as a mapping: rcl cannot parse the rule (a traceback from rclpy.init before)
    (dict(ft_outputs="[franka_fr3_base=~/ft/{sensor}]"),
     ["Couldn't parse parameter override rule: '-p ft_outputs:=[franka_fr3_base=~/ft/{sensor}]'", "quote a value"]),
])
def test_bad_parameters_stop_the_node(tmp_path, parameters, problems):
    """A bad parameter exits with code 2 and a message naming every problem, before any topic exists."""
    with ros_session():
        process = start_sim(tmp_path, **parameters)
        try:
            process.proc.wait(timeout=90)
        finally:
            code = process.stop()
        log = process.log()
    assert code == 2, log
    for problem in problems:
        assert problem in log
    assert "Traceback" not in log


def test_a_misspelled_parameter_is_named(tmp_path):
    """A parameter the node does not declare (rclpy ignores it silently) is logged with the closest name; the
    node runs on (a parameter file's /** section may carry other nodes' parameters)."""
    import time
    with ros_session():
        process = start_sim(tmp_path, real_time_factr=2.0, start_paused=True)
        try:
            end = time.monotonic() + 90
            while "first step" not in process.log() and "[INFO]" not in process.log():
                assert process.alive() and time.monotonic() < end, process.log()
                time.sleep(0.1)
        finally:
            process.stop()
    assert "real_time_factr: not a parameter of this node, ignored; did you mean real_time_factor?" in process.log()


def test_a_keystore_the_middleware_refuses_is_one_line_and_exit_2(tmp_path):
    """ROS_SECURITY_ENABLE with an enclave the middleware cannot use (the wheels' Fast DDS has no security
    plugins at all; a distribution's would refuse these placeholder files): exit 2 and one line naming the
    cause, before the scene is built, not a traceback (issue 32)."""
    enclave = tmp_path / "keystore" / "enclaves" / "sim"
    enclave.mkdir(parents=True)
    for name in ("identity_ca.cert.pem", "cert.pem", "key.pem", "governance.p7s", "permissions.p7s",
                 "permissions_ca.cert.pem"):
        (enclave / name).write_text("placeholder\n")
    with ros_session():
        process = NodeProcess(["-m", "cond_ros.ros.node", "--ros-args", "--enclave", "/sim", "-p",
                               "scene:=panda_cable_small"], tmp_path / "node.log",
                              env=dict(ROS_SECURITY_ENABLE="true", ROS_SECURITY_STRATEGY="Enforce",
                                       ROS_SECURITY_KEYSTORE=str(tmp_path / "keystore")))
        try:
            process.proc.wait(timeout=90)
        finally:
            code = process.stop()
    log = process.log()
    assert code == 2 and "cond_sim: cannot create the node: " in log and "ROS_SECURITY_ENABLE is true" in log, log
    assert "Traceback" not in log


def test_launch_runs_the_winding_demo(tmp_path):
    """`cond-ros launch panda_cable` (no launch_ros): the controller plays the winding, the robot moves,
    F/T and /clock flow; on Ctrl-C (SIGINT) the launcher stops both nodes and exits 0."""
    with ros_session() as domain:
        launcher = NodeProcess(["-m", "cond_ros.cli", "launch", "panda_cable", "--scene", "panda_cable_small",
                                "--duration", "120"], tmp_path / "launch.log")
        observer = None
        try:
            observer = Observer(domain)
            # 90 s: the nodes' first start in a fresh clone compiles the kernels
            assert observer.spin_until(lambda: len(observer.messages["joint_states"]) > 10, 90), launcher.log()
            first = observer.latest_positions()
            assert observer.spin_until(lambda: abs(observer.latest_positions()[1] - first[1]) > 0.05, 30), (
                "the robot did not move: " + launcher.log())
            assert observer.messages["ft"] and observer.messages["clock"]
        finally:
            if observer is not None:
                observer.close()
            code = launcher.stop(grace=15.0)  # also when an assertion failed: no launch outlives its test
    log = launcher.log()
    assert code == 0, log
    assert "[cond_sim]" in log and "[cond_demo_controller]" in log and "playing the script" in log


def test_ros_bench_json(tmp_path):
    """`cond-ros bench ros_panda_cable --json` reports the real-time factor, the step-to-subscriber latency
    of /joint_states and of the F/T topic, and the node's memory."""
    out = tmp_path / "bench.json"
    with ros_session():
        bench = NodeProcess(["-m", "cond_ros.cli", "bench", "ros_panda_cable", "--json", "--scene",
                             "panda_cable_small", "--duration", "1.0", "--out", str(out)], tmp_path / "bench.log")
        try:
            bench.proc.wait(timeout=140)
        finally:
            code = bench.stop()
    assert code == 0, bench.log()
    result = json.loads(out.read_text())
    assert result["steps"] == 100 and result["cable_segments"] == [20]
    assert result["realtime_factor"] > 0
    assert result["latency_samples"] > 50
    assert 0 < result["step_to_subscriber_latency_ms"]["median"] <= result["step_to_subscriber_latency_ms"]["p99"]
    assert result["ft_topic"] == "/cond_sim/ft/wrist_ft"
    ft = result["step_to_ft_subscriber_latency_ms"]
    assert 0 < ft["median"] <= ft["p99"]
    # the node imports numpy, numba's kernels and rclpy: well over 50 MB resident, sampled once a simulated second
    assert result["rss_peak_mb"] > 50 and len(result["rss_samples"]) == 1
