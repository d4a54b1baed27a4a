"""Tests for cond_ros.sim.collision.colliders against independent analytic geometry."""
import types

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cond_ros.sim.collision import colliders as collision
from cond_ros.sim.model import ColliderType as CT

SIZES = {
    CT.PLANE: (0.0, 0.0, 0.0),
    CT.BOX: (0.3, 0.5, 0.2),
    CT.SPHERE: (0.4, 0.0, 0.0),
    CT.CAPSULE: (0.2, 0.5, 0.0),
    CT.CYLINDER: (0.3, 0.4, 0.0),
}
FD_H = 1e-7
KINK = 1e-3


# --------------------------------------------------------------------------
# Independent reference geometry (vectorised over local points q of shape (m, 3))
# --------------------------------------------------------------------------
def ref_sdf_local(ctype, size, q):
    """Reference SDF written directly from the geometric definition."""
    x, y, z = q[:, 0], q[:, 1], q[:, 2]
    if ctype == CT.PLANE:
        return z.copy()
    if ctype == CT.SPHERE:
        return np.linalg.norm(q, axis=1) - size[0]
    if ctype == CT.BOX:
        h = np.asarray(size)
        closest = np.clip(q, -h, h)
        outside = np.any(np.abs(q) > h, axis=1)
        d_out = np.linalg.norm(q - closest, axis=1)
        d_in = -np.min(h - np.abs(q), axis=1)
        return np.where(outside, d_out, d_in)
    if ctype == CT.CAPSULE:
        seg = np.zeros_like(q)
        seg[:, 2] = np.clip(z, -size[1], size[1])
        return np.linalg.norm(q - seg, axis=1) - size[0]
    if ctype == CT.CYLINDER:
        r, h = size[0], size[1]
        rho = np.hypot(x, y)
        az = np.abs(z)
        out = np.empty(len(q))
        for k in range(len(q)):
            if rho[k] <= r and az[k] <= h:
                out[k] = -min(r - rho[k], h - az[k])
            elif rho[k] <= r:
                out[k] = az[k] - h  # above/below a cap
            elif az[k] <= h:
                out[k] = rho[k] - r  # beside the mantle
            else:
                out[k] = np.hypot(rho[k] - r, az[k] - h)  # rim edge
        return out
    raise ValueError(ctype)


def near_kink_local(ctype, size, q):
    """Mask of points too close to a kink or medial surface for finite differences."""
    sd = ref_sdf_local(ctype, size, q)
    inside = sd < 0
    mask = np.abs(sd) < KINK
    if ctype == CT.SPHERE:
        mask |= np.linalg.norm(q, axis=1) < KINK
    elif ctype == CT.BOX:
        m = np.sort(np.asarray(size) - np.abs(q), axis=1)
        mask |= inside & ((m[:, 1] - m[:, 0] < KINK) | np.any(np.abs(q) < KINK, axis=1))
    elif ctype == CT.CAPSULE:
        mask |= inside & (sd + size[0] < KINK)
    elif ctype == CT.CYLINDER:
        rho = np.hypot(q[:, 0], q[:, 1])
        dr = size[0] - rho
        dz = size[1] - np.abs(q[:, 2])
        mask |= inside & ((np.abs(dr - dz) < KINK) | (rho < KINK) | (np.abs(q[:, 2]) < KINK))
    return mask


def random_pose(seed):
    """Random rotation (columns = local axes) and position."""
    rot = Rotation.random(random_state=seed).as_matrix()
    pos = np.random.default_rng(seed).uniform(-1.0, 1.0, 3)
    return pos, rot


def ref_sdf_world(ctype, size, pos, rot, p):
    """Reference SDF of world points ``p`` (m, 3)."""
    return ref_sdf_local(ctype, size, (p - pos) @ rot)


def module_sdf(ctype, size, pos, rot, p):
    """Evaluate the module's SDF and normal for each world point."""
    sd = np.empty(len(p))
    n = np.empty((len(p), 3))
    size = np.asarray(size, dtype=float)
    for k in range(len(p)):
        sd[k] = collision.collider_signed_distance(int(ctype), pos, rot, size, p[k], n[k])
    return sd, n


def sample_points(ctype, size, pos, rot, m, seed):
    """Random world points spread over a region twice the collider's extent."""
    ext = 2.0 * max(max(size), 0.25) + 0.1
    q = np.random.default_rng(seed + 100).uniform(-ext, ext, (m, 3))
    return q @ rot.T + pos, q


