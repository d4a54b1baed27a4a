"""What the browser viewer costs the physics: panda_cable (320 segments) as fast as possible without the viewer,
with it (no page open), and with it and a page open in headless chromium, interleaved in one run.

    python benchmarks/viewer_rtf.py [--steps 1500] [--repeats 3] [--fps 30] [--out FILE]

Each repeat runs the three modes one after the other from the scene's start, ``--steps`` steps each, and takes
the real-time factor of the stepping (``cond-ros run``'s summary: compile and pauses excluded). The viewer draws
at ``--fps`` on its own thread. The page is Debian's chromium, headless, drawing with its software renderer
(SwiftShader) on the same cores as the physics: on a 2-core machine that mode measures the machine sharing its
cores with a software-rendered page as much as the viewer. Writes every run and the medians to
``benchmarks/results/viewer_rtf.json`` (or ``--out``).
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MODES = ("headless", "viewer", "viewer_and_browser")


def _browser(url: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-gl=swiftshader",
                "--enable-unsafe-swiftshader", "--window-size=1400,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.get(url)
    time.sleep(3.0)  # the page connects and draws its first frames
    return driver


def run_mode(scene, mode: str, steps: int, fps: float) -> dict:
    from cond_ros.tools import run_scene
    from cond_ros.view import LiveView, RunControl
    sim = scene.simulator
    sim.reset()
    for sensor in scene.sensors:
        sensor.reset()
    if mode == "headless":
        result = run_scene(scene, steps, progress=False)
        return dict(realtime_factor=result.summary()["realtime_factor"])
    control = RunControl(sim.dt, 0.0)
    live = LiveView(scene, control, port=0, fps=fps)
    driver = _browser(live.url) if mode == "viewer_and_browser" else None
    try:
        result = run_scene(scene, steps, progress=False, control=control,
                           on_step=lambda k, st: live.latest.set(k, sim.state, sim.contacts, st, 0.0))
    finally:
        if driver is not None:
            driver.quit()
        live.close()
    return dict(realtime_factor=result.summary()["realtime_factor"], frames=live.frames,
                draw_ms_mean=1e3 * live.draw_s / max(live.frames, 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--scene", default="panda_cable")
    parser.add_argument("--out", default=str(RESULTS / "viewer_rtf.json"))
    args = parser.parse_args()
    from cond_ros.scenes import load_named_scene
    scene = load_named_scene(args.scene)
    scene.warm_up()
    runs = {mode: [] for mode in MODES}
    for k in range(args.repeats):
        for mode in MODES:
            runs[mode].append(run_mode(scene, mode, args.steps, args.fps))
            print(f"repeat {k + 1} {mode}: {runs[mode][-1]}", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=pathlib.Path(__file__).parent).stdout.strip()
    result = dict(scene=args.scene, steps=args.steps, fps=args.fps, repeats=args.repeats, commit=commit,
                  machine=f"{os.cpu_count()} cores", date=time.strftime("%Y-%m-%d %H:%M"), runs=runs,
                  **summarize(runs))
    pathlib.Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("realtime_factor_median", "cost_percent", "paired_ratio_median",
                                             "paired_ratio_range", "draw_ms_median")}))
    return 0


def summarize(runs: dict) -> dict:
    """Medians per mode, the cost they imply, and the ratio to the headless run of the same repeat (the runs
    of one repeat are seconds apart: their ratio is less noisy than the ratio of medians)."""
    medians = {mode: statistics.median(r["realtime_factor"] for r in runs[mode]) for mode in MODES}
    paired = {mode: [r["realtime_factor"] / h["realtime_factor"] for r, h in zip(runs[mode], runs["headless"])]
              for mode in MODES[1:]}
    return dict(realtime_factor_median=medians,
                cost_percent={mode: round(100.0 * (1.0 - medians[mode] / medians["headless"]), 2)
                              for mode in MODES[1:]},
                paired_ratio_median={mode: round(statistics.median(v), 3) for mode, v in paired.items()},
                paired_ratio_range={mode: [round(min(v), 3), round(max(v), 3)] for mode, v in paired.items()},
                draw_ms_median={mode: statistics.median(r["draw_ms_mean"] for r in runs[mode]) for mode in MODES[1:]})


if __name__ == "__main__":
    sys.exit(main())
