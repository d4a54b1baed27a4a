"""The node's ``record_bag``: what it publishes and receives, written to a rosbag2 bag as it runs."""
from __future__ import annotations

import rclpy
from rclpy.serialization import serialize_message

from ..cosim import ConfigError


class BagRecording:
    """The ``record_bag`` bag of ``node`` (a :class:`~.node.SimNode`); ConfigError when it cannot be opened.

    Messages are written at the node's simulated time. A write error stops the recording and drops the bag;
    the simulation goes on. The bag appears at its path only once :meth:`close` finishes it."""

    def __init__(self, node, path: str, storage: str):
        from ..bags import BagError, BagWriter
        self.node, self.node_name = node, node.get_name()
        try:
            self.writer = BagWriter(path, storage=storage).open()
        except BagError as exc:
            raise ConfigError(f"record_bag: {exc}") from None

    def write(self, topic: str, msg) -> None:
        """Write ``msg`` (published on or received from the absolute ``topic``)."""
        if self.writer is None:
            return
        kind = type(msg)
        msgtype = f"{kind.__module__.split('.')[0]}/msg/{kind.__name__}"
        try:
            self.writer.write_raw(topic, msgtype, self.node.clock.stamp_ns, serialize_message(msg))
        except Exception as exc:  # noqa: BLE001 (a full disk must not stop the simulation)
            writer, self.writer = self.writer, None
            writer.abort()
            self.node.get_logger().error(f"record_bag: writing {topic} failed ({exc}); recording stopped, bag dropped")

    def publisher(self, publisher):
        """``publisher``, also writing each message it publishes."""
        return _RecordedPublisher(publisher, self)

    def subscription_callback(self, topic: str, callback):
        """``callback``, writing each message first (at the simulated time it arrived, from which the sim
        applies it)."""
        def recorded(msg):
            self.write(topic, msg)
            callback(msg)
        return recorded

    def close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is None:
            return
        writer.close()
        node = self.node
        # after a signal the context is down and the node's logger fails to reach /rosout (an rcl error line)
        logger = node.get_logger() if node.context.ok() else rclpy.logging.get_logger(f"{self.node_name}.record_bag")
        logger.info(f"record_bag: wrote {writer.path} ({sum(writer.counts.values())} messages)")


class _RecordedPublisher:
    """A publisher that also writes each message it publishes to the bag."""

    def __init__(self, publisher, recording: BagRecording):
        self._publisher, self._recording = publisher, recording
        self._topic = publisher.topic_name

    def publish(self, msg) -> None:
        self._publisher.publish(msg)
        self._recording.write(self._topic, msg)

    def __getattr__(self, name):
        return getattr(self._publisher, name)
