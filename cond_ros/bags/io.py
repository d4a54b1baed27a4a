"""rosbag2 in and out (sqlite3 and mcap) through the pure-Python ``rosbags`` library, no ROS install.

Every failure is a :class:`BagError` whose message names the bag and, where one is involved, the topic:
a missing path, a directory without ``metadata.yaml``, a truncated or corrupt file, a missing topic, a
topic of another message type, a message that does not decode. Readers never return a partial result
as if it were whole: an error in the middle of a read raises.

:class:`BagWriter` writes into a hidden temporary directory beside the target and renames it into
place only when it is closed without an error, so a bag at the target path is always complete.
"""
from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from pathlib import Path

from tqdm import tqdm

from ..output_paths import output_problem
from .mcap_scan import scan_mcap

STORAGES = ("mcap", "sqlite3")
FLUSH_EVERY_S = 1.0  # [s] of log time between two chunks pushed to an mcap file (BagWriter)
BAG_VERSION = 9  # rosbag2 metadata version written (Jazzy, Kilted); rosbags 0.11 requires it explicitly


class BagError(Exception):
    """A bag (and topic) that cannot be used; the message says which and why."""

    def __init__(self, bag, problem: str, topic: str | None = None):
        self.bag, self.topic, self.problem = str(bag), topic, problem
        super().__init__(f"{bag}" + (f" [{topic}]" if topic else "") + f": {problem}")


@functools.lru_cache(maxsize=1)
def typestore():
    """The ROS 2 Kilted message types of ``rosbags`` (serialization without ROS)."""
    from rosbags.typesys import Stores, get_typestore
    return get_typestore(Stores.ROS2_KILTED)


def decode(raw, msgtype: str):
    """A CDR message as a ``rosbags`` object.

    Fast DDS (rmw_fastrtps_cpp: what ``ros2 bag`` and ``rclpy.serialization`` store) may leave 4 bytes of
    padding after a message that ends in an empty sequence (a JointState without efforts); rosbags 0.11
    accepts at most 3 and raises "size mismatch". Such a message decodes fully before the padding, so it is
    decoded here without that check; any other error stands.
    """
    from rosbags.serde import SerdeError
    store = typestore()
    try:
        return store.deserialize_cdr(raw, msgtype)
    except SerdeError as exc:
        if "size mismatch" not in str(exc):
            raise
    msgdef = store.get_msgdef(msgtype)
    decoder = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
    return decoder(memoryview(raw)[4:], 0, msgdef.cls, store)[0]


def progress_bar(iterable=None, *, progress: bool, **kwargs):
    """A tqdm bar; off with ``progress`` False, and off by itself when stderr is not a terminal."""
    return tqdm(iterable, disable=None if progress else True, leave=False, **kwargs)


def _cut_short(path: str) -> str | None:
    """What a bag whose recorder was killed holds, in one line, or None when ``path`` is not such a bag."""
    try:
        scanned = scan_mcap(path)
    except (ValueError, OSError):
        return None
    if scanned.complete:
        return None
    topics = sorted({scanned.channels[c][0] for c, _, _ in scanned.messages})
    span = "" if scanned.end_ns is None else f" up to log time {scanned.end_ns * 1e-9:.3f} s"
    return (f"is cut short (no summary or metadata: its recorder was killed?): {len(scanned.messages)} messages on "
            f"{len(topics)} topics{span} are intact in its first {scanned.intact_bytes} of {scanned.size} bytes; "
            f"`cond-ros salvage {path} --out NEW_BAG` writes them as a complete bag")


