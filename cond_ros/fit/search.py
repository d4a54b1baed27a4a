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

from .parameters import FitError, settings_at, start_coordinates

SIGMA0 = 0.25  # initial step in the unit box: a quarter of each parameter's range
FAILED_PENALTY = 10.0  # a failed rollout scores as this many times the worst loss seen
TOLX = 1e-6  # the search ends when its steps in the unit box are this small
WEAKLY_DETERMINED = 0.05  # a parameter whose 5 % step moves the loss by less than this fraction of the most
                          # moving one's is not determined by the recording: the fit's value for it means little
SENSITIVITY_STEP = 1.05  # the sensitivity table moves each parameter by this factor up and down
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


def check_search(n_params: int, *, budget: int, seed: int, popsize: int | None) -> None:
    """FitError naming a search option that cannot work for ``n_params`` parameters; cheap (no rollout), so
    the command checks them before the first rollout runs."""
    if seed < 0:
        raise FitError(f"--seed: must be >= 0, got {seed}")
    if popsize is not None and popsize < 2:
        raise FitError(f"--popsize: must be >= 2, got {popsize}")
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
        popsize: int | None = None, progress: bool = True, sensitivity: bool = True) -> FitResult:
    """Minimize the rollout loss over ``params`` with at most ``budget`` rollouts (the sensitivity's 2 per
    parameter come on top) on ``backend``; ``first``: the start's rollout if already run. Ctrl-C ends the
    search after the running rollouts and keeps the best so far."""
    check_search(len(params), budget=budget, seed=seed, popsize=popsize)
    x0 = start_coordinates(params)
    es = _optimizer(x0, sigma0, seed, popsize)
    start = time.perf_counter()
    rollouts, coordinates, ended = [], [], "budget"
    bar = tqdm(total=budget, desc="fit", unit="rollout", disable=not progress)
    try:
        rollouts += [first] if first is not None else backend.map([settings_at(params, x0)])
        coordinates.append(x0)
        bar.update(1)
        while len(rollouts) + es.popsize <= budget:
            if es.stop():
                ended = "converged"
                break
            xs = [np.asarray(x) for x in es.ask()]
            batch = backend.map([settings_at(params, x) for x in xs], on_done=lambda: bar.update(1))
            rollouts += batch
            coordinates += xs
            scores = _scores(rollouts)
            es.tell(xs, scores[-len(batch):])
            bar.set_postfix(best=f"{min(scores):.4g}", failed=sum(r.failed for r in rollouts))
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
    rows = []
    if sensitivity and ended not in ("interrupted", "failed"):
        try:
            rows = _sensitivity(params, coordinates[best], rollouts[best], backend)
        except KeyboardInterrupt:
            ended = "interrupted"
    return FitResult(params, rollouts, best, ended, rows, backend.name, backend.workers, seed,
                     time.perf_counter() - start)


def _sensitivity(params, x_best, best, backend) -> list:
    """Per parameter: the loss at its best value / and x :data:`SENSITIVITY_STEP` (the others at their best),
    and d loss / d ln(value) from the two."""
    values = settings_at(params, x_best)
    batch = []
    for p in params:
        for factor in (1.0 / SENSITIVITY_STEP, SENSITIVITY_STEP):
            batch.append(dict(values, **{p.name: values[p.name] * factor}))
    results = backend.map(batch)
    rows = []
    for i, p in enumerate(params):
        down, up = results[2 * i], results[2 * i + 1]
        slope = ((up.loss - down.loss) / (2.0 * math.log(SENSITIVITY_STEP))
                 if not (up.failed or down.failed) else None)
        changes = [abs(r.loss - best.loss) for r in (down, up) if not r.failed]
        rows.append(dict(name=p.name, value=values[p.name], loss=best.loss,
                         loss_down=None if down.failed else down.loss, loss_up=None if up.failed else up.loss,
                         dloss_dlog=slope, step=SENSITIVITY_STEP, loss_change=max(changes) if changes else None))
    largest = max((r["loss_change"] for r in rows if r["loss_change"] is not None), default=0.0)
    for r in rows:  # None: not known (its sensitivity rollouts failed, or no parameter moved the loss)
        r["determined"] = (None if r["loss_change"] is None or largest == 0.0
                           else r["loss_change"] >= WEAKLY_DETERMINED * largest)
    return rows


def weakly_determined(result: FitResult) -> list:
    """Lines naming the parameters the recording hardly determines (see :data:`WEAKLY_DETERMINED`)."""
    rows = result.sensitivity
    largest = max(rows, key=lambda r: r["loss_change"] or 0.0, default=None)
    return [f"{r['name']} is weakly determined by this recording: a {100 * (r['step'] - 1):g} % change moves the "
            f"loss by {r['loss_change'] or 0.0:.3g}, {largest['name']}'s by {largest['loss_change']:.3g}; its fitted "
            "value means little (a longer window, or a topic where it shows, may tell it)"
            for r in rows if r["determined"] is False]
