"""Benchmarks that reproduce the COND paper's simple cases (``cond-ros bench NAME``).

Each benchmark returns a JSON-serializable dict of its numbers; comparisons
are made inside one run (COND against a penalty baseline, Chebyshev on/off,
DOF against DOF), never against wall-clock constants.
"""
from __future__ import annotations

import os
import time

import numpy as np
from tqdm import tqdm

from ..scenes import BOX_HALF, BOX_MASS, box_on_plane, cloth
from ..sim import Simulator
from .paper_tables import PAPER_TABLE_IX

PAPER_TABLE_I = {  # Sec. V-B, averaged position errors [mm]
    "kv": [1e3, 1e4, 1e5], "err_x_mm": [0.0, 0.0, 0.0], "err_y_mm": [0.1226, 0.0122, 0.0012],
    "err_z_mm": [0.6131, 0.0612, 0.0061], "penalty_err_y_mm": [30.23, 63.87], "penalty_err_z_mm": [12.24, 15.32],
}


def _progress(iterable, desc, quiet):
    return tqdm(iterable, desc=desc, leave=False, disable=quiet, unit="step")


def box_sliding_errors(simulator: Simulator, force: float, steps: int, quiet=True) -> dict:
    """Mean absolute COM error [mm] per axis against x = 0, y = a t^2 / 2, z = const, a = F/m - mu g."""
    model = simulator.model
    mu = float(model.collider_mu[0, 0])
    accel = force / BOX_MASS - mu * -model.gravity[2]
    control = model.control()
    control.body_wrench[0, 1] = force
    errors, iterations, penetration = [], [], []
    for _ in _progress(range(steps), f"box {simulator.solver.name}", quiet):
        stats = simulator.step(control)
        t = simulator.state.time
        exact = np.array([0.0, 0.5 * accel * t * t, BOX_HALF])
        errors.append(np.abs(simulator.state.body_q[0] - exact))
        iterations.append(stats.iterations)
        penetration.append(stats.max_penetration)
    err = 1e3 * np.mean(errors, axis=0)
    return {"err_mm": err.tolist(), "iterations_mean": float(np.mean(iterations)),
            "max_penetration_mm": 1e3 * float(np.max(penetration))}


def bench_box_sliding(quick=False, quiet=True) -> dict:
    """Table I: box pushed along y on a mu = 0.2 plane for 1 s, COND at three k_v and two penalty gain sets."""
    force, dt, duration = 2.0, 0.01, 1.0
    steps = int(round(duration / dt))
    out = {"force_N": force, "dt_s": dt, "duration_s": duration, "mu": 0.2, "kv": [1e3, 1e4, 1e5],
           "err_x_mm": [], "err_y_mm": [], "err_z_mm": [], "iterations_mean": [], "paper": PAPER_TABLE_I}
    t0 = time.perf_counter()
    for kv in out["kv"]:
        sim = Simulator(box_on_plane(virtual_node_gain=kv), dt=dt,
                        solver_options=dict(tolerance=1e-10, max_iterations=20000))
        res = box_sliding_errors(sim, force, steps, quiet)
        for axis, value in zip("xyz", res["err_mm"]):
            out[f"err_{axis}_mm"].append(value)
        out["iterations_mean"].append(res["iterations_mean"])
    # Penalty2 is Penalty1 with every gain x10 (the slip velocity is the inverse of a friction gain)
    penalty = {"stiffness": [1e4, 1e5], "damping": [1e2, 1e3], "slip_velocity": [1e-2, 1e-3],
               "err_x_mm": [], "err_y_mm": [], "err_z_mm": []}
    for k, c, vs in zip(penalty["stiffness"], penalty["damping"], penalty["slip_velocity"]):
        sim = Simulator(box_on_plane(), dt=dt, solver="penalty",
                        solver_options=dict(stiffness=k, damping=c, slip_velocity=vs))
        res = box_sliding_errors(sim, force, steps, quiet)
        for axis, value in zip("xyz", res["err_mm"]):
            penalty[f"err_{axis}_mm"].append(value)
    out["penalty"] = penalty
    out["wall_s"] = time.perf_counter() - t0
    return out


#: Table IX's "Franka cable": panda_cable (COND at the paper's 1e-4, 200 iterations) over its first 10 s, which hold
#: the taut, pulled phase, the hardest for V-FPI; quick: 40 segments, 3 s
CABLE_CHEBYSHEV = {False: (320, 1000), True: (40, 300)}


