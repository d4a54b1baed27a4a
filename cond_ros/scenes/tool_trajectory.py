"""Recorded Cartesian tool trajectories and their joint-space tracking by IK.

The cable-winding experiment (``config/cable_winding_tool_trajectory.csv``, see
``../shared/data/README.md``) gives the Panda's tool point (``panda_tcp``) as one pose per 10 ms in
the ``panda_link0`` frame. :class:`ToolTrajectory` reads and checks such a file;
:func:`track_with_ik` turns it into joint positions row by row (damped least squares,
warm-started from the previous row, so the arm stays on one IK branch); :class:`IKTrack` gives the
interpolated joint targets for the PD drives.

Measured on the 2-core dev machine: IK for all 5500 rows of the winding trajectory takes 1.0 to 1.6 s
(a few DLS iterations per row, warm-started), so the result is not cached on disk.
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import os

import numpy as np
from scipy.spatial.transform import Rotation, Slerp
from tqdm import tqdm

from ..resources import packaged_file
from ..sim import Articulation, ArticulationKinematics, ModelError, finite_array, rotation_error, solve_ik

COLUMNS = ("t", "px", "py", "pz", "r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22")
ORTHONORMAL_TOLERANCE = 1e-4  # max |R R^T - I| accepted in a file (then re-orthonormalized)
CONVERGED_POSITION_ERROR = 1e-4  # [m] a tracked row with a larger tool position error is a failure

WINDING_CSV = os.path.join("config", "cable_winding_tool_trajectory.csv")  # a packaged file (cond_ros.resources)
WINDING_TOOL_LINK = "panda_tcp"  # the rows' positions: the tool point, 0.1779 m along the flange's z
WINDING_ORIENTATION_LINK = "panda_link7"  # the rows' rotations: the flange's (the authors' trace, columns R7_*)
WINDING_ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
# Start configuration for the winding trajectory's first pose (tool at (0.514, 0.197, 0.1005), flange
# R = diag(1, -1, -1)): IK from config/panda_pick.yaml's q, rounded. Elbow up; the finger stays open as in
# panda_pick.
DEFAULT_WINDING_Q0 = (-0.0264, 0.4882, 0.3668, -2.1986, -0.3523, 2.6324, 0.6113, 0.04)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    arr.setflags(write=False)
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class ToolTrajectory:
    """Tool poses sampled in time (read-only arrays, SI units).

    Attributes:
        time: sample times [s], strictly increasing, shape (n,).
        position: tool point in the robot base frame [m], shape (n, 3).
        rotation: tool orientation in the robot base frame (rotation matrices), shape (n, 3, 3).
    """

    time: np.ndarray
    position: np.ndarray
    rotation: np.ndarray

    def __post_init__(self):
        time = finite_array("ToolTrajectory.time", self.time)
        if time.ndim != 1 or len(time) == 0:
            raise ModelError(f"ToolTrajectory.time: expected shape (n,) with n >= 1, got {time.shape}")
        n = len(time)
        position = finite_array("ToolTrajectory.position", self.position, (n, 3))
        rotation = finite_array("ToolTrajectory.rotation", self.rotation, (n, 3, 3))
        bad = np.flatnonzero(np.diff(time) <= 0.0)
        if len(bad):
            raise ModelError(f"ToolTrajectory.time: must increase, row {bad[0] + 1} has t = {time[bad[0] + 1]} "
                             f"after {time[bad[0]]}")
        if not np.allclose(rotation @ rotation.transpose(0, 2, 1), np.eye(3), atol=1e-9):
            raise ModelError("ToolTrajectory.rotation: must be orthonormal (use ToolTrajectory.load for files)")
        object.__setattr__(self, "time", _readonly(time))
        object.__setattr__(self, "position", _readonly(position))
        object.__setattr__(self, "rotation", _readonly(rotation))

    def __len__(self) -> int:
        return len(self.time)

    def with_rotation_offset(self, offset) -> "ToolTrajectory":
        """The same trajectory with every rotation R replaced by R ``offset`` (re-expressing the
        orientation of one frame as that of a frame rigidly attached to it)."""
        offset = finite_array("ToolTrajectory.with_rotation_offset", offset, (3, 3))
        return ToolTrajectory(self.time, self.position, self.rotation @ offset)

    @classmethod
    def load(cls, path) -> "ToolTrajectory":
        """Read a CSV with the header ``t,px,py,pz,r00,...,r22`` (columns in any order).

        Rotations within :data:`ORTHONORMAL_TOLERANCE` of orthonormal (det +1) are projected onto the
        nearest rotation (SVD); anything else is an error.

        Raises:
            ModelError: naming the file and the row (0-based data row and file line) and column, for a
                missing file, missing, extra or duplicate columns, a wrong number of values, a value
                that is not a number or not finite, a time that does not increase, or a rotation that
                is not orthonormal.
        """
        path = os.fspath(path)
        try:
            with open(path, newline="") as fh:
                lines = list(csv.reader(fh))
        except OSError as exc:
            raise ModelError(f"{path}: cannot read tool trajectory: {exc.strerror}") from exc
        except (csv.Error, UnicodeDecodeError) as exc:
            raise ModelError(f"{path}: not a CSV file: {exc}") from exc
        numbered = [(line, fields) for line, fields in enumerate(lines, start=1) if any(f.strip() for f in fields)]
        if not numbered:
            raise ModelError(f"{path}: empty file, expected the header {','.join(COLUMNS)}")
        header = [f.strip() for f in numbered[0][1]]
        missing = [c for c in COLUMNS if c not in header]
        extra = [c for c in header if c not in COLUMNS]
        duplicate = sorted({c for c in header if header.count(c) > 1})
        if missing or extra or duplicate:
            problems = [f"{label} column(s) {', '.join(repr(c) for c in names)}"
                        for label, names in (("missing", missing), ("unexpected", extra), ("duplicate", duplicate))
                        if names]
            raise ModelError(f"{path}: line {numbered[0][0]} (header): {'; '.join(problems)}; "
                             f"expected {','.join(COLUMNS)}")
        order = [header.index(c) for c in COLUMNS]
        rows = numbered[1:]
        if not rows:
            raise ModelError(f"{path}: no data rows after the header")
        data = np.empty((len(rows), len(COLUMNS)))
        lineno = np.array([line for line, _ in rows])
        for i, (line, fields) in enumerate(rows):
            where = f"{path}: row {i} (line {line})"
            if len(fields) != len(header):
                raise ModelError(f"{where}: expected {len(header)} values, got {len(fields)}")
            for k, col in enumerate(order):
                text = fields[col].strip()
                try:
                    value = float(text)
                except ValueError:
                    raise ModelError(f"{where}, column {COLUMNS[k]!r}: not a number: {text!r}") from None
                if not np.isfinite(value):
                    raise ModelError(f"{where}, column {COLUMNS[k]!r}: must be finite, got {text!r}")
                data[i, k] = value
        time = data[:, 0]
        bad = np.flatnonzero(np.diff(time) <= 0.0)
        if len(bad):
            i = bad[0] + 1
            raise ModelError(f"{path}: row {i} (line {lineno[i]}), column 't': time must increase, "
                             f"got {time[i]:g} after {time[i - 1]:g} (row {i - 1})")
        rotation = data[:, 4:].reshape(-1, 3, 3)
        deviation = np.abs(rotation @ rotation.transpose(0, 2, 1) - np.eye(3)).max(axis=(1, 2))
        det = np.linalg.det(rotation)
        bad = np.flatnonzero((deviation > ORTHONORMAL_TOLERANCE) | (det <= 0.0))
        if len(bad):
            i = bad[0]
            raise ModelError(f"{path}: row {i} (line {lineno[i]}), columns 'r00'..'r22': not a rotation matrix "
                             f"(max |R R^T - I| = {deviation[i]:.3g}, tolerance {ORTHONORMAL_TOLERANCE:g}; "
                             f"det = {det[i]:.6g})")
        u, _, vt = np.linalg.svd(rotation)
        return cls(time, data[:, 1:4], u @ vt)

    @functools.cached_property
    def _slerp(self):
        return Slerp(self.time, Rotation.from_matrix(self.rotation)) if len(self) > 1 else None

    def pose(self, t) -> np.ndarray:
        """Tool pose(s) at time(s) ``t`` [s], clamped to the first/last sample.

        Position is interpolated linearly, orientation by slerp between the neighbouring samples.

        Returns:
            homogeneous world <- tool transform, shape (4, 4) for a scalar ``t``, else (len(t), 4, 4).
        """
        ts = np.clip(np.atleast_1d(np.asarray(t, dtype=np.float64)), self.time[0], self.time[-1])
        out = np.zeros((len(ts), 4, 4))
        out[:, 3, 3] = 1.0
        for axis in range(3):
            out[:, axis, 3] = np.interp(ts, self.time, self.position[:, axis])
        out[:, :3, :3] = self.rotation[0] if self._slerp is None else self._slerp(ts).as_matrix()
        return out[0] if np.ndim(t) == 0 else out

    def row_pose(self, row: int) -> np.ndarray:
        """The recorded pose of one row, homogeneous (4, 4)."""
        out = np.eye(4)
        out[:3, :3] = self.rotation[row]
        out[:3, 3] = self.position[row]
        return out


@dataclasses.dataclass(frozen=True, eq=False)
class IKTrack:
    """Joint-space version of a :class:`ToolTrajectory`, one IK solution per tracked row.

    Attributes:
        time: times of the tracked rows [s], shape (m,).
        q: joint positions [rad or m], shape (m, dof_count).
        qd: joint velocities by central differences (second order, one-sided at the ends) [rad/s or m/s],
            shape (m, dof_count).
        max_position_error: largest tool position error over the rows, by forward kinematics [m].
        max_orientation_error: largest tool rotation error angle over the rows [rad].
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    max_position_error: float
    max_orientation_error: float

    def targets(self, t: float):
        """Drive targets ``(q, qd)`` at time ``t`` [s], both shape (dof_count,).

        Linear interpolation between the rows; outside the tracked time span the target holds the
        first/last configuration with zero velocity.
        """
        t = float(t)
        if t <= self.time[0] or t >= self.time[-1]:
            q = self.q[0] if t <= self.time[0] else self.q[-1]
            return q.copy(), np.zeros_like(q)
        k = int(np.searchsorted(self.time, t, side="right")) - 1
        w = (t - self.time[k]) / (self.time[k + 1] - self.time[k])
        q = (1.0 - w) * self.q[k] + w * self.q[k + 1]
        qd = (1.0 - w) * self.qd[k] + w * self.qd[k + 1]
        return q, qd


