"""Faults from outside, with real processes: a command that makes the physics diverge (issue 32). The node
keeps its last good state, says ERROR on /diagnostics with the cause, pauses, and a ~/reset brings it back;
no exception escapes and the node stays up."""
import math
import textwrap

import pytest

rclpy = pytest.importorskip("rclpy")

from ros_harness import running_sim, stamp_ns  # noqa: E402

# one joint whose URDF limits allow any effort: 1e308 N m on 1e-4 kg m^2 overflows the step to inf
SPINNER_URDF = """<robot name="spinner"><link name="base"/><link name="arm"><inertial><origin xyz="0.1 0 0"/>
<mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="spin" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
<limit lower="-1e9" upper="1e9" effort="1e308" velocity="1e308"/></joint></robot>"""


@pytest.fixture
def spinner_scene(tmp_path):
    (tmp_path / "spinner.urdf").write_text(SPINNER_URDF)
    scene = tmp_path / "spinner.yaml"
    scene.write_text(textwrap.dedent(f"""\
        name: spinner
        dt: 0.01
        duration: 1000.0
        robots:
          - {{name: spinner, urdf: {tmp_path / 'spinner.urdf'}, q: [0.0], drive_stiffness: [10.0],
              drive_damping: [1.0]}}
        """))
    return str(scene)


def _level(status) -> int:
    return status.level if isinstance(status.level, int) else ord(status.level)  # a msg byte comes as bytes


def _levels(observer):
    return [(_level(s), s.message) for m in observer.messages["diagnostics"] for s in m.status]


def test_a_diverging_step_pauses_says_error_and_reset_recovers(tmp_path, spinner_scene):
    from cond_ros.ros import recovery
    with running_sim(tmp_path, scene=spinner_scene, diagnostics_period=0.2) as (observer, process):
        assert observer.spin_until(lambda: len(observer.messages["joint_states"]) > 20, 60), process.log()
        observer.publish_forward("effort", [1e308])
        assert observer.spin_until(lambda: any(level == 2 for level, _ in _levels(observer)), 20), process.log()
        message = next(m for level, m in _levels(observer) if level == 2)
        assert "failed: SolverCOND: V-FPI diverged (theta = inf" in message, message
        assert message.endswith("paused until ~/reset"), message
        observer.spin_for(0.5)
        last = observer.messages["joint_states"][-1]
        assert all(math.isfinite(v) for v in [*last.position, *last.velocity])  # the last good state
        seen = len(observer.messages["joint_states"])
        observer.spin_for(0.5)
        assert len(observer.messages["joint_states"]) == seen  # paused
        # as `cond-ros soak` recovers from a failed step: ~/reset, then ~/pause false
        assert recovery(observer.node, spin=lambda: observer.executor.spin_once(timeout_sec=0.05))()
        stamp = stamp_ns(observer.messages["joint_states"][-1])
        assert observer.spin_until(lambda: stamp_ns(observer.messages["joint_states"][-1]) > stamp + 10**8, 20)
        count = len(observer.messages["diagnostics"])
        assert observer.spin_until(lambda: len(observer.messages["diagnostics"]) > count + 1, 10)
        assert _level(observer.messages["diagnostics"][-1].status[0]) == 0  # OK again
        assert process.alive() and "Traceback" not in process.log()


def test_a_step_that_stops_at_the_iteration_cap_is_reported(tmp_path):
    """A solve cut off at solver_max_iterations is accepted as it is (the run goes on), but not silently:
    /diagnostics turns WARN and counts such steps, and a throttled warning names the step, the cap and the
    residual. At a cap of 1, V-FPI cannot converge the small cable scene (it needs 14-24 iterations), and the
    unconverged steps diverge at sim time 3.84 s: at real time, /diagnostics reports them ~19 times before."""
    with running_sim(tmp_path, solver_max_iterations=1, diagnostics_period=0.2, real_time_factor=1.0) as (
            observer, process):
        def capped():
            return [s for m in observer.messages["diagnostics"] for s in m.status
                    if "stopped at the solver's iteration cap (1), unconverged" in s.message]
        assert observer.spin_until(capped, 30), _levels(observer)
        status = capped()[-1]
        assert _level(status) == 1  # WARN
        values = {kv.key: kv.value for kv in status.values}
        assert int(values["steps_at_iteration_cap"]) > 0
        observer.spin_for(0.5)
        assert "stopped at the solver's iteration cap (1) with residual" in process.log(), process.log()
        assert process.alive() and "Traceback" not in process.log()
