"""Why V-FPI takes more iterations on a finer cable: the stopping rule's norm, or the rod's conditioning?

    python benchmarks/cable_iterations.py [--segments 320 640 1280] [--steps 1000] [--reference 320]

COND stops when theta = ||v^{l+1} - v^l||_2 < theta_th (the paper's Alg. 1; panda_cable: 1e-4 m/s). That
norm runs over every DOF, so the same change per DOF gives a theta sqrt(N / N_ref) times larger on N
segments than on N_ref: a finer rod is solved to a tighter per-DOF tolerance. For each segment count this
runs the first STEPS steps of panda_cable twice, each in its own process: at the scene's theta_th, and at
theta_th x sqrt(N / N_ref), the same tolerance per DOF as at N_ref. Flat iterations at the scaled tolerance
mean the growth at the paper's tolerance is the norm's, not the rod's conditioning. Prints the mean
iterations, the mean solver time and the wall time per step; writes ``results/cable_iterations.json``.
A diagnostic for issue 29's "cost per segment flat" target; the scene keeps the paper's tolerance.
"""
import argparse
import json
import math
import pathlib
import subprocess
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"

_RUN = """
import json, sys, time
import numpy as np
from cond_ros.scenes import edited_scene
segments, scale, steps = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
def edit(data):
    data["cables"][0]["segments"] = segments
    data["solver"]["tolerance"] = data["solver"]["tolerance"] * scale
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
print(json.dumps({"tolerance": sim.solver.tolerance, "iterations_mean": float(np.mean(iterations)),
                  "solver_ms_mean": float(np.mean(solver_ms)), "wall_ms_per_step": 1e3 * wall / steps}))
"""


def _run(segments: int, scale: float, steps: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _RUN, str(segments), repr(scale), str(steps)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"cable_iterations: {segments} segments, tolerance x{scale:.3f} failed ({proc.returncode}):\n"
                 f"{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, nargs="+", default=[320, 640, 1280])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--reference", type=int, default=320, help="N_ref: the segment count whose tolerance per "
                                                                   "DOF the scaled runs keep")
    args = parser.parse_args()
    if any(n < 2 for n in args.segments) or args.steps < 1 or args.reference < 2:
        sys.exit("cable_iterations: --segments and --reference must be >= 2, --steps >= 1")
    rows = []
    print(f"{'segments':>8s} {'theta_th':>9s} {'iterations':>10s} {'solver ms':>9s} {'wall ms':>8s}")
    for n in args.segments:
        scales = [1.0] if n == args.reference else [1.0, math.sqrt(n / args.reference)]
        for scale in scales:
            row = {"segments": n, "tolerance_scale": scale, **_run(n, scale, args.steps)}
            rows.append(row)
            print(f"{n:8d} {row['tolerance']:9.3g} {row['iterations_mean']:10.2f} {row['solver_ms_mean']:9.3f} "
                  f"{row['wall_ms_per_step']:8.3f}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "cable_iterations.json"
    out.write_text(json.dumps({"steps": args.steps, "reference_segments": args.reference, "rows": rows}, indent=1)
                   + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
