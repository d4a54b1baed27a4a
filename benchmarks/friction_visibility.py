"""How much the cable's friction shows in the wrist F/T of the cable-winding scene (issue 33): the force on the
sensor with friction at each of a list of values, against the recovery test's truth, per 5 s of the run; and
how well a perfect fit could determine each parameter from a sensor with the scene's noise.

    python benchmarks/friction_visibility.py [--scene panda_cable_small] [--duration 55] [--mu 0.1,0.2,...]

Records SCENE with the recovery test's truth (friction x 0.62, Young's modulus x 1.39, segment damping x 1.35
of the scene's values, solver tolerance 1e-6) and again with friction alone changed to each value of --mu;
the noise-free F/T (``/cond_sim/ft/wrist_ft/ground_truth``) of each run is compared with the truth's.

Where the cable grips the post, Coulomb's law leaves the contact force to the rest of the physics, whatever
the friction coefficient, as long as it stays within the cone; the coefficient shows only where the cable
slips. The second part quantifies that as a fit would meet it: the Jacobian of the F/T trace with respect to
ln(friction), ln(Young's modulus) and ln(segment damping) (finite differences of +5 %, +0.2 %, +5 %), and the
standard deviation of each parameter that least squares gets from it with the sensor's noise (the scene's
``noise_std`` on the forces): sigma^2 (J^T J)^-1, the best any fit of that window can do.

Writes ``results/friction_visibility_<scene>.json`` and ``.png``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
SCALE = {"mu": 0.62, "youngs_modulus": 1.39, "segment_damping": 1.35}  # the recovery test's truth, x the scene
JACOBIAN_STEPS = {"mu": 1.05, "youngs_modulus": 1.002, "segment_damping": 1.05}
TOPIC = "/cond_sim/ft/wrist_ft/ground_truth"
WINDOW_S = 5.0
FIT_WINDOWS = [(0.0, 20.0), (0.0, 55.0), (20.0, 55.0)]


def _scene_values(scene: str) -> tuple[dict, float, float]:
    """The scene's friction, cable Young's modulus and segment damping, its F/T force noise [N] and its time
    step [s]."""
    from cond_ros.resources import packaged_file
    from cond_ros.scenes import current_value, read_scene_yaml
    doc = read_scene_yaml(packaged_file(os.path.join("config", f"{scene}.yaml")))
    return ({name: current_value(doc, name) for name in SCALE}, float(doc["sensors"][0]["noise_std"][0]),
            float(doc["dt"]))


def _record(work: str, name: str, scene: str, duration: float, settings: dict) -> np.ndarray:
    """The noise-free wrist force [N] (steps x 3) of SCENE run with ``settings``."""
    from cond_ros.bags import read_wrench_series
    overlay = os.path.join(work, f"{name}.yaml")
    with open(overlay, "w") as fh:
        yaml.safe_dump({"set": {**settings, "solver.tolerance": 1.0e-6}}, fh)
    bag = os.path.join(work, name)
    subprocess.run([sys.executable, "-m", "cond_ros.cli", "record", scene, "--out", bag, "--duration", str(duration),
                    "--overlay", overlay, "--quiet"], check=True)
    return np.asarray(read_wrench_series(bag, TOPIC).values)[:, :3]


def _per_window(diff: np.ndarray, steps: int) -> list:
    return [float(np.sqrt(np.mean(diff[i:i + steps] ** 2))) for i in range(0, len(diff) - steps + 1, steps)]


def _parameter_sigmas(jacobian: dict, noise: float, dt: float) -> list:
    """Per window of FIT_WINDOWS: each parameter's standard deviation in ln(value) from the wrist forces
    with white noise ``noise`` [N] per axis and sample, and friction's correlation with Young's modulus."""
    rows = []
    for t0, t1 in FIT_WINDOWS:
        span = slice(int(round(t0 / dt)), int(round(t1 / dt)))
        if len(next(iter(jacobian.values()))[span]) < span.stop - span.start:
            continue  # the run is shorter than this window
        columns = np.stack([j[span].ravel() for j in jacobian.values()], axis=1)
        covariance = noise ** 2 * np.linalg.inv(columns.T @ columns)
        sigma = np.sqrt(np.diag(covariance))
        rows.append(dict(window_s=[t0, t1], sigma_ln=dict(zip(jacobian, map(float, sigma))),
                         correlation_mu_youngs_modulus=float(covariance[0, 1] / (sigma[0] * sigma[1]))))
    return rows


def _plot(path: str, scene: str, windows: list, noise: float) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for row in windows:
        centers = [WINDOW_S * (i + 0.5) for i in range(len(row["rms_N"]))]
        ax.semilogy(centers, np.maximum(row["rms_N"], 1e-5), marker="o", label=f"friction {row['mu']:g}")
    ax.axhline(noise, color="k", linestyle="--", label=f"sensor noise ({noise:g} N)")
    ax.set_xlabel(f"time [s] ({WINDOW_S:g} s windows)")
    ax.set_ylabel("RMS wrist force change [N] (floor 1e-5)")
    ax.set_title(f"{scene}: wrist force with friction changed, against friction {windows[0]['reference_mu']:g}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", default="panda_cable_small")
    parser.add_argument("--duration", type=float, default=55.0)
    parser.add_argument("--mu", default="0.1,0.2,0.35,0.5,0.65,1.3,1.95",
                        help="friction values compared with the truth's (comma-separated)")
    parser.add_argument("--no-jacobian", action="store_true", help="skip the parameter standard deviations")
    args = parser.parse_args()
    values, noise, dt = _scene_values(args.scene)
    truth = {k: values[k] * SCALE[k] for k in SCALE}
    work = tempfile.mkdtemp(prefix="friction_visibility.")
    reference = _record(work, "truth", args.scene, args.duration, truth)
    steps = int(round(WINDOW_S / dt))
    windows = []
    for mu in (float(v) for v in args.mu.split(",")):
        diff = _record(work, f"mu_{mu:g}", args.scene, args.duration, {**truth, "mu": mu}) - reference
        windows.append(dict(mu=mu, reference_mu=truth["mu"], rms_N=_per_window(diff, steps),
                            rms_whole_N=float(np.sqrt(np.mean(diff ** 2)))))
        print(f"friction {mu:g}: RMS force change {windows[-1]['rms_whole_N']:.4g} N over the run, per "
              f"{WINDOW_S:g} s: " + " ".join(f"{v:.3g}" for v in windows[-1]["rms_N"]))
    sigmas = []
    if not args.no_jacobian:
        jacobian = {}
        for name, step in JACOBIAN_STEPS.items():
            moved = _record(work, f"d_{name}", args.scene, args.duration, {**truth, name: truth[name] * step})
            jacobian[name] = (moved - reference) / np.log(step)
        sigmas = _parameter_sigmas(jacobian, noise, dt)
        for row in sigmas:
            print(f"window {row['window_s'][0]:g}:{row['window_s'][1]:g} s, noise {noise:g} N: 1-sigma of ln(value) "
                  + ", ".join(f"{k} {v:.3g}" for k, v in row["sigma_ln"].items())
                  + f"; corr(mu, E) {row['correlation_mu_youngs_modulus']:.2f}")
    out = dict(scene=args.scene, duration_s=args.duration, topic=TOPIC, truth=truth, sensor_noise_N=noise,
               window_s=WINDOW_S, friction_changed=windows, jacobian_steps=JACOBIAN_STEPS,
               parameter_sigma_ln=sigmas)
    os.makedirs(RESULTS, exist_ok=True)
    stem = os.path.join(RESULTS, f"friction_visibility_{args.scene}")
    with open(stem + ".json", "w") as fh:
        json.dump(out, fh, indent=2)
    _plot(stem + ".png", args.scene, windows, noise)
    print(f"wrote {stem}.json and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
