"""An mcap file read record by record from its start, without its summary: what a killed recorder leaves.

``BagWriter`` writes into ``.<name>.<random>.partial/<name>/<name>.mcap`` beside its target and moves the
bag into place only when it closes. A SIGKILL (or a power cut) leaves that file as it was: its chunks
(~1 MB each, written as they fill) are complete up to the last one flushed, then the file just stops,
with no summary, footer or ``metadata.yaml``. :func:`scan_mcap` keeps every message of every complete
chunk, as mcap's layout allows; :mod:`~cond_ros.bags.salvage` writes them as a complete bag, and a
:class:`~cond_ros.bags.io.BagReader` pointed at a cut file says how much of it is intact.
"""
from __future__ import annotations

import dataclasses
import os
import struct

MAGIC = b"\x89MCAP0\r\n"
OP_SCHEMA, OP_CHANNEL, OP_MESSAGE, OP_CHUNK, OP_FOOTER = 0x03, 0x04, 0x05, 0x06, 0x02


@dataclasses.dataclass
class ScannedMcap:
    """The intact part of an mcap file: (channel id, log time [ns], CDR bytes) in file order, the topics and
    message types of the channels, whether the file ended in its footer, and the bytes read."""

    messages: list
    channels: dict  # channel id -> (topic, message type)
    complete: bool
    intact_bytes: int
    size: int

    @property
    def end_ns(self) -> int | None:
        return max((log_ns for _, log_ns, _ in self.messages), default=None)


def mcap_file(path) -> str:
    """The one .mcap file of ``path``: the file itself, or the one inside a (partial) bag directory;
    ValueError when there is none, or several."""
    path = str(path)
    if os.path.isfile(path):
        return path
    found = [os.path.join(root, name) for root, _, names in os.walk(path) for name in names if name.endswith(".mcap")]
    if len(found) != 1:
        raise ValueError(f"holds {len(found)} .mcap files; give the one to read" if found else "holds no .mcap file")
    return found[0]


def _string(data: bytes, at: int) -> tuple[str, int]:
    (n,) = struct.unpack_from("<I", data, at)
    return data[at + 4:at + 4 + n].decode(), at + 4 + n


def _records(data: bytes, start: int, end: int):
    """(opcode, body, end offset) of each whole record in ``data[start:end]``; stops at the first one cut short."""
    at = start
    while at + 9 <= end:
        op, length = data[at], struct.unpack_from("<Q", data, at + 1)[0]
        if at + 9 + length > end:
            return
        yield op, data[at + 9:at + 9 + length], at + 9 + length
        at += 9 + length


def _read(records, schemas: dict, channels: dict, messages: list) -> bool:
    """Fold records into ``schemas``, ``channels`` and ``messages``; True when the footer was reached. A record
    whose fields do not parse (garbage where a record should be) ends the read there, as a cut would."""
    try:
        return _read_records(records, schemas, channels, messages)
    except (struct.error, UnicodeDecodeError):
        return False


def _read_records(records, schemas: dict, channels: dict, messages: list) -> bool:
    for op, body, _ in records:
        if op == OP_SCHEMA:
            (schema_id,) = struct.unpack_from("<H", body, 0)
            schemas[schema_id] = _string(body, 2)[0]
        elif op == OP_CHANNEL:
            channel_id, schema_id = struct.unpack_from("<HH", body, 0)
            topic, _ = _string(body, 4)
            channels[channel_id] = (topic, schemas.get(schema_id, ""))
        elif op == OP_MESSAGE:
            channel_id, _, log_ns = struct.unpack_from("<HIQ", body, 0)
            messages.append((channel_id, log_ns, body[22:]))
        elif op == OP_CHUNK:
            at = 24 + 4  # start and end time, uncompressed size, crc
            compression, at = _string(body, at)
            (size,) = struct.unpack_from("<Q", body, at)
            if compression:  # ours are never compressed; a compressed chunk is skipped, not misread
                continue
            _read_records(_records(body, at + 8, at + 8 + size), schemas, channels, messages)
        elif op == OP_FOOTER:
            return True
    return False


def scan_mcap(path) -> ScannedMcap:
    """Read an mcap file from its start as far as its records are whole (see the module docstring);
    ValueError for a file that is not mcap."""
    path = mcap_file(path)
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.startswith(MAGIC):
        raise ValueError("is not an mcap file (no mcap magic at its start)")
    schemas, channels, messages = {}, {}, []
    intact = len(MAGIC)

    def tracked():
        nonlocal intact
        for op, body, end in _records(data, len(MAGIC), len(data)):
            yield op, body, end
            if op == OP_CHUNK or op == OP_MESSAGE:
                intact = end
    complete = _read(tracked(), schemas, channels, messages)
    known = [(c, t, raw) for c, t, raw in messages if c in channels]
    return ScannedMcap(known, channels, complete, intact, len(data))
