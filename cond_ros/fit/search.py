"""The fit's search: CMA-ES (``cma``, BSD-3) in the parameters' unit box, one generation per backend batch; a
single parameter (where CMA-ES does not work) by a bracketing grid that narrows around its best point.

Determinism: the optimizer is seeded, each generation's rollouts come back in the order they were asked for,
and a failed rollout's penalty depends on the losses before and beside it, not on when it finished; so a seed
gives the same fit on any backend with any number of workers. The first rollout is the scene as it is (the
loss before); the result holds every rollout in order, the best, and the loss's sensitivity to each parameter
at the best.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from tqdm import tqdm

from ..bags import AXES
from .parameters import FitError, settings_at, start_coordinates
from .polish import polish, standard_errors

SIGMA0 = 0.25  # initial step in the unit box: a quarter of each parameter's range
FAILED_PENALTY = 10.0  # a failed rollout scores as this many times the worst loss seen
TOLX = 1e-6  # the search ends when its steps in the unit box are this small
WEAKLY_DETERMINED = 0.05  # a parameter whose standard error is more than this fraction of its value is not
                          # determined by the recording: the fit's value for it means little
SENSITIVITY_STEP = 1.05  # the sensitivity table moves each parameter by this factor up and down
POLISH_SHARE = 0.4  # the budget's share kept back from CMA-ES for the Levenberg-Marquardt polish
CMA_MISSING = "cond-ros fit needs cma, an optional extra: pip install 'cond_ros[fit]'"


@dataclasses.dataclass
class FitResult:
    """Every rollout in order (the first: the scene as it is), the index of the best, how the search ended
    (``budget``, ``converged``, ``interrupted`` or ``failed``), the sensitivity rows, and the run's context."""

    params: list
    rollouts: list
    best_index: int
    ended: str
    sensitivity: list
    backend: str
    workers: int
    seed: int
    wall_s: float

    @property
    def before(self):
        return self.rollouts[0]

    @property
    def best(self):
        return self.rollouts[self.best_index]

    @property
    def failed(self) -> list:
        return [(i, r) for i, r in enumerate(self.rollouts) if r.failed]

    def to_dict(self) -> dict:
        return dict(params=[p.to_dict() for p in self.params], best_index=self.best_index,
                    best=self.best.to_dict(), before=self.before.to_dict(), ended=self.ended,
                    sensitivity=self.sensitivity, backend=self.backend, workers=self.workers, seed=self.seed,
                    wall_s=self.wall_s, rollouts=[r.to_dict() for r in self.rollouts])


class GridRefinement:
    """A one-dimensional search in [0, 1] with CMA-ES's ask / tell / stop: each generation is ``popsize`` evenly
    spaced points of the bracket, and the next bracket is the best point's neighbours' span."""

    def __init__(self, x0: float, popsize: int, tolx: float):
        self.popsize, self.tolx = max(3, popsize), tolx
        self.low, self.high, self.best, self.best_score = 0.0, 1.0, float(x0), math.inf

    def ask(self) -> list:
        return [np.array([x]) for x in np.linspace(self.low, self.high, self.popsize)]

    def tell(self, xs: list, scores: list) -> None:
        k = int(np.argmin(scores))
        if scores[k] < self.best_score:
            self.best, self.best_score = float(xs[k][0]), scores[k]
        spacing = (self.high - self.low) / (self.popsize - 1)
        self.low, self.high = max(0.0, self.best - spacing), min(1.0, self.best + spacing)

    def stop(self) -> bool:
        return self.high - self.low < self.tolx


def _optimizer(x0: np.ndarray, sigma0: float, seed: int, popsize: int | None):
    """CMA-ES over the unit box for two or more parameters, :class:`GridRefinement` for one."""
    if len(x0) == 1:
        return GridRefinement(x0[0], popsize or 5, TOLX)
    try:
        import cma
    except ImportError as exc:
        raise FitError(f"{CMA_MISSING} ({exc})") from None
    options = {"bounds": [0.0, 1.0], "seed": seed + 1, "verbose": -9, "tolx": TOLX, "tolfun": 1e-12}
    if popsize is not None:
        options["popsize"] = popsize
    return cma.CMAEvolutionStrategy(list(x0), sigma0, options)


