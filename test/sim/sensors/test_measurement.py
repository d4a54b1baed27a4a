"""F/T sensor measurement model: frames, direction, noise, drift, sample-and-hold, low-pass, spec checks.

Expected values are built independently of the code: frame results by hand (comments give the axis
bookkeeping), a random check through the 6x6 wrench transform, statistics against the spec's stds.
"""
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.sim.sensors import FTSensor, FTSensorSpec, spec_from_dict
from cond_ros.sim.validate import ModelError

FORCE = np.array([5.0, 0.0, 0.0])  # [N] along world x
POINT = np.array([0.1, 0.2, 0.3])  # [m] world point where it acts (zero torque about it)
ZERO3 = np.zeros(3)


def pose(rotation: Rotation, position) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rotation.as_matrix()
    out[:3, 3] = position
    return out


# child: 90 deg about z at (1, 0, 0): child x = world y, child y = world -x, child z = world z.
CHILD = pose(Rotation.from_euler("z", 90, degrees=True), [1.0, 0.0, 0.0])
# parent: 90 deg about x at (0, 0, 1): parent x = world x, parent y = world z, parent z = world -y.
PARENT = pose(Rotation.from_euler("x", 90, degrees=True), [0.0, 0.0, 1.0])
# sensor in the child: 180 deg about x, 5 cm along child z.
SENSOR_IN_CHILD = pose(Rotation.from_euler("x", 180, degrees=True), [0.0, 0.0, 0.05])


def spec(**kw) -> FTSensorSpec:
    base = dict(name="wrist", parent_link="link7", child_link="ft_link", measure_direction="parent_to_child")
    base.update(kw)
    return FTSensorSpec(**base)


def true_of(sensor_spec, force=FORCE, torque=ZERO3, point=POINT, parent=PARENT, child=CHILD):
    return FTSensor(sensor_spec).measure(0.0, force, torque, point, parent, child).true_wrench


@pytest.mark.parametrize("frame, expected", [
    # child: r = p - (1,0,0) = (-0.9, 0.2, 0.3); r x f = (0, 1.5, -1.0) world.
    # force world x = child -y; torque: child x <- world y (1.5), child y <- -world x (0), z = -1.
    ("child", [0.0, -5.0, 0.0, 1.5, 0.0, -1.0]),
    # parent: r = p - (0,0,1) = (0.1, 0.2, -0.7); r x f = (0, -3.5, -1.0) world.
    # force world x = parent x; torque: parent y <- world z (-1.0), parent z <- -world y (3.5).
    ("parent", [5.0, 0.0, 0.0, 0.0, -1.0, 3.5]),
    # sensor axes: x = world y, y = world x, z = world -z; origin (1, 0, 0.05).
    # r = (-0.9, 0.2, 0.25); r x f = (0, 1.25, -1.0) world -> sensor (1.25, 0, 1.0); force -> (0, 5, 0).
    ("sensor", [0.0, 5.0, 0.0, 1.25, 0.0, 1.0]),
])
def test_frames_by_hand(frame, expected):
    got = true_of(spec(frame=frame, sensor_pose=SENSOR_IN_CHILD))
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_torque_point_and_input_torque_by_hand():
    # Reference point (0, 0, 0.1) in the child frame = world (1, 0, 0.1); r = p - ref = (-0.9, 0.2, 0.2);
    # r x f = (0, 5 r_z, -5 r_y) = (0, 1.0, -1.0) world -> child (1.0, 0, -1.0). The input torque
    # (0, 0, 2) about p is a free couple: world z = child z, adds 2 to tz.
    got = true_of(spec(frame="child", torque_point=[0.0, 0.0, 0.1]), torque=np.array([0.0, 0.0, 2.0]))
    np.testing.assert_allclose(got, [0.0, -5.0, 0.0, 1.0, 0.0, 1.0], atol=1e-12)


def test_sensor_frame_with_identity_pose_is_child_frame():
    np.testing.assert_allclose(true_of(spec(frame="sensor")), true_of(spec(frame="child")), atol=1e-15)


