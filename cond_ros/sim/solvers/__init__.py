"""Contact solvers, one interface (:class:`SolverBase`), picked by name from :data:`SOLVERS`."""
from ..model import Model
from ..validate import ModelError
from .base import SimulationError, SolverBase, StepStats
from .cond.solver import SolverCOND
from .delassus.apgd import SolverAPGD
from .delassus.bisection import SolverBisection
from .delassus.compliant import SolverCompliant
from .delassus.nonsmooth_newton import SolverNewton
from .delassus.pgs import SolverPGS
from .penalty import SolverPenalty
from .primal_newton import SolverPrimalNewton

SOLVERS = {
    "cond": SolverCOND,
    "penalty": SolverPenalty,
    "pgs": SolverPGS,
    "apgd": SolverAPGD,
    "compliant": SolverCompliant,
    "newton": SolverNewton,
    "bisection": SolverBisection,
    "primal_newton": SolverPrimalNewton,
}


def make_solver(name: str, model: Model, **options) -> SolverBase:
    """The solver registered as ``name``, made for ``model`` with keyword ``options``."""
    if name not in SOLVERS:
        raise ModelError(f"solver: unknown {name!r}; available: {', '.join(sorted(SOLVERS))}")
    return SOLVERS[name](model, **options)


__all__ = ["SOLVERS", "SimulationError", "SolverAPGD", "SolverBase", "SolverBisection", "SolverCOND", "SolverCompliant",
           "SolverNewton", "SolverPGS", "SolverPenalty", "SolverPrimalNewton", "StepStats", "make_solver"]
