"""``cond-ros salvage``: the intact part of a killed recording written as a complete bag.

A recorder killed by SIGKILL (``cond-ros record``, the node's ``record_bag``) leaves its bag in a
``.<name>.<random>.partial`` directory beside the target: an mcap file complete up to its last flushed
chunk (:mod:`~cond_ros.bags.mcap_scan`). :func:`salvage_bag` copies its messages, in log-time order, into a
new bag that every tool reads.
"""
from __future__ import annotations

from .io import BagError, BagWriter
from .mcap_scan import ScannedMcap, scan_mcap


def salvage_bag(path, out) -> tuple[ScannedMcap, BagWriter]:
    """Write the intact messages of the mcap at ``path`` (a file, or a bag or partial directory holding one)
    as the complete bag ``out``; (what was scanned, the closed writer with its counts)."""
    writer = BagWriter(out)  # the output checked before the input is read
    try:
        scanned = scan_mcap(path)
    except (ValueError, OSError) as exc:
        raise BagError(path, str(exc)) from None
    if not scanned.messages:
        raise BagError(path, f"has no complete chunk of messages ({scanned.size} bytes; a recorder killed before "
                             "its first ~1 MB chunk was flushed leaves none)")
    with writer:
        for channel_id, log_ns, raw in sorted(scanned.messages, key=lambda m: m[1]):
            topic, msgtype = scanned.channels[channel_id]
            writer.write_raw(topic, msgtype, log_ns, raw)
    return scanned, writer