@pytest.mark.parametrize("frame", ["child", "parent", "sensor"])
def test_random_wrenches_match_the_wrench_transform(frame):
    """Against the dual adjoint: F_b = [[R^T, 0], [-R^T [o]x, R^T]] F_w, F_w taken about the world origin."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        parent = pose(Rotation.random(random_state=rng), rng.normal(size=3))
        child = pose(Rotation.random(random_state=rng), rng.normal(size=3))
        sensor_pose = pose(Rotation.random(random_state=rng), rng.normal(size=3) * 0.1)
        torque_point = rng.normal(size=3) * 0.1
        f, tau, p = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        s = spec(frame=frame, sensor_pose=sensor_pose, torque_point=torque_point)
        got = true_of(s, f, tau, p, parent, child)

        frame_pose = {"child": child, "parent": parent, "sensor": child @ sensor_pose}[frame]
        ref_pose = frame_pose @ pose(Rotation.identity(), torque_point)
        rot, o = ref_pose[:3, :3], ref_pose[:3, 3]
        skew = np.array([[0, -o[2], o[1]], [o[2], 0, -o[0]], [-o[1], o[0], 0]])
        adjoint_t = np.block([[rot.T, np.zeros((3, 3))], [-rot.T @ skew, rot.T]])
        wrench_world_origin = np.concatenate((f, tau + np.cross(p, f)))
        np.testing.assert_allclose(got, adjoint_t @ wrench_world_origin, atol=1e-12)


@pytest.mark.parametrize("frame", ["child", "parent", "sensor"])
def test_child_to_parent_is_the_negative(frame):
    rng = np.random.default_rng(3)
    kw = dict(frame=frame, sensor_pose=SENSOR_IN_CHILD, torque_point=[0.01, -0.02, 0.03])
    args = (rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), PARENT, CHILD)
    a = FTSensor(spec(measure_direction="parent_to_child", **kw)).measure(0.0, *args)
    b = FTSensor(spec(measure_direction="child_to_parent", **kw)).measure(0.0, *args)
    assert np.array_equal(b.true_wrench, -a.true_wrench)
    assert np.array_equal(b.wrench, -a.wrench)  # noise-free: reading = truth


def run(sensor, n, dt=1e-3, force=FORCE):
    return [sensor.measure(k * dt, force, ZERO3, POINT, PARENT, CHILD) for k in range(n)]


NOISE = np.array([0.5, 1.0, 2.0, 0.01, 0.02, 0.05])
BIAS = np.array([1.0, -2.0, 0.5, 0.1, 0.0, -0.05])


def test_noise_statistics_and_seeding():
    n = 20000
    readings = run(FTSensor(spec(frame="child", noise_std=NOISE, bias=BIAS, seed=11)), n)
    errors = np.array([r.wrench - r.true_wrench for r in readings])
    np.testing.assert_allclose(errors.std(axis=0, ddof=1), NOISE, rtol=0.03)
    assert np.all(np.abs(errors.mean(axis=0) - BIAS) < 4 * NOISE / math.sqrt(n))

    same = run(FTSensor(spec(frame="child", noise_std=NOISE, bias=BIAS, seed=11)), 200)
    assert all(np.array_equal(a.wrench, b.wrench) for a, b in zip(readings[:200], same))
    other = run(FTSensor(spec(frame="child", noise_std=NOISE, bias=BIAS, seed=12)), 200)
    assert not any(np.array_equal(a.wrench, b.wrench) for a, b in zip(readings[:200], other))


def test_reset_gives_bit_identical_outputs():
    s = spec(frame="sensor", noise_std=NOISE, bias_drift_std=NOISE, lowpass_cutoff=30.0, update_rate=250.0, seed=5)
    sensor = FTSensor(s)
    first = run(sensor, 300)
    sensor.reset()
    second = run(sensor, 300)
    for a, b in zip(first, second):
        assert np.array_equal(a.wrench, b.wrench) and a.updated == b.updated


def test_drift_is_a_random_walk():
    """Var(drift(T)) = std^2 T, whatever the steps; 1000 seeds x 6 axes (std error of the variance ~2 %)."""
    drift_std = np.array([0.2, 0.4, 0.8, 0.01, 0.02, 0.03])
    steps, dt = 50, 0.01  # T = 0.49 s from the start at t = 0
    finals, halves = [], []
    for seed in range(1000):
        readings = run(FTSensor(spec(frame="child", bias_drift_std=drift_std, seed=seed)), steps, dt)
        halves.append(readings[24].wrench - readings[24].true_wrench)
        finals.append(readings[-1].wrench - readings[-1].true_wrench)
    for drift, t in ((np.array(halves), 24 * dt), (np.array(finals), (steps - 1) * dt)):
        np.testing.assert_allclose((drift ** 2).mean(axis=0), drift_std ** 2 * t, rtol=0.10)


def test_sample_and_hold_every_tenth_step():
    sensor = FTSensor(spec(frame="child", noise_std=NOISE, update_rate=100.0))
    rng = np.random.default_rng(0)
    held = None
    for k in range(1000):
        force = rng.normal(size=3)
        r = sensor.measure(k * 1e-3, force, ZERO3, POINT, PARENT, CHILD)
        assert r.updated == (k % 10 == 0), k
        if r.updated:
            held = r.wrench.copy()
            assert r.sample_time == r.time
        else:
            assert np.array_equal(r.wrench, held)
            assert r.sample_time == pytest.approx(k // 10 * 1e-2)
        # the truth is current even while the reading is held: world force -> child (f_y, -f_x, f_z)
        np.testing.assert_allclose(r.true_wrench[:3], [force[1], -force[0], force[2]], atol=1e-12)


@pytest.mark.parametrize("update_rate", [0.0, 200.0])
def test_lowpass_step_response(update_rate):
    fc = 15.0
    sensor = FTSensor(spec(frame="parent", lowpass_cutoff=fc, update_rate=update_rate))
    for r in run(sensor, 400):
        if not r.updated:
            continue
        expected = (1.0 - math.exp(-2.0 * math.pi * fc * r.time)) * r.true_wrench
        np.testing.assert_allclose(r.wrench, expected, rtol=1e-12, atol=1e-15)


def test_time_must_not_go_backwards():
    sensor = FTSensor(spec())
    sensor.measure(0.1, FORCE, ZERO3, POINT, PARENT, CHILD)
    with pytest.raises(ValueError, match="backwards"):
        sensor.measure(0.05, FORCE, ZERO3, POINT, PARENT, CHILD)


SHEAR = np.eye(4)
SHEAR[0, 1] = 0.1
MIRROR = np.diag([1.0, 1.0, -1.0, 1.0])
BAD_ROW = np.eye(4)
BAD_ROW[3, 0] = 0.5


@pytest.mark.parametrize("field, value, words", [
    ("frame", "world", "frame must be one of child, parent, sensor, got 'world'"),
    ("measure_direction", "up", "measure_direction must be one of"),
    ("noise_std", [0.1] * 5, "noise_std"),
    ("noise_std", [0.1, -0.1, 0, 0, 0, 0], "noise_std: must be >= 0"),
    ("noise_std", [0.1, np.nan, 0, 0, 0, 0], "noise_std: must be finite"),
    ("bias", [0, 0, np.inf, 0, 0, 0], "bias: must be finite"),
    ("bias", "abc", "bias"),
    ("bias_drift_std", [-1.0] * 6, "bias_drift_std: must be >= 0"),
    ("update_rate", -1.0, "update_rate: must be >= 0"),
    ("update_rate", math.inf, "update_rate: must be finite"),
    ("lowpass_cutoff", math.nan, "lowpass_cutoff: must be finite"),
    ("lowpass_cutoff", -5.0, "lowpass_cutoff"),
    ("sensor_pose", np.eye(3), "sensor_pose: expected shape (4, 4)"),
    ("sensor_pose", SHEAR, "sensor_pose: must be a rotation"),
    ("sensor_pose", MIRROR, "sensor_pose: must be a rotation"),
    ("sensor_pose", BAD_ROW, "sensor_pose: last row"),
    ("torque_point", [0.0, 0.1], "torque_point: expected shape (3,)"),
    ("seed", -1, "seed"),
    ("seed", 1.5, "seed"),
    ("name", "", "name"),
    ("child_link", "link7", "child_link must differ"),
])
def test_bad_specs_name_the_field(field, value, words):
    with pytest.raises(ModelError) as info:
        spec(**{field: value})
    message = str(info.value)
    assert words in message
    if field != "name":
        assert message.startswith("ft_sensor 'wrist': ")


def test_spec_from_dict():
    s = spec_from_dict({"name": "wrist", "parent_link": "panda_link8", "child_link": "ft_sensor_link",
                        "frame": "child", "noise_std": [0.1] * 6, "update_rate": 500,
                        "sensor_pose": {"position": [0, 0, 0.05], "rpy": [math.pi, 0, 0]}}, "scene.yaml")
    assert s.frame == "child" and s.update_rate == 500.0 and s.noise_std.shape == (6,)
    np.testing.assert_allclose(s.sensor_pose, SENSOR_IN_CHILD, atol=1e-15)
    assert spec_from_dict({"name": "a", "parent_link": "p", "child_link": "c"}, "x").frame == "sensor"


@pytest.mark.parametrize("data, words", [
    ({"name": "w", "parent_link": "p", "child_link": "c", "rate": 5, "noise": 1}, "unknown keys noise, rate"),
    ({"name": "w", "parent_link": "p"}, "missing child_link"),
    ({"name": "w", "parent_link": "p", "child_link": "c", "frame": "tool"}, "frame must be one of"),
    ({"name": "w", "parent_link": "p", "child_link": "c", "sensor_pose": {"xyz": [0, 0, 0]}}, "unknown keys xyz"),
    ([1, 2], "must be a mapping"),
])
def test_spec_from_dict_errors(data, words):
    with pytest.raises(ModelError) as info:
        spec_from_dict(data, "scene.yaml")
    assert str(info.value).startswith("scene.yaml: ") and words in str(info.value)
