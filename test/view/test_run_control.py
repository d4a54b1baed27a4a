"""The viewed run's buttons decide as the node's services do (cosim.simulation_control), and the run's loop
steps exactly what they ask for."""
import threading
import time

import pytest

from cond_ros.cosim import simulation_control
from cond_ros.view import RunControl


def _steps_in(control: RunControl, seconds: float) -> int:
    """Steps the loop makes in ``seconds`` of wall time (as fast as the control lets it)."""
    end, count = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        if control.next_action(stop=lambda: time.monotonic() >= end) != "step":
            break
        now = time.perf_counter()
        control.stepped(now, now)
        count += 1
    return count


def test_step_is_refused_while_playing_with_the_services_answer():
    control = RunControl(0.01, 0.0)
    expected = simulation_control.step_decision(simulation_control.STATE_PLAYING, 1).message
    assert control.step() == expected
    assert control.pause() == "paused"
    assert control.pause() == simulation_control.transition(simulation_control.STATE_PAUSED,
                                                            simulation_control.STATE_PAUSED).message


def test_paused_steps_exactly_what_step_asks():
    control = RunControl(0.01, 0.0, paused=True)
    assert _steps_in(control, 0.3) == 0
    control.step()
    control.step()
    assert _steps_in(control, 0.3) == 2
    assert control.paused_s > 0.2  # the waits while paused are not the run's time


def test_a_button_wakes_the_waiting_loop_at_once(monkeypatch):
    monkeypatch.setattr("cond_ros.view.run_control.IDLE_WAIT_S", 30.0)  # only the button can end the wait
    control = RunControl(0.01, 0.0, paused=True)
    actions = []
    loop = threading.Thread(target=lambda: actions.append(control.next_action()))
    loop.start()
    time.sleep(0.2)
    pressed = time.monotonic()
    control.step()
    loop.join(timeout=2.0)
    assert actions == ["step"] and time.monotonic() - pressed < 1.0


def test_reset_comes_before_the_next_step_and_drops_pending_steps():
    control = RunControl(0.01, 0.0, paused=True)
    control.step()
    control.reset()
    assert control.next_action() == "reset"
    assert _steps_in(control, 0.2) == 0
    assert RunControl(0.01, 0.0, allow_reset=False).reset().startswith("a replay cannot")


def test_pacing_at_a_real_time_factor():
    control = RunControl(0.01, 2.0)  # 200 steps a second
    steps = _steps_in(control, 0.5)
    assert 40 <= steps <= 102  # never ahead of the schedule; behind it only on a loaded machine
    assert control.set_real_time_factor(-1.0).startswith("the real-time factor must be >= 0")
    assert control.real_time_factor == 2.0


def test_play_after_pause_resumes():
    control = RunControl(0.01, 0.0, paused=True)
    assert control.play() == "playing"
    assert _steps_in(control, 0.05) > 0
    assert control.play() == simulation_control.transition(simulation_control.STATE_PLAYING,
                                                           simulation_control.STATE_PLAYING).message


@pytest.mark.parametrize("paused", [True, False])
def test_stop_ends_the_wait(paused):
    control = RunControl(0.01, 0.001, paused=paused)  # a step due every 10 s when playing
    control.next_action() if not paused else None  # the first step of a paced run is due at once
    if not paused:
        control.stepped(time.perf_counter(), time.perf_counter())
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    start = time.monotonic()
    assert control.next_action(stop=stop.is_set) == "stop"
    assert time.monotonic() - start < 0.5
