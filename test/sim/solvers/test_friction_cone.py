"""ProjectFC of Alg. 2 (eq. 26): the strict, proximal and ellipse projection kernels.

Every expectation comes from an independent reference in ``test/reference.py``
(closed-form cone geometry, clarabel, SLSQP) or from a property that any
Euclidean projection must have (the variational inequality / Moreau
decomposition), never from the kernels' own output.
"""
import pathlib
import sys

import numpy as np
import pytest

from cond_ros.sim.solvers.friction_cone import (PROJECTION_PROXIMAL, PROJECTION_STRICT, project_cone,
                                                project_ellipse, project_proximal, project_strict,
                                                proximal_jacobian, strict_jacobian)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # test/, home of reference.py
import reference as ref  # noqa: E402

#: closed-form reference vs kernel, relative to max(1, |input|)
CLOSED_FORM_TOL = 1e-12
#: clarabel (interior point, no polish) vs kernel, relative to max(1, |input|)
CLARABEL_PROJECTION_TOL = 1e-7
#: ellipse projection vs the SLSQP + boundary-root reference, relative to the larger semi-axis
ELLIPSE_TOL = 1e-9
#: how far outside a set a projected point may lie, relative (cone: to |lambda|, ellipse: the constraint value)
FEASIBILITY_TOL = 1e-12
#: slack in variational-inequality / complementarity checks, relative to |input|^2
VI_TOL = 1e-10

FRICTIONS = (0.0, 0.05, 0.3, 1.0, 1.5, 10.0)


def _points(rng, count):
    """Random 3-vectors over six decades of scale, plus special points (axis, boundary, polar)."""
    pts = rng.normal(size=(count, 3)) * 10.0 ** rng.uniform(-3, 3, (count, 1))
    special = [(1.0, 0.0, 0.0), (2.0, 1e-3, 0.0), (-1.0, 0.5, -0.5), (0.0, 1.0, 0.0), (0.0, 0.0, 0.0),
               (1.0, 1.0, 1.0), (-3.0, 1.0, 2.0), (1e-12, 1.0, 0.0), (5.0, -2.0, 7.0)]
    return np.vstack([pts, special])


def _in_isotropic_cone(x, mu, tol):
    return x[0] >= -tol and np.hypot(x[1], x[2]) <= mu * x[0] + tol


# ------------------------------------------------------------------ proximal
@pytest.mark.parametrize("mu", FRICTIONS)
def test_proximal_matches_closed_form_cone_projection(mu):
    """project_proximal is the Euclidean projection onto ||l_t|| <= mu l_n (the textbook closed form).

    mu = 0 with an exactly-zero tangential part and l_n < 0 has its own test below.
    """
    rng = np.random.default_rng(10 + int(mu * 100))
    for p in _points(rng, 400):
        if mu == 0.0 and p[1] == 0.0 and p[2] == 0.0 and p[0] < 0.0:
            continue
        got = np.array(project_proximal(*p, mu))
        want = ref.project_isotropic_cone(p, mu)
        np.testing.assert_allclose(got, want, rtol=0, atol=CLOSED_FORM_TOL * max(1.0, np.linalg.norm(p)),
                                   err_msg=f"p={p!r}, mu={mu}")


@pytest.mark.parametrize("mu", [m for m in FRICTIONS if m > 0])
def test_proximal_matches_clarabel_projection(mu):
    """project_proximal agrees with a numeric projection (min ||y - p||^2, y in the SOC) by clarabel."""
    rng = np.random.default_rng(20 + int(mu * 100))
    for p in _points(rng, 25):
        got = np.array(project_proximal(*p, mu))
        want = ref.project_cone_qp(p, mu, mu)
        np.testing.assert_allclose(got, want, rtol=0, atol=CLARABEL_PROJECTION_TOL * max(1.0, np.linalg.norm(p)),
                                   err_msg=f"p={p!r}, mu={mu}")


