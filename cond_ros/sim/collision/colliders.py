"""Static colliders and node-vs-volume contact detection.

Node-vs-volume detection tests *contact nodes* against static volumes: each
node is a point with a radius (a vertex, a sphere of a collision model, a
tool tip) and each static collider is an analytic solid (plane, box, sphere,
capsule, cylinder) described by a signed distance function (SDF). These are
the S-contacts of the COND paper: one side is a point, the other a volume
whose SDF gives both the gap and the contact normal in closed form.

Conventions (all lengths in [m], velocities in [m/s], times in [s]):

- ``sd`` is the signed distance from a point to a collider surface, negative
  inside the solid. The normal is the SDF gradient, pointing out of the
  collider, i.e. from the collider towards the node.
- ``gap = sd - radius``: positive means separated, negative means
  penetration.
- A candidate contact is kept when ``gap < margin + 2 * dt * max(0, -v_n)``
  so that a node approaching fast is caught one step early (speculative
  contact), while a receding node only uses the static margin.

Detection runs in two passes (count, then fill at prefix-sum offsets) so that
each point writes disjoint slots and the output is ordered by point, then by
collider index, independent of thread scheduling.
"""
import math
from dataclasses import dataclass

import numpy as np
from numba import prange

from ..jit import FLOAT, INDEX, kernel, leaf_kernel, parallel_kernel
from ..model import ColliderType

# Plain ints keep the kernels independent of numba's enum support and are
# immutable, so the on-disk cache cannot freeze a stale value.
_PLANE = int(ColliderType.PLANE)
_BOX = int(ColliderType.BOX)
_SPHERE = int(ColliderType.SPHERE)
_CAPSULE = int(ColliderType.CAPSULE)
_CYLINDER = int(ColliderType.CYLINDER)

# Below this length the projected local x axis is too ill-conditioned to
# define a tangent direction.
_TANGENT_EPS = 1e-6


# --------------------------------------------------------------------------
# Frame transforms
# --------------------------------------------------------------------------
# The helpers down to _point_vs_collider are leaf kernels: they run per point and collider (and per candidate
# pair in ``dynamic_contacts``), and reference counting their array arguments cost ~4x the arithmetic
# (the count pass on panda_cable: 46 us with it, 11 us without).
@leaf_kernel
def _to_local(pos, rot, px, py, pz):
    """Express world point ``p`` in the collider frame: ``rot.T @ (p - pos)``."""
    dx = px - pos[0]
    dy = py - pos[1]
    dz = pz - pos[2]
    return (rot[0, 0] * dx + rot[1, 0] * dy + rot[2, 0] * dz,
            rot[0, 1] * dx + rot[1, 1] * dy + rot[2, 1] * dz,
            rot[0, 2] * dx + rot[1, 2] * dy + rot[2, 2] * dz)


@leaf_kernel
def _to_world_dir(rot, x, y, z):
    """Rotate a collider-frame direction into the world frame: ``rot @ v``."""
    return (rot[0, 0] * x + rot[0, 1] * y + rot[0, 2] * z,
            rot[1, 0] * x + rot[1, 1] * y + rot[1, 2] * z,
            rot[2, 0] * x + rot[2, 1] * y + rot[2, 2] * z)


# --------------------------------------------------------------------------
# Local-frame SDFs; each returns (sd, nx, ny, nz) with a unit normal.
# --------------------------------------------------------------------------
@leaf_kernel
def _sdf_ball(radius, x, y, z, fx, fy, fz):
    """Ball of ``radius`` around the origin; (fx, fy, fz) is the normal at the exact centre."""
    d = math.sqrt(x * x + y * y + z * z)
    if d > 0.0:
        return d - radius, x / d, y / d, z / d
    return -radius, fx, fy, fz


@leaf_kernel
def _sdf_sphere(size, x, y, z):
    """Sphere of radius ``size[0]`` centred at the origin."""
    return _sdf_ball(size[0], x, y, z, 0.0, 0.0, 1.0)


