"""A WrenchStamped topic as a time series: sorted, duplicates dropped, unusable data rejected by name."""
import numpy as np
import pytest

from cond_ros.bags import messages
from cond_ros.bags.io import BagError, BagWriter
from cond_ros.bags.series import read_wrench_series, series_from_arrays


def _bag(path, rows, frames=None):
    """rows: (log time, stamp, values)."""
    with BagWriter(path) as writer:
        for i, (log, stamp, values) in enumerate(rows):
            writer.write("/ft", log, messages.wrench(values, frames[i] if frames else "s", stamp))
    return str(path)


def test_sorted_by_stamp_and_duplicates_dropped(tmp_path):
    """Messages out of stamp order are sorted; a repeated stamp keeps the first message and is counted."""
    rows = [(1, 30, [3] * 6), (2, 10, [1] * 6), (3, 20, [2] * 6), (4, 20, [9] * 6)]
    series = read_wrench_series(_bag(tmp_path / "b", rows), "/ft")
    assert series.stamps_ns.tolist() == [10, 20, 30] and series.values[:, 0].tolist() == [1, 2, 3]
    assert series.dropped == 1 and series.frame_id == "s"
    by_log = read_wrench_series(str(tmp_path / "b"), "/ft", stamps="log")
    assert by_log.stamps_ns.tolist() == [1, 2, 3, 4] and by_log.values[:, 0].tolist() == [3, 1, 2, 9]


@pytest.mark.parametrize("rows,frames,message", [
    ([(1, 0, [1] * 6), (2, 0, [2] * 6)], None, "every header.stamp is zero"),
    ([(1, 0, [1] * 6), (2, 5, [2] * 6)], None, "1 of 2 messages have a zero header.stamp"),
    ([(1, 1, [1] * 6), (2, 2, [np.nan] + [0] * 5)], None, "message 1 .* non-finite"),
    ([(1, 1, [1] * 6), (2, 2, [2] * 6)], ["a", "b"], "frame_id changes"),
    ([(1, 1, [1] * 6)], None, "1 distinct stamp"),
])
def test_unusable_series_name_bag_and_topic(tmp_path, rows, frames, message):
    """Zero stamps, NaN, a changing frame, a single sample: BagError with the bag and topic in it."""
    bag = _bag(tmp_path / "b", rows, frames)
    with pytest.raises(BagError, match=message) as err:
        read_wrench_series(bag, "/ft")
    assert str(err.value).startswith(f"{bag} [/ft]: ")


def test_empty_topic(tmp_path):
    """A topic without messages (a bag with none at all) is an error, not an empty report."""
    with BagWriter(tmp_path / "b") as writer:
        writer._connection("/ft", messages.WRENCH_STAMPED)
    with pytest.raises(BagError, match=r"\[/ft\]: has no messages"):
        read_wrench_series(tmp_path / "b", "/ft")
    with pytest.raises(BagError, match="has no messages"):
        series_from_arrays("x", "/ft", [], np.zeros((0, 6)), "")
