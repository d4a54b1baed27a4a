"""Controller lockstep: each step waits for the controller's command; runs repeat bit for bit; a dead
controller makes the sim hold, warn and go on, and it catches up when the controller returns."""
import math
import os

import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import DT_NS, NodeProcess, running_sim, stamp_ns  # noqa: E402

STEPS = 2000
HERE = os.path.dirname(os.path.abspath(__file__))


def _lockstep_run(tmp_path, name):
    """One lockstep run driven by this process: the command for step k is a function of k only.
    Returns the joint states and the F/T readings (measured and noise-free) of the first STEPS steps."""
    with running_sim(tmp_path, name=name, lockstep=True, lockstep_timeout=20.0, start_paused=True) as (observer,
                                                                                                    process):
        q0 = [0.1304, 0.4648, 0.2197, -2.2060, -0.2092, 2.6521, 1.2980, 0.0021]

        def command(k):
            return [q + (0.05 * math.sin(0.02 * k) if j < 3 else 0.0) for j, q in enumerate(q0)]
        observer.callbacks.append(lambda msg: observer.publish_forward("position", command(stamp_ns(msg) // DT_NS)))
        observer.publish_forward("position", command(0))  # the command for the first step
        assert observer.pause(False).success
        # both F/T topics: the noise-free one goes out after the measured one, and may lag it by a message
        assert observer.spin_until(lambda: min(len(observer.messages["ft"]), len(observer.messages["ft_true"]))
                                   >= STEPS, 300), process.log()
        assert "holding the last command" not in process.log()
        joint_states = [(stamp_ns(m), tuple(m.position), tuple(m.velocity))  # the t = 0 one may precede our match
                        for m in observer.messages["joint_states"] if stamp_ns(m) > 0][:STEPS]
        ft = [(stamp_ns(m), m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x,
               m.wrench.torque.y, m.wrench.torque.z)
              for key in ("ft", "ft_true") for m in observer.messages[key][:STEPS]]
        return joint_states, ft


def test_lockstep_runs_are_bit_identical_also_with_every_core_busy(tmp_path, request):
    """The same command sequence in lockstep gives the same joint states and F/T, bit for bit (noise
    included), over 2000 steps: once on a quiet machine, once beside a process spinning on every core."""
    first = _lockstep_run(tmp_path, "run1")
    request.getfixturevalue("cpu_hog")
    second = _lockstep_run(tmp_path, "run2")
    assert [m[0] for m in first[0]] == [m[0] for m in first[1][:STEPS]] == [DT_NS * k for k in range(1, STEPS + 1)]
    assert first[0] == second[0]
    assert first[1] == second[1]
    assert max(abs(a - b) for a, b in zip(first[0][-1][1], first[0][0][1])) > 0.01  # the arm moved


def _steps_in(observer, seconds):
    start = len(observer.messages["joint_states"])
    observer.spin_for(seconds)
    return len(observer.messages["joint_states"]) - start


def test_dead_controller_holds_warns_and_resumes(tmp_path):
    """Kill the controller mid-run: the sim steps once per timeout on the held command, warns, and runs at
    full speed again when a controller answers."""
    controllers = []
    with running_sim(tmp_path, lockstep=True, lockstep_timeout=0.25, warning_period=0.5) as (observer, process):
        try:
            controller_args = [os.path.join(HERE, "lockstep_controller.py")]
            controllers.append(NodeProcess(controller_args, tmp_path / "controller1.log"))
            assert observer.spin_until(lambda: len(observer.messages["joint_states"]) > 30, 60), process.log()
            assert _steps_in(observer, 1.0) > 12  # held: about 4 per second
            controllers[0].kill()
            observer.spin_for(0.5)
            held = _steps_in(observer, 1.5)
            assert 2 <= held <= 9, f"{held} steps in 1.5 s with a 0.25 s timeout"
            assert "lockstep: no command for the step" in process.log()
            assert "holding the last command" in process.log()
            controllers.append(NodeProcess(controller_args, tmp_path / "controller2.log"))
            assert observer.spin_until(lambda: process.log().count("commands are back") == 2, 30), process.log()
            assert _steps_in(observer, 1.0) > 12
            assert process.alive()
        finally:
            for controller in controllers:
                controller.stop()
