"""Benchmarks of the FEM scenes (paper Tables II, III, IV, VI): ``cond-ros bench soft_mat|soft_ball|
soft_gripper|ball_stiffness``.

Per scene the paper's columns: MP (max penetration), IE (here the internal force norm, which the paper
measured and compared between solvers), DT (dynamics time: assembly + collision), ST (solver time) and
IN (mean iterations per step).
"""
from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from ..scenes import edited_scene
from ..sim import elastic_forces
from .benchmarks import step_statistics
from .paper_tables import PAPER, PAPER_TABLE_IV

#: the paper's table of each scene (its COND, PGS and APGD rows go into the scene's bench result)
PAPER_TABLES = {"soft_mat": "II soft_mat", "soft_ball": "III soft_ball", "soft_gripper": "VI soft_gripper"}


def internal_force_norm(model, state) -> float:
    """||f_int|| [N]: the elastic forces of all elements on all nodes, as one vector."""
    out = np.zeros((model.particle_count, 3))
    elastic_forces(model.tet_nodes, model.tet_rest_shape_inverse, model.tet_rest_volume, model.tet_lame,
                   state.particle_q, out)
    return float(np.linalg.norm(out))


def run_fem_scene(scene, steps: int, *, desc: str, quiet: bool, observe=None) -> dict:
    """Run ``steps`` steps of a scripted FEM scene; the paper's per-scene numbers. ``observe(sim)`` is
    called after every step. The real-time factor counts what a user's loop pays (the scripted control and
    the step), not the internal force norm or ``observe``: those are this benchmark's measurements (the norm
    alone is a whole pass over the elements, 2.3 ms a step on soft_ball)."""
    sim = scene.simulator
    scene.warm_up()
    stats, force_norm = [], []
    stepping = 0.0
    for _ in tqdm(range(steps), desc=desc, leave=False, disable=quiet, unit="step"):
        t0 = time.perf_counter()
        stats.append(sim.step(scene.control(sim.state.time)))
        stepping += time.perf_counter() - t0
        force_norm.append(internal_force_norm(sim.model, sim.state))
        if observe is not None:
            observe(sim)
    return {"steps": steps, "dt_s": sim.dt, "dof": sim.model.dof_count, "nodes": sim.model.particle_count,
            "tets": sim.model.tet_count, "tolerance": sim.solver.tolerance, **step_statistics(stats),
            "internal_force_norm": float(np.mean(force_norm)), "internal_force_norm_max": float(np.max(force_norm)),
            "realtime_factor": steps * sim.dt / stepping}


def _bench_scene(name: str, quick: bool, quiet: bool, quick_steps: int, extra=None, observe=None) -> dict:
    scene = edited_scene(name)
    steps = quick_steps if quick else int(round(scene.duration / scene.simulator.dt))
    per_step = (lambda sim: observe(scene, sim)) if observe is not None else None
    out = run_fem_scene(scene, steps, desc=name, quiet=quiet, observe=per_step)
    if extra is not None:
        out.update(extra(scene))
    table = PAPER_TABLES[name]
    out["paper"] = {"table": table, "columns": PAPER["columns"], **PAPER[table]}
    return out


def bench_soft_mat(quick=False, quiet=True) -> dict:
    """Table II: the Panda folds a soft mat (``config/soft_mat.yaml``)."""
    def fold(scene):
        body, q = scene.soft_bodies[0], scene.simulator.state.particle_q
        rest = scene.simulator.model.particle_q[body.particles]
        moved = rest[:, 1] > 0.1  # the grasped quarter, which ends on top of the other half when folded
        return {"grasped_quarter_mean_y_mm": 1e3 * float(q[body.particles[moved], 1].mean()),
                "grasped_quarter_mean_z_mm": 1e3 * float(q[body.particles[moved], 2].mean())}
    return _bench_scene("soft_mat", quick, quiet, 60, fold)


def bench_soft_ball(quick=False, quiet=True) -> dict:
    """Table III: a two-finger gripper grips and lifts a soft ball (``config/soft_ball.yaml``)."""
    def lift(scene):
        body = scene.soft_bodies[0]
        z0 = scene.simulator.model.particle_q[body.particles, 2].mean()
        return {"ball_lift_mm": 1e3 * float(scene.simulator.state.particle_q[body.particles, 2].mean() - z0)}
    return _bench_scene("soft_ball", quick, quiet, 60, lift)


def bench_soft_gripper(quick=False, quiet=True) -> dict:
    """Table VI: FEM fingers squeeze a rigid cube that sits on an F/T sensor (``config/soft_gripper.yaml``).

    The sensor (the cube's ``mount``) reads the weight plus what the fingers push on the cube; tared by
    the weight, as the paper's measurement was, its force is the contact force on the object."""
    readings = []

    def read(scene, sim):
        mount = scene.mounts[0]
        readings.append(mount.wrench(sim.model, sim.previous_state, sim.state, sim.dt))

    def sensor(scene):
        model, mount = scene.simulator.model, scene.mounts[0]
        weight = model.body_mass[mount.body] * model.gravity  # what the cube alone puts on the sensor
        force = np.array([f for f, _ in readings])
        contact = force - weight
        return {"sensor_force_n": force[-1].tolist(), "sensor_torque_nm": readings[-1][1].tolist(),
                "contact_force_n": contact[-1].tolist(),
                "contact_force_norm_max_n": float(np.linalg.norm(contact, axis=1).max()),
                "sensor_rate_hz": 1.0 / scene.simulator.dt}
    return _bench_scene("soft_gripper", quick, quiet, 40, sensor, read)


def ball_stiffness_edit(e_mpa, cells=None, solver=None):
    """A YAML edit of ``soft_ball``: the ball's Young's modulus [MPa] (None: the scene's), mesh ``cells`` and
    solver options (a dict merged into the scene's)."""
    def edit(data):
        if e_mpa is not None:
            data["soft_bodies"][0]["material"]["youngs_modulus"] = e_mpa * 1e6
        if cells is not None:
            data["soft_bodies"][0]["mesh"]["cells"] = cells
        if solver:
            data["solver"].update(solver)
    return edit


def bench_ball_stiffness(quick=False, quiet=True) -> dict:
    """Table IV analogue: mean COND iterations of the soft-ball grip at E = 0.1, 1 and 10 MPa.

    ``iterations`` is the scene's COND (with its two-level ``coarse_correction``); the ``paper_cond`` keys
    repeat the run with the paper's V-FPI alone (Alg. 1-3).
    """
    moduli = PAPER_TABLE_IV["youngs_modulus_mpa"]
    out = {"youngs_modulus_mpa": moduli}
    for prefix, solver in (("", None), ("paper_cond_", {"coarse_correction": False})):
        rows = []
        for e in moduli:
            scene = edited_scene("soft_ball", ball_stiffness_edit(e, solver=solver))
            steps = 80 if quick else int(round(scene.duration / scene.simulator.dt))
            label = "paper COND, " if solver else ""
            rows.append(run_fem_scene(scene, steps, desc=f"ball {label}E={e:g} MPa", quiet=quiet))
        out.update({prefix + "iterations": [r["iterations_mean"] for r in rows],
                    prefix + "max_penetration_mm": [r["max_penetration_mm"] for r in rows],
                    prefix + "solver_ms": [r["solver_ms"] for r in rows]})
    return {**out, "steps": steps, "paper_table_iv": PAPER_TABLE_IV}


FEM_BENCHMARKS = {
    "soft_mat": bench_soft_mat,
    "soft_ball": bench_soft_ball,
    "soft_gripper": bench_soft_gripper,
    "ball_stiffness": bench_ball_stiffness,
}
