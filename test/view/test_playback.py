"""Playback of a run's CSV and of a bag: the recording read back is what was recorded, bad files are refused
with the file and the problem named, and the timeline's controls move as asked."""
import numpy as np
import pytest

from cond_ros.bags import record_scene
from cond_ros.cosim import validate_config
from cond_ros.tools import run_scene
from cond_ros.view.layout import FrameSampler, scene_layout
from cond_ros.view.playback import (PlaybackControl, PlaybackError, playback_frame, recording_from_bag,
                                    recording_from_csv)


@pytest.fixture(scope="module")
def run_csv(small_scene, tmp_path_factory):
    small_scene.simulator.reset()
    for sensor in small_scene.sensors:
        sensor.reset()
    result = run_scene(small_scene, 30, progress=False)
    path = tmp_path_factory.mktemp("run") / "run.csv"
    result.write_csv(str(path))
    small_scene.simulator.reset()
    return path, result


def test_csv_recording_is_the_run(small_scene, run_csv):
    path, result = run_csv
    recording = recording_from_csv(str(path), small_scene)
    assert recording.times == pytest.approx(result.column("time_s"))
    assert recording.robot_q[:, 0] == pytest.approx(result.column("q_panda_joint1"))
    sensor = small_scene.sensors[0]
    base = np.stack([result.column(f"wrist_ft_base_f{a}") for a in "xyz"], axis=1)
    assert recording.ft_world[:, :3] == pytest.approx(base @ sensor.base_rotation.T)


def test_playback_frame_at_a_time(small_scene, run_csv):
    recording = recording_from_csv(str(run_csv[0]), small_scene)
    sampler = FrameSampler(small_scene, scene_layout(small_scene))
    frame, history = playback_frame(recording, sampler, 0.155)
    assert frame.step == 14 and frame.time == pytest.approx(0.15)  # the last sample at or before 0.155 s
    assert len(history) == 15 and history[-1, 0] == pytest.approx(0.15)
    assert frame.ft[0][1] == pytest.approx(recording.ft_world[14, :3])


def test_a_csv_of_another_scene_is_refused(run_csv):
    from cond_ros.scenes import load_named_scene
    with pytest.raises(PlaybackError,
                       match=r"run\.csv: no column q_lift_joint \(2 joints of the scene missing\).*--scene"):
        recording_from_csv(str(run_csv[0]), load_named_scene("soft_gripper"))


def test_not_a_run_csv_is_refused(small_scene, tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(PlaybackError, match=r"other\.csv: not a run's per-step CSV"):
        recording_from_csv(str(path), small_scene)
    with pytest.raises(PlaybackError, match=r"missing\.csv: cannot be read"):
        recording_from_csv(str(tmp_path / "missing.csv"), small_scene)


def test_bag_recording_and_a_real_one_beside_it(small_scene, tmp_path):
    bag = tmp_path / "bag"
    record_scene(validate_config(dict(scene="panda_cable_small")), bag, duration_s=0.5, progress=False)
    recording = recording_from_bag(str(bag), small_scene, real=str(bag))
    assert recording.ft_label == "/cond_sim/ft/wrist_ft"  # the F/T topic, not the contact wrench
    assert len(recording.times) == 51 and recording.times[0] == 0.0
    assert recording.real[0] == "real /cond_sim/ft/wrist_ft"
    # the F/T frame_id is a link: the playback turns the readings into world axes, the raw ones stay as they are
    assert np.linalg.norm(recording.ft_world[:, :3], axis=1) == pytest.approx(
        np.linalg.norm(recording.real[2], axis=1))
    with pytest.raises(PlaybackError, match="no /nowhere topic"):
        recording_from_bag(str(bag), small_scene, joint_states="/nowhere")


def test_timeline_controls(small_scene, run_csv):
    recording = recording_from_csv(str(run_csv[0]), small_scene)
    control = PlaybackControl(recording, 1.0, paused=True)
    assert control.step() == "one sample: t = 0.020000 s"  # the first sample is at 0.01 s
    assert control.advance(1.0) == pytest.approx(0.02)  # paused: time holds
    control.play()
    assert control.advance(0.05) == pytest.approx(0.07)
    assert control.step() == "the playback is playing; pause it first"
    assert control.advance(10.0) == pytest.approx(recording.times[-1]) and control.paused  # stops at the end
    control.seek(-5.0)
    assert control.t == pytest.approx(recording.times[0])
    control.seek(0.1)
    assert control.reset() == "back to the start" and control.t == pytest.approx(recording.times[0])