@pytest.mark.parametrize("mu", FRICTIONS)
def test_proximal_satisfies_projection_variational_inequality(mu):
    """y = P(p) lies in the cone K, (p - y) . (z - y) <= 0 for every z in K, and P is idempotent and
    firmly non-expansive. For a cone this is the Moreau decomposition: p - y in the polar cone
    {mu ||r_t|| <= -r_n} and y . (p - y) = 0.
    """
    rng = np.random.default_rng(30 + int(mu * 100))
    pts = [p for p in _points(rng, 300) if not (mu == 0.0 and p[1] == 0.0 and p[2] == 0.0 and p[0] < 0.0)]
    # random members of K: l_n >= 0 and a tangential part inside the disk of radius mu l_n
    zn = 10.0 ** rng.uniform(-3, 3, 200)
    ang = rng.uniform(0, 2 * np.pi, 200)
    rad = mu * zn * np.sqrt(rng.uniform(0, 1, 200))
    members = np.column_stack([zn, rad * np.cos(ang), rad * np.sin(ang)])
    images = []
    for p in pts:
        scale = max(1.0, np.linalg.norm(p))
        y = np.array(project_proximal(*p, mu))
        images.append(y)
        r = p - y
        assert _in_isotropic_cone(y, mu, FEASIBILITY_TOL * scale), (p, y)
        assert mu * np.hypot(r[1], r[2]) <= -r[0] + FEASIBILITY_TOL * scale, (p, y)
        assert abs(y @ r) <= VI_TOL * scale**2, (p, y)
        assert np.max((members - y) @ r) <= VI_TOL * scale * (scale + np.abs(members).max()), (p, y)
        np.testing.assert_allclose(project_proximal(*y, mu), y, rtol=0, atol=FEASIBILITY_TOL * scale)
    images = np.array(images)
    pts = np.array(pts)
    for i in rng.integers(0, len(pts), (200, 2)):
        dy = images[i[0]] - images[i[1]]
        dp = pts[i[0]] - pts[i[1]]
        assert dy @ dy <= dy @ dp + VI_TOL * max(1.0, dp @ dp)


