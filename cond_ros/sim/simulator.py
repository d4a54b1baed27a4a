"""``Simulator``: the one object the ROS node and the tools drive.

Each step: detect contacts -> a solver assembles and solves the linear
system -> the state advances. Double-buffered: ``state`` is replaced, never
mutated, so callers may keep references to old states.
"""
from __future__ import annotations

import time

import numpy as np

from .collision.dynamic_contacts import NodePairList
from .collision.nodalization import ContactSet, build_contact_set
from .dynamics.assembly import build_pattern
from .jit import kernel, leaf_kernel
from .model import Control, Model, State
from .options import SimOptions
from .solvers import SimulationError, SolverBase, StepStats, make_solver
from .validate import ModelError, finite_array

__all__ = ["SimulationError", "Simulator"]

_CONTROL_FIELDS = ("particle_force", "body_wrench", "robot_q_target", "robot_qd_target", "robot_effort",
                   "robot_drive_stiffness", "robot_drive_damping")
_STATE_FIELDS = ("particle_q", "particle_qd", "body_q", "body_quat", "body_qd", "robot_q", "robot_qd")


@leaf_kernel
def _finite(a):
    for x in a.flat:
        if not np.isfinite(x):
            return False
    return True


@kernel
def _all_finite(a, b, c, d, e, f, g):
    """Every entry of the seven arrays finite."""
    return _finite(a) and _finite(b) and _finite(c) and _finite(d) and _finite(e) and _finite(f) and _finite(g)


@kernel
def _control_is_sound(a, b, c, d, e, stiffness, damping):
    """The control's seven arrays (``_CONTROL_FIELDS``) finite, and its drive gains >= 0."""
    for k in range(stiffness.shape[0]):
        if not (stiffness[k] >= 0.0 and damping[k] >= 0.0):
            return False
    return _all_finite(a, b, c, d, e, stiffness, damping)


class Simulator:
    """Steps a :class:`Model` with one contact solver.

    Args:
        model: the scene.
        options: the step size and the solver (:class:`~cond_ros.sim.options.SimOptions`); or, instead:
        dt: time step [s], > 0.
        solver: a registered solver name (``"cond"``, ``"penalty"``) or a :class:`SolverBase` made for ``model``.
        solver_options: keyword options of the named solver.

    ``options`` holds what it runs with (for a solver given as an object: its name, without options).
    """

    def __init__(self, model: Model, *, options: SimOptions | None = None, dt: float = 0.01, solver="cond",
                 solver_options=None):
        self.model = model
        given = isinstance(solver, SolverBase)
        if options is None:
            options = (SimOptions.of_solver_object(dt, solver.name) if given
                       else SimOptions(dt, solver, solver_options or {}))
        self.options = options
        self.dt = options.dt
        if given and solver.model is not model:
            raise ModelError(f"solver: the {solver.name} solver given was made for another model; make it with "
                             "this one (SolverX(model, ...))")
        self.solver = solver if given else make_solver(options.solver, model, **options.solver_options)
        self.pattern = build_pattern(model)
        self.state: State = model.state()
        self.control: Control = model.control()
        self.contacts: ContactSet | None = None
        self.previous_state: State | None = None  # the state before the last step (sensors read the step)
        self.node_pairs = NodePairList()  # self-contact candidates kept across steps

    def reset(self, state: State | None = None) -> None:
        """Back to the model's initial state (or ``state``); clears warm starts."""
        self.state = (state or self.model.state()).copy()
        self.solver.reset()
        self.contacts = None
        self.previous_state = None

    def _checked_control(self, control: Control) -> Control:
        m = self.model
        n = (m.robot_dof_count,)
        shapes = ((m.particle_count, 3), (m.body_count, 6), n, n, n, n, n)
        # the usual case (float arrays of the right shapes, all finite, gains >= 0) in one kernel; the checks
        # one array at a time, which name what is wrong, only when it is not (~25 us a step before)
        arrays = [getattr(control, name) for name in _CONTROL_FIELDS]
        if all(isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == shape
               for a, shape in zip(arrays, shapes)):
            copies = [a.copy() for a in arrays]
            if _control_is_sound(*copies):
                return Control(*copies)
        fields = dict(zip(_CONTROL_FIELDS, (finite_array(f"control.{name}", a, shape)
                                            for name, a, shape in zip(_CONTROL_FIELDS, arrays, shapes))))
        if np.any(fields["robot_drive_stiffness"] < 0) or np.any(fields["robot_drive_damping"] < 0):
            raise ModelError("control.robot_drive_stiffness/damping: drive gains must be >= 0")
        return Control(**fields)

    def step(self, control: Control | None = None) -> StepStats:
        """Advance one step of ``dt``; raises :class:`ModelError` on a bad control and :class:`SimulationError`
        when the step fails (a non-finite result, a singular system), nothing changes then."""
        control = self._checked_control(control if control is not None else self.control)
        t0 = time.perf_counter()
        contacts = build_contact_set(self.model, self.pattern, self.state, self.dt, self.node_pairs)
        collision_ms = 1e3 * (time.perf_counter() - t0)
        try:
            new_state, stats = self.solver.step(self.state, control, contacts, self.dt)
        except np.linalg.LinAlgError as exc:  # a kernel's inverse of a singular block: the step failed, not the caller
            raise SimulationError(f"{self.solver.name}: {exc} (a singular system) in the step from t = "
                                  f"{self.state.time:.4f} s; the state was not updated") from exc
        stats.collision_ms = collision_ms
        if not _all_finite(new_state.particle_q, new_state.particle_qd, new_state.body_q, new_state.body_quat,
                           new_state.body_qd, new_state.robot_q, new_state.robot_qd):
            name = next(name for name in _STATE_FIELDS if not np.isfinite(getattr(new_state, name)).all())
            raise SimulationError(f"non-finite {name} at t = {new_state.time:.4f} s; the state was not updated")
        self.previous_state = self.state
        self.state = new_state
        self.contacts = contacts
        return stats

    def run(self, steps: int, control: Control | None = None, callback=None) -> list:
        """``steps`` steps with a fixed control; ``callback(sim, stats)`` after each. Returns the stats."""
        if int(steps) != steps or steps < 0:
            raise ModelError(f"steps: expected a non-negative integer, got {steps!r}")
        out = []
        for _ in range(int(steps)):
            out.append(self.step(control))
            if callback is not None:
                callback(self, out[-1])
        return out