class BagReader:
    """An open bag: its topics, and its messages decoded (use as a context manager).

    ``path`` is a rosbag2 directory (with ``metadata.yaml``), a single ``.mcap`` / ``.db3`` file, or a ROS 1
    ``.bag`` file. Message types beyond the standard ones (``franka_msgs/msg/FrankaState``) are decoded
    from the definitions the bag carries (ROS 1 bags and mcap always do; a sqlite3 rosbag2 does not).
    """

    def __init__(self, path):
        self.path = str(path)
        self._reader = None
        self.ros1 = self.path.endswith(".bag")
        self._store = None  # the typestore of this bag: the shared one, or a copy with the bag's own types

    def __enter__(self) -> "BagReader":
        if not os.path.exists(self.path):
            raise BagError(self.path, "no such bag (give a rosbag2 directory, a .mcap or .db3 file, or a ROS 1 .bag)")
        try:
            if self.ros1:
                from rosbags.rosbag1 import Reader
            else:
                from rosbags.rosbag2 import Reader
            reader = Reader(Path(self.path))
            reader.open()
        except Exception as exc:  # noqa: BLE001 (rosbags raises ReaderError, sqlite3 and mcap errors)
            cut = None if self.ros1 else _cut_short(self.path)
            if cut is not None:
                raise BagError(self.path, cut) from None
            if isinstance(exc, FileNotFoundError):
                raise BagError(self.path, f"not a {'ROS 1' if self.ros1 else 'rosbag2'} bag: {exc}") from None
            raise BagError(self.path, f"cannot be read (truncated or corrupt?): {exc}") from None
        self._reader = reader
        self._store = self._bag_typestore()
        return self

    def _bag_typestore(self):
        """The ROS 2 Kilted types plus those the bag defines and they lack. A ROS 1 bag's messages are read
        as their ROS 2 forms (rosbags converts them; a Header loses its seq)."""
        from rosbags.typesys import Stores, get_types_from_msg, get_typestore
        store = typestore()
        missing = {c.msgtype: c for c in self._reader.connections if c.msgtype not in store.types}
        if not missing:
            return store
        store = get_typestore(Stores.ROS2_KILTED)  # never add a bag's types to the shared store
        for msgtype, connection in missing.items():
            definition = getattr(getattr(connection, "msgdef", None), "data", "") or ""
            if definition:
                with contextlib.suppress(Exception):  # a definition that does not parse: its topic fails on decode
                    # a ROS 1 definition carries its dependencies too (std_msgs/Header with its seq): keep the
                    # standard ROS 2 ones, which rosbags' ROS 1 conversion expects
                    types = get_types_from_msg(definition, msgtype)
                    store.register({name: fields for name, fields in types.items() if name not in store.types})
        return store

    def message_fields(self, msgtype: str) -> tuple:
        """The field names of ``msgtype`` (empty when the bag's types do not include it)."""
        cls = self._store.types.get(msgtype)
        return tuple(cls.__dataclass_fields__) if cls is not None else ()

    def decode(self, raw, msgtype: str, topic: str | None = None):
        """One message of this bag as a ``rosbags`` object."""
        if msgtype not in self._store.types:
            raise BagError(self.path, f"its type {msgtype} is not a standard message and the bag carries no "
                                      f"definition of it (a sqlite3 rosbag2 does not; record as mcap)", topic)
        if self.ros1:
            return self._store.deserialize_cdr(self._store.ros1_to_cdr(raw, msgtype), msgtype)
        return decode(raw, msgtype) if self._store is typestore() else self._store.deserialize_cdr(raw, msgtype)

    def __exit__(self, *exc_info) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            with contextlib.suppress(Exception):
                reader.close()

    @property
    def topics(self) -> dict:
        """{topic: (message type, message count in the bag's index)}."""
        return {c.topic: (c.msgtype, c.msgcount) for c in self._reader.connections}

    @property
    def start_ns(self) -> int:
        """The earliest log (receive) time in the bag [ns]."""
        return int(self._reader.start_time)

    @property
    def end_ns(self) -> int:
        """The latest log (receive) time in the bag [ns]."""
        return int(self._reader.end_time) - 1

    def require(self, topic: str, msgtypes) -> str:
        """The message type of ``topic``, which must be one of ``msgtypes``; else a BagError."""
        topics = self.topics
        if topic not in topics:
            listing = ", ".join(f"{t} ({m})" for t, (m, _) in sorted(topics.items())) or "none"
            raise BagError(self.path, f"no such topic; the bag has: {listing}", topic)
        msgtype = topics[topic][0]
        if msgtype not in msgtypes:
            raise BagError(self.path, f"is {msgtype}, expected {' or '.join(msgtypes)}", topic)
        return msgtype

    def _records(self, topics):
        """(connection, log time [ns], stored bytes) of ``topics`` in log-time order; BagError, naming the topic
        and how far it got, when the storage fails (a file cut short)."""
        connections = [c for c in self._reader.connections if c.topic in set(topics)]
        if not connections:  # rosbags reads every topic when given none
            return
        topic, index = None, 0
        try:
            for connection, log_ns, raw in self._reader.messages(connections=connections):
                topic = connection.topic
                index += 1
                yield connection, int(log_ns), raw
        except Exception as exc:  # noqa: BLE001 (the storage layer fails on a file cut short)
            raise BagError(self.path, f"reading stopped after {index} messages (truncated or corrupt?): "
                                      f"{type(exc).__name__}: {exc}", topic) from None

    def messages(self, topics, *, progress: bool = False, desc: str = "read"):
        """(topic, log time [ns], message) of ``topics``, in log-time order, decoded.

        Raises BagError, naming the topic, when a message does not decode or the file ends early.
        """
        total = sum(c.msgcount for c in self._reader.connections if c.topic in set(topics))
        bar = progress_bar(total=total, progress=progress, desc=desc, unit="msg")
        try:
            for index, (connection, log_ns, raw) in enumerate(self._records(topics)):
                topic = connection.topic
                try:
                    msg = self.decode(raw, connection.msgtype, topic)
                except BagError:
                    raise
                except Exception as exc:  # noqa: BLE001 (a corrupt message raises anything from struct on)
                    raise BagError(self.path, f"message {index} (log time {log_ns} ns) does not decode as "
                                              f"{connection.msgtype}: {type(exc).__name__}: {exc}", topic) from None
                bar.update()
                yield topic, log_ns, msg
        finally:
            bar.close()

    def raw_messages(self, topics):
        """(topic, message type, log time [ns], CDR bytes) of ``topics``, in log-time order, not decoded (what
        a player publishes as it was recorded; a ROS 1 bag's messages converted to CDR). Raises BagError when
        the file ends early or a ROS 1 message does not convert."""
        for index, (connection, log_ns, raw) in enumerate(self._records(topics)):
            if self.ros1:
                try:
                    raw = self._store.ros1_to_cdr(raw, connection.msgtype)
                except Exception as exc:  # noqa: BLE001 (a corrupt message raises anything from struct on)
                    raise BagError(self.path, f"message {index} (log time {log_ns} ns) does not convert from "
                                              f"ROS 1: {type(exc).__name__}: {exc}", connection.topic) from None
            yield connection.topic, connection.msgtype, log_ns, bytes(raw)

    def offered_qos(self, topic: str) -> dict | None:
        """The QoS the topic's first recorded publisher offered, as ``{reliability, durability, history, depth}``
        (strings, as ``ros2 bag`` writes them from metadata version 9 on; older bags' enum numbers are mapped),
        or None when the bag has none (bags written by ``rosbags``, ours included)."""
        for connection in self._reader.connections:
            if connection.topic == topic:
                return _qos_dict(getattr(connection.ext, "offered_qos_profiles", None))
        return None


