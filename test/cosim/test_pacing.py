"""Wall-clock pacing: due times at the target real-time factor, overruns, catching up without bursts."""
import pytest

from cond_ros.cosim.pacing import Pacer


def test_paced_schedule():
    """At real-time factor 0.5 a 10 ms step is due every 20 ms of wall time."""
    pacer = Pacer(0.01, 0.5)
    pacer.restart(100.0)
    assert pacer.wait(100.0) == 0.0
    pacer.stepped(100.0, 100.004, 100.005)
    assert pacer.wait(100.005) == pytest.approx(0.015)
    assert pacer.overruns == 0


def test_overruns_and_restart_when_behind():
    """A step longer than its budget is an overrun; far behind schedule the schedule restarts (no burst)."""
    pacer = Pacer(0.01, 1.0, max_lag=0.1)
    pacer.restart(0.0)
    pacer.stepped(0.0, 0.2, 0.25)
    assert pacer.overruns == 1
    assert pacer.wait(0.25) == 0.0  # the schedule restarts now: no debt of 24 steps to catch up
    pacer.stepped(0.25, 0.252, 0.253)
    assert pacer.wait(0.253) == pytest.approx(0.007)


def test_as_fast_as_possible():
    """Real-time factor 0 never waits and counts no overruns."""
    pacer = Pacer(0.01, 0.0)
    for k in range(3):
        assert pacer.wait(k) == 0.0
        pacer.stepped(k, k + 0.5, k + 0.6)
    assert pacer.overruns == 0


def test_achieved_real_time_factor_and_summary():
    """Ten 10 ms steps over 0.2 s of wall time: achieved 0.5; medians of step and publish times."""
    pacer = Pacer(0.01, 0.0, window=10.0)
    pacer.restart(0.0)
    for k in range(11):
        t = 0.02 * k
        pacer.stepped(t - 0.005, t - 0.001, t)
    assert pacer.achieved() == pytest.approx(0.5)
    summary = pacer.summary()
    assert summary["steps"] == 11
    assert summary["step_ms_median"] == pytest.approx(4.0) and summary["publish_ms_median"] == pytest.approx(1.0)


def test_observer_hold_stays_within_the_budget():
    """The observer outputs wait the asked delay when the step's budget has room for it and for twice their
    longest recent time; less when it has not; never at real-time factor 0 or with no delay asked."""
    pacer = Pacer(0.01, 1.0)
    assert pacer.observer_hold(0.0, 0.003, 0.0015) == pytest.approx(0.0015)  # 10 ms budget, 3 ms used
    pacer.observed(0.002)
    assert pacer.observer_hold(0.0, 0.003, 0.0015) == pytest.approx(0.0015)  # 3 + 1.5 + 2 x 2 < 10 ms
    assert pacer.observer_hold(0.0, 0.005, 0.0015) == pytest.approx(0.001)  # 5 + 1 + 4 = 10 ms
    assert pacer.observer_hold(0.0, 0.008, 0.0015) == 0.0  # late already
    assert pacer.observer_hold(0.0, 0.003, 0.0) == 0.0
    assert Pacer(0.01, 0.0).observer_hold(0.0, 0.003, 0.0015) == 0.0
    for _ in range(100):  # the longest is that of the last 100 steps: a marker step's falls out
        pacer.observed(0.0002)
    assert pacer.observer_hold(0.0, 0.005, 0.0015) == pytest.approx(0.0015)
