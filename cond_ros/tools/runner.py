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
    paused_s: float = 0.0  # wall time a viewer's pause held the run
    physics_s: float = 0.0  # wall time inside Simulator.step: what compares to another simulator's step call

    def column(self, name: str) -> np.ndarray:
        return self.rows[:, self.header.index(name)]

    def summary(self) -> dict:
        """Medians of the per-step costs, mean iterations, worst penetration, achieved real-time factor (of the
        wall time less the compilation's and the pauses')."""
        steps = len(self.rows)
        if steps == 0:
            return dict(steps=0)
        sim_time = steps * self.dt
        per_step = self.column("collision_ms") + self.column("dynamics_ms") + self.column("solver_ms")
        stepping = self.wall_s - self.compile_s - self.paused_s
        return dict(steps=steps, simulated_s=sim_time, wall_s=self.wall_s, compile_s=self.compile_s,
                    paused_s=self.paused_s,
                    realtime_factor=sim_time / stepping if stepping > 0 else float("inf"),
                    iterations_mean=float(self.column("iterations").mean()),
                    iterations_max=int(self.column("iterations").max()),
                    max_penetration_mm=1e3 * float(self.column("max_penetration_m").max()),
                    collision_ms=float(np.median(self.column("collision_ms"))),
                    dynamics_ms=float(np.median(self.column("dynamics_ms"))),
                    solver_ms=float(np.median(self.column("solver_ms"))),
                    step_ms_median=float(np.median(per_step)),
                    physics_ms_mean=1e3 * max(0.0, self.physics_s - self.compile_s) / steps, ft=self.ft_statistics())

    def write_csv(self, path: str) -> None:
        with open(path, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(self.header)
            writer.writerows(self.rows.tolist())

    def sensor_names(self) -> list:
        return [name[:-len("_true_fx")] for name in self.header if name.endswith("_true_fx")]

    def ft_force(self, sensor: str, *, tool: bool = False) -> np.ndarray:
        """``sensor``'s noise-free reading's force, or with ``tool`` the force of the environment on the tool
        beyond it (the cable's pull: no gravity, no inertia), in the robot's base frame [N], (steps, 3)."""
        prefix = f"{sensor}_tool_force_base" if tool else f"{sensor}_base"
        return np.stack([self.column(f"{prefix}_{axis}") for axis in AXES[:3]], axis=1)

    def ft_statistics(self) -> dict:
        """Per F/T sensor: mean and largest magnitude [N] of its noise-free reading's force and of the
        environment's force on the tool, and when the largest of the latter came."""
        out = {}
        t = self.column("time_s")
        for name in self.sensor_names():
            reading = np.linalg.norm(self.ft_force(name), axis=1)
            tool = np.linalg.norm(self.ft_force(name, tool=True), axis=1)
            peak = int(np.argmax(tool))
            out[name] = dict(reading_mean_N=float(reading.mean()), reading_max_N=float(reading.max()),
                             tool_force_mean_N=float(tool.mean()), tool_force_max_N=float(tool[peak]),
                             tool_force_max_at_s=float(t[peak]))
        return out

    def write_ft_plot(self, path: str, title: str) -> None:
        """A PNG of each F/T sensor's noise-free reading and the environment's force on the tool (base frame),
        and the run's penetration, over time."""
        from matplotlib.figure import Figure
        panels = [(name, tool) for name in self.sensor_names() for tool in (False, True)]
        fig = Figure(figsize=(10, 2.6 * (len(panels) + 1)), layout="constrained")
        axes = fig.subplots(len(panels) + 1, 1, sharex=True, squeeze=False)[:, 0]
        t = self.column("time_s")
        for ax, (name, tool) in zip(axes, panels):
            force = self.ft_force(name, tool=tool)
            for i, (axis, color) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"))):
                ax.plot(t, force[:, i], color=color, lw=1.0, label=f"$F_{axis}$")
            ax.plot(t, np.linalg.norm(force, axis=1), color="black", lw=1.0, ls="--", label="$|F|$")
            ax.set_ylabel(f"{name}: {'force on the tool' if tool else 'reading'} [N]\n(base frame, noise-free)")
            ax.legend(loc="upper right", ncols=4, fontsize=8)
            ax.grid(alpha=0.3)
        axes[-1].plot(t, 1e3 * self.column("max_penetration_m"), color="tab:purple", lw=1.0)
        axes[-1].set_ylabel("max penetration [mm]")
        axes[-1].set_xlabel("simulated time [s]")
        axes[-1].grid(alpha=0.3)
        axes[0].set_title(title)
        fig.savefig(path, dpi=110)


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


def run_scene(scene: Scene, steps: int, *, progress: bool = True, desc: str = "run", control=None, on_step=None,
              stop=lambda: False) -> RunResult:
    """Step ``scene`` ``steps`` times with its scripted motion, reading every sensor after each step.

    ``control`` (a :class:`~cond_ros.view.RunControl`, or None: as fast as possible) says when each step is
    due and when to reset, from a viewer's buttons; ``on_step(step, stats)`` runs after each step; ``stop()``
    ends the run early (the result holds the steps made)."""
    sim = scene.simulator
    header = _header(scene)
    has_tool = scene.tool_link is not None
    kin = ArticulationKinematics(sim.model.robots[scene.script.robot]) if has_tool else None
    base_inverse = np.linalg.inv(kin.art.base_transform) if has_tool else None
    rows = np.zeros((steps, len(header)))
    k, physics = 0, 0.0
    with jit.CompileTimer() as compiling, tqdm(total=steps, desc=desc, unit="step", disable=not progress) as bar:
        t0 = time.perf_counter()
        while k < steps:
            action = control.next_action(stop) if control is not None else ("stop" if stop() else "step")
            if action == "stop":
                break
            if action == "reset":  # the run starts over: its rows are written again
                sim.reset()
                for sensor in scene.sensors:
                    sensor.reset()
                k = 0
                bar.reset()
                if on_step is not None:
                    on_step(0, None)
                continue
            start = time.perf_counter()
            control_input = scene.control(sim.state.time)
            stepping = time.perf_counter()
            st = sim.step(control_input)
            physics += time.perf_counter() - stepping
            row = [sim.state.time, st.iterations, st.residual, st.contact_count, st.max_penetration, st.collision_ms,
                   st.dynamics_ms, st.solver_ms]
            row += list(sim.state.robot_q)
            if has_tool:
                row += _tool_pose(scene, kin, base_inverse)
            for sensor in scene.sensors:
                reading, wrench = sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
                to_base = sensor.base_rotation.T @ sensor.reading_pose(wrench)[:3, :3]
                row += list(reading.wrench) + list(reading.true_wrench)
                row += list(to_base @ reading.true_wrench[:3]) + list(to_base @ reading.true_wrench[3:])
                row += list(sensor.base_frame(wrench.external_force))
            rows[k] = row
            k += 1
            bar.update()
            if control is not None:
                control.stepped(start, time.perf_counter())
            if on_step is not None:
                on_step(k, st)
        wall = time.perf_counter() - t0
    return RunResult(header, rows[:k], wall, sim.dt, compiling.seconds,
                     control.paused_s if control is not None else 0.0, physics)


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
    if summary.get("paused_s", 0.0) >= 0.05:
        compiled += f"; {summary['paused_s']:.1f} s paused, not counted"
    return (f"{name}: {summary['steps']} steps ({summary['simulated_s']:.2f} s simulated) in {summary['wall_s']:.2f} s "
            f"wall (real-time factor {summary['realtime_factor']:.2f}{compiled})\n"
            f"  iterations mean {summary['iterations_mean']:.1f}, max {summary['iterations_max']}; "
            f"max penetration {summary['max_penetration_mm']:.4f} mm\n"
            f"  median ms per step: collision {summary['collision_ms']:.3f}, dynamics {summary['dynamics_ms']:.3f}, "
            f"solver {summary['solver_ms']:.3f}"
            + "".join(f"\n  F/T {sensor} (noise-free): reading |F| mean {ft['reading_mean_N']:.3f} N, max "
                      f"{ft['reading_max_N']:.3f} N; force on the tool |F| mean {ft['tool_force_mean_N']:.3f} N, "
                      f"max {ft['tool_force_max_N']:.3f} N at {ft['tool_force_max_at_s']:.2f} s"
                      for sensor, ft in summary.get("ft", {}).items()))
