"""Where a step of a scene spends its time: cProfile over the loop of ``cond-ros run`` (scripted control, step,
sensors), after the kernels are compiled.

    python benchmarks/profile_step.py [--scene panda_cable] [--segments N] [--steps 500] [--top 40] [--wall]

Prints the functions with the most own time and the stage table (collision, dynamics, solver, and the rest
of the loop: control, sensors, CSV row) as medians per step. cProfile adds ~1 us per Python call, so read
its numbers as shares, and the stage table (taken without the profiler) as times. ``--wall`` adds a third run
that times the parts of each stage by the wall clock instead (a wrapper around each of ``WALL_PARTS``, ~0.3 us
a call; the parts of one stage overlap where one calls another). ``--kernels`` adds a run that times every
numba kernel called from Python inside ``Simulator.step`` (outermost calls only), and so the time the step
spends in Python between its kernels. Writes ``results/profile_<scene>.txt``.
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
# (module, attribute path) of the parts --wall times: Python call sites only (a kernel called from another
# kernel was bound when it was compiled, and wrapping it would change nothing)
WALL_PARTS = (
    ("cond_ros.sim.simulator", "Simulator.step"),
    ("cond_ros.sim.simulator", "Simulator._checked_control"),
    ("cond_ros.sim.simulator", "build_contact_set"),
    ("cond_ros.sim.collision.nodalization", "robot_kinematics"),
    ("cond_ros.sim.collision.nodalization", "robot_point_motion"),
    ("cond_ros.sim.collision.nodalization", "_moving_columns"),
    ("cond_ros.sim.collision.nodalization", "detect_point_contacts"),
    ("cond_ros.sim.collision.nodalization", "joint_limit_candidates"),
    ("cond_ros.sim.collision.nodalization", "detect_dynamic_contacts"),
    ("cond_ros.sim.collision.nodalization", "detect_node_pairs"),
    ("cond_ros.sim.collision.nodalization", "_Rows.finish"),
    ("cond_ros.sim.solvers.base", "SolverBase.step"),
    ("cond_ros.sim.solvers.base", "assemble"),
    ("cond_ros.sim.dynamics.assembly", "assemble_model_potentials"),
    ("cond_ros.sim.dynamics.assembly", "assemble_robots"),
    ("cond_ros.sim.solvers.base", "advance_state"),
    ("cond_ros.sim.solvers.cond.solver", "SolverCOND.prepare"),
    ("cond_ros.sim.solvers.cond.solver", "SolverCOND.solve"),
    ("cond_ros.sim.solvers.cond.solver", "SolverCOND._coarse_arrays"),
    ("cond_ros.sim.solvers.cond.solver", "SolverCOND._weights"),
    ("cond_ros.sim.solvers.cond.solver", "velocity_fixed_point"),
)


def _wall_parts(scene, steps: int) -> dict:
    """Wall time per step [ms] of each of ``WALL_PARTS`` over a run of ``steps`` (the kernels compiled)."""
    import functools
    import importlib
    from cond_ros.tools import run_scene
    spent, patched = {}, []

    def timed(name, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t
        return wrapper

    for module_name, path in WALL_PARTS:
        owner = importlib.import_module(module_name)
        *outer, attr = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        spent[path] = 0.0
        patched.append((owner, attr, owner.__dict__[attr]))
        setattr(owner, attr, timed(path, getattr(owner, attr)))
    try:
        run_scene(scene, steps, progress=False)
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)
    return {name: 1e3 * seconds / steps for name, seconds in spent.items()}


def _kernel_time(scene, steps: int) -> tuple:
    """(ms per step inside ``Simulator.step``, {kernel: (us per step, calls per step)}) over a run of ``steps``,
    timing each numba kernel that Python code of ``cond_ros.sim`` calls while a step runs (a kernel called by
    another kernel is inside its caller's time). Run after the kernels are compiled for the scene: a kernel
    compiled later would find a wrapper where it expects a kernel."""
    import functools
    import importlib
    import pkgutil
    from numba.core.dispatcher import Dispatcher
    import cond_ros.sim
    from cond_ros.sim import simulator
    from cond_ros.tools import run_scene
    spent, calls, state = {}, {}, {"inside": False, "depth": 0, "step": 0.0}

    def timed(name, kernel):
        @functools.wraps(kernel)
        def wrapper(*args, **kwargs):
            if state["depth"] or not state["inside"]:
                return kernel(*args, **kwargs)
            state["depth"] += 1
            t = time.perf_counter()
            try:
                return kernel(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
                calls[name] = calls.get(name, 0) + 1
                state["depth"] -= 1
        return wrapper

    def step(original):
        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            state["inside"] = True
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                state["step"] += time.perf_counter() - t
                state["inside"] = False
        return wrapper

    wrappers, patched = {}, []
    for info in pkgutil.walk_packages(cond_ros.sim.__path__, "cond_ros.sim."):
        module = importlib.import_module(info.name)
        for attr, value in list(vars(module).items()):
            if isinstance(value, Dispatcher):
                name = f"{value.py_func.__module__.rsplit('.', 1)[-1]}.{value.py_func.__name__}"
                wrappers.setdefault(id(value), timed(name, value))
                patched.append((module, attr, value))
                setattr(module, attr, wrappers[id(value)])
    patched.append((simulator.Simulator, "step", simulator.Simulator.__dict__["step"]))
    simulator.Simulator.step = step(simulator.Simulator.step)
    try:
        run_scene(scene, steps, progress=False)
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)
    return 1e3 * state["step"] / steps, {name: (1e6 * spent[name] / steps, calls[name] / steps) for name in spent}


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
    parser.add_argument("--wall", action="store_true", help="also time the parts of each stage by the wall clock")
    parser.add_argument("--kernels", action="store_true",
                        help="also time the kernels the step calls, and so the Python between them")
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
    parts = {}
    if args.wall:
        for reset in (scene.simulator, *scene.sensors):
            reset.reset()
        parts = _wall_parts(scene, args.steps)
    kernels = None
    if args.kernels:
        for reset in (scene.simulator, *scene.sensors):
            reset.reset()
        kernels = _kernel_time(scene, args.steps)
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
    if parts:
        text.write("by the wall clock, ms per step (mean; a part's callers include it):\n")
        for name, value in sorted(parts.items(), key=lambda item: -item[1]):
            text.write(f"  {name:40s} {value:7.3f}\n")
        text.write("\n")
    if kernels is not None:
        step_ms, table = kernels
        in_kernels = sum(us for us, _ in table.values()) / 1e3
        count = sum(n for _, n in table.values())
        glue = step_ms - in_kernels
        text.write(f"Simulator.step {step_ms:.3f} ms per step: {in_kernels:.3f} ms in {count:.0f} kernel calls from "
                   f"Python, {glue:.3f} ms ({100 * glue / step_ms:.0f} %) in Python between them\n")
        for name, (us, per_step_calls) in sorted(table.items(), key=lambda item: -item[1][0]):
            text.write(f"  {name:45s} {us:8.1f} us  {per_step_calls:5.1f} a step\n")
        text.write("\n")
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(args.top)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"profile_{args.scene}{'' if args.segments is None else f'_{args.segments}'}.txt"
    out.write_text(text.getvalue())
    print(text.getvalue())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