# rmw enum numbers of rosbag2 metadata before version 9 (a YAML string of profiles)
_QOS_ENUMS = {"reliability": {1: "reliable", 2: "best_effort"}, "durability": {1: "transient_local", 2: "volatile"},
              "history": {1: "keep_last", 2: "keep_all"}}


def _qos_dict(profiles) -> dict | None:
    import yaml
    if isinstance(profiles, str):
        profiles = yaml.safe_load(profiles) if profiles.strip() else None
    if not profiles:
        return None
    first = profiles[0]
    if not isinstance(first, dict):  # rosbags' own Qos objects
        first = {k: getattr(first, k) for k in ("reliability", "durability", "history", "depth") if hasattr(first, k)}
    out = {}
    for key, names in _QOS_ENUMS.items():
        value = first.get(key)
        value = getattr(value, "name", value)  # an enum
        if isinstance(value, int):
            value = names.get(value)
        if isinstance(value, str) and value.lower() in names.values():
            out[key] = value.lower()
    depth = first.get("depth")
    if isinstance(depth, int) and depth > 0:
        out["depth"] = depth
    return out or None


def message_type_name(msg) -> str:
    """``pkg/msg/Type`` of a ``rosbags`` message (its ``__msgtype__``)."""
    return msg.__msgtype__


