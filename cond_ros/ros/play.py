"""``cond-ros play BAG``: publish a bag's messages as they were recorded, for a controller under test.

``ros2 bag play`` is not on the pip path (rosbag2_py has no wheel); this is its core. Each message goes
out as its recorded CDR bytes, so stamps and contents are exactly the bag's. It goes out at its log time
relative to the first message, divided by ``rate``. Each topic gets the QoS its recorded publisher offered
where the bag stores it (``ros2 bag record`` does). Otherwise ``/clock`` gets the clock QoS (best effort,
depth 1) and every other topic reliable, depth 10.

With ``clock_hz`` the player publishes ``/clock`` itself at that wall rate, from the bag's log time (the
bag's own ``/clock`` messages are then left out). Everything about the bag and the message types is checked
before the node starts: an unknown topic or a type whose Python package is missing is an error naming it.
"""
from __future__ import annotations

import dataclasses
import importlib
import time

from ..bags import BagError, BagReader

CLOCK_TOPIC = "/clock"
DEFAULT_DEPTH = 10
ACK_TIMEOUT_S = 5.0  # how long the player waits, at the end, for reliable subscribers to acknowledge


@dataclasses.dataclass
class PlaySummary:
    messages: int
    loops: int
    wall_s: float
    counts: dict


def message_class(msgtype: str, topic: str, bag: str):
    """The rclpy class of ``pkg/msg/Type``; BagError naming the topic when its package is not installed."""
    package, _, name = msgtype.partition("/msg/")
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)
    except (ImportError, AttributeError):
        raise BagError(bag, f"its type {msgtype} is not installed here (Python package {package}); leave the "
                            f"topic out with --topics, or install the message package", topic) from None


def _qos(recorded: dict | None, topic: str):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    if recorded is None:
        if topic == CLOCK_TOPIC:
            return QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        return QoSProfile(depth=DEFAULT_DEPTH)
    profile = QoSProfile(depth=recorded.get("depth", DEFAULT_DEPTH))
    if "reliability" in recorded:
        profile.reliability = ReliabilityPolicy[recorded["reliability"].upper()]
    if "durability" in recorded:
        profile.durability = DurabilityPolicy[recorded["durability"].upper()]
    if recorded.get("history") == "keep_all":
        profile.history = HistoryPolicy.KEEP_ALL
    return profile


def plan_playback(path: str, topics=None, *, rate: float = 1.0, clock_hz: float | None = None) -> tuple[dict, dict]:
    """({topic: message type}, {topic: recorded QoS or None}) to play; raises ValueError for a bad rate and
    BagError for the bag, its topics or their types, before any ROS work."""
    if not rate > 0.0:
        raise ValueError(f"--rate must be > 0, got {rate}")
    if clock_hz is not None and not clock_hz > 0.0:
        raise ValueError(f"--clock must be > 0 Hz, got {clock_hz}")
    clock = clock_hz is not None
    with BagReader(path) as reader:
        available = reader.topics
        chosen = list(topics) if topics else sorted(available)
        unknown = [t for t in chosen if t not in available]
        if unknown:
            listing = ", ".join(f"{t} ({m})" for t, (m, _) in sorted(available.items())) or "none"
            raise BagError(path, f"no such topic; the bag has: {listing}", unknown[0])
        if clock:
            chosen = [t for t in chosen if t != CLOCK_TOPIC]
        types = {t: available[t][0] for t in chosen}
        for topic, msgtype in types.items():
            message_class(msgtype, topic, path)
        return types, {t: reader.offered_qos(t) for t in chosen}


def play_bag(path: str, *, rate: float = 1.0, topics=None, clock_hz: float | None = None, loop: bool = False,
             delay: float = 0.0, wait_for_subscribers: float = 0.0, node_name: str = "cond_ros_play", log=print,
             stop=lambda: False) -> PlaySummary:
    """Publish the bag (see the module docstring) until its end, or forever with ``loop`` (until ``stop()``
    or Ctrl-C). rclpy must be initialized by the caller. With ``wait_for_subscribers`` > 0, first wait up to
    that many seconds until every topic has a subscriber (a reliable subscriber that matches late misses
    the messages before it: DDS keeps no history for it)."""
    import rclpy
    from rosgraph_msgs.msg import Clock
    types, qos = plan_playback(path, topics, rate=rate, clock_hz=clock_hz)
    node = rclpy.create_node(node_name)
    counts = dict.fromkeys(types, 0)
    start = time.monotonic()
    loops = 0
    try:
        publishers = {t: node.create_publisher(message_class(m, t, path), t, _qos(qos[t], t)) for t, m in types.items()}
        clock_pub = node.create_publisher(Clock, CLOCK_TOPIC, _qos(None, CLOCK_TOPIC)) if clock_hz else None
        log(f"playing {path}: {', '.join(f'{t} ({m})' for t, m in types.items())} at {rate:g}x"
            + (f", /clock at {clock_hz:g} Hz" if clock_hz else "") + (", looping" if loop else ""))
        deadline = time.monotonic() + max(wait_for_subscribers, 0.0)
        while time.monotonic() < deadline and not all(p.get_subscription_count() for p in publishers.values()):
            time.sleep(0.05)
        missing = [t for t, p in publishers.items() if not p.get_subscription_count()]
        if wait_for_subscribers > 0.0 and missing:
            log(f"no subscriber after {wait_for_subscribers:g} s on: {', '.join(missing)}; playing anyway")
        time.sleep(max(delay, 0.0))  # lets subscribers match before the first message
        while True:
            loops += 1
            if not _play_once(path, types, publishers, clock_pub, clock_hz, rate, counts, stop) or not loop:
                break
        # a reliable message still unacknowledged when the node goes is lost to its subscriber (CI missed the
        # last /joint_states of a bag once): wait for the acks, as ros2 bag play's --wait-for-all-acked does
        from rclpy.duration import Duration
        unacked = [t for t, p in publishers.items() if not p.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT_S))]
        if unacked:
            log(f"not acknowledged by every subscriber within {ACK_TIMEOUT_S:g} s: {', '.join(unacked)}")
    finally:
        node.destroy_node()
    return PlaySummary(sum(counts.values()), loops, time.monotonic() - start, counts)


def _play_once(path, types, publishers, clock_pub, clock_hz, rate, counts, stop) -> bool:
    """One pass over the bag; False when ``stop()`` ended it early."""
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock
    with BagReader(path) as reader:
        first_ns = None
        wall0 = time.monotonic()
        next_tick = wall0
        for topic, _, log_ns, raw in reader.raw_messages(types):
            if first_ns is None:
                first_ns = log_ns
            due = wall0 + (log_ns - first_ns) * 1e-9 / rate
            while True:
                if stop():
                    return False
                now = time.monotonic()
                if clock_pub is not None and now >= next_tick:
                    ns = first_ns + int(min(now - wall0, due - wall0) * rate * 1e9)
                    clock_pub.publish(Clock(clock=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
                    next_tick += 1.0 / clock_hz
                if now >= due:
                    break
                wait = due - now if clock_pub is None else min(due, next_tick) - now
                time.sleep(min(max(wait, 0.0), 0.05))
            publishers[topic].publish(raw)
            counts[topic] += 1
    return True
