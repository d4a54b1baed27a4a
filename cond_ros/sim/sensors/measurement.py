"""Measurement model of a 6-axis force/torque (F/T) sensor, after the SDF ``force_torque`` sensor.

The physics computes, every step, the true wrench that the parent link transmits to the child link
through the sensor joint (force [N] and torque [N m] in world coordinates, the torque taken about a
world point). :meth:`FTSensor.measure` turns it into a reading in four stages:

1. **Direction** (SDF ``<measure_direction>``): ``parent_to_child`` reports the wrench the parent
   applies on the child, as given; ``child_to_parent`` (the SDF default) reports the wrench the
   child applies on the parent, i.e. the negated one (Newton's third law).
2. **Frame** (SDF ``<frame>``): ``child`` and ``parent`` express the reading in that link frame;
   ``sensor`` in the sensor frame ``child_pose @ sensor_pose``. The torque is taken about the
   chosen frame's origin, or about ``torque_point`` (given in that frame's coordinates, e.g. the
   joint origin): tau_ref = tau + (point - ref) x f, then force and torque are rotated into the frame.
3. **Errors**: measured = true + bias + drift(t) + white gaussian noise, then a first-order
   low-pass y += alpha (x - y) with the exact discretization alpha = 1 - exp(-2 pi fc dt). The
   filter and the drift start at rest (zero) at ``start_time`` (see :meth:`FTSensor.reset`), so a
   step applied from then on reads exactly 1 - exp(-2 pi fc t) at the sample times.
4. **Sampling**: with ``update_rate`` > 0 the reading is sample-and-hold: a call updates when
   ``time >= last_update + 1 / update_rate - 1e-9`` (the first call always does), otherwise it
   returns the held reading with ``updated=False``.

The ground truth is always available: ``FTReading.true_wrench`` is the noise-free, unfiltered wrench
at the call's time (not the held sample's), in the same frame and convention as ``wrench``.
Random numbers come from ``np.random.Generator(np.random.PCG64(seed))``, twelve standard normals per
update (six drift increments, then six noise samples), so the same inputs give bit-identical outputs
after :meth:`FTSensor.reset`.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.spatial.transform import Rotation

from ..kinematics.rigid import cross_vectors
from ..validate import ModelError, finite_array, rotation_matrix, scalar

SENSOR_FRAMES = ("child", "parent", "sensor")
MEASURE_DIRECTIONS = ("child_to_parent", "parent_to_child")
UPDATE_TOLERANCE = 1e-9  # [s] slack on the sample-and-hold period, against rounding of the sim time


def _zeros6():
    return np.zeros(6)


@dataclasses.dataclass(frozen=True, eq=False)
class FTSensorSpec:
    """Static description of one F/T sensor; every field is checked on construction.

    Attributes:
        name: Sensor name, used in error messages and topics.
        parent_link: Link on the robot side (e.g. ``"panda_link7"``).
        child_link: Link on the tool side (e.g. ``"ft_sensor_link"``).
        frame: Frame of the reading, one of :data:`SENSOR_FRAMES`.
        measure_direction: One of :data:`MEASURE_DIRECTIONS` (SDF meaning, see the module docstring).
        sensor_pose: Sensor frame in the child link frame, shape (4, 4), rigid [m].
        torque_point: Torque reference point in the chosen frame's coordinates [m], shape (3,);
            None = that frame's origin.
        noise_std: Per-axis white noise std, shape (6,): fx fy fz [N], tx ty tz [N m].
        bias: Constant bias, shape (6,) [N, N m].
        bias_drift_std: Random-walk bias drift, std of the increment per sqrt(second), shape (6,).
        update_rate: Sample-and-hold rate [Hz]; 0 = every call.
        lowpass_cutoff: First-order low-pass cut-off [Hz]; 0 = off.
        seed: Seed of the PCG64 generator (non-negative int).
    """

    name: str
    parent_link: str
    child_link: str
    frame: str = "sensor"
    measure_direction: str = "child_to_parent"
    sensor_pose: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(4))
    torque_point: np.ndarray | None = None
    noise_std: np.ndarray = dataclasses.field(default_factory=_zeros6)
    bias: np.ndarray = dataclasses.field(default_factory=_zeros6)
    bias_drift_std: np.ndarray = dataclasses.field(default_factory=_zeros6)
    update_rate: float = 0.0
    lowpass_cutoff: float = 0.0
    seed: int = 0

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Checks and normalizes every field (arrays become read-only float64); raises ModelError."""
        who = f"ft_sensor {self.name!r}"
        for key in ("name", "parent_link", "child_link"):
            value = getattr(self, key)
            if not isinstance(value, str) or not value:
                raise ModelError(f"{who}: {key} must be a non-empty string, got {value!r}")
        if self.parent_link == self.child_link:
            raise ModelError(f"{who}: child_link must differ from parent_link, both are {self.child_link!r}")
        for key, allowed in (("frame", SENSOR_FRAMES), ("measure_direction", MEASURE_DIRECTIONS)):
            value = getattr(self, key)
            if value not in allowed:
                raise ModelError(f"{who}: {key} must be one of {', '.join(allowed)}, got {value!r}")
        pose = finite_array(f"{who}: sensor_pose", self.sensor_pose, (4, 4))
        rotation_matrix(f"{who}: sensor_pose", pose[:3, :3])
        if not np.array_equal(pose[3], [0.0, 0.0, 0.0, 1.0]):
            raise ModelError(f"{who}: sensor_pose: last row must be 0 0 0 1, got {pose[3].tolist()}")
        self._set("sensor_pose", pose)
        if self.torque_point is not None:
            self._set("torque_point", finite_array(f"{who}: torque_point", self.torque_point, (3,)))
        self._set("bias", finite_array(f"{who}: bias", self.bias, (6,)))
        for key in ("noise_std", "bias_drift_std"):
            arr = finite_array(f"{who}: {key}", getattr(self, key), (6,))
            if np.any(arr < 0.0):
                raise ModelError(f"{who}: {key}: must be >= 0, got {arr.tolist()}")
            self._set(key, arr)
        for key in ("update_rate", "lowpass_cutoff"):
            object.__setattr__(self, key, scalar(f"{who}: {key}", getattr(self, key), low=0.0))
        if isinstance(self.seed, (bool, np.bool_)) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ModelError(f"{who}: seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "seed", int(self.seed))

    def _set(self, key, arr):
        arr = np.array(arr, dtype=np.float64)
        arr.flags.writeable = False
        object.__setattr__(self, key, arr)


_FIELDS = tuple(f.name for f in dataclasses.fields(FTSensorSpec))
_REQUIRED = ("name", "parent_link", "child_link")


def spec_from_dict(d: dict, source: str) -> FTSensorSpec:
    """Builds a spec from a scene-file mapping whose keys are the field names.

    ``sensor_pose`` may be a 4x4 nested list or ``{position: [x, y, z], rpy: [r, p, y]}`` (fixed-axis
    roll-pitch-yaw, as URDF and the scene files). Errors are ModelError prefixed with ``source``.
    """
    if not isinstance(d, dict):
        raise ModelError(f"{source}: ft_sensor must be a mapping, got {type(d).__name__}")
    who = f"{source}: ft_sensor {d.get('name', '?')!r}"
    unknown = sorted(str(k) for k in d if k not in _FIELDS)
    if unknown:
        raise ModelError(f"{who}: unknown keys {', '.join(unknown)} (allowed: {', '.join(_FIELDS)})")
    missing = [k for k in _REQUIRED if k not in d]
    if missing:
        raise ModelError(f"{who}: missing {', '.join(missing)}")
    kwargs = dict(d)
    if isinstance(kwargs.get("sensor_pose"), dict):
        kwargs["sensor_pose"] = _pose_from_dict(kwargs["sensor_pose"], f"{who}: sensor_pose")
    try:
        return FTSensorSpec(**kwargs)
    except ModelError as exc:
        raise ModelError(f"{source}: {exc}") from None


def _pose_from_dict(d: dict, who: str) -> np.ndarray:
    unknown = sorted(str(k) for k in d if k not in ("position", "rpy"))
    if unknown:
        raise ModelError(f"{who}: unknown keys {', '.join(unknown)} (allowed: position, rpy)")
    pose = np.eye(4)
    pose[:3, 3] = finite_array(f"{who}.position", d.get("position", [0.0, 0.0, 0.0]), (3,))
    rpy = finite_array(f"{who}.rpy", d.get("rpy", [0.0, 0.0, 0.0]), (3,))
    pose[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
    return pose


@dataclasses.dataclass
class FTReading:
    """One sensor output.

    Attributes:
        time: Time of the call [s].
        wrench: Measured force then torque [N, N m], shape (6,), with noise, bias, drift and filter.
        true_wrench: Noise-free, unfiltered wrench at ``time``, same frame and convention, shape (6,).
        updated: False when the sample-and-hold kept the previous reading.
        sample_time: Time of the update that produced ``wrench`` [s].
    """

    time: float
    wrench: np.ndarray
    true_wrench: np.ndarray
    updated: bool
    sample_time: float = math.nan


def _pose_arg(name, value):
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (4, 4):
        raise ValueError(f"{name}: expected a 4x4 pose, got shape {arr.shape}")
    return arr


def _vec3_arg(name, value):
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3,):
        raise ValueError(f"{name}: expected shape (3,), got {arr.shape}")
    return arr


class FTSensor:
    """Stateful F/T sensor: bias drift, low-pass state, sample-and-hold and the random generator."""

    def __init__(self, spec: FTSensorSpec, *, start_time: float = 0.0):
        if not isinstance(spec, FTSensorSpec):
            raise TypeError(f"FTSensor expects an FTSensorSpec, got {type(spec).__name__}")
        self.spec = spec
        self.reset(start_time=start_time)

    def reset(self, start_time: float = 0.0) -> None:
        """Back to the seed's start: drift and filter at rest at ``start_time`` [s], nothing held."""
        self._start_time = scalar("start_time", start_time)
        self._rng = np.random.Generator(np.random.PCG64(self.spec.seed))
        self._drift = np.zeros(6)
        self._filtered = np.zeros(6)
        self._held: np.ndarray | None = None
        self._last_update: float | None = None
        self._last_time: float | None = None

    def true_wrench(self, force_on_child_world, torque_on_child_world, point_world,
                    parent_pose_world, child_pose_world) -> np.ndarray:
        """The noise-free wrench (6,) in the spec's frame and convention; see :meth:`measure`."""
        spec = self.spec
        force = _vec3_arg("force_on_child_world", force_on_child_world)
        torque = _vec3_arg("torque_on_child_world", torque_on_child_world)
        point = _vec3_arg("point_world", point_world)
        if spec.measure_direction == "child_to_parent":
            force, torque = -force, -torque
        if spec.frame == "parent":
            frame = _pose_arg("parent_pose_world", parent_pose_world)
        else:
            frame = _pose_arg("child_pose_world", child_pose_world)
            if spec.frame == "sensor":
                frame = frame @ spec.sensor_pose
        rot, origin = frame[:3, :3], frame[:3, 3]
        ref = origin if spec.torque_point is None else origin + rot @ spec.torque_point
        torque_ref = torque + cross_vectors(point - ref, force)
        return np.concatenate((rot.T @ force, rot.T @ torque_ref))

    def measure(self, time: float, force_on_child_world, torque_on_child_world, point_world,
                parent_pose_world, child_pose_world) -> FTReading:
        """One reading at ``time`` [s].

        Args:
            time: Simulation time [s]; non-decreasing across calls and >= the reset's start_time.
            force_on_child_world: Force the parent applies on the child [N], world, shape (3,).
            torque_on_child_world: Torque the parent applies on the child about ``point_world``
                [N m], world, shape (3,).
            point_world: Torque reference point of the input wrench [m], world, shape (3,).
            parent_pose_world: Parent link frame in the world, shape (4, 4).
            child_pose_world: Child link frame in the world, shape (4, 4).
        """
        time = float(time)
        if not math.isfinite(time) or time < self._start_time - UPDATE_TOLERANCE:
            raise ValueError(f"ft_sensor {self.spec.name!r}: time {time} is before the start time {self._start_time}")
        if self._last_time is not None and time < self._last_time:
            raise ValueError(f"ft_sensor {self.spec.name!r}: time went backwards ({time} < {self._last_time})")
        self._last_time = time
        true = self.true_wrench(force_on_child_world, torque_on_child_world, point_world,
                                parent_pose_world, child_pose_world)
        spec = self.spec
        last = self._last_update
        due = last is None or spec.update_rate == 0.0 or time >= last + 1.0 / spec.update_rate - UPDATE_TOLERANCE
        if due:
            elapsed = max(time - (self._start_time if last is None else last), 0.0)
            normals = self._rng.standard_normal(12)
            self._drift = self._drift + spec.bias_drift_std * math.sqrt(elapsed) * normals[:6]
            value = true + spec.bias + self._drift + spec.noise_std * normals[6:]
            if spec.lowpass_cutoff > 0.0:
                alpha = -math.expm1(-2.0 * math.pi * spec.lowpass_cutoff * elapsed)
                self._filtered = self._filtered + alpha * (value - self._filtered)
                value = self._filtered.copy()
            self._held = value
            self._last_update = time
        return FTReading(time=time, wrench=self._held.copy(), true_wrench=true, updated=due,
                         sample_time=self._last_update)