def _cable_chebyshev(quick, quiet) -> dict:
    from ..scenes import edited_scene
    from .runner import run_scene
    segments, steps = CABLE_CHEBYSHEV[bool(quick)]
    out = {"segments": segments, "steps": steps}
    for key, chebyshev in (("with", True), ("without", False)):
        def edit(data):
            data["cables"][0]["segments"] = segments
            data["solver"]["chebyshev"] = chebyshev  # the scene's COND otherwise
        scene = edited_scene("panda_cable", edit)
        iterations = run_scene(scene, steps, progress=not quiet, desc=f"cable, Chebyshev {key}").column("iterations")
        cap = scene.simulator.solver.max_iterations
        out[f"iters_{key}"] = float(np.mean(iterations))
        out[key] = {"iterations_mean": float(np.mean(iterations)), "iterations_max": int(np.max(iterations)),
                    "steps_at_cap": int(np.sum(iterations >= cap)), "tolerance": scene.simulator.solver.tolerance}
    return out


def _mean_iterations(model, steps, quiet, **options) -> dict:
    sim = Simulator(model, dt=0.01, solver_options=options)
    stats = [sim.step() for _ in _progress(range(steps), "cloth", quiet)]
    return {"iterations_mean": float(np.mean([s.iterations for s in stats])),
            "solver_ms_median": float(np.median([s.solver_ms for s in stats])),
            "max_penetration_mm": 1e3 * max(s.max_penetration for s in stats),
            "contacts_mean": float(np.mean([s.contact_count for s in stats]))}


def bench_chebyshev(quick=False, quiet=True) -> dict:
    """Table IX analogue: mean V-FPI iterations to theta_th with and without Chebyshev acceleration.

    Scene: a 24 x 24 particle cloth dropped on a sphere and a plane (1728 DOF, ~150 contacts at rest).
    """
    n, steps = (16, 60) if quick else (24, 120)
    model = cloth(n)
    with_acc = _mean_iterations(model, steps, quiet, chebyshev=True)
    without = _mean_iterations(model, steps, quiet, chebyshev=False)
    return {"scene": f"cloth {n}x{n} on sphere + plane", "dof": model.dof_count, "steps": steps,
            "tolerance": 1e-8, "iters_with": with_acc["iterations_mean"], "iters_without": without["iterations_mean"],
            "with": with_acc, "without": without, "franka_cable": _cable_chebyshev(quick, quiet),
            "paper_table_ix": PAPER_TABLE_IX}


def step_statistics(stats) -> dict:
    """The per-step costs and quality of a run's ``StepStats``: medians of the stage times (``dynamics_ms``
    with collision, as the paper's DT), mean and largest iterations, mean contacts, worst penetration."""
    return {"dynamics_ms": float(np.median([s.dynamics_ms + s.collision_ms for s in stats])),
            "collision_ms": float(np.median([s.collision_ms for s in stats])),
            "solver_ms": float(np.median([s.solver_ms for s in stats])),
            "iterations_mean": float(np.mean([s.iterations for s in stats])),
            "iterations_max": int(max(s.iterations for s in stats)),
            "contacts_mean": float(np.mean([s.contact_count for s in stats])),
            "max_penetration_mm": 1e3 * max(s.max_penetration for s in stats)}


def bench_cloth_drape(quick=False, quiet=True) -> dict:
    """The README's demo (``cond-ros run cloth_drape``): a 24 x 24 particle cloth dropped on a sphere and a
    plane, its whole 3 s. Real-time factor of the scene's solver (COND with Chebyshev, the stepping alone),
    and Table IX's counts on the same run: mean V-FPI iterations with Chebyshev and without it (that second
    run is not timed)."""
    from ..scenes import load_named_scene
    from ..sim import SimOptions
    scene = load_named_scene("cloth_drape")
    scene.warm_up()
    sim = scene.simulator
    steps = 60 if quick else int(round(scene.duration / sim.dt))
    t0 = time.perf_counter()
    stats = [sim.step() for _ in _progress(range(steps), "cloth_drape", quiet)]
    wall = time.perf_counter() - t0
    options = sim.options
    plain = Simulator(sim.model, options=SimOptions(options.dt, options.solver,
                                                    {**options.solver_options, "chebyshev": False}))
    without = [plain.step().iterations for _ in _progress(range(steps), "cloth_drape, no Chebyshev", quiet)]
    return {"steps": steps, "dt_s": sim.dt, "dof": sim.model.dof_count, "tolerance": sim.solver.tolerance,
            **step_statistics(stats), "iterations_without_chebyshev_mean": float(np.mean(without)),
            "realtime_factor": steps * sim.dt / wall, "paper_table_ix": PAPER_TABLE_IX}


