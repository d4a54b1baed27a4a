"""Hardware-in-the-loop validation with rosbag2 files, no ROS install needed (``rosbags``).

- ``io``: read and write bags (sqlite3, mcap); :class:`BagError` names the bag and topic of any problem.
- ``messages``: the ROS messages involved, as ``rosbags`` objects <-> plain data.
- ``series``: a WrenchStamped topic as a time series.
- ``frames``: a static wrench transform between sensor frames.
- ``align``: lag (cross-correlation), resampling with gaps masked, tare.
- ``metrics``: RMSE, MAE, max error, bias, correlation per axis, whole run and windows.
- ``compare``: the comparison (``cond-ros compare``); ``report``: markdown, JSON and plots.
- ``presets``: real robots' F/T recordings (ATI, Franka FR3, franka_ros, multipanda) in the sim sensor's terms.
- ``offline_node``: the ``cond_sim`` node's cycle in-process; ``record`` (``cond-ros record``) and
  ``replay`` (``cond-ros replay``) drive it and write its topics to a bag.

Public names are loaded on first use, so ``import cond_ros.bags`` stays cheap.
"""
from ..exports import lazy_exports

_EXPORTS = {
    "BagError": "io", "BagReader": "io", "BagWriter": "io",
    "stamp_ns": "messages", "wrench_values": "messages", "AXES": "metrics", "UNITS": "metrics",
    "WrenchSeries": "series", "read_wrench_series": "series",
    "WrenchTransform": "frames",
    "CompareOptions": "compare", "Comparison": "compare", "compare_bags": "compare", "compare_series": "compare",
    "read_real_series": "compare", "series_from_arrays": "series",
    "summary_text": "report", "write_report": "report",
    "OfflineNode": "offline_node",
    "record_scene": "record", "drive_script": "record",
    "salvage_bag": "salvage", "scan_mcap": "mcap_scan",
    "replay_bag": "replay", "DrivePlan": "replay", "read_drive": "replay", "drive_node": "replay",
    "PRESETS": "presets", "sensor_convention": "presets", "read_preset_series": "presets",
}
__getattr__, __all__ = lazy_exports(__name__, _EXPORTS)