@leaf_kernel
def _sdf_box(size, x, y, z):
    """Box with half extents ``size``; exact inside and outside."""
    qx = abs(x) - size[0]
    qy = abs(y) - size[1]
    qz = abs(z) - size[2]
    if qx > 0.0 or qy > 0.0 or qz > 0.0:
        # Outside, the gradient is the direction from the closest point, which
        # is the point clamped to the box.
        dx = x - min(max(x, -size[0]), size[0])
        dy = y - min(max(y, -size[1]), size[1])
        dz = z - min(max(z, -size[2]), size[2])
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        return d, dx / d, dy / d, dz / d
    # Inside: nearest face wins; strict comparisons keep the lowest axis on ties.
    axis = 0
    sd = qx
    if qy > sd:
        axis = 1
        sd = qy
    if qz > sd:
        axis = 2
        sd = qz
    if axis == 0:
        return sd, 1.0 if x >= 0.0 else -1.0, 0.0, 0.0
    if axis == 1:
        return sd, 0.0, 1.0 if y >= 0.0 else -1.0, 0.0
    return sd, 0.0, 0.0, 1.0 if z >= 0.0 else -1.0


@leaf_kernel
def _sdf_capsule(size, x, y, z):
    """Capsule of radius ``size[0]`` around the z segment ``[-size[1], size[1]]``."""
    # a ball around the closest point of the segment
    return _sdf_ball(size[0], x, y, z - min(max(z, -size[1]), size[1]), 1.0, 0.0, 0.0)


@leaf_kernel
def _sdf_cylinder(size, x, y, z):
    """Solid cylinder of radius ``size[0]`` and half height ``size[1]`` along z."""
    rho = math.sqrt(x * x + y * y)
    if rho > 0.0:
        ux = x / rho
        uy = y / rho
    else:
        ux = 1.0
        uy = 0.0
    sz = 1.0 if z >= 0.0 else -1.0
    dr = rho - size[0]
    dz = abs(z) - size[1]
    if dr > 0.0 or dz > 0.0:
        # Outside: distance in the (radial, z) half plane to the rectangle
        # covers the mantle, the caps and the rim edges alike.
        a = max(dr, 0.0)
        b = max(dz, 0.0)
        d = math.sqrt(a * a + b * b)
        return d, a * ux / d, a * uy / d, b * sz / d
    # Inside: nearest of mantle and cap; the mantle wins ties.
    if dr >= dz:
        return dr, ux, uy, 0.0
    return dz, 0.0, 0.0, sz


@leaf_kernel
def _sdf_local(ctype, size, x, y, z):
    """Dispatch on the collider type; unknown types never produce contacts."""
    if ctype == _PLANE:
        return z, 0.0, 0.0, 1.0
    if ctype == _BOX:
        return _sdf_box(size, x, y, z)
    if ctype == _SPHERE:
        return _sdf_sphere(size, x, y, z)
    if ctype == _CAPSULE:
        return _sdf_capsule(size, x, y, z)
    if ctype == _CYLINDER:
        return _sdf_cylinder(size, x, y, z)
    return np.inf, 0.0, 0.0, 1.0


@leaf_kernel
def _sdf_world(ctype, pos, rot, size, px, py, pz):
    """World-frame SDF of one collider as a ``(sd, nx, ny, nz)`` tuple."""
    x, y, z = _to_local(pos, rot, px, py, pz)
    sd, nx, ny, nz = _sdf_local(ctype, size, x, y, z)
    wx, wy, wz = _to_world_dir(rot, nx, ny, nz)
    return sd, wx, wy, wz


# --------------------------------------------------------------------------
# Public kernels
# --------------------------------------------------------------------------
@leaf_kernel
def collider_signed_distance(ctype, pos, rot, size, p, out_normal):
    """Signed distance from a world point to a static collider surface.

    Args:
        ctype: Collider type, a :class:`ColliderType` value.
        pos: (3,) world position of the collider frame origin [m].
        rot: (3, 3) rotation collider->world (columns are local axes).
        size: (3,) shape parameters [m], see :class:`ColliderType`.
        p: (3,) world query point [m].
        out_normal: (3,) receives the outward unit normal (SDF gradient) in
            world coordinates. Where the gradient is undefined (sphere centre,
            capsule/cylinder axis) a fixed local axis is used: +z for the
            sphere, +x for capsule and cylinder.

    Returns:
        Signed distance [m], negative inside; ``inf`` for ``NONE``.
    """
    sd, nx, ny, nz = _sdf_world(ctype, pos, rot, size, p[0], p[1], p[2])
    out_normal[0] = nx
    out_normal[1] = ny
    out_normal[2] = nz
    return sd