def bench_scaling(quick=False, quiet=True) -> dict:
    """Fig. 11 analogue: COND solver time per step against DOF on a cloth sliding on a plane (every node in contact).

    Gravity is tilted 20 degrees past the friction angle (mu = 0.2), so every node keeps a sliding
    contact and the problem never becomes trivially static. The iteration count is fixed (30 per
    step) so that the time measures the per-iteration cost, the quantity the paper's O(n) argument
    (Sec. III-F) is about. It runs on one numba thread: on 2 shared cores the threaded kernels'
    timings scatter by +-30 %, which hides the trend being measured.
    """
    import numba
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _scaling(quick, quiet)
    finally:
        numba.set_num_threads(threads)


def sliding_cloth_timings(n: int, solver: str, iterations: int, steps: int) -> dict:
    """One size of the Fig. 11 scene: the n x n cloth sliding on a mu = 0.2 plane under gravity tilted 20
    degrees past the friction angle, ``solver`` at a fixed ``iterations`` per step. After two steps (landing,
    compiling), the medians over ``steps`` steps of the solver, Delassus and dynamics time [ms] and the
    contact count, and the DOF."""
    tilt = np.deg2rad(20.0)
    model = cloth(n, with_sphere=False, drop=0.0, mu=0.2, gravity=(9.81 * np.sin(tilt), 0.0, -9.81 * np.cos(tilt)))
    sim = Simulator(model, dt=0.01, solver=solver, solver_options=dict(tolerance=1e-300, max_iterations=iterations))
    for _ in range(2):
        sim.step()
    stats = [sim.step() for _ in range(steps)]
    return {"dof": model.dof_count, "solver_ms": float(np.median([s.solver_ms for s in stats])),
            "delassus_ms": float(np.median([s.delassus_ms for s in stats])),
            "dynamics_ms": float(np.median([s.dynamics_ms for s in stats])),
            "contacts": int(np.median([s.contact_count for s in stats]))}


def linear_fit(x, y) -> tuple[float, float]:
    """(slope, R^2) of the least-squares line through (x, y)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(1.0 - np.sum((y - (slope * x + intercept)) ** 2) / np.sum((y - y.mean()) ** 2))


def _scaling(quick, quiet) -> dict:
    sizes = (18, 32, 48) if quick else (18, 32, 48, 64, 80, 96, 112, 130)
    iterations, steps = 30, 15
    runs = [sliding_cloth_timings(n, "cond", iterations, steps) for n in _progress(sizes, "scaling", quiet)]
    out = {key: [run[key] for run in runs] for key in ("dof", "solver_ms", "dynamics_ms", "contacts")}
    slope, r2 = linear_fit(out["dof"], out["solver_ms"])
    return {**out, "iterations_per_step": iterations, "threads": 1, "r2_linear": r2, "slope_us_per_dof": 1e3 * slope}


def _gripper_hand(script) -> int:
    """The link that carries the script's gripper: the parent of the link its first gripper DOF drives."""
    art = script.model.robots[script.robot]
    finger = int(np.flatnonzero(art.joint_dof == script.gripper_dofs[0])[0])
    return int(art.link_parent[finger])


