"""The one solver interface: ``SolverX(model, **options)``, then ``step(state_in, control, contacts, dt) ->
(state_out, StepStats)``.

A solver only decides how the step's contact problem A v = b + J_c^T lambda
(eq. 1, 15) is solved; assembling it (``dynamics``) and advancing the state
(``integrate``) are shared by every solver, so they compare on equal footing.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..collision.nodalization import ContactSet
from ..dynamics.assembly import LinearSystem, assemble
from ..dynamics.integration import advance_state
from ..model import Control, Model, State
from ..validate import ModelError, non_negative, positive, scalar


def require_isotropic_friction(friction: np.ndarray, solver: str, remedy: str) -> None:
    """Raise :class:`ModelError` naming ``solver`` and ``remedy`` when any contact's cone is anisotropic
    (mu1 != mu2 in ``friction``, (m, 2)): for the solvers whose projection or conic section is the
    isotropic cone's only."""
    if len(friction) and np.any(friction[:, 0] != friction[:, 1]):
        raise ModelError(f"{solver}: anisotropic friction (mu1 != mu2) is not supported; {remedy}")


class SimulationError(RuntimeError):
    """The step blew up (non-finite values, or a solver iteration that diverged); the previous state is kept."""


@dataclasses.dataclass
class StepStats:
    """What one step cost and how well it converged.

    Attributes:
        iterations: solver iterations used.
        residual: final ||v^{l+1} - v^l|| [m/s] (COND's theta), or the solver's own measure.
        dynamics_ms: time to assemble A, b [ms].
        solver_ms: time to solve the contact problem [ms].
        delassus_ms: the part of solver_ms that impulse-space solvers spend factorizing A and assembling
            the Delassus operator (the paper's figure in parentheses); 0 for COND.
        collision_ms: time for detection and contact set-up [ms] (filled by the simulator).
        contact_count: number of contacts.
        max_penetration: deepest penetration at the start of the step [m] (>= 0).
    """

    iterations: int = 0
    residual: float = 0.0
    dynamics_ms: float = 0.0
    solver_ms: float = 0.0
    delassus_ms: float = 0.0
    collision_ms: float = 0.0
    contact_count: int = 0
    max_penetration: float = 0.0


class SolverBase:
    """Base class of the contact solvers.

    A solver is made for one model (``SolverX(model, **options)``, as Newton's ``SolverBase(model)``): it
    checks its options when made and may build per-model structure once. Subclasses implement
    :meth:`solve`; they keep warm-start buffers that :meth:`reset` clears.
    """

    name = "base"
    delassus_ms = 0.0  # set by solvers that assemble J A^-1 J^T (see StepStats)

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise ModelError(f"{type(self).__name__}: the first argument must be the Model it solves, got "
                             f"{type(model).__name__}")
        self.model = model

    def reset(self) -> None:
        """Forget warm-start data (call after teleporting the state)."""

    def _set_iteration_options(self, tolerance, max_iterations, regularization, warm_start) -> None:
        """Validate and keep the options every iterative solver has: ``tolerance`` (> 0), ``max_iterations``
        (>= 1), ``regularization`` (the contact compliance omega, >= 0) and ``warm_start``."""
        self.tolerance = positive("tolerance", tolerance)
        self.max_iterations = int(scalar("max_iterations", max_iterations, low=1))
        self.regularization = non_negative("regularization", regularization)
        self.warm_start = bool(warm_start)

    @property
    def stopping_threshold(self) -> float:
        """The residual below which an iterative solver stops on its model: ``tolerance``, unless the solver scales
        it with the model (``SolverCOND``'s ``tolerance_reference_dofs``). A solver without a tolerance has none
        (AttributeError)."""
        return self.tolerance

    def prepare(self, state: State, contacts: ContactSet) -> None:
        """Set up what :meth:`solve` needs from the model beyond the linear system (called by :meth:`step`)."""

    def assemble(self, state: State, control: Control, contacts: ContactSet, dt: float) -> LinearSystem:
        """The step's linear system; contacts act through virtual nodes (eq. 15)."""
        return assemble(self.model, contacts.pattern, state, control, dt, contacts.vn_dof, contacts.vn_size,
                        contacts.vn_jac, contacts.vn_group, kinematics=contacts.kinematics)

    def solve(self, system: LinearSystem, contacts: ContactSet, dt: float):
        """Return (v_hat (system.size,), contact forces (count, 3) in contact frames [N], iterations, residual)."""
        raise NotImplementedError

    def step(self, state_in: State, control: Control, contacts: ContactSet, dt: float):
        """Assemble, solve and integrate one step; ``state_in`` is not modified."""
        t0 = time.perf_counter()
        model = self.model
        system = self.assemble(state_in, control, contacts, dt)
        t1 = time.perf_counter()
        self.prepare(state_in, contacts)
        v_hat, forces, iterations, residual = self.solve(system, contacts, dt)
        t2 = time.perf_counter()
        contacts.force[:] = forces
        state_out = advance_state(model, state_in, v_hat[:model.dof_count], dt)
        gaps = contacts.gap
        stats = StepStats(iterations=int(iterations), residual=float(residual),
                          dynamics_ms=1e3 * (t1 - t0), solver_ms=1e3 * (t2 - t1),
                          delassus_ms=float(self.delassus_ms), contact_count=contacts.count,
                          max_penetration=float(max(0.0, -np.min(gaps))) if len(gaps) else 0.0)
        return state_out, stats
