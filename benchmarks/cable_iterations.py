"""V-FPI's iterations on a finer cable under the paper's absolute stopping rule and under panda_cable's per DOF.

    python benchmarks/cable_iterations.py [--segments 160 320 640 1280] [--steps 1000]

COND stops when theta = ||v^{l+1} - v^l||_2 < theta_th (the paper's Alg. 1: theta_th = 1e-4 m/s whatever the
model). That norm runs over every DOF, so the same change per DOF gives a theta sqrt(n / n_ref) times larger
on n DOFs than on n_ref: a finer rod is solved to a tighter tolerance per DOF. panda_cable therefore holds
1e-4 up to the paper's 320 segments and, on a finer cable, the root-mean-square change per DOF it allows there
(``solver.tolerance_reference_dofs``). For each segment count this runs the first STEPS steps of panda_cable
twice, each in its own process: with the scene's rule, and with the absolute rule (``tolerance_reference_dofs:
0``); up to 320 segments both have the same threshold (the runs differ in their timings only). Flat iterations
under the scene's rule mean the growth under the absolute one is the norm's, not the rod's conditioning. Prints
the threshold, the mean iterations, the mean solver time and the wall time per step; writes
``results/cable_iterations.json``.
"""
import argparse
import json
import pathlib
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"

_RUN = """
import json, sys, time
import numpy as np
from cond_ros.scenes import edited_scene
segments, rule, steps = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def edit(data):
    data["cables"][0]["segments"] = segments
    if rule == "absolute":
        data["solver"]["tolerance_reference_dofs"] = 0
scene = edited_scene("panda_cable", edit)
sim = scene.simulator
scene.warm_up()
iterations, solver_ms = [], []
start = time.perf_counter()
for _ in range(steps):
    stats = sim.step(scene.control(sim.state.time))
    iterations.append(stats.iterations)
    solver_ms.append(stats.solver_ms)
wall = time.perf_counter() - start
print(json.dumps({"threshold": sim.solver.stopping_threshold, "dofs": sim.model.dof_count,
                  "iterations_mean": float(np.mean(iterations)),
                  "solver_ms_mean": float(np.mean(solver_ms)), "wall_ms_per_step": 1e3 * wall / steps}))
"""


def _run(segments: int, rule: str, steps: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _RUN, str(segments), rule, str(steps)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"cable_iterations: {segments} segments, the {rule} rule failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, nargs="+", default=[160, 320, 640, 1280])
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    if any(n < 2 for n in args.segments) or args.steps < 1:
        sys.exit("cable_iterations: --segments must be >= 2, --steps >= 1")
    rows = []
    print(f"{'segments':>8s} {'rule':>8s} {'theta_th':>9s} {'iterations':>10s} {'solver ms':>9s} {'wall ms':>8s}")
    for n in args.segments:
        for rule in ("scene", "absolute"):
            row = {"segments": n, "rule": rule, **_run(n, rule, args.steps)}
            rows.append(row)
            print(f"{n:8d} {rule:>8s} {row['threshold']:9.3g} {row['iterations_mean']:10.2f} "
                  f"{row['solver_ms_mean']:9.3f} {row['wall_ms_per_step']:8.3f}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "cable_iterations.json"
    out.write_text(json.dumps({"steps": args.steps, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
