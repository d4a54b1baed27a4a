"""Run a loaded scene headless: step, read the sensors, log one row per step, summarize.

Shared by ``cond-ros run`` and the scene benchmarks, so both write the same per-step CSV.
"""
from __future__ import annotations

import csv
import dataclasses
import threading
import time

import numpy as np
from tqdm import tqdm

from ..scenes import Scene
from ..sim import ArticulationKinematics, jit, matrix_to_quat

AXES = ("fx", "fy", "fz", "tx", "ty", "tz")
STEP_COLUMNS = ("time_s", "iterations", "residual", "contacts", "max_penetration_m", "collision_ms", "dynamics_ms",
                "solver_ms")


@dataclasses.dataclass
class RunResult:
    """Per-step log (``header``, ``rows``), the run's wall time [s] and the part of it numba spent compiling."""

    header: list
    rows: np.ndarray
    wall_s: float
    dt: float
    compile_s: float = 0.0

    def column(self, name: str) -> np.ndarray:
        return self.rows[:, self.header.index(name)]

    def summary(self) -> dict:
        """Medians of the per-step costs, mean iterations, worst penetration, achieved real-time factor (of the
        wall time less the compilation's)."""
        steps = len(self.rows)
        if steps == 0:
            return dict(steps=0)
        sim_time = steps * self.dt
        per_step = self.column("collision_ms") + self.column("dynamics_ms") + self.column("solver_ms")
        stepping = self.wall_s - self.compile_s
        return dict(steps=steps, simulated_s=sim_time, wall_s=self.wall_s, compile_s=self.compile_s,
                    realtime_factor=sim_time / stepping if stepping > 0 else float("inf"),
                    iterations_mean=float(self.column("iterations").mean()),
                    iterations_max=int(self.column("iterations").max()),
                    max_penetration_mm=1e3 * float(self.column("max_penetration_m").max()),
                    collision_ms=float(np.median(self.column("collision_ms"))),
                    dynamics_ms=float(np.median(self.column("dynamics_ms"))),
                    solver_ms=float(np.median(self.column("solver_ms"))),
                    step_ms_median=float(np.median(per_step)))

    def write_csv(self, path: str) -> None:
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(self.header)
            writer.writerows(self.rows.tolist())


def _header(scene: Scene) -> list:
    model = scene.simulator.model
    header = list(STEP_COLUMNS)
    for art in model.robots:
        header += [f"q_{name}" for name in art.dof_name]
    if scene.tool_link is not None:
        header += ["tool_px", "tool_py", "tool_pz", "tool_qw", "tool_qx", "tool_qy", "tool_qz"]
    for sensor in scene.sensors:
        name = sensor.spec.name
        header += [f"{name}_{a}" for a in AXES]  # measured, sensor's frame
        header += [f"{name}_true_{a}" for a in AXES]  # noise-free, sensor's frame
        header += [f"{name}_base_{a}" for a in AXES]  # noise-free, robot base frame
        header += [f"{name}_tool_force_base_{a}" for a in AXES[:3]]  # environment (cable) on the tool, base frame
    return header


def _tool_pose(scene: Scene, kin: ArticulationKinematics, base_inverse: np.ndarray) -> list:
    """The tool's position and quaternion (w, x, y, z) in the robot's base frame (``base_inverse``: the
    inverse of the base's world pose)."""
    model, script = scene.simulator.model, scene.script
    lo, hi = model.robot_dof_offset[script.robot], model.robot_dof_offset[script.robot + 1]
    kin.update(scene.simulator.state.robot_q[lo:hi])
    pose = base_inverse @ kin.link_pose[script.tool_link]
    return pose[:3, 3].tolist() + list(matrix_to_quat(pose))


def run_scene(scene: Scene, steps: int, *, progress: bool = True, desc: str = "run") -> RunResult:
    """Step ``scene`` ``steps`` times with its scripted motion, reading every sensor after each step."""
    sim = scene.simulator
    header = _header(scene)
    has_tool = scene.tool_link is not None
    kin = ArticulationKinematics(sim.model.robots[scene.script.robot]) if has_tool else None
    base_inverse = np.linalg.inv(kin.art.base_transform) if has_tool else None
    rows = np.zeros((steps, len(header)))
    with jit.CompileTimer() as compiling:  # a kernel first called mid-run compiles then
        t0 = time.perf_counter()
        for k in tqdm(range(steps), desc=desc, unit="step", disable=not progress):
            st = sim.step(scene.control(sim.state.time))
            row = [sim.state.time, st.iterations, st.residual, st.contact_count, st.max_penetration, st.collision_ms,
                   st.dynamics_ms, st.solver_ms]
            row += list(sim.state.robot_q)
            if has_tool:
                row += _tool_pose(scene, kin, base_inverse)
            for sensor in scene.sensors:
                reading, wrench = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
                frame = wrench.child_pose if sensor.spec.frame != "parent" else wrench.parent_pose
                if sensor.spec.frame == "sensor":
                    frame = frame @ sensor.spec.sensor_pose
                to_base = sensor.base_rotation.T @ frame[:3, :3]
                row += list(reading.wrench) + list(reading.true_wrench)
                row += list(to_base @ reading.true_wrench[:3]) + list(to_base @ reading.true_wrench[3:])
                row += list(sensor.base_frame(wrench.external_force))
            rows[k] = row
        wall = time.perf_counter() - t0
    return RunResult(header, rows, wall, sim.dt, compiling.seconds)


COMPILE_PHASE = "compiling kernels (first run only, 0.5-2 min; later runs load them in about a second)"


def warm_up_timed(scene: Scene, *, progress: bool = True) -> float:
    """Compile (or load) the scene's kernels with :meth:`Scene.warm_up`, showing :data:`COMPILE_PHASE` with a
    running timer, so that a first run does not sit silent at step 0; returns the seconds it took."""
    bar = tqdm(desc=COMPILE_PHASE, bar_format="{desc}: {elapsed}", disable=not progress)
    done = threading.Event()

    def tick():  # tqdm redraws only on update; the compile makes none for a minute
        while not done.wait(0.5):
            bar.refresh()
    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    t0 = time.perf_counter()
    try:
        scene.warm_up()
    finally:
        done.set()
        ticker.join()
        bar.close()
    return time.perf_counter() - t0


def format_summary(name: str, summary: dict) -> str:
    if summary.get("steps", 0) == 0:
        return f"{name}: no steps"
    compiled = (f"; {summary['compile_s']:.1f} s of it compiling kernels, not counted"
                if summary.get("compile_s", 0.0) >= 0.05 else "")
    return (f"{name}: {summary['steps']} steps ({summary['simulated_s']:.2f} s simulated) in {summary['wall_s']:.2f} s "
            f"wall (real-time factor {summary['realtime_factor']:.2f}{compiled})\n"
            f"  iterations mean {summary['iterations_mean']:.1f}, max {summary['iterations_max']}; "
            f"max penetration {summary['max_penetration_mm']:.4f} mm\n"
            f"  median ms per step: collision {summary['collision_ms']:.3f}, dynamics {summary['dynamics_ms']:.3f}, "
            f"solver {summary['solver_ms']:.3f}")
