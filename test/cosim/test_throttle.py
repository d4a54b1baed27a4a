"""Throttled warnings: one per kind and period, with the count of the ones held back."""
from cond_ros.cosim.throttle import WarningThrottle


def test_throttle_per_kind_and_count():
    """Within a period a kind is held back and counted; other kinds pass; the next one reports the count."""
    now = [0.0]
    throttle = WarningThrottle(1.0, clock=lambda: now[0])
    assert throttle.filter("a", "first") == "first"
    assert throttle.filter("a", "second") is None
    assert throttle.filter("a", "third") is None
    assert throttle.filter("b", "other kind") == "other kind"
    now[0] = 1.5
    assert throttle.filter("a", "fourth") == "fourth (2 similar warnings suppressed)"


def test_zero_period_emits_everything():
    """warning_period 0 logs every warning."""
    throttle = WarningThrottle(0.0, clock=lambda: 0.0)
    assert [throttle.filter("a", str(i)) for i in range(3)] == ["0", "1", "2"]