@leaf_kernel
def contact_frame(normal, collider_rot, out_frame):
    """Build the contact frame with rows ``[n; t1; t2]``.

    ``t1`` follows the collider's local x axis projected onto the tangent
    plane, so anisotropic friction (mu1 along t1, mu2 along t2) stays attached
    to the collider; if x is (nearly) parallel to ``n`` local y is used.

    Args:
        normal: (3,) unit contact normal (world).
        collider_rot: (3, 3) rotation collider->world.
        out_frame: (3, 3) receives the proper rotation world->contact, so
            ``out_frame @ v`` gives ``(v_n, v_t1, v_t2)``.
    """
    nx = normal[0]
    ny = normal[1]
    nz = normal[2]
    axis = 0
    for _ in range(2):
        ax = collider_rot[0, axis]
        ay = collider_rot[1, axis]
        az = collider_rot[2, axis]
        dn = ax * nx + ay * ny + az * nz
        tx = ax - dn * nx
        ty = ay - dn * ny
        tz = az - dn * nz
        tl = math.sqrt(tx * tx + ty * ty + tz * tz)
        if tl >= _TANGENT_EPS:
            break
        axis = 1
    tx /= tl
    ty /= tl
    tz /= tl
    out_frame[0, 0] = nx
    out_frame[0, 1] = ny
    out_frame[0, 2] = nz
    out_frame[1, 0] = tx
    out_frame[1, 1] = ty
    out_frame[1, 2] = tz
    # t2 = n x t1 makes det([n; t1; t2]) = +1.
    out_frame[2, 0] = ny * tz - nz * ty
    out_frame[2, 1] = nz * tx - nx * tz
    out_frame[2, 2] = nx * ty - ny * tx


@leaf_kernel
def _point_vs_collider(points, radii, velocities, collider_type, collider_pos,
                       collider_rot, collider_size, margin, dt, i, c):
    """Test point ``i`` against collider ``c``: ``(hit, gap, nx, ny, nz)``.

    Shared by both passes so that count and fill agree bit for bit.
    """
    sd, nx, ny, nz = _sdf_world(collider_type[c], collider_pos[c], collider_rot[c],
                                collider_size[c], points[i, 0], points[i, 1],
                                points[i, 2])
    gap = sd - radii[i]
    vn = velocities[i, 0] * nx + velocities[i, 1] * ny + velocities[i, 2] * nz
    hit = gap < margin + 2.0 * dt * max(0.0, -vn)
    return hit, gap, nx, ny, nz


def _count_point_contacts(points, radii, velocities, collider_type, collider_pos,
                          collider_rot, collider_size, margin, dt, out_count):
    """First pass: number of colliders each point touches (or soon will).

    Args:
        points: (n, 3) world node positions [m].
        radii: (n,) node radii [m], >= 0.
        velocities: (n, 3) world node velocities [m/s].
        collider_type: (nc,) int64 :class:`ColliderType` values.
        collider_pos: (nc, 3) collider origins [m].
        collider_rot: (nc, 3, 3) rotations collider->world.
        collider_size: (nc, 3) shape parameters [m].
        margin: Static detection margin [m].
        dt: Time step [s], widens the margin for approaching nodes.
        out_count: (n,) int64, receives the contact count per point.
    """
    for i in prange(points.shape[0]):
        n = 0
        for c in range(collider_type.shape[0]):
            if _point_vs_collider(points, radii, velocities, collider_type,
                                  collider_pos, collider_rot, collider_size,
                                  margin, dt, i, c)[0]:
                n += 1
        out_count[i] = n


