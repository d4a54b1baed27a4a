"""The recorded cable-winding tool trajectory: loading, interpolation, and its IK tracking by the Panda."""
import os

import numpy as np
import pytest

from cond_ros.sim import ArticulationKinematics, ModelError, load_urdf
from cond_ros.scenes.tool_trajectory import (DEFAULT_WINDING_Q0, IKTrack, ToolTrajectory, default_winding_track,
                                          track_with_ik)

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PACKAGED_CSV = os.path.join(ROOT, "config", "cable_winding_tool_trajectory.csv")
SHARED_CSV = os.path.join(ROOT, "..", "shared", "data", "cable_winding_tool_trajectory.csv")
PANDA = os.path.join(ROOT, "urdf", "panda.urdf")
HEADER = "t,px,py,pz,r00,r01,r02,r10,r11,r12,r20,r21,r22"
ARM = np.arange(7)


def _row(t, p, rot):
    return ",".join(f"{v:.17g}" for v in [t, *p, *np.ravel(rot)])


def _write(tmp_path, lines, name="traj.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _axis_angle(axis, angle):
    """Rotation about a unit axis by hand (Rodrigues), independent of scipy."""
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


def _angle_between(a, b):
    """Rotation angle of a^T b, from the chordal distance ||a - b||_F = 2 sqrt(2) sin(angle / 2)."""
    return 2.0 * np.arcsin(min(1.0, np.linalg.norm(a - b) / (2.0 * np.sqrt(2.0))))


@pytest.fixture(scope="module")
def panda():
    return load_urdf(PANDA, mesh_primitives=False)


@pytest.fixture(scope="module")
def recorded():
    """The packaged csv read with numpy alone: (t (n,), p (n, 3), R (n, 3, 3))."""
    data = np.loadtxt(PACKAGED_CSV, delimiter=",", skiprows=1)
    return data[:, 0], data[:, 1:4], data[:, 4:].reshape(-1, 3, 3)


@pytest.mark.skipif(not os.path.exists(SHARED_CSV), reason="../shared is not checked out")
def test_packaged_csv_is_the_shared_reference():
    """config/cable_winding_tool_trajectory.csv is a byte-identical copy of ../shared/data's."""
    with open(PACKAGED_CSV, "rb") as a, open(SHARED_CSV, "rb") as b:
        assert a.read() == b.read()


def test_load_packaged_csv(recorded):
    """5500 rows at 10 ms; values equal the file's, rotations orthonormal."""
    t, p, rot = recorded
    traj = ToolTrajectory.load(PACKAGED_CSV)
    assert len(traj) == 5500
    np.testing.assert_allclose(np.diff(traj.time), 0.01, atol=1e-9)
    np.testing.assert_array_equal(traj.time, t)
    np.testing.assert_array_equal(traj.position, p)
    np.testing.assert_allclose(traj.rotation, rot, atol=1e-12)
    assert not traj.position.flags.writeable


@pytest.mark.parametrize("case, match", [
    ("missing", r"line 1 \(header\): missing column\(s\) 'pz'"),
    ("extra", r"line 1 \(header\): unexpected column\(s\) 'w'"),
    ("text", r"row 1 \(line 3\), column 'py': not a number: 'abc'"),
    ("nan", r"row 1 \(line 3\), column 'r11': must be finite, got 'nan'"),
    ("decreasing", r"row 2 \(line 4\), column 't': time must increase"),
    ("not_orthonormal", r"row 1 \(line 3\), columns 'r00'..'r22': not a rotation matrix"),
    ("reflection", r"row 0 \(line 2\), columns 'r00'..'r22': not a rotation matrix"),
    ("short_row", r"row 1 \(line 3\): expected 13 values, got 12"),
])
def test_load_errors_name_the_file_row_and_column(tmp_path, case, match):
    """Each malformed file raises ModelError naming the file, the data row / line and the column."""
    rows = [_row(0.01 * i, (0.5, 0.1 * i, 0.1), np.diag([1.0, -1.0, -1.0])) for i in range(3)]
    header = HEADER
    if case == "missing":
        header = HEADER.replace(",pz", "")
        rows = [",".join(r.split(",")[:3] + r.split(",")[4:]) for r in rows]
    elif case == "extra":
        header = HEADER + ",w"
        rows = [r + ",1" for r in rows]
    elif case == "text":
        rows[1] = rows[1].replace(rows[1].split(",")[2], "abc", 1)
    elif case == "nan":
        rows[1] = _row(0.01, (0.5, 0.1, 0.1), np.diag([1.0, float("nan"), -1.0]))
    elif case == "decreasing":
        rows[2] = _row(0.005, (0.5, 0.2, 0.1), np.diag([1.0, -1.0, -1.0]))
    elif case == "not_orthonormal":
        rows[1] = _row(0.01, (0.5, 0.1, 0.1), np.diag([1.0, -1.0, -1.001]))
    elif case == "reflection":
        rows[0] = _row(0.0, (0.5, 0.0, 0.1), np.diag([1.0, 1.0, -1.0]))
    elif case == "short_row":
        rows[1] = rows[1].rsplit(",", 1)[0]
    path = _write(tmp_path, [header, *rows])
    with pytest.raises(ModelError, match=match) as info:
        ToolTrajectory.load(path)
    assert path in str(info.value)


def test_load_missing_file(tmp_path):
    """A missing file is a ModelError naming it."""
    path = str(tmp_path / "nope.csv")
    with pytest.raises(ModelError, match="nope.csv: cannot read"):
        ToolTrajectory.load(path)


def test_nearly_orthonormal_rotation_is_projected(tmp_path):
    """A rotation 5e-5 off orthonormal (within 1e-4) is accepted and replaced by the nearest rotation."""
    rot = _axis_angle(np.array([0.0, 0.6, 0.8]), 0.7)
    noisy = rot + 5e-5 * np.array([[1.0, 0.0, -1.0], [0.0, 0.5, 0.0], [1.0, 0.0, 0.0]])
    path = _write(tmp_path, [HEADER, _row(0.0, (0, 0, 0), noisy), _row(1.0, (0, 0, 0), rot)])
    traj = ToolTrajectory.load(path)
    np.testing.assert_allclose(traj.rotation[0] @ traj.rotation[0].T, np.eye(3), atol=1e-14)
    assert np.linalg.det(traj.rotation[0]) == pytest.approx(1.0)
    assert np.abs(traj.rotation[0] - rot).max() < 1e-4


def test_pose_interpolates_linearly_and_by_slerp(tmp_path):
    """Midway between two rows: the mean position, and the rotation turned halfway about the known axis."""
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    start = _axis_angle(np.array([0.0, 0.0, 1.0]), 0.4) @ np.diag([1.0, -1.0, -1.0])
    angle = 1.2
    end = _axis_angle(axis, angle) @ start  # turned about a world axis
    p0, p1 = np.array([0.25, -0.5, 0.125]), np.array([0.75, 0.5, 0.375])
    path = _write(tmp_path, [HEADER, _row(2.0, p0, start), _row(2.5, p1, end)])
    traj = ToolTrajectory.load(path)
    mid = traj.pose(2.25)
    assert mid.shape == (4, 4)
    np.testing.assert_array_equal(mid[:3, 3], 0.5 * (p0 + p1))
    np.testing.assert_allclose(mid[:3, :3], _axis_angle(axis, 0.5 * angle) @ start, atol=1e-12)
    np.testing.assert_allclose(mid[3], [0, 0, 0, 1])
    quarter = traj.pose(2.125)
    np.testing.assert_allclose(quarter[:3, :3], _axis_angle(axis, 0.25 * angle) @ start, atol=1e-12)
    # clamped at the ends; vectorized
    poses = traj.pose([0.0, 2.0, 2.5, 9.0])
    np.testing.assert_allclose(poses[0, :3, :3], start, atol=1e-12)
    np.testing.assert_allclose(poses[3, :3, :3], end, atol=1e-12)
    np.testing.assert_array_equal(poses[0, :3, 3], p0)
    np.testing.assert_array_equal(poses[3, :3, 3], p1)


def _check_track(track, panda, t, p, rot, rows, orientation_link="panda_tcp"):
    kin = ArticulationKinematics(panda)
    tcp = panda.link_index("panda_tcp")
    oriented = panda.link_index(orientation_link)
    np.testing.assert_array_equal(track.time, t[rows])
    for k, row in enumerate(rows):
        kin.update(track.q[k])
        assert np.linalg.norm(kin.link_pose[tcp][:3, 3] - p[row]) < 1e-4, row
        assert _angle_between(kin.link_pose[oriented][:3, :3], rot[row]) < 1e-3, row
    assert np.all(track.q >= panda.dof_lower) and np.all(track.q <= panda.dof_upper)
    assert track.max_position_error < 1e-4 and track.max_orientation_error < 1e-3


def test_ik_tracks_the_first_two_seconds(panda, recorded):
    """First 200 rows: FK of the returned q gives the csv pose, joints in limits, steps < 0.05 rad per 10 ms."""
    t, p, rot = recorded
    n = 200
    traj = ToolTrajectory(t[:n], p[:n], rot[:n])
    kin = ArticulationKinematics(panda)
    track = track_with_ik(traj, kin, panda.link_index("panda_tcp"), DEFAULT_WINDING_Q0, ARM)
    assert isinstance(track, IKTrack) and track.q.shape == (n, panda.dof_count)
    _check_track(track, panda, t, p, rot, np.arange(n))
    assert np.abs(np.diff(track.q, axis=0)).max() < 0.05
    assert np.all(track.q[:, 7] == DEFAULT_WINDING_Q0[7])  # finger untouched
    np.testing.assert_allclose(track.qd[1:-1], (track.q[2:] - track.q[:-2]) / 0.02, atol=1e-9)
    q, qd = track.targets(0.5 * (t[10] + t[11]))
    np.testing.assert_allclose(q, 0.5 * (track.q[10] + track.q[11]))
    np.testing.assert_allclose(qd, 0.5 * (track.qd[10] + track.qd[11]))
    q, qd = track.targets(100.0)
    np.testing.assert_array_equal(q, track.q[-1])
    assert not qd.any()


def test_default_winding_track_covers_the_whole_trajectory(panda, recorded):
    """Every 50th row of the packaged trajectory is reached from the default q0, elbow up, inside the limits:
    the tool point at the rows' positions, the flange at their rotations (the authors' convention)."""
    t, p, rot = recorded
    track = default_winding_track(panda, stride=50)
    rows = np.arange(0, len(t), 50)
    _check_track(track, panda, t, p, rot, rows, orientation_link="panda_link7")
    assert np.all(track.q[:, 3] < -0.5) and np.all(track.q[:, 5] > 1.0)  # elbow bent, wrist flexed: one branch
    assert np.abs(track.q[0] - np.array(DEFAULT_WINDING_Q0)).max() < 1e-3


def test_unreachable_row_names_row_and_time(panda):
    """A pose 3 m away in the middle of a trajectory raises ModelError naming its row and time."""
    down = np.diag([1.0, -1.0, -1.0])
    traj = ToolTrajectory(np.array([0.0, 0.01, 0.02]), np.array([[0.514, 0.197, 0.1005], [3.0, 0.0, 0.5],
                                                                  [0.514, 0.197, 0.1005]]), np.array([down] * 3))
    with pytest.raises(ModelError, match=r"row 1 \(t = 0.010 s\)"):
        track_with_ik(traj, ArticulationKinematics(panda), panda.link_index("panda_tcp"), DEFAULT_WINDING_Q0, ARM,
                      max_iterations=30)