class BagWriter:
    """A new bag at ``path`` (a rosbag2 directory), complete or absent (use as a context manager).

    Args:
        path: the bag directory to create; it must not exist, and its parent must.
        storage: ``mcap`` or ``sqlite3``.
        flush_every_s: [s] of log time between two mcap chunks pushed to the file: what a SIGKILL leaves
            is readable up to the last of them (``cond-ros salvage``). rosbags alone closes a chunk every
            1 MB, ~9 s of the small cable scene. None: only then.
    """

    def __init__(self, path, *, storage: str = "mcap", flush_every_s: float | None = FLUSH_EVERY_S):
        self.path = os.path.abspath(str(path))
        if storage not in STORAGES:
            raise BagError(path, f"unknown storage {storage!r}; choose {' or '.join(STORAGES)}")
        if os.path.lexists(self.path):
            raise BagError(path, "exists already; remove it or choose another output")
        if problem := output_problem(self.path, new=True):
            raise BagError(path, problem)
        self.storage = storage
        self._flush_every_ns = None if flush_every_s is None else int(flush_every_s * 1e9)
        self._next_flush_ns = None
        self._writer = None
        self._tmp = None
        self._connections: dict = {}
        self.counts: dict = {}  # topic -> messages written

    def open(self) -> "BagWriter":
        from rosbags.rosbag2 import StoragePlugin, Writer
        name = os.path.basename(self.path)
        plugin = StoragePlugin.MCAP if self.storage == "mcap" else StoragePlugin.SQLITE3
        try:
            self._tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=".partial", dir=os.path.dirname(self.path))
            self._writer = Writer(Path(self._tmp) / name, version=BAG_VERSION, storage_plugin=plugin)
            self._writer.open()
        except Exception as exc:  # noqa: BLE001
            self.abort()
            raise BagError(self.path, f"cannot be written: {exc}") from None
        return self

    def __enter__(self) -> "BagWriter":
        return self.open()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _connection(self, topic: str, msgtype: str):
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(topic, msgtype, typestore=typestore())
            self._connections[topic] = connection
            self.counts[topic] = 0
        elif connection.msgtype != msgtype:
            raise BagError(self.path, f"written as {connection.msgtype}, now {msgtype}", topic)
        return connection

    def write(self, topic: str, log_ns: int, msg) -> None:
        """Write a ``rosbags`` message at log time ``log_ns`` [ns]."""
        msgtype = message_type_name(msg)
        self.write_raw(topic, msgtype, log_ns, typestore().serialize_cdr(msg, msgtype))

    def write_raw(self, topic: str, msgtype: str, log_ns: int, data) -> None:
        """Write an already CDR-serialized message (e.g. ``rclpy.serialization.serialize_message``)."""
        if self._writer is None:
            raise BagError(self.path, "is not open for writing", topic)
        if log_ns < 0:
            raise BagError(self.path, f"log time {log_ns} ns is negative; rosbag2 times are unsigned", topic)
        if self._flush_every_ns is not None:  # before the write: a chunk ends with whole steps (one log time each)
            if self._next_flush_ns is None:
                self._next_flush_ns = log_ns + self._flush_every_ns
            elif log_ns >= self._next_flush_ns:
                self._next_flush_ns = log_ns + self._flush_every_ns
                self.flush()
        self._writer.write(self._connection(topic, msgtype), int(log_ns), data)
        self.counts[topic] += 1

    def flush(self) -> None:
        """Close the mcap chunk being filled and push it to the file (see ``flush_every_s``). This reaches into
        rosbags' mcap writer (its ``storage``, ``chunk`` and ``close_chunk``); where those are missing, or for
        sqlite3, nothing happens and rosbags' own 1 MB chunks stay the unit of loss."""
        storage = getattr(self._writer, "storage", None)
        chunk = getattr(storage, "chunk", None)
        if self.storage != "mcap" or chunk is None or not hasattr(storage, "close_chunk") or not chunk.bio.tell():
            return
        storage.close_chunk()
        storage.bio.flush()

    def close(self) -> None:
        """Finish the bag and move it into place."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        try:
            writer.close()
            os.rename(os.path.join(self._tmp, os.path.basename(self.path)), self.path)
        except Exception as exc:  # noqa: BLE001
            self.abort()
            raise BagError(self.path, f"cannot be finished: {exc}") from None
        os.rmdir(self._tmp)
        self._tmp = None

    def abort(self) -> None:
        """Drop everything written; nothing appears at the target path."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
