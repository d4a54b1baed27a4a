"""Step bookkeeping: exact simulated clock, pause and step-N requests, lockstep timeouts."""
from cond_ros.cosim.stepping import LockstepGate, SimClock, StepRequests


def test_clock_is_exact():
    """N steps of dt are exactly N * dt in nanoseconds (no floating-point drift)."""
    clock = SimClock(0.01)
    for _ in range(12345):
        clock.advance()
    assert clock.stamp_ns == 12345 * 10_000_000
    clock.reset()
    assert clock.stamp_ns == 0


def test_step_requests():
    """Paused: no steps unless requested; requests finish in order, each once its steps are done."""
    requests = StepRequests(paused=True)
    assert not requests.wants_step()
    requests.request(2, "a")
    requests.request(1, "b")
    assert requests.wants_step() and requests.outstanding
    assert requests.stepped() == []
    assert requests.stepped() == ["a"]
    assert requests.stepped() == ["b"]
    assert not requests.wants_step()
    requests.request(5, "c")
    assert requests.cancel() == ["c"] and not requests.outstanding
    requests.paused = False
    assert requests.wants_step() and requests.stepped() == []


def test_lockstep_waits_then_holds():
    """Without a fresh command a step waits until the timeout, then runs held; a command ends the hold."""
    gate = LockstepGate(True, timeout=0.5)
    assert gate.check(10.0) == (False, 0.5, False)
    assert gate.check(10.2)[0] is False
    assert gate.check(10.5) == (True, 0.0, True)
    assert gate.stepped(timed_out=True) == 0 and gate.held == 1
    assert gate.check(11.0)[0] is False  # a new wait for the next step starts when it is due
    gate.command()
    assert gate.check(11.0) == (True, 0.0, False)
    assert gate.stepped(timed_out=False) == 1 and gate.held == 0 and gate.held_total == 1


def test_lockstep_disabled_never_waits():
    """Without lockstep every step is ready at once."""
    gate = LockstepGate(False, timeout=0.5)
    assert gate.check(0.0) == (True, 0.0, False)
