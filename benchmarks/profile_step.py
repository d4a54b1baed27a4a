"""Where a step of a scene spends its time: cProfile over the loop of ``cond-ros run`` (scripted control, step,
sensors), after the kernels are compiled.

    python benchmarks/profile_step.py [--scene panda_cable] [--segments N] [--steps 500] [--top 40]

Prints the functions with the most own time and the stage table (collision, dynamics, solver, and the rest
of the loop: control, sensors, CSV row) as medians per step. cProfile adds ~1 us per Python call, so read
its numbers as shares, and the stage table (taken without the profiler) as times. Writes
``results/profile_<scene>.txt``.
"""
import argparse
import cProfile
import io
import pathlib
import pstats
import statistics
import sys
import time

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def _scene(name: str, segments):
    from cond_ros.scenes import edited_scene

    def edit(data):
        data["cables"][0]["segments"] = int(segments)
    return edited_scene(name, edit if segments is not None else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="panda_cable")
    parser.add_argument("--segments", type=int, default=None, help="the cable's segment count (cable scenes)")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    if args.steps < 1:
        sys.exit("profile_step: --steps must be >= 1")
    from cond_ros.tools import run_scene
    scene = _scene(args.scene, args.segments)
    scene.warm_up()
    # the first steps of a scripted motion are not its typical ones: time the loop from the same start twice,
    # once plain (the stage table) and once under the profiler (the shares)
    t0 = time.perf_counter()
    result = run_scene(scene, args.steps, progress=False)
    wall = time.perf_counter() - t0
    scene.simulator.reset()
    for sensor in scene.sensors:
        sensor.reset()
    profiler = cProfile.Profile()
    profiler.enable()
    run_scene(scene, args.steps, progress=False)
    profiler.disable()
    stages = {k: statistics.median(result.column(k)) for k in ("collision_ms", "dynamics_ms", "solver_ms")}
    per_step = 1e3 * wall / args.steps
    text = io.StringIO()
    text.write(f"{args.scene} ({args.segments or 'scene'} segments), {args.steps} steps: {per_step:.3f} ms per step "
               f"(mean, without the profiler)\n")
    for key, value in stages.items():
        text.write(f"  {key:14s} {value:7.3f} ms (median)\n")
    text.write(f"  {'rest of loop':14s} {per_step - sum(stages.values()):7.3f} ms (mean wall - sum of medians)\n\n")
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(args.top)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"profile_{args.scene}{'' if args.segments is None else f'_{args.segments}'}.txt"
    out.write_text(text.getvalue())
    print(text.getvalue())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
