"""ProjectFC of Alg. 2: the strict and proximal friction-cone projections (eq. 26).

A contact force is (lambda_n, lambda_t1, lambda_t2) in the contact frame. The
cone is {lambda_n >= 0, (lambda_t1/mu1)^2 + (lambda_t2/mu2)^2 <= lambda_n^2};
mu1 == mu2 is the isotropic Coulomb cone (12).
"""
import numpy as np

from ..jit import kernel

PROJECTION_STRICT = 0
PROJECTION_PROXIMAL = 1


@kernel
def project_ellipse(x, y, a, b):
    """Euclidean projection of (x, y) onto the filled ellipse x^2/a^2 + y^2/b^2 <= 1 (a, b >= 0).

    Outside points satisfy p' = (a^2 x/(t+a^2), b^2 y/(t+b^2)) with the unique root t >= 0 of
    f(t) = (a x/(t+a^2))^2 + (b y/(t+b^2))^2 - 1. f is convex and decreasing, so Newton from
    t = 0 climbs monotonically to the root without overshooting (Prop. 6 needs this numeric step).
    """
    if a <= 0.0 and b <= 0.0:
        return 0.0, 0.0
    if a <= 0.0:
        return 0.0, min(max(y, -b), b)
    if b <= 0.0:
        return min(max(x, -a), a), 0.0
    if (x / a) ** 2 + (y / b) ** 2 <= 1.0:
        return x, y
    a2, b2 = a * a, b * b
    # max(a|x| - a^2, b|y| - b^2) is a lower bound of the root, so Newton stays monotone and far
    # points (a, b ~ 1e-20 against |x| ~ 1) need no long climb from t = 0
    t = max(0.0, a * abs(x) - a2, b * abs(y) - b2)
    for _ in range(100):
        ex = a * x / (t + a2)
        ey = b * y / (t + b2)
        f = ex * ex + ey * ey - 1.0
        if f <= 1e-15:
            break
        df = -2.0 * (ex * ex / (t + a2) + ey * ey / (t + b2))
        step = -f / df
        t += step
        if step <= 1e-16 * (t + a2 + b2):
            break
    return a2 * x / (t + a2), b2 * y / (t + b2)


@kernel
def project_strict(lam_n, lam_t1, lam_t2, mu1, mu2):
    """Strict operator: clamp the normal force, then project the tangential part onto the cross-section."""
    n = max(lam_n, 0.0)
    if mu1 == mu2:
        norm_t = np.sqrt(lam_t1 * lam_t1 + lam_t2 * lam_t2)
        limit = mu1 * n
        if norm_t <= limit:
            return n, lam_t1, lam_t2
        scale = limit / norm_t
        return n, lam_t1 * scale, lam_t2 * scale
    t1, t2 = project_ellipse(lam_t1, lam_t2, mu1 * n, mu2 * n)
    return n, t1, t2


@kernel
def project_proximal(lam_n, lam_t1, lam_t2, mu):
    """Proximal operator: the Euclidean projection onto the isotropic cone ||lambda_t|| <= mu lambda_n."""
    norm_t = np.sqrt(lam_t1 * lam_t1 + lam_t2 * lam_t2)
    if lam_n >= 0.0 and norm_t <= mu * lam_n:
        return lam_n, lam_t1, lam_t2
    if mu * norm_t <= -lam_n:
        return 0.0, 0.0, 0.0
    n = (lam_n + mu * norm_t) / (1.0 + mu * mu)
    scale = mu * n / norm_t
    return n, lam_t1 * scale, lam_t2 * scale


@kernel
def proximal_jacobian(lam_n, lam_t1, lam_t2, mu, out):
    """Write d(project_proximal)/d(lambda) (3 x 3, symmetric PSD) into ``out`` and return the projection.

    Inside the cone it is I, in its polar cone 0; onto the surface, with r = ||lambda_t||, t = lambda_t / r and
    n = (lambda_n + mu r) / (1 + mu^2) the projected normal force, it is the projector onto the cone's
    generator (1, mu t) / sqrt(1 + mu^2) plus mu n / r (I - t t^T) on the tangent plane (the generator
    turning with lambda_t). Newton-type solvers need it where the projection is not differentiable too;
    there it is one of the one-sided limits (a valid generalized Jacobian).
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.0
    norm_t = np.sqrt(lam_t1 * lam_t1 + lam_t2 * lam_t2)
    if lam_n >= 0.0 and norm_t <= mu * lam_n:
        for i in range(3):
            out[i, i] = 1.0
        return lam_n, lam_t1, lam_t2
    if mu * norm_t <= -lam_n:
        return 0.0, 0.0, 0.0
    c = 1.0 / (1.0 + mu * mu)
    n = (lam_n + mu * norm_t) * c
    t1, t2 = lam_t1 / norm_t, lam_t2 / norm_t
    turn = mu * n / norm_t
    out[0, 0] = c
    out[0, 1] = out[1, 0] = c * mu * t1
    out[0, 2] = out[2, 0] = c * mu * t2
    out[1, 1] = c * mu * mu * t1 * t1 + turn * (1.0 - t1 * t1)
    out[2, 2] = c * mu * mu * t2 * t2 + turn * (1.0 - t2 * t2)
    out[1, 2] = out[2, 1] = (c * mu * mu - turn) * t1 * t2
    return n, mu * n * t1, mu * n * t2


@kernel
def strict_jacobian(lam_n, lam_t1, lam_t2, radius, out):
    """The strict operator with a given friction bound ``radius`` (= mu times a normal force held fixed): clamp
    the normal force, project the tangential part onto the disk; returns it and writes its Jacobian into ``out``.

    Unlike :func:`project_strict` the bound does not move with lambda_n, so the map is the gradient of a convex
    function (a Tresca friction law) and its Jacobian is symmetric: diag(lambda_n > 0, ...) with the tangential
    block I inside the disk and radius / ||lambda_t|| (I - t t^T) outside.
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.0
    n = 0.0
    if lam_n > 0.0:
        n = lam_n
        out[0, 0] = 1.0
    norm_t = np.sqrt(lam_t1 * lam_t1 + lam_t2 * lam_t2)
    if norm_t <= radius:
        out[1, 1] = out[2, 2] = 1.0
        return n, lam_t1, lam_t2
    scale = radius / norm_t
    t1, t2 = lam_t1 / norm_t, lam_t2 / norm_t
    out[1, 1] = scale * (1.0 - t1 * t1)
    out[2, 2] = scale * (1.0 - t2 * t2)
    out[1, 2] = out[2, 1] = -scale * t1 * t2
    return n, lam_t1 * scale, lam_t2 * scale


@kernel
def project_cone(mode, lam_n, lam_t1, lam_t2, mu1, mu2):
    if mode == PROJECTION_PROXIMAL:
        return project_proximal(lam_n, lam_t1, lam_t2, mu1)
    return project_strict(lam_n, lam_t1, lam_t2, mu1, mu2)
