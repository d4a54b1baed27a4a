"""``SimOptions``: what a simulation runs with besides its model, as one value.

The step size and the contact solver with its options travel together from where they are set (a scene's
YAML, the CLI, the node's parameters, a benchmark) to the :class:`~cond_ros.sim.simulator.Simulator`, and
every change goes through :func:`override_options`, so the three places that set them agree on what a
change means.
"""
from __future__ import annotations

import dataclasses
import types

from .solvers import SOLVERS
from .validate import ModelError, positive

DEFAULT_DT = 0.01  # [s]
DEFAULT_SOLVER = "cond"


@dataclasses.dataclass(frozen=True)
class SimOptions:
    """The step size ``dt`` [s] and the contact solver: a registered name and its keyword options (read-only).

    Checked when made: dt > 0 and the solver's name is registered; the solver itself checks its options when
    the simulator makes it.
    """

    dt: float = DEFAULT_DT
    solver: str = DEFAULT_SOLVER
    solver_options: types.MappingProxyType = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "dt", positive("dt", self.dt))
        if self.solver not in SOLVERS:
            raise ModelError(f"solver: unknown {self.solver!r}; available: {', '.join(sorted(SOLVERS))}")
        object.__setattr__(self, "solver_options", types.MappingProxyType(dict(self.solver_options)))

    @classmethod
    def of_solver_object(cls, dt: float, name: str) -> SimOptions:
        """The options of a simulator handed a solver object: its ``name`` (which need not be registered: a
        test's reference solver) and no options (they live in the object)."""
        options = object.__new__(cls)
        object.__setattr__(options, "dt", positive("dt", dt))
        object.__setattr__(options, "solver", name)
        object.__setattr__(options, "solver_options", types.MappingProxyType({}))
        return options


def override_options(options: SimOptions, *, dt: float | None = None, solver: str | None = None,
                     tolerance: float | None = None, max_iterations: int | None = None) -> SimOptions:
    """``options`` with the given changes (None: unchanged).

    A different ``solver`` starts from its own defaults (another solver's options would not fit it); the same
    name keeps the options. ``tolerance`` and ``max_iterations`` then apply to whichever solver it is.
    """
    name, solver_options = options.solver, dict(options.solver_options)
    if solver is not None and solver != name:
        name, solver_options = solver, {}
    if tolerance is not None:
        solver_options["tolerance"] = tolerance
    if max_iterations is not None:
        solver_options["max_iterations"] = max_iterations
    return SimOptions(options.dt if dt is None else dt, name, solver_options)
