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
def project_cone(mode, lam_n, lam_t1, lam_t2, mu1, mu2):
    if mode == PROJECTION_PROXIMAL:
        return project_proximal(lam_n, lam_t1, lam_t2, mu1)
    return project_strict(lam_n, lam_t1, lam_t2, mu1, mu2)
