"""Slow, obviously-correct reference implementations shared by the tests.

Everything here is written from the textbook definitions with dense numpy and
an independent conic solver (clarabel, a test-only dependency), never from
the package's own kernels, so a test that compares against it checks the
package rather than restating it.

Conventions (as in the paper and ``cond_ros.sim.collision.nodalization``): a contact force is
(lambda_n, lambda_t1, lambda_t2) in its contact frame; the friction cone is
{lambda_n >= 0, (lambda_t1/mu1)^2 + (lambda_t2/mu2)^2 <= lambda_n^2}.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: interior-point tolerances for the reference conic solves ("AlmostSolved" is accepted: see cone_qp)
CLARABEL_TOL = 1e-12
#: polish stops when the projected-gradient fixed-point residual is this small (relative)
POLISH_RESIDUAL = 1e-15
#: polish and interior point must agree this well (relative), else the reference raises
POLISH_AGREEMENT = 1e-4
#: P counts as positive definite (unique minimizer, polish allowed) above this eigenvalue ratio
DEFINITE_RATIO = 1e-10


def contact_jacobian(dof_a, dof_b, frame, size) -> sp.csr_matrix:
    """J_c of eq. (13): block row m is R_m at node a and -R_m at node b (b < 0: S-contact)."""
    rows, cols, vals = [], [], []
    for m, (a, b) in enumerate(zip(dof_a, dof_b)):
        for node, sign in ((a, 1.0), (b, -1.0)):
            if node < 0:
                continue
            for r in range(3):
                for c in range(3):
                    rows.append(3 * m + r)
                    cols.append(node + c)
                    vals.append(sign * frame[m][r, c])
    return sp.csr_matrix((vals, (rows, cols)), shape=(3 * len(dof_a), size))


def delassus(a, j, b):
    """Dense A_c = J A^-1 J^T and b_c = J A^-1 b (Sec. III-D2), with A^-1 from a dense solve."""
    a = np.asarray(a.toarray() if sp.issparse(a) else a, dtype=float)
    j = np.asarray(j.toarray() if sp.issparse(j) else j, dtype=float)
    a_inv_jt = np.linalg.solve(a, j.T)
    a_inv_b = np.linalg.solve(a, b)
    a_c = j @ a_inv_jt
    return 0.5 * (a_c + a_c.T), j @ a_inv_b


def _clarabel_solve(p, q, a_rows, b_vec, cones):
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = CLARABEL_TOL
    settings.tol_feas = settings.tol_ktratio = CLARABEL_TOL
    settings.max_iter = 500
    solver = clarabel.DefaultSolver(sp.csc_matrix(np.triu(p)), np.asarray(q, float),
                                    sp.csc_matrix(np.asarray(a_rows, float)), np.asarray(b_vec, float),
                                    cones, settings)
    sol = solver.solve()
    status = str(sol.status)
    if "Solved" not in status:
        raise RuntimeError(f"clarabel: {status}")
    return np.array(sol.x)


def _cone_rows(mu1, mu2, offset, n_vars):
    """Constraint rows (clarabel form s = -G x, s in cone) putting one force in its friction cone.

    Isotropic mu > 0: (mu l_n, l_t1, l_t2) in the second-order cone {(t, x): ||x|| <= t}.
    Anisotropic: (l_n, l_t1/mu1, l_t2/mu2) in the SOC. A zero coefficient pins that tangential
    component to zero (zero cone) and keeps l_n >= 0 (non-negative cone).
    Returns a list of (rows, cone) pieces.
    """
    import clarabel

    def row(k, scale):
        out = np.zeros(n_vars)
        out[offset + k] = -scale
        return out

    if mu1 > 0 and mu2 > 0:
        if mu1 == mu2:
            rows = [row(0, mu1), row(1, 1.0), row(2, 1.0)]
        else:
            rows = [row(0, 1.0), row(1, 1.0 / mu1), row(2, 1.0 / mu2)]
        return [(rows, clarabel.SecondOrderConeT(3))]
    pieces = [([row(0, 1.0)], clarabel.NonnegativeConeT(1))]
    zero = [row(k, 1.0) for k, mu in ((1, mu1), (2, mu2)) if mu == 0]
    if zero:
        pieces.append((zero, clarabel.ZeroConeT(len(zero))))
    if mu1 > 0 or mu2 > 0:  # one tangential direction free within |l_t| <= mu l_n: a 2-D SOC
        k, mu = (1, mu1) if mu1 > 0 else (2, mu2)
        pieces.append(([row(0, mu), row(k, 1.0)], clarabel.SecondOrderConeT(2)))
    return pieces


def cone_qp(p, q, friction, polish=True):
    """argmin 1/2 l^T P l + q^T l subject to every 3-block l_m in its friction cone (clarabel).

    ``friction`` is (m, 2): (mu1, mu2) per block. With P = A_c (+ omega I) and q = b_c + phi this is
    the CCP (36) (and the regularized model (37)). With ``polish`` and isotropic cones the
    interior-point answer is refined to round-off (see :func:`_polish`) when P is positive definite
    (with several contacts on one node A_c is singular and only v = A^-1 (b + J^T l) is unique).
    """
    friction = np.asarray(friction, float).reshape(-1, 2)
    n = 3 * len(friction)
    a_rows, cones = [], []
    for m, (mu1, mu2) in enumerate(friction):
        for rows, cone in _cone_rows(mu1, mu2, 3 * m, n):
            a_rows.extend(rows)
            cones.append(cone)
    # Scale to O(1) data (the cones are invariant under positive scaling): l = kappa x with
    # P / rho of unit diagonal and kappa the size of the unconstrained minimizer.
    p = np.asarray(p, float)
    q = np.asarray(q, float)
    if not np.any(q):
        return np.zeros(n)  # 1/2 l^T P l >= 0 = its value at l = 0, which is in every cone
    rho = float(np.max(np.abs(np.diag(p))))
    kappa = float(np.max(np.abs(q))) / rho or 1.0
    p_s, q_s = p / rho, q / (kappa * rho)
    x = _clarabel_solve(p_s, q_s, np.array(a_rows), np.zeros(len(a_rows)), cones)
    eig = np.linalg.eigvalsh(p_s)
    if polish and np.all(friction[:, 0] == friction[:, 1]) and eig[0] > DEFINITE_RATIO * eig[-1]:
        x = _polish(p_s, q_s, friction[:, 0], x)  # strongly convex: a unique minimizer to polish
    return kappa * x


def _polish(p, q, mu, x0, max_iterations=200000):
    """Refine an interior-point solution to round-off by accelerated projected gradient (isotropic cones).

    The problem is strongly convex, so projected gradient from any start converges to the one
    minimizer; starting at clarabel's answer only saves time. Raises if the two disagree beyond
    interior-point accuracy, which would mean one of them is wrong.
    """
    eig = np.linalg.eigvalsh(p)
    step = 1.0 / eig[-1]
    beta = (np.sqrt(eig[-1] / eig[0]) - 1.0) / (np.sqrt(eig[-1] / eig[0]) + 1.0)
    x = x_prev = project_isotropic_cones(x0, mu)
    for _ in range(max_iterations):
        y = x + beta * (x - x_prev)
        x_prev, x = x, project_isotropic_cones(y - step * (p @ y + q), mu)
        # fixed-point residual of the plain projected-gradient map at x
        res = np.linalg.norm(project_isotropic_cones(x - step * (p @ x + q), mu) - x)
        if res <= POLISH_RESIDUAL * max(1.0, np.linalg.norm(x)):
            break
    else:
        raise RuntimeError(f"reference polish did not converge (residual {res:.1e})")
    if np.linalg.norm(x - x0) > POLISH_AGREEMENT * max(1.0, np.linalg.norm(x)):
        raise RuntimeError(f"clarabel and projected gradient disagree by {np.linalg.norm(x - x0):.1e}")
    return x


def project_isotropic_cones(x, mu):
    """Block-wise :func:`project_isotropic_cone` of a stacked (3m,) vector with one mu per block."""
    return np.concatenate([project_isotropic_cone(x[3 * m:3 * m + 3], mu[m]) for m in range(len(mu))])


def project_cone_qp(point, mu1, mu2):
    """Euclidean projection of one 3-vector onto the (possibly anisotropic) friction cone, by clarabel.

    Interior-point accuracy only (no polish, which would reuse the closed form below).
    """
    point = np.asarray(point, float)
    return cone_qp(np.eye(3), -point, [(mu1, mu2)], polish=False)


def project_isotropic_cone(point, mu):
    """Closed-form Euclidean projection onto {||x_t|| <= mu x_n} (Boyd & Vandenberghe, Moreau).

    In the half-plane spanned by the normal axis and x_t the cone is the wedge between the normal
    axis and the ray d = (1, mu) / sqrt(1 + mu^2); outside it the nearest point is either the origin
    (when x . d <= 0, i.e. x lies in the polar cone) or (x . d) d.
    """
    n, t = float(point[0]), np.asarray(point[1:], float)
    r = float(np.hypot(*t))
    if n >= 0.0 and r <= mu * n:  # (n >= 0 matters for mu = 0, where 0 <= 0 * n holds for any n)
        return np.array([n, *t])
    d = np.array([1.0, mu]) / np.hypot(1.0, mu)
    s = n * d[0] + r * d[1]
    if s <= 0.0:
        return np.zeros(3)
    rn, rr = s * d
    return np.array([rn, *(t * (rr / r))]) if r > 0 else np.array([rn, 0.0, 0.0])


def project_ellipse_reference(point, a, b):
    """Euclidean projection of a 2-D point onto the filled ellipse (x/a)^2 + (y/b)^2 <= 1, a, b > 0.

    Inside points are their own projection. Outside, SLSQP minimizes the squared distance over
    (x, y) = (a z1, b z2) subject to ||z|| <= 1 (scaled so the constraint is well conditioned).
    Its answer is then polished on the boundary (a cos th, b sin th): the stationarity condition
    d/dth |p - e(th)|^2 = 0 changes sign from - to + across the minimizing angle, so a bracket
    grown around SLSQP's angle and brentq give th to round-off (a distance minimum itself is too
    flat to locate better than sqrt(eps)).
    """
    from scipy.optimize import brentq, minimize

    px, py = map(float, point)
    if (px / a) ** 2 + (py / b) ** 2 <= 1.0:
        return np.array([px, py])

    def dist2(z):
        return (a * z[0] - px) ** 2 + (b * z[1] - py) ** 2

    def grad(z):
        return np.array([2 * a * (a * z[0] - px), 2 * b * (b * z[1] - py)])

    constraint = {"type": "ineq", "fun": lambda z: 1.0 - z @ z, "jac": lambda z: -2.0 * z}
    angle0 = np.arctan2(py / b, px / a)
    res = minimize(dist2, [np.cos(angle0), np.sin(angle0)], jac=grad, constraints=[constraint],
                   method="SLSQP", options=dict(ftol=1e-16, maxiter=1000))
    angle = np.arctan2(res.x[1], res.x[0])

    def slope(th):  # (1/2) d/dth of the squared distance to the boundary point at th
        return (b * b - a * a) * np.sin(th) * np.cos(th) + a * px * np.sin(th) - b * py * np.cos(th)

    width = 1e-9
    while width < np.pi and not (slope(angle - width) <= 0.0 <= slope(angle + width)):
        width *= 4.0
    if width < np.pi:
        angle = brentq(slope, angle - width, angle + width, xtol=1e-16, rtol=1e-15, maxiter=500)
    return np.array([a * np.cos(angle), b * np.sin(angle)])


def project_strict_reference(point, mu1, mu2):
    """The strict operator of (26) from its definition: clamp lambda_n at 0, then project lambda_t
    onto the cross-section {(t1/mu1)^2 + (t2/mu2)^2 <= lambda_n^2} (a disk, an ellipse, a segment or
    the origin).
    """
    n = max(float(point[0]), 0.0)
    t = np.asarray(point[1:], float)
    a, b = mu1 * n, mu2 * n
    if a > 0 and b > 0:
        return np.array([n, *project_ellipse_reference(t, a, b)])
    return np.array([n, float(np.clip(t[0], -a, a)), float(np.clip(t[1], -b, b))])


def rot_x(a):
    """Rotation about x by ``a`` (3x3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    """Rotation about y by ``a`` (3x3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    """Rotation about z by ``a`` (3x3)."""
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
