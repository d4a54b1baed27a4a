"""A recording killed by SIGKILL (issue 32): what its mcap holds up to the last flushed chunk is named by
every reader in one line and salvaged into a complete bag whose messages are, bit for bit, the first ones
of the same recording left to finish. A file cut at any byte is read as far as it is whole, never misread."""
import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from cond_ros.bags.io import BagError, BagReader
from cond_ros.bags.mcap_scan import scan_mcap
from cond_ros.bags.salvage import salvage_bag


def _record(out, *, kill_after_bytes=None):
    """`cond-ros record panda_cable_small` into ``out``; SIGKILLed once its partial mcap passes the size."""
    proc = subprocess.Popen([sys.executable, "-m", "cond_ros.cli", "record", "panda_cable_small", "--out", str(out),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        if kill_after_bytes is None:
            assert proc.wait(timeout=300) == 0, proc.communicate()
            return None
        end = time.monotonic() + 300
        pattern = f".{out.name}.*.partial/{out.name}/*.mcap"
        while not any(p.stat().st_size > kill_after_bytes for p in out.parent.glob(pattern)):
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return next(out.parent.glob(f".{out.name}.*.partial"))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    directory = tmp_path_factory.mktemp("salvage")
    partial = _record(directory / "killed", kill_after_bytes=1_200_000)
    _record(directory / "full")
    return partial, directory / "full"


def test_a_killed_recording_is_named_and_salvaged_bit_for_bit(recordings, tmp_path):
    partial, full = recordings
    assert not (partial.parent / "killed").exists()  # the target never appeared
    with pytest.raises(BagError, match=r"is cut short .*: (\d+) messages on 6 topics up to log time") as err:
        BagReader(partial).__enter__()
    assert f"cond-ros salvage {partial} --out" in str(err.value)
    scanned, writer = salvage_bag(partial, tmp_path / "salvaged")
    assert not scanned.complete and scanned.intact_bytes >= 1_000_000
    with BagReader(tmp_path / "salvaged") as salvaged, BagReader(full) as reference:
        topics = sorted(salvaged.topics)
        assert topics == sorted(reference.topics)
        got = list(salvaged.raw_messages(topics))
        expected = list(reference.raw_messages(topics))
    assert len(got) == len(scanned.messages) > 1000
    by_topic = {t: [m for m in got if m[0] == t] for t in topics}
    for topic in topics:  # each topic's messages are the first ones of the finished recording, bit for bit
        reference_topic = [m for m in expected if m[0] == topic]
        assert by_topic[topic] == reference_topic[:len(by_topic[topic])]
    assert writer.counts == {t: len(v) for t, v in by_topic.items()}


def test_the_cli_salvages_and_refuses_what_it_cannot(recordings, tmp_path):
    partial, full = recordings
    result = subprocess.run([sys.executable, "-m", "cond_ros.cli", "salvage", str(partial), "--out",
                             str(tmp_path / "bag")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "salvaged " in result.stdout and "bytes after the last complete chunk" \
        in result.stdout, result.stdout + result.stderr
    again = subprocess.run([sys.executable, "-m", "cond_ros.cli", "salvage", str(partial), "--out",
                            str(tmp_path / "bag")], capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "exists already" in again.stderr
    (tmp_path / "junk.mcap").write_bytes(b"not an mcap file at all")
    junk = subprocess.run([sys.executable, "-m", "cond_ros.cli", "salvage", str(tmp_path / "junk.mcap"), "--out",
                           str(tmp_path / "bag2")], capture_output=True, text=True, timeout=120)
    assert junk.returncode == 2 and "is not an mcap file" in junk.stderr and not (tmp_path / "bag2").exists()


def test_a_file_cut_at_any_byte_is_read_as_far_as_it_is_whole(recordings, tmp_path):
    """Cut the finished recording's mcap at many places: the messages read never decrease as the cut moves
    on, each is one of the file's own, and only the whole file reads as complete."""
    _, full = recordings
    data = next(full.glob("*.mcap")).read_bytes()
    whole = scan_mcap(next(full.glob("*.mcap")))
    assert whole.complete and len(whole.messages) > 10_000
    counts = []
    for cut in list(range(8, 2000, 97)) + list(range(2000, len(data), len(data) // 40)):
        (tmp_path / "cut.mcap").write_bytes(data[:cut])
        scanned = scan_mcap(tmp_path / "cut.mcap")
        assert not scanned.complete
        assert scanned.messages == whole.messages[:len(scanned.messages)]
        counts.append(len(scanned.messages))
    assert counts == sorted(counts) and counts[-1] > 0
    (tmp_path / "cut.mcap").write_bytes(data[:5])
    with pytest.raises(ValueError, match="not an mcap file"):
        scan_mcap(tmp_path / "cut.mcap")


def test_garbage_after_the_magic_reads_as_nothing_intact(tmp_path):
    """Records whose fields do not parse end the read where they start, never a struct error."""
    import random
    rng = random.Random(7)
    for size in (9, 40, 1000, 20_000):
        (tmp_path / "junk.mcap").write_bytes(b"\x89MCAP0\r\n" + bytes(rng.getrandbits(8) for _ in range(size)))
        scanned = scan_mcap(tmp_path / "junk.mcap")
        assert not scanned.complete
