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


def test_clock_resets_of_state_and_time():
    """A reset of the state alone keeps /clock monotonic (the sim's own time restarts at 0 under it); a reset
    of the time alone puts /clock at 0 while the sim's time goes on; both: everything at 0."""
    clock = SimClock(0.01)
    for _ in range(30):
        clock.advance()
    clock.reset(time=False, state=True)
    assert (clock.stamp_ns, clock.steps) == (300_000_000, 0)
    clock.advance()
    assert clock.stamp_ns == 310_000_000 and abs(clock.sim_time(0.31) - 0.01) < 1e-15
    clock.reset(time=True, state=False)
    assert (clock.stamp_ns, clock.steps) == (0, 1)
    clock.advance()
    assert clock.stamp_ns == 10_000_000 and abs(clock.sim_time(0.01) - 0.02) < 1e-15
    clock.reset(time=True, state=True)
    assert (clock.stamp_ns, clock.steps, clock.sim_time(0.0)) == (0, 0, 0.0)


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
    requests.request(3, "d")
    requests.stepped()
    requests.stepped()
    assert requests.cancel() == [("c", 2, 5), ("d", 0, 3)] and not requests.outstanding
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