def make_colliders(entries):
    """Build the collider arrays from ``(type, pos, rot, size)`` tuples."""
    return types.SimpleNamespace(
        collider_type=np.array([int(e[0]) for e in entries], dtype=np.int64),
        collider_pos=np.array([e[1] for e in entries], dtype=float).reshape(-1, 3),
        collider_rot=np.array([e[2] for e in entries], dtype=float).reshape(-1, 3, 3),
        collider_size=np.array([e[3] for e in entries], dtype=float).reshape(-1, 3),
    )


# --------------------------------------------------------------------------
# Signed distance
# --------------------------------------------------------------------------
@pytest.mark.parametrize("ctype", list(SIZES), ids=lambda t: t.name)
def test_sdf_matches_reference(ctype):
    """SDF equals the independent reference at random points around a random pose."""
    pos, rot = random_pose(int(ctype))
    size = SIZES[ctype]
    p, _ = sample_points(ctype, size, pos, rot, 2000, int(ctype))
    sd, n = module_sdf(ctype, size, pos, rot, p)
    ref = ref_sdf_world(ctype, size, pos, rot, p)
    np.testing.assert_allclose(sd, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, rtol=0, atol=1e-12)
    # Both signs must be exercised (the plane and every solid straddle the samples).
    assert np.any(sd < 0) and np.any(sd > 0)


@pytest.mark.parametrize("ctype", list(SIZES), ids=lambda t: t.name)
def test_normal_is_sdf_gradient(ctype):
    """Normal equals the central-difference gradient of the reference SDF away from kinks."""
    pos, rot = random_pose(10 + int(ctype))
    size = SIZES[ctype]
    p, q = sample_points(ctype, size, pos, rot, 2000, 10 + int(ctype))
    keep = ~near_kink_local(ctype, size, q)
    p = p[keep]
    assert len(p) > 1000
    _, n = module_sdf(ctype, size, pos, rot, p)
    grad = np.empty_like(p)
    for a in range(3):
        e = np.zeros(3)
        e[a] = FD_H
        grad[:, a] = (ref_sdf_world(ctype, size, pos, rot, p + e)
                      - ref_sdf_world(ctype, size, pos, rot, p - e)) / (2 * FD_H)
    np.testing.assert_allclose(n, grad, rtol=0, atol=1e-5)


@pytest.mark.parametrize("ctype", list(SIZES), ids=lambda t: t.name)
def test_projection_lands_on_surface(ctype):
    """For outside points, p - sd * n lies on the surface (reference sd ~ 0)."""
    pos, rot = random_pose(20 + int(ctype))
    size = SIZES[ctype]
    p, _ = sample_points(ctype, size, pos, rot, 2000, 20 + int(ctype))
    sd, n = module_sdf(ctype, size, pos, rot, p)
    out = sd > 0
    assert out.sum() > 200
    proj = p[out] - sd[out, None] * n[out]
    np.testing.assert_allclose(ref_sdf_world(ctype, size, pos, rot, proj), 0.0,
                               rtol=0, atol=1e-12)


def test_degenerate_normals_use_fallback_axes():
    """Centre of a sphere gives local +z; a capsule/cylinder axis gives local +x."""
    pos, rot = random_pose(30)
    n = np.empty(3)
    sd = collision.collider_signed_distance(int(CT.SPHERE), pos, rot,
                                            np.array([0.4, 0, 0]), pos.copy(), n)
    assert sd == pytest.approx(-0.4)
    np.testing.assert_allclose(n, rot[:, 2], atol=1e-15)
    # Off-centre axis points are exact only without rotation round-off.
    for ctype in (CT.CAPSULE, CT.CYLINDER):
        for frame_pos, frame_rot, p in ((pos, rot, pos.copy()),
                                        (np.zeros(3), np.eye(3), np.array([0, 0, 0.1]))):
            sd = collision.collider_signed_distance(int(ctype), frame_pos, frame_rot,
                                                    np.array([0.3, 0.5, 0]), p, n)
            assert sd == pytest.approx(-0.3)
            np.testing.assert_allclose(n, frame_rot[:, 0], atol=1e-15)


def test_box_tie_breaks_on_lowest_axis():
    """At the centre of a cube all faces are equidistant: the +x face (local) wins."""
    pos, rot = random_pose(31)
    n = np.empty(3)
    sd = collision.collider_signed_distance(int(CT.BOX), pos, rot,
                                            np.array([0.2, 0.2, 0.2]), pos.copy(), n)
    assert sd == pytest.approx(-0.2)
    np.testing.assert_allclose(n, rot[:, 0], atol=1e-15)