def test_proximal_frictionless_negative_normal_projects_to_zero():
    """With mu = 0 the cone is the ray {l_t = 0, l_n >= 0}: a pulling normal force must project to 0."""
    np.testing.assert_array_equal(project_proximal(-1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


# ------------------------------------------------------------------ strict
@pytest.mark.parametrize("mu", FRICTIONS)
def test_strict_isotropic_is_clamp_then_disk_projection(mu):
    """Isotropic strict operator: l_n = max(l_n*, 0), then l_t* projected onto the disk of radius mu l_n."""
    rng = np.random.default_rng(40 + int(mu * 100))
    for p in _points(rng, 400):
        got = np.array(project_strict(*p, mu, mu))
        want = ref.project_strict_reference(p, mu, mu) if mu > 0 else ref.project_strict_reference(p, 0.0, 0.0)
        np.testing.assert_allclose(got, want, rtol=0, atol=CLOSED_FORM_TOL * max(1.0, np.linalg.norm(p)),
                                   err_msg=f"p={p!r}, mu={mu}")


@pytest.mark.parametrize("mu1, mu2", [(0.3, 0.6), (1.0, 0.01), (0.01, 1.0), (1.5, 0.2), (0.5, 0.0), (0.0, 0.7),
                                      (0.0, 0.0)])
def test_strict_anisotropic_matches_reference(mu1, mu2):
    """Anisotropic strict operator (Prop. 6): clamp l_n, then the Euclidean projection of l_t onto the
    ellipse (t1/(mu1 l_n))^2 + (t2/(mu2 l_n))^2 <= 1 (a segment when one mu is 0), vs SLSQP."""
    rng = np.random.default_rng(50 + int(100 * mu1 + 10 * mu2))
    for p in _points(rng, 120):
        got = np.array(project_strict(*p, mu1, mu2))
        want = ref.project_strict_reference(p, mu1, mu2)
        scale = max(1.0, np.linalg.norm(p))
        np.testing.assert_allclose(got, want, rtol=0, atol=ELLIPSE_TOL * scale, err_msg=f"p={p!r}")


def test_strict_anisotropic_branch_is_continuous_with_isotropic_branch():
    """mu2 -> mu1 through the ellipse code path gives the disk answer of the isotropic branch."""
    rng = np.random.default_rng(60)
    for p in _points(rng, 200):
        mu = rng.uniform(0.05, 1.5)
        iso = np.array(project_strict(*p, mu, mu))
        aniso = np.array(project_strict(*p, mu, mu * (1.0 + 1e-12)))
        np.testing.assert_allclose(aniso, iso, rtol=0, atol=ELLIPSE_TOL * max(1.0, np.linalg.norm(p)))


def test_project_cone_dispatches_on_mode():
    """project_cone(PROJECTION_PROXIMAL, ...) is the proximal operator (isotropic, mu1) and
    project_cone(PROJECTION_STRICT, ...) the strict one."""
    rng = np.random.default_rng(70)
    for p in _points(rng, 50):
        mu1, mu2 = rng.uniform(0.1, 1.0, 2)
        np.testing.assert_allclose(project_cone(PROJECTION_PROXIMAL, *p, mu1, mu1),
                                   ref.project_isotropic_cone(p, mu1), rtol=0,
                                   atol=CLOSED_FORM_TOL * max(1.0, np.linalg.norm(p)))
        np.testing.assert_allclose(project_cone(PROJECTION_STRICT, *p, mu1, mu2),
                                   ref.project_strict_reference(p, mu1, mu2), rtol=0,
                                   atol=ELLIPSE_TOL * max(1.0, np.linalg.norm(p)))


# ------------------------------------------------------------------ ellipse
def _ellipses(rng, count):
    """Semi-axes over three decades, a third of them with a/b = 100 and a third with b/a = 100."""
    out = []
    for k in range(count):
        a, b = 10.0 ** rng.uniform(-2, 1, 2)
        if k % 3 == 0:
            b = a / 100.0
        elif k % 3 == 1:
            a = b / 100.0
        out.append((a, b))
    return out


def test_project_ellipse_matches_slsqp_reference():
    """project_ellipse agrees with SLSQP (+ boundary root polish) on random points, including very
    eccentric ellipses (axis ratio 100 either way) and points far outside, and lands on the boundary."""
    rng = np.random.default_rng(80)
    for a, b in _ellipses(rng, 300):
        p = rng.normal(size=2) * 10.0 ** rng.uniform(-2, 2)
        got = np.array(project_ellipse(p[0], p[1], a, b))
        want = ref.project_ellipse_reference(p, a, b)
        np.testing.assert_allclose(got, want, rtol=0, atol=ELLIPSE_TOL * max(a, b), err_msg=f"p={p!r}, a={a}, b={b}")
        assert (got[0] / a) ** 2 + (got[1] / b) ** 2 <= 1.0 + FEASIBILITY_TOL


def test_project_ellipse_leaves_inside_points_unchanged():
    """A point inside (or on) the ellipse is its own projection, bit for bit."""
    rng = np.random.default_rng(90)
    for a, b in _ellipses(rng, 200):
        ang, rad = rng.uniform(0, 2 * np.pi), np.sqrt(rng.uniform(0, 1))
        p = (rad * a * np.cos(ang), rad * b * np.sin(ang))
        if (p[0] / a) ** 2 + (p[1] / b) ** 2 > 1.0:
            continue
        assert project_ellipse(p[0], p[1], a, b) == p
    assert project_ellipse(0.0, 0.0, 1.0, 0.01) == (0.0, 0.0)


@pytest.mark.parametrize("a, b", [(0.0, 0.5), (0.7, 0.0), (0.0, 0.0)])
def test_project_ellipse_degenerate_axes(a, b):
    """A zero semi-axis makes the ellipse a segment on the other axis (or the origin): the projection
    clamps that coordinate to [-half-length, half-length] and zeroes the other."""
    rng = np.random.default_rng(100)
    for p in rng.normal(size=(200, 2)) * 2.0:
        got = project_ellipse(p[0], p[1], a, b)
        want = (float(np.clip(p[0], -a, a)), float(np.clip(p[1], -b, b)))
        np.testing.assert_allclose(got, want, rtol=0, atol=0)


def test_project_ellipse_satisfies_variational_inequality():
    """y = P(p) satisfies (p - y) . (z - y) <= 0 for points z on the ellipse (the optimality condition
    of a projection onto a convex set), and is idempotent."""
    rng = np.random.default_rng(110)
    th = np.linspace(0, 2 * np.pi, 721)
    for a, b in _ellipses(rng, 150):
        p = rng.normal(size=2) * 10.0 ** rng.uniform(-2, 2)
        y = np.array(project_ellipse(p[0], p[1], a, b))
        boundary = np.column_stack([a * np.cos(th), b * np.sin(th)])
        scale = max(a, b) * (np.linalg.norm(p) + max(a, b))
        assert np.max((boundary - y) @ (p - y)) <= VI_TOL * scale
        np.testing.assert_allclose(project_ellipse(y[0], y[1], a, b), y, rtol=0, atol=FEASIBILITY_TOL * max(a, b))


def test_project_ellipse_far_point_tiny_ellipse_is_feasible():
    """The projection is scale-free: a point 1e20 semi-axes away still projects onto the ellipse.

    This is reached by the strict operator whenever l_n* is tiny but positive (a contact about to
    open), e.g. project_strict(1e-20, 1, 1, 0.5, 0.3).
    """
    a, b = 1e-20, 2e-20
    x, y = project_ellipse(1.0, 1.0, a, b)
    assert (x / a) ** 2 + (y / b) ** 2 <= 1.0 + FEASIBILITY_TOL
    # From 1e20 semi-axes away the nearest point is, to O(1e-20) relative, the support point of the
    # ellipse in the direction of p: (a^2 x, b^2 y) / sqrt(a^2 x^2 + b^2 y^2).
    want = np.array([a * a, b * b]) / np.sqrt(a * a + b * b)
    np.testing.assert_allclose((x, y), want, rtol=0, atol=ELLIPSE_TOL * b)


# ------------------------------------------------------------------ Jacobians (the primal Newton solver's)
def _finite_difference(fn, x, step=1e-7):
    return np.column_stack([(np.array(fn(*(x + step * e))) - np.array(fn(*(x - step * e)))) / (2 * step)
                            for e in np.eye(3)])


@pytest.mark.parametrize("mu", (0.05, 0.3, 1.3, 10.0))
def test_proximal_jacobian_is_the_projection_and_its_derivative(mu):
    """Away from the region boundaries (where the projection is not differentiable) the Jacobian is the central
    difference of ``project_proximal``; it is symmetric PSD everywhere (a projection onto a convex set)."""
    rng = np.random.default_rng(11)
    jac = np.empty((3, 3))
    for x in rng.normal(size=(200, 3)):
        value = proximal_jacobian(*x, mu, jac)
        np.testing.assert_allclose(value, project_proximal(*x, mu), rtol=0, atol=1e-15 * np.abs(x).max())
        np.testing.assert_allclose(jac, jac.T, rtol=0, atol=1e-15)
        assert np.linalg.eigvalsh(jac).min() >= -1e-12
        norm_t = np.hypot(x[1], x[2])
        if min(abs(norm_t - mu * x[0]), abs(mu * norm_t + x[0])) > 1e-4:
            np.testing.assert_allclose(jac, _finite_difference(lambda *y: project_proximal(*y, mu), x), atol=1e-6)


@pytest.mark.parametrize("radius", (0.0, 0.1, 1.0))
def test_strict_jacobian_is_the_clamp_and_disk_law_and_its_derivative(radius):
    """With the bound mu lambda_n given as ``radius``, the law is project_strict's clamp and disk projection."""
    rng = np.random.default_rng(12)
    jac = np.empty((3, 3))
    for x in rng.normal(size=(200, 3)):
        value = strict_jacobian(*x, radius, jac)
        norm_t = np.hypot(x[1], x[2])
        scale = min(1.0, radius / norm_t)
        np.testing.assert_allclose(value, (max(x[0], 0.0), x[1] * scale, x[2] * scale), rtol=0, atol=1e-15)
        np.testing.assert_allclose(jac, jac.T, rtol=0, atol=1e-15)
        if abs(x[0]) > 1e-4 and abs(norm_t - radius) > 1e-4:
            fd = _finite_difference(lambda *y: strict_jacobian(*y, radius, np.empty((3, 3))), x)
            np.testing.assert_allclose(jac, fd, atol=1e-6)
