"""The fit's last stage: Levenberg-Marquardt on the rollouts' residual traces, from the best point CMA-ES found.

CMA-ES sees one number per rollout, so where the F/T depends on one parameter hundreds of times more than on
another (the cable's stiffness against its friction on the post), it stops long before it has told the weak
one apart. The residual trace (sim - real on every aligned sample, :meth:`Loss.residual`) tells far more: its
Jacobian, from one rollout per parameter, gives the Gauss-Newton step that moves all of them together, the
strong one's leftover error included. The Jacobian is measured once (one rollout per parameter, forward
differences in the unit box) and then corrected by each trial's residual (Broyden's secant update), so an
iteration costs one batch of :data:`DAMPINGS` trial steps; it is measured afresh when no trial lowers the
loss. A trial is taken only if it lowers the fit's own loss. Batches come back in order, so the result does
not depend on the backend or the number of workers.

The same residual traces give each parameter's standard error (:func:`standard_errors`, used by the fit's
sensitivity table): the uncertainty that the recording's scatter leaves, whatever the search.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .parameters import settings_at

DIFFERENCE_STEP = 5e-3  # forward-difference step in the unit box (~0.7 % of a log-scaled parameter's value)
DAMPINGS = (1e-6, 1e-3)  # Marquardt damping of the two trial steps, relative to diag(J^T J), before adaptation
STEP_TOLERANCE = 1e-7  # the polish ends when its step in the unit box is this small


@dataclasses.dataclass
class Polish:
    """What the polish made: its rollouts and their coordinates in order, and whether its step became
    negligible."""

    rollouts: list
    coordinates: list
    converged: bool = False


def polish(params, backend, x, best, budget: int, on_done=None, on_better=None) -> Polish:
    """Levenberg-Marquardt from unit coordinates ``x`` whose rollout is ``best`` (with its residual), with at
    most ``budget`` rollouts on ``backend``; ``on_better(loss)`` is called with each lower loss found."""
    x = np.asarray(x, dtype=float)
    out = Polish([], [])
    damping_scale = 1.0
    jacobian = None
    while best.residual is not None:
        if jacobian is None:
            if budget - len(out.rollouts) < len(x) + len(DAMPINGS):
                break
            jacobian = _jacobian(params, backend, x, best, out, on_done)
            if jacobian is None:
                break
        if budget - len(out.rollouts) < len(DAMPINGS):
            break
        trials = _trial_steps(x, jacobian, best.residual, damping_scale)
        results = _run(backend, params, trials, out, on_done)
        for trial, result in zip(trials, results):  # Broyden: each trial's residual corrects the Jacobian
            if not result.failed and result.residual is not None and len(result.residual) == len(best.residual):
                jacobian = _secant_update(jacobian, trial - x, result.residual - best.residual)
        candidates = [(r.loss, k) for k, r in enumerate(results) if not r.failed]
        if candidates and min(candidates)[0] < best.loss:
            k = min(candidates)[1]
            step = float(np.max(np.abs(trials[k] - x)))
            x, best = trials[k], results[k]
            if on_better is not None:
                on_better(best.loss)
            damping_scale = damping_scale / 10.0 if k == 0 else damping_scale
        else:  # the model misled: a shorter step and a Jacobian measured afresh
            step = float(np.max(np.abs(trials[-1] - x)))
            damping_scale *= 100.0
            jacobian = None
        if step < STEP_TOLERANCE:
            out.converged = True
            break
    return out


def _jacobian(params, backend, x, best, out: Polish, on_done):
    """d residual / d x by forward differences (a step back at the upper bound); None if a rollout failed."""
    steps = np.where(x + DIFFERENCE_STEP <= 1.0, DIFFERENCE_STEP, -DIFFERENCE_STEP)
    moved = [x + np.eye(len(x))[i] * steps[i] for i in range(len(x))]
    columns = _run(backend, params, moved, out, on_done)
    if any(r.failed or r.residual is None or len(r.residual) != len(best.residual) for r in columns):
        return None
    return np.stack([(r.residual - best.residual) / h for r, h in zip(columns, steps)], axis=1)


def _trial_steps(x, jacobian, residual, damping_scale) -> list:
    """The Levenberg-Marquardt step for each of :data:`DAMPINGS` (x ``damping_scale``), kept in the box."""
    normal, gradient = jacobian.T @ jacobian, jacobian.T @ residual
    scale = np.maximum(np.diag(normal), 1e-12 * max(float(np.diag(normal).max()), 1e-300))
    trials = []
    for damping in DAMPINGS:
        try:
            delta = np.linalg.solve(normal + damping * damping_scale * np.diag(scale), -gradient)
        except np.linalg.LinAlgError:
            delta = np.zeros_like(x)
        trials.append(np.clip(x + delta, 0.0, 1.0))
    return trials


def _secant_update(jacobian, dx, dr):
    """Broyden's rank-one correction: afterwards ``jacobian @ dx == dr``."""
    norm = float(dx @ dx)
    if norm == 0.0:
        return jacobian
    return jacobian + np.outer(dr - jacobian @ dx, dx) / norm


def _run(backend, params, xs, out: Polish, on_done) -> list:
    results = backend.map([settings_at(params, xi) for xi in xs], on_done=on_done)
    out.rollouts += results
    out.coordinates += [np.asarray(xi) for xi in xs]
    return results


def standard_errors(jacobian, residual, channels: int = 1) -> np.ndarray | None:
    """Per column of ``jacobian`` (d residual / d parameter), the standard error of the least-squares estimate:
    sqrt(diag(s^2 (J^T J)^-1)) with s^2 = |residual|^2 / (n - k), the residual's scatter per degree of freedom,
    widened for its correlation in time. ``residual`` holds ``channels`` interleaved series (sample-major, as
    :meth:`Loss.residual` lays out the six axes).

    White noise leaves the formula as it is. A misfit of the model is smooth in time and has far fewer
    independent samples than it has samples; the variance is multiplied by (1 + rho) / (1 - rho), rho the
    residual's lag-one autocorrelation (the effective sample size of an AR(1) series), so that a systematic
    misfit does not pass for a determined parameter. None if there are no more samples than parameters or
    J^T J is singular."""
    n, k = jacobian.shape
    if n <= k:
        return None
    try:
        covariance = float(residual @ residual) / (n - k) * np.linalg.inv(jacobian.T @ jacobian)
    except np.linalg.LinAlgError:
        return None
    return np.sqrt(np.maximum(np.diag(covariance), 0.0) * _correlation_factor(residual, channels))


def _correlation_factor(residual, channels: int) -> float:
    series = np.asarray(residual).reshape(-1, channels)
    energy = float(np.sum(series * series))
    if len(series) < 3 or energy == 0.0:
        return 1.0
    rho = min(float(np.sum(series[1:] * series[:-1])) / energy, 1.0 - 1.0 / len(series))
    return max(1.0, (1.0 + rho) / (1.0 - rho))