def test_none_collider_is_never_hit():
    """A NONE collider is infinitely far away."""
    n = np.empty(3)
    sd = collision.collider_signed_distance(int(CT.NONE), np.zeros(3), np.eye(3),
                                            np.zeros(3), np.zeros(3), n)
    assert sd == np.inf


# --------------------------------------------------------------------------
# Contact frame
# --------------------------------------------------------------------------
def frame_of(n, rot):
    """Call the module's contact_frame."""
    f = np.empty((3, 3))
    collision.contact_frame(np.asarray(n, dtype=float), rot, f)
    return f


def test_contact_frame_is_rotation_following_local_x():
    """Rows [n; t1; t2] are orthonormal, det +1, and t1 is local x projected on the tangent plane."""
    rng = np.random.default_rng(40)
    for seed in range(50):
        rot = Rotation.random(random_state=seed).as_matrix()
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        f = frame_of(n, rot)
        np.testing.assert_allclose(f @ f.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(f) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_array_equal(f[0], n)
        x = rot[:, 0]
        t1 = x - np.dot(x, n) * n
        np.testing.assert_allclose(f[1], t1 / np.linalg.norm(t1), atol=1e-12)
        np.testing.assert_allclose(f[2], np.cross(n, f[1]), atol=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_contact_frame_falls_back_to_local_y(sign):
    """When n is parallel to local x, t1 is local y."""
    rot = Rotation.random(random_state=41).as_matrix()
    n = sign * rot[:, 0]
    f = frame_of(n, rot)
    np.testing.assert_allclose(f[1], rot[:, 1], atol=1e-12)
    np.testing.assert_allclose(f @ f.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(f) == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------
def test_grid_above_rotated_plane():
    """Exactly the nodes within the margin of a rotated plane are reported, in point order."""
    pos, rot = random_pose(50)
    normal = rot[:, 2]
    radius, margin = 0.01, 0.02
    u, v, h = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 4),
                          np.linspace(-0.015, 0.1, 12), indexing="ij")
    heights = h.ravel()
    points = (pos + u.ravel()[:, None] * rot[:, 0] + v.ravel()[:, None] * rot[:, 1]
              + heights[:, None] * normal)
    radii = np.full(len(points), radius)
    col = make_colliders([(CT.PLANE, pos, rot, (0, 0, 0))])
    res = collision.detect_point_contacts(points, radii, np.zeros_like(points), col,
                                          margin, 0.01)
    expected = np.flatnonzero(heights - radius < margin)
    assert 0 < len(expected) < len(points)
    assert res.count == len(expected)
    np.testing.assert_array_equal(res.point_index, expected)
    np.testing.assert_array_equal(res.collider, 0)
    np.testing.assert_allclose(res.gap, heights[expected] - radius, atol=1e-12)
    np.testing.assert_allclose(res.normal, np.tile(normal, (res.count, 1)), atol=1e-12)
    np.testing.assert_allclose(res.position, points[expected] - radius * normal, atol=1e-12)
    for f in res.frame:
        np.testing.assert_allclose(f @ f.T, np.eye(3), atol=1e-12)
        np.testing.assert_allclose(f[0], normal, atol=1e-12)
        np.testing.assert_allclose(f[1], rot[:, 0], atol=1e-12)


def test_multiple_colliders_per_point():
    """Plane + sphere + box (+ capsule, cylinder) match a brute-force reference, ordered by (point, collider)."""
    entries = [
        (CT.PLANE, np.zeros(3), np.eye(3), (0, 0, 0)),
        (CT.SPHERE, (0.0, 0.0, 0.25), np.eye(3), (0.2, 0, 0)),
        (CT.BOX, (0.6, 0.0, 0.15), Rotation.random(random_state=1).as_matrix(), (0.2, 0.1, 0.15)),
        (CT.CAPSULE, (-0.6, 0.0, 0.2), Rotation.random(random_state=2).as_matrix(), (0.1, 0.2, 0)),
        (CT.CYLINDER, (0.0, 0.6, 0.2), Rotation.random(random_state=3).as_matrix(), (0.15, 0.2, 0)),
    ]
    col = make_colliders(entries)
    rng = np.random.default_rng(60)
    points = rng.uniform((-1, -0.5, -0.05), (1, 1, 0.6), (3000, 3))
    radii = rng.uniform(0.0, 0.03, len(points))
    margin = 0.01
    res = collision.detect_point_contacts(points, radii, np.zeros_like(points), col,
                                          margin, 0.01)
    gaps = np.stack([ref_sdf_world(t, s, np.asarray(p, float), np.asarray(r), points)
                     for t, p, r, s in entries], axis=1) - radii[:, None]
    hit_i, hit_c = np.nonzero(gaps < margin)  # row-major: point, then collider
    assert res.count == len(hit_i)
    np.testing.assert_array_equal(res.point_index, hit_i)
    np.testing.assert_array_equal(res.collider, hit_c)
    np.testing.assert_allclose(res.gap, gaps[hit_i, hit_c], atol=1e-12)
    # Points touching two colliders exist, so the per-point fan-out is exercised.
    assert np.any(np.bincount(hit_i) >= 2)
    assert set(hit_c) == set(range(len(entries)))
    np.testing.assert_allclose(res.position, points[hit_i] - radii[hit_i, None] * res.normal,
                               atol=1e-12)
    again = collision.detect_point_contacts(points, radii, np.zeros_like(points), col,
                                            margin, 0.01)
    for name in ("point_index", "collider", "position", "normal", "gap", "frame"):
        np.testing.assert_array_equal(getattr(again, name), getattr(res, name))


def test_the_threaded_two_pass_detection_equals_the_serial_one_pass_bit_for_bit():
    """Above PARALLEL_MIN_TESTS the contacts come from a threaded count and fill, below from one serial pass:
    the same contacts, order and bits either way."""
    from cond_ros.sim.collision.colliders import PARALLEL_MIN_TESTS, _point_contacts_one_pass

    entries = [(CT.PLANE, np.zeros(3), np.eye(3), (0, 0, 0)),
               (CT.CYLINDER, (0.0, 0.2, 0.2), Rotation.random(random_state=5).as_matrix(), (0.15, 0.2, 0))]
    col = make_colliders(entries)
    rng = np.random.default_rng(61)
    points = rng.uniform((-0.5, -0.5, -0.05), (0.5, 0.5, 0.5), (PARALLEL_MIN_TESTS // 2 + 500, 3))
    radii = rng.uniform(0.0, 0.03, len(points))
    velocities = rng.normal(0.0, 0.5, points.shape)
    threaded = collision.detect_point_contacts(points, radii, velocities, col, 0.01, 0.01)
    serial = _point_contacts_one_pass(points, radii, velocities, col.collider_type, col.collider_pos,
                                      col.collider_rot, col.collider_size, 0.01, 0.01)
    assert threaded.count > 1000
    for name, value in zip(("point_index", "collider", "position", "normal", "gap", "frame"), serial):
        np.testing.assert_array_equal(getattr(threaded, name), value)


@pytest.mark.parametrize("n_points,n_colliders", [(0, 1), (3, 0), (0, 0), (3, 1)])
def test_empty_results(n_points, n_colliders):
    """No points, no colliders, or nothing in range give count 0 with shaped empty arrays."""
    entries = [(CT.PLANE, np.zeros(3), np.eye(3), (0, 0, 0))][:n_colliders]
    col = make_colliders(entries)
    points = np.tile([0.0, 0.0, 5.0], (n_points, 1)).reshape(-1, 3)
    res = collision.detect_point_contacts(points, np.zeros(n_points), np.zeros((n_points, 3)),
                                          col, 0.01, 0.01)
    assert res.count == 0
    assert res.point_index.shape == (0,) and res.point_index.dtype == np.int64
    assert res.collider.shape == (0,) and res.collider.dtype == np.int64
    assert res.position.shape == (0, 3)
    assert res.normal.shape == (0, 3)
    assert res.gap.shape == (0,)
    assert res.frame.shape == (0, 3, 3)


@pytest.mark.parametrize("speed,reported", [(-0.3, True), (0.3, False), (0.0, False)])
def test_velocity_dependent_margin(speed, reported):
    """A node 8 mm above a plane (margin 5 mm, dt 10 ms) is caught only while approaching at 0.3 m/s."""
    pos, rot = random_pose(70)
    normal = rot[:, 2]
    points = (pos + 0.008 * normal)[None]
    col = make_colliders([(CT.PLANE, pos, rot, (0, 0, 0))])
    res = collision.detect_point_contacts(points, np.zeros(1), (speed * normal)[None], col,
                                          0.005, 0.01)
    assert res.count == int(reported)
    if reported:
        assert res.gap[0] == pytest.approx(0.008, abs=1e-12)