def bench_panda_pick(quick=False, quiet=True) -> dict:
    """The Panda picks a box from a table and lifts it (``config/panda_pick.yaml``): cost and quality per step.

    Quality as issue 30 states it: the box's lift, the largest penetration once the grip is closed (from the
    first waypoint after the gripper's close on: the closing impact is over), and the box's drift in the hand
    (its position in the frame of the link that carries the gripper, largest distance from where it was at
    that waypoint, through the lift and the hold after it).
    """
    from ..scenes import load_named_scene
    from ..sim import ArticulationKinematics
    scene = load_named_scene("panda_pick")
    scene.warm_up()  # the kernels compile outside the timing (a cold cache took ~20 s, a run ~1 s)
    sim, script, duration = scene[:3]
    steps = int(round(duration / sim.dt))
    start_z = float(sim.state.body_q[0, 2])
    closed = np.flatnonzero(script.gripper_closed)
    hold_from = float(script.times[closed[0] + 1]) if len(closed) and closed[0] + 1 < len(script.times) else np.inf
    kin = ArticulationKinematics(sim.model.robots[script.robot])
    hand, lo = _gripper_hand(script), sim.model.robot_dof_offset[script.robot]
    hi = sim.model.robot_dof_offset[script.robot + 1]
    stats, in_hand, times = [], [], []
    wall = 0.0  # the control and the step; the box's pose in the hand is this benchmark's measurement
    for _ in _progress(range(steps), "panda_pick", quiet):
        t0 = time.perf_counter()
        stats.append(sim.step(script.control(sim.state.time)))
        wall += time.perf_counter() - t0
        times.append(sim.state.time)
        if sim.state.time >= hold_from - 1e-9:
            kin.update(sim.state.robot_q[lo:hi])
            pose = kin.link_pose[hand]
            in_hand.append(pose[:3, :3].T @ (sim.state.body_q[0] - pose[:3, 3]))
    held = np.array(times) >= hold_from - 1e-9
    drift = np.linalg.norm(np.array(in_hand) - in_hand[0], axis=1).max() if in_hand else np.nan
    return {"steps": steps, "dt_s": sim.dt,
            "dynamics_ms": float(np.median([s.dynamics_ms + s.collision_ms for s in stats])),
            "solver_ms": float(np.median([s.solver_ms for s in stats])),
            "iterations_mean": float(np.mean([s.iterations for s in stats])),
            "iterations_max": int(max(s.iterations for s in stats)),
            "max_penetration_mm": 1e3 * max(s.max_penetration for s in stats),
            "hold_from_s": hold_from,
            "hold_max_penetration_mm": 1e3 * max((s.max_penetration for s, h in zip(stats, held) if h), default=0.0),
            "box_drift_in_hand_mm": 1e3 * float(drift),
            "lift_mm": 1e3 * (float(sim.state.body_q[0, 2]) - start_z), "realtime_factor": steps * sim.dt / wall}


#: ``bench panda_cable --solver NAME`` for a solver other than the scene's own (COND at the paper's settings):
#: these settings, or the solver's defaults
PANDA_CABLE_SOLVERS = {"primal_newton": {"tolerance": 1e-7, "max_iterations": 50}}


def bench_panda_cable(quick=False, quiet=True, segments=None, steps=None, csv=None, solver=None) -> dict:
    """The cable-winding scene (``config/panda_cable.yaml``): per-step cost, convergence and penetration.

    Runs the first ``steps`` steps (default: the whole 55 s; 200 with ``quick``) with ``segments`` cable
    segments (default: the scene's 320) and ``solver`` (default: the scene's; ``PANDA_CABLE_SOLVERS``), and
    writes the per-step CSV of ``cond-ros run`` to ``csv``.
    """
    import tempfile

    from ..scenes import edited_scene
    from ..sim import SOLVERS, ModelError
    from .runner import run_scene
    if solver is not None and solver not in SOLVERS:
        raise ModelError(f"solver: unknown {solver!r}; available: {', '.join(sorted(SOLVERS))}")

    def edit(data):
        if segments is not None:
            data["cables"][0]["segments"] = int(segments)
        if solver is not None and solver != data["solver"]["name"]:
            data["solver"] = {"name": solver, **PANDA_CABLE_SOLVERS.get(solver, {})}
    scene = edited_scene("panda_cable", edit if segments is not None or solver is not None else None)
    sim = scene.simulator
    if steps is None:
        steps = 200 if quick else int(round(scene.duration / sim.dt))
    scene.warm_up()
    result = run_scene(scene, int(steps), progress=not quiet, desc=f"panda_cable N={scene.cables[0].segments}")
    if csv is None:
        csv = os.path.join(tempfile.gettempdir(), f"panda_cable_{scene.cables[0].segments}.csv")
    result.write_csv(csv)
    summary = result.summary()
    return {"segments": scene.cables[0].segments, "solver": sim.solver.name, "dof": sim.model.dof_count,
            "steps": summary["steps"],
            "dt_s": sim.dt, "dynamics_ms": summary["dynamics_ms"], "solver_ms": summary["solver_ms"],
            "collision_ms": summary["collision_ms"], "iterations_mean": summary["iterations_mean"],
            "iterations_max": summary["iterations_max"], "max_penetration_mm": summary["max_penetration_mm"],
            "realtime_factor": summary["realtime_factor"], "physics_ms_mean": summary["physics_ms_mean"], "csv": csv,
            "tool_force_base_max_n": float(np.max(np.linalg.norm(np.column_stack(
                [result.column(f"wrist_ft_tool_force_base_{a}") for a in ("fx", "fy", "fz")]), axis=1)))}