@leaf_kernel
def _write_point_contact(k, i, c, gap, nx, ny, nz, points, radii, collider_rot, out_point_index, out_collider,
                         out_position, out_normal, out_gap, out_frame):
    """Row k of the point contact arrays (:func:`_fill_point_contacts`' outputs): point i's contact with collider
    c, from the test's gap and normal (n_x, n_y, n_z)."""
    out_point_index[k] = i
    out_collider[k] = c
    out_normal[k, 0] = nx
    out_normal[k, 1] = ny
    out_normal[k, 2] = nz
    out_position[k, 0] = points[i, 0] - radii[i] * nx
    out_position[k, 1] = points[i, 1] - radii[i] * ny
    out_position[k, 2] = points[i, 2] - radii[i] * nz
    out_gap[k] = gap
    contact_frame(out_normal[k], collider_rot[c], out_frame[k])


def _fill_point_contacts(points, radii, velocities, collider_type, collider_pos,
                         collider_rot, collider_size, margin, dt, offsets,
                         out_point_index, out_collider, out_position, out_normal,
                         out_gap, out_frame):
    """Second pass: write the contacts of point ``i`` from slot ``offsets[i]``.

    Inputs as in :func:`_count_point_contacts`; ``offsets`` (n,) is the
    exclusive prefix sum of its counts. Within a point, contacts appear in
    increasing collider index order.

    Args:
        out_point_index: (m,) int64 node index.
        out_collider: (m,) int64 collider index.
        out_position: (m, 3) contact point on the node surface,
            ``p - radius * n`` [m].
        out_normal: (m, 3) unit normal from the collider towards the node.
        out_gap: (m,) ``sd - radius`` [m], negative = penetration.
        out_frame: (m, 3, 3) contact frames, see :func:`contact_frame`.
    """
    for i in prange(points.shape[0]):
        k = offsets[i]
        for c in range(collider_type.shape[0]):
            hit, gap, nx, ny, nz = _point_vs_collider(
                points, radii, velocities, collider_type, collider_pos,
                collider_rot, collider_size, margin, dt, i, c)
            if not hit:
                continue
            _write_point_contact(k, i, c, gap, nx, ny, nz, points, radii, collider_rot, out_point_index,
                                 out_collider, out_position, out_normal, out_gap, out_frame)
            k += 1


count_point_contacts_parallel = parallel_kernel(_count_point_contacts)
fill_point_contacts_parallel = parallel_kernel(_fill_point_contacts)
# below this many point-collider tests, thread start-up costs more than the tests: panda_cable's 410 points
# against 2 colliders took ~40 us a pass threaded on a loaded 2-core machine, ~11 us serial
PARALLEL_MIN_TESTS = 20000


# --------------------------------------------------------------------------
# Python wrapper
# --------------------------------------------------------------------------
@dataclass
class PointContacts:
    """Node-vs-volume contacts, ordered by point then collider index.

    Attributes:
        count: Number of contacts ``m``.
        point_index: (m,) int64 node index.
        collider: (m,) int64 collider index.
        position: (m, 3) contact point on the node surface [m].
        normal: (m, 3) unit normal from the collider towards the node.
        gap: (m,) signed gap [m], negative = penetration.
        frame: (m, 3, 3) contact frames with rows ``[n; t1; t2]``.
    """

    count: int
    point_index: np.ndarray
    collider: np.ndarray
    position: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    frame: np.ndarray

    @classmethod
    def empty(cls, m=0):
        """Allocate uninitialised arrays for ``m`` contacts."""
        return cls(count=int(m),
                   point_index=np.empty(m, dtype=INDEX),
                   collider=np.empty(m, dtype=INDEX),
                   position=np.empty((m, 3), dtype=FLOAT),
                   normal=np.empty((m, 3), dtype=FLOAT),
                   gap=np.empty(m, dtype=FLOAT),
                   frame=np.empty((m, 3, 3), dtype=FLOAT))