def check_search(n_params: int, *, budget: int, seed: int, popsize: int | None,
                 polish_share: float = POLISH_SHARE) -> None:
    """FitError naming a search option that cannot work for ``n_params`` parameters; cheap (no rollout), so
    the command checks them before the first rollout runs."""
    if seed < 0:
        raise FitError(f"--seed: must be >= 0, got {seed}")
    if popsize is not None and popsize < 2:
        raise FitError(f"--popsize: must be >= 2, got {popsize}")
    if not 0.0 <= polish_share < 1.0:  # NaN fails too
        raise FitError(f"--polish: the budget's share for the polish, expected 0 <= SHARE < 1, got {polish_share:g}")
    if n_params < 1:
        return  # make_parameters names the missing parameters
    size = _optimizer(np.full(n_params, 0.5), SIGMA0, seed, popsize).popsize  # the optimizer's own default
    if budget < 1 + size:
        raise FitError(f"--budget: {budget} rollouts do not make one generation of {size} after the start; "
                       f"give at least {1 + size}")


def _scores(rollouts: list) -> list:
    """What the optimizer is told: each rollout's loss, a failed one's the penalty (from the finite losses
    before and beside it, so it does not depend on timing)."""
    finite = [r.loss for r in rollouts if not r.failed]
    worst = max(finite) if finite else 1.0
    return [FAILED_PENALTY * worst if r.failed else r.loss for r in rollouts]


def fit(params: list, backend, *, budget: int, seed: int = 0, first=None, sigma0: float = SIGMA0,
        popsize: int | None = None, progress: bool = True, sensitivity: bool = True,
        polish_share: float = POLISH_SHARE) -> FitResult:
    """Minimize the rollout loss over ``params`` with at most ``budget`` rollouts (the sensitivity's 2 per
    parameter come on top) on ``backend``: CMA-ES on all but ``polish_share`` of it (or until it converges),
    then Levenberg-Marquardt (:mod:`cond_ros.fit.polish`) from its best on the rest (0: none); ``first``: the
    start's rollout if already run. Ctrl-C ends the search after the running rollouts and keeps the best so
    far."""
    check_search(len(params), budget=budget, seed=seed, popsize=popsize, polish_share=polish_share)
    x0 = start_coordinates(params)
    es = _optimizer(x0, sigma0, seed, popsize)
    reserve = min(int(polish_share * budget), budget - 1 - es.popsize)
    start = time.perf_counter()
    rollouts, coordinates, ended = [], [], "budget"
    bar = tqdm(total=budget, desc="fit", unit="rollout", disable=not progress)
    try:
        rollouts += [first] if first is not None else backend.map([settings_at(params, x0)])
        coordinates.append(x0)
        bar.update(1)
        while len(rollouts) + es.popsize <= budget - reserve:
            if es.stop():
                ended = "converged"
                break
            xs = [np.asarray(x) for x in es.ask()]
            batch = backend.map([settings_at(params, x) for x in xs], on_done=lambda: bar.update(1))
            rollouts += batch
            coordinates += xs
            scores = _scores(rollouts)
            _keep_best_residual(rollouts, scores)
            es.tell(xs, scores[-len(batch):])
            bar.set_postfix(best=f"{min(scores):.4g}", failed=sum(r.failed for r in rollouts))
        if polish_share > 0 and not all(r.failed for r in rollouts):
            best = int(np.argmin(_scores(rollouts)))
            bar.set_description("fit (polish)")
            done = polish(params, backend, coordinates[best], rollouts[best], budget - len(rollouts),
                          on_done=lambda: bar.update(1), on_better=lambda loss: bar.set_postfix(best=f"{loss:.4g}"))
            rollouts += done.rollouts
            coordinates += done.coordinates
            ended = "converged" if done.converged else ended
    except KeyboardInterrupt:
        ended = "interrupted"
    finally:
        bar.close()
    if not rollouts:
        raise KeyboardInterrupt  # stopped before the first rollout came back: nothing to keep
    if all(r.failed for r in rollouts):
        ended = "failed"
    scores = _scores(rollouts)
    best = int(np.argmin(scores))
    _keep_best_residual(rollouts, scores)
    rows = []
    if sensitivity and ended not in ("interrupted", "failed"):
        try:
            rows = _sensitivity(params, coordinates[best], rollouts[best], backend)
        except KeyboardInterrupt:
            ended = "interrupted"
    return FitResult(params, rollouts, best, ended, rows, backend.name, backend.workers, seed,
                     time.perf_counter() - start)