def track_with_ik(traj: ToolTrajectory, kinematics: ArticulationKinematics, tool_link_index: int, q0, dofs, *,
                  stride: int = 1, tolerance: float = 1e-9, max_iterations: int = 200,
                  progress: bool = False) -> IKTrack:
    """Solve IK for every ``stride``-th row of ``traj`` (rows 0, stride, 2 stride, ...).

    Each row starts from the previous row's solution (the first from ``q0``), so consecutive
    solutions stay on one IK branch. DOFs not in ``dofs`` (the gripper) keep ``q0``'s values;
    :func:`~cond_ros.sim.kinematics.ik.solve_ik` clips every step to the URDF position limits, so every
    returned configuration is within them.

    Args:
        traj: tool poses, in the robot's world frame.
        kinematics: kinematics of the robot (left at the last row's solution).
        tool_link_index: index of the link whose frame is the tool (e.g. ``panda_tcp``).
        q0: start configuration, shape (dof_count,).
        dofs: indices of the DOFs IK may move (the arm joints).
        stride: track every ``stride``-th row only.
        tolerance: IK tolerance on the stacked position [m] and rotation [rad] error norm. A row that
            misses it but reaches the tool position within 1e-4 m is accepted; the maxima report it.
        max_iterations: damped least-squares iterations per row.
        progress: show a tqdm progress bar.

    Raises:
        ModelError: naming the row and its time if IK does not reach a row's pose.
    """
    art = kinematics.art
    q = finite_array("track_with_ik: q0", q0, (art.dof_count,))
    dofs = np.asarray(dofs, dtype=np.int64)
    if stride < 1:
        raise ModelError(f"track_with_ik: stride must be >= 1, got {stride}")
    rows = np.arange(0, len(traj), stride)
    qs = np.empty((len(rows), art.dof_count))
    max_pos = max_rot = 0.0
    for k, row in enumerate(tqdm(rows, desc="IK", unit="row", disable=not progress)):
        target = traj.row_pose(row)
        try:
            q = solve_ik(kinematics, tool_link_index, target, q, dofs=dofs, tolerance=tolerance,
                         max_iterations=max_iterations)
        except ModelError:
            try:  # accept a row that gets within the convergence threshold
                q = solve_ik(kinematics, tool_link_index, target, q, dofs=dofs, tolerance=CONVERGED_POSITION_ERROR,
                             max_iterations=max_iterations)
            except ModelError as exc:
                raise ModelError(f"track_with_ik: row {row} (t = {traj.time[row]:.3f} s): tool pose "
                                 f"p = {np.round(traj.position[row], 6).tolist()} not reached: {exc}") from None
        kinematics.update(q)
        pose = kinematics.link_pose[tool_link_index]
        max_pos = max(max_pos, float(np.linalg.norm(pose[:3, 3] - target[:3, 3])))
        max_rot = max(max_rot, float(np.linalg.norm(rotation_error(pose[:3, :3], target[:3, :3]))))
        qs[k] = q
    time = traj.time[rows].copy()
    qd = np.gradient(qs, time, axis=0) if len(rows) > 1 else np.zeros_like(qs)
    return IKTrack(time, qs, qd, max_pos, max_rot)