def detect_point_contacts(points, radii, velocities, colliders, margin, dt):
    """Detect all node-vs-volume contacts (count, prefix sum, fill).

    Args:
        points: (n, 3) world node positions [m].
        radii: (n,) node radii [m].
        velocities: (n, 3) world node velocities [m/s].
        colliders: Object with ``collider_type``, ``collider_pos``,
            ``collider_rot`` and ``collider_size`` arrays.
        margin: Static detection margin [m].
        dt: Time step [s].

    Returns:
        A :class:`PointContacts` with arrays sized exactly ``count``.
    """
    points = np.ascontiguousarray(points, dtype=FLOAT).reshape(-1, 3)
    n = points.shape[0]
    radii = np.ascontiguousarray(radii, dtype=FLOAT).reshape(n)
    velocities = np.ascontiguousarray(velocities, dtype=FLOAT).reshape(n, 3)
    ctype = np.ascontiguousarray(colliders.collider_type, dtype=INDEX).reshape(-1)
    nc = ctype.shape[0]
    cpos = np.ascontiguousarray(colliders.collider_pos, dtype=FLOAT).reshape(nc, 3)
    crot = np.ascontiguousarray(colliders.collider_rot, dtype=FLOAT).reshape(nc, 3, 3)
    csize = np.ascontiguousarray(colliders.collider_size, dtype=FLOAT).reshape(nc, 3)
    if n == 0 or nc == 0:
        return PointContacts.empty()

    found = _point_contacts(points, radii, velocities, ctype, cpos, crot, csize, float(margin), float(dt))
    return PointContacts(len(found[0]), *found)


@kernel
def _contact_arrays(total):
    """The (point index, collider, position, normal, gap, frame) arrays of ``total`` point contacts, unset."""
    return (np.empty(total, np.int64), np.empty(total, np.int64), np.empty((total, 3)), np.empty((total, 3)),
            np.empty(total), np.empty((total, 3, 3)))


@kernel
def _point_contacts_one_pass(points, radii, velocities, collider_type, collider_pos, collider_rot, collider_size,
                             margin, dt):
    """:func:`_point_contacts` serially in one pass over the tests, each hit's (point, collider, gap, normal) kept
    for the fill: the count pass repeated every test (~15 us a step at panda_cable's 730 points); the same
    contacts, in the same order, with the same bits."""
    n, nc = points.shape[0], collider_type.shape[0]
    hit_index = np.empty((n * nc, 2), np.int64)
    hit_value = np.empty((n * nc, 4))
    total = 0
    for i in range(n):
        for c in range(nc):
            hit, gap, nx, ny, nz = _point_vs_collider(points, radii, velocities, collider_type, collider_pos,
                                                      collider_rot, collider_size, margin, dt, i, c)
            if hit:
                hit_index[total, 0], hit_index[total, 1] = i, c
                hit_value[total, 0], hit_value[total, 1], hit_value[total, 2], hit_value[total, 3] = gap, nx, ny, nz
                total += 1
    point_index, collider, position, normal, gap, frame = _contact_arrays(total)
    for k in range(total):
        _write_point_contact(k, hit_index[k, 0], hit_index[k, 1], hit_value[k, 0], hit_value[k, 1], hit_value[k, 2],
                             hit_value[k, 3], points, radii, collider_rot, point_index, collider, position, normal,
                             gap, frame)
    return point_index, collider, position, normal, gap, frame


@kernel
def _point_contacts(points, radii, velocities, collider_type, collider_pos, collider_rot, collider_size, margin, dt):
    """Count, prefix sum and fill in one call: (point index, collider, position, normal, gap, frame) arrays,
    threaded from ``PARALLEL_MIN_TESTS`` tests, else :func:`_point_contacts_one_pass` (identical results). One
    kernel: the two passes called from Python, with their arrays made there, cost ~10 us more a step."""
    n = points.shape[0]
    if n * collider_type.shape[0] < PARALLEL_MIN_TESTS:
        return _point_contacts_one_pass(points, radii, velocities, collider_type, collider_pos, collider_rot,
                                        collider_size, margin, dt)
    counts = np.empty(n, np.int64)
    count_point_contacts_parallel(points, radii, velocities, collider_type, collider_pos, collider_rot, collider_size,
                                  margin, dt, counts)
    offsets = np.zeros(n, np.int64)
    for i in range(1, n):
        offsets[i] = offsets[i - 1] + counts[i - 1]
    total = offsets[n - 1] + counts[n - 1]
    point_index, collider, position, normal, gap, frame = _contact_arrays(total)
    if total:
        fill_point_contacts_parallel(points, radii, velocities, collider_type, collider_pos, collider_rot,
                                     collider_size, margin, dt, offsets, point_index, collider, position, normal, gap,
                                     frame)
    return point_index, collider, position, normal, gap, frame
