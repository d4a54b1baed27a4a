"""Contact solvers, one interface (:class:`SolverBase`), picked by name from :data:`SOLVERS`."""
from .base import SolverBase, StepStats
from .apgd import SolverAPGD
from .bisection import SolverBisection
from .compliant import SolverCompliant
from .cond import SolverCOND
from .newton import SolverNewton
from .penalty import SolverPenalty
from .pgs import SolverPGS

SOLVERS = {
    "cond": SolverCOND,
    "penalty": SolverPenalty,
    "pgs": SolverPGS,
    "apgd": SolverAPGD,
    "compliant": SolverCompliant,
    "newton": SolverNewton,
    "bisection": SolverBisection,
}


def make_solver(name: str, **options) -> SolverBase:
    """Instantiate the solver registered as ``name`` with keyword ``options``."""
    from ..validate import ModelError
    if name not in SOLVERS:
        raise ModelError(f"solver: unknown {name!r}; available: {', '.join(sorted(SOLVERS))}")
    return SOLVERS[name](**options)


__all__ = ["SOLVERS", "SolverAPGD", "SolverBase", "SolverBisection", "SolverCOND", "SolverCompliant", "SolverNewton",
           "SolverPGS", "SolverPenalty", "StepStats", "make_solver"]