def rigid_rotation(kinematics: ArticulationKinematics, frame: int, link: int, q0, dofs) -> np.ndarray:
    """R_frame^T R_link of two links of one robot, checked to be the same with ``dofs`` moved away from ``q0``
    (the links must be rigidly attached); leaves ``kinematics`` at a moved configuration."""
    q0 = np.asarray(q0, dtype=float)
    offsets = []
    for q in (q0, q0 + np.isin(np.arange(len(q0)), dofs) * 0.3):
        kinematics.update(q)
        offsets.append(kinematics.link_pose[frame][:3, :3].T @ kinematics.link_pose[link][:3, :3])
    if not np.allclose(offsets[0], offsets[1], atol=1e-9):
        names = kinematics.art.link_name
        raise ModelError(f"{names[frame]!r} must be rigidly attached to {names[link]!r} (a moving joint lies "
                         "between them)")
    return offsets[0]


def default_winding_track(robot_articulation: Articulation, q0=None, *, stride: int = 1,
                          progress: bool = False) -> IKTrack:
    """The Panda's joint track of the packaged cable-winding trajectory (``panda_tcp`` at the rows' positions,
    ``panda_link7`` at their rotations, as ``config/panda_cable.yaml`` tracks it).

    Args:
        robot_articulation: the Panda (``urdf/panda.urdf``); IK moves ``panda_joint1..7``.
        q0: configuration to start the first row's IK from (default :data:`DEFAULT_WINDING_Q0`);
            its finger value is kept for the whole track.
        stride: track every ``stride``-th row only.
        progress: show a tqdm progress bar.
    """
    art = robot_articulation
    try:
        tool = art.link_index(WINDING_TOOL_LINK)
        flange = art.link_index(WINDING_ORIENTATION_LINK)
        dofs = [art.dof_index(name) for name in WINDING_ARM_JOINTS]
    except KeyError as exc:
        raise ModelError(f"default_winding_track: {exc.args[0]}") from None
    start = DEFAULT_WINDING_Q0 if q0 is None else q0
    kinematics = ArticulationKinematics(art)
    traj = ToolTrajectory.load(packaged_file(WINDING_CSV))
    traj = traj.with_rotation_offset(rigid_rotation(kinematics, flange, tool, start, dofs))
    return track_with_ik(traj, kinematics, tool, start, dofs, stride=stride, progress=progress)