def _keep_best_residual(rollouts: list, scores: list) -> None:
    """Drop every residual trace but the best rollout's (the polish starts there; the others only cost
    memory: a 55 s trace is ~0.3 MB)."""
    best = int(np.argmin(scores))
    for i, r in enumerate(rollouts):
        if i != best:
            r.residual = None


def _sensitivity(params, x_best, best, backend) -> list:
    """Per parameter: the loss at its best value / and x :data:`SENSITIVITY_STEP` (the others at their best),
    d loss / d ln(value) from the two, and the standard error of ln(value) (its relative error) from their
    residual traces (:func:`~cond_ros.fit.polish.standard_errors`; None if a rollout failed)."""
    values = settings_at(params, x_best)
    batch = []
    for p in params:
        for factor in (1.0 / SENSITIVITY_STEP, SENSITIVITY_STEP):
            batch.append(dict(values, **{p.name: values[p.name] * factor}))
    results = backend.map(batch)
    errors = _relative_errors(results, best)
    rows = []
    for i, p in enumerate(params):
        down, up = results[2 * i], results[2 * i + 1]
        slope = ((up.loss - down.loss) / (2.0 * math.log(SENSITIVITY_STEP))
                 if not (up.failed or down.failed) else None)
        changes = [abs(r.loss - best.loss) for r in (down, up) if not r.failed]
        error = None if errors is None else float(errors[i])
        # a step that lowers the loss: the search stopped short of the minimum, where a standard error means little
        minimum = all(r.failed or r.loss >= best.loss for r in (down, up))
        rows.append(dict(name=p.name, value=values[p.name], loss=best.loss,
                         loss_down=None if down.failed else down.loss, loss_up=None if up.failed else up.loss,
                         dloss_dlog=slope, step=SENSITIVITY_STEP, loss_change=max(changes) if changes else None,
                         relative_error=error, at_minimum=minimum,
                         determined=None if error is None or not minimum else error <= WEAKLY_DETERMINED))
    return rows


def _relative_errors(results: list, best):
    """The standard errors of ln(value) of the parameters from the sensitivity's rollouts (down, up per
    parameter, in order), by central differences; None if any residual is missing."""
    traces = [r.residual for r in (*results, best)]
    if best.residual is None or any(t is None or len(t) != len(best.residual) for t in traces):
        return None
    jacobian = np.stack([(up - down) / (2.0 * math.log(SENSITIVITY_STEP))
                         for down, up in zip(traces[0:-1:2], traces[1:-1:2])], axis=1)
    return standard_errors(jacobian, best.residual, channels=len(AXES))


def weakly_determined(result: FitResult) -> list:
    """Lines naming the parameters the recording hardly determines (see :data:`WEAKLY_DETERMINED`), and those
    the search left short of the minimum."""
    short = [f"the search stopped short of the minimum in {r['name']}: moving it by a factor {r['step']:g} lowers "
             f"the loss to {min(v for v in (r['loss_down'], r['loss_up']) if v is not None):.4g} from "
             f"{r['loss']:.4g}; a larger --budget would move it further"
             for r in result.sensitivity if not r.get("at_minimum", True)]
    weak = [f"{r['name']} is weakly determined by this recording: its standard error is "
            f"{100 * r['relative_error']:.3g} % of its value (the residual's scatter through the F/T's sensitivity "
            "to it); its fitted value means little (a longer window, or a topic where it shows, may tell it)"
            for r in result.sensitivity if r["determined"] is False]
    return short + weak
