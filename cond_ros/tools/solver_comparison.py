"""Several solvers on the same scene, from the same state: the paper's per-solver table rows.

A scene is first run with its own (COND) solver up to the start of the phase being compared (the
``prefix``), then every solver runs the same ``window`` of steps from that state with the same scripted
control. The I-FPI baselines factorize A and assemble the Delassus operator every step, which at the
paper's sizes costs seconds per step, so a window of the contact-rich phase replaces the paper's whole
trials. Accuracy is measured against a reference run of the same window with COND at a tolerance far
below the compared one (the paper: "solutions from excessive iterations").

Per solver: MP (max penetration [mm] at the start of the window's steps 2..W, i.e. of the states the
solver itself produced: the first step's comes from the shared prefix), IE (mean
|(||f_int|| - ||f_int,ref||)| over the window [mN], FEM scenes) or FE (mean ||F_tool - F_tool,ref|| [N],
scenes with an F/T sensor), DT (median dynamics
time: assembly + collision [ms]), ST (median solver time [ms], with the Delassus part separately) and
IN (mean iterations per step).
"""
from __future__ import annotations

import copy

import numpy as np
from tqdm import tqdm

from ..sim import SimulationError, Simulator, make_solver
from .fem_benchmarks import internal_force_norm

REFERENCE_TOLERANCE = 1e-9  # [m/s]; the compared runs use the scene's (1e-4 .. 1e-5)
REFERENCE_MAX_ITERATIONS = 20_000


def run_prefix(scene, steps: int, *, quiet: bool = True):
    """Run the scene's own solver ``steps`` steps from the start; return the state reached."""
    sim = scene.simulator
    sim.reset()
    for _ in tqdm(range(steps), desc=f"prefix {steps} steps", leave=False, disable=quiet, unit="step"):
        sim.step(scene.control(sim.state.time))
    return sim.state.copy()


def solver_for(scene, name: str, options: dict | None = None):
    """A fresh solver: ``"scene"`` is a copy of the scene's own (COND with its settings); others by name
    with the scene solver's tolerance and iteration cap unless ``options`` say otherwise."""
    own = scene.simulator.solver
    if name == "scene":
        solver = copy.deepcopy(own, memo={id(own.model): own.model})  # the model is shared, not copied
        for key, value in (options or {}).items():
            setattr(solver, key, value)
        solver.reset()
        return solver
    merged = {"tolerance": own.tolerance, "max_iterations": own.max_iterations}
    merged.update(options or {})
    return make_solver(name, scene.simulator.model, **merged)


def run_window(scene, solver, start_state, steps: int, *, desc: str = "window", quiet: bool = True) -> dict:
    """Step ``solver`` ``steps`` times from ``start_state``; per-step series of everything the tables need."""
    model = scene.simulator.model
    sim = Simulator(model, dt=scene.simulator.dt, solver=solver)
    sim.reset(state=start_state)
    sensor = scene.sensors[0] if scene.sensors else None
    if sensor is not None:
        sensor.reset()
    series = {k: [] for k in ("penetration_mm", "dynamics_ms", "solver_ms", "delassus_ms", "iterations",
                              "contacts", "internal_force_norm", "tool_force")}
    failed = None
    for _ in tqdm(range(steps), desc=desc, leave=False, disable=quiet, unit="step"):
        try:
            st = sim.step(scene.control(sim.state.time))
        except SimulationError as exc:
            failed = str(exc)
            break
        series["penetration_mm"].append(1e3 * st.max_penetration)
        series["dynamics_ms"].append(st.dynamics_ms + st.collision_ms)
        series["solver_ms"].append(st.solver_ms)
        series["delassus_ms"].append(st.delassus_ms)
        series["iterations"].append(st.iterations)
        series["contacts"].append(st.contact_count)
        if model.tet_count:
            series["internal_force_norm"].append(internal_force_norm(model, sim.state))
        if sensor is not None:
            _, wrench = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
            series["tool_force"].append(sensor.base_frame(wrench.external_force).tolist())
    series["failed"] = failed
    return series


def summarize(series: dict, reference: dict | None) -> dict:
    """The paper's columns from a window's series (and the reference window's)."""
    done = len(series["iterations"])
    out = {"steps": done, "failed": series["failed"],
           "MP_mm": float(max(series["penetration_mm"][1:], default=float("nan"))),
           "DT_ms": float(np.median(series["dynamics_ms"])) if done else float("nan"),
           "ST_ms": float(np.median(series["solver_ms"])) if done else float("nan"),
           "ST_delassus_ms": float(np.median(series["delassus_ms"])) if done else float("nan"),
           "IN": float(np.mean(series["iterations"])) if done else float("nan"),
           "contacts_mean": float(np.mean(series["contacts"])) if done else float("nan")}
    if reference is not None:
        k = min(done, len(reference["iterations"]))
        if series["internal_force_norm"] and k:
            diff = np.abs(np.subtract(series["internal_force_norm"][:k], reference["internal_force_norm"][:k]))
            out["IE_mN"] = 1e3 * float(np.mean(diff))
        if series["tool_force"] and k:
            diff = np.subtract(series["tool_force"][:k], reference["tool_force"][:k])
            out["FE_N"] = float(np.mean(np.linalg.norm(diff, axis=1)))
    return out


def compare_solvers(scene, solvers: dict, *, prefix: int, window: int, reference=True, quiet: bool = True) -> dict:
    """Rows of one table: ``solvers`` maps a row label to (solver name, options) ("scene" = the scene's COND).

    ``reference``: False, True, or a dict of extra options of the reference COND (e.g. ``weights="block"``
    on a stiff cable, where the Frobenius W needs ~20 000 iterations to 1e-9).
    """
    start = run_prefix(scene, prefix, quiet=quiet)
    ref = None
    if reference is not False:
        options = {"tolerance": REFERENCE_TOLERANCE, "max_iterations": REFERENCE_MAX_ITERATIONS}
        tight = solver_for(scene, "scene", {**options, **(reference if isinstance(reference, dict) else {})})
        ref = run_window(scene, tight, start, window, desc="reference", quiet=quiet)
    rows = {}
    for label, (name, options) in solvers.items():
        series = run_window(scene, solver_for(scene, name, options), start, window, desc=label, quiet=quiet)
        rows[label] = summarize(series, ref)
    return {"prefix_steps": prefix, "window_steps": window, "start_time_s": float(start.time),
            "dof": int(scene.simulator.model.dof_count), "tolerance": float(scene.simulator.solver.tolerance),
            "reference_tolerance": REFERENCE_TOLERANCE if reference is not False else None, "rows": rows}
