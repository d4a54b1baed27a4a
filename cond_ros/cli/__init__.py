"""The ``cond-ros`` command: run and view scenes, launch the node, benchmarks; the bag commands are in ``bags``.

    cond-ros run SCENE [--view] [--steps N] [--solver cond] [--overlay fitted.yaml] [--out run.csv] [--plot ft.png]
    cond-ros view SCENE | RUN.csv | BAG [--scene S] [--port P]
    cond-ros bench NAME [--json] [--quick] [--out FILE]
    cond-ros launch NAME [--scene S] [--overlay fitted.yaml] [--real-time-factor R] [--lockstep]
                    [--use-sim-time true|false] [--view]
    cond-ros scenes
    cond-ros compile [SCENE ...]
    cond-ros record | replay | salvage | compare | play ...   (cli/bags.py)
    cond-ros fit | sweep ...   (cli/fit.py)
"""
from __future__ import annotations

import argparse
import json
import sys

from ..output_paths import output_problem
from ..stop_signals import StopSignals
from ..view import add_view_options, add_view_parser
from .bags import add_bag_parsers, real_time_factor_option
from .fit import add_fit_parsers, add_sweep_parser
from .checks import rclpy_missing
from pathlib import Path


def _unknown(command: str, what: str, name: str, registry) -> bool:
    """Report an unknown name with the available ones; True if ``name`` is unknown."""
    if name in registry:
        return False
    print(f"cond-ros {command}: unknown {what} {name!r}; available: {', '.join(sorted(registry))}", file=sys.stderr)
    return True


def _cmd_scenes(args) -> int:
    from ..scenes import scene_names
    for name in scene_names():
        print(name)
    return 0


ROS_BENCHMARKS = ("ros_panda_cable",)  # need the ros extra; run by cond_ros.ros.bench
ROS_BENCH_DEFAULT_DURATION_S = 60.0  # simulated seconds (about 70 s at 320 segments here)


def _threading_layer() -> str | None:
    """The threading layer (tbb, omp, workqueue) numba's parallel kernels ran on in this process; None where none
    ran."""
    import numba
    try:
        return numba.threading_layer()
    except ValueError:  # "Threading layer is not initialized."
        return None


def _cmd_bench(args) -> int:
    from ..tools import BENCHMARKS
    if _unknown("bench", "benchmark", args.name, list(BENCHMARKS) + list(ROS_BENCHMARKS)):
        return 2
    ros_only = {k: getattr(args, k) for k in ("duration", "scene", "real_time_factor") if getattr(args, k) is not None}
    if ros_only and args.name not in ROS_BENCHMARKS:
        print(f"cond-ros bench: --duration/--scene/--real-time-factor apply to ros_panda_cable only, not "
              f"{args.name!r}", file=sys.stderr)
        return 2
    if args.report is not None and args.name != "paper":
        print(f"cond-ros bench: --report applies to paper only, not {args.name!r}", file=sys.stderr)
        return 2
    extra = {k: getattr(args, k) for k in ("segments", "steps", "csv", "solver") if getattr(args, k) is not None}
    if extra and args.name != "panda_cable":
        print(f"cond-ros bench: --segments/--steps/--csv/--solver apply to panda_cable only, not {args.name!r}",
              file=sys.stderr)
        return 2
    if args.name in ROS_BENCHMARKS:
        try:
            from ..ros import bench_ros_panda_cable
        except ImportError as exc:
            print(f"cond-ros bench: {args.name} needs rclpy ({exc}); pip install -e '.[ros]'", file=sys.stderr)
            return 2
        result = bench_ros_panda_cable(duration=ros_only.get("duration", ROS_BENCH_DEFAULT_DURATION_S),
                                       scene=ros_only.get("scene", "panda_cable"),
                                       real_time_factor=ros_only.get("real_time_factor", 1.0), quiet=args.json)
    else:
        if args.report is not None:
            extra["report"] = args.report
        from ..sim import ModelError
        try:
            result = BENCHMARKS[args.name](quick=args.quick, quiet=args.json, **extra)
        except ModelError as exc:
            print(f"cond-ros bench: {exc}", file=sys.stderr)
            return 2
    layer = _threading_layer()
    if layer is not None and isinstance(result, dict):  # the numbers of the FEM scenes depend on it
        result.setdefault("threading_layer", layer)
    text = json.dumps(result, indent=None if args.json else 2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")
    print(text)
    return 0


RUN_MAX_STEPS = 1_000_000  # the per-step table of one run (~40 columns): 320 MB at this size
RUN_DT_RANGE = (1e-6, 1.0)  # [s]: the node's dt parameter stops at 1 s too


def _cmd_run(args) -> int:
    from ..scenes import load_named_scene, read_overlay, scene_names
    from ..sim import ModelError, SimulationError
    from ..tools import format_summary, run_scene, warm_up_timed
    if args.scene_file is None and _unknown("run", "scene", args.scene, scene_names()):
        return 2
    from ..view import view_option_problems, viewer_missing
    problems = [f"--{name}: {problem}" for name in ("out", "plot")
                if getattr(args, name) and (problem := output_problem(getattr(args, name)))]
    if args.view:
        problems += ["--headless and --view contradict each other"] if args.headless else []
        problems += view_option_problems(args)
        problems += [message] if (message := viewer_missing()) else []
    else:
        problems += [f"{flag} needs --view" for flag, given in (("--paused", args.paused),
                                                                 ("--linger", args.linger is not None)) if given]
    if args.real_time_factor is not None and not args.real_time_factor >= 0:
        problems.append(f"--real-time-factor must be >= 0, got {args.real_time_factor:g}")
    if problems:
        print("cond-ros run: " + "; ".join(problems), file=sys.stderr)
        return 2
    if args.dt is not None and not RUN_DT_RANGE[0] <= args.dt <= RUN_DT_RANGE[1]:
        print(f"cond-ros run: --dt must be in [{RUN_DT_RANGE[0]:g}, {RUN_DT_RANGE[1]:g}] s, got {args.dt:g}",
              file=sys.stderr)
        return 2
    try:
        overlay = read_overlay(args.overlay) if args.overlay else None
        scene = load_named_scene(args.scene, dt=args.dt, solver=args.solver, path=args.scene_file, overlay=overlay)
    except ModelError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 2
    sim = scene.simulator
    steps = args.steps if args.steps is not None else int(round(scene.duration / sim.dt))
    if not 0 <= steps <= RUN_MAX_STEPS:
        print(f"cond-ros run: {steps} steps{'' if args.steps is not None else ' (the duration over dt)'}: must be "
              f"in [0, {RUN_MAX_STEPS}]; give --steps, or a larger --dt", file=sys.stderr)
        return 2
    try:
        try:
            warm_up_timed(scene, progress=not args.quiet)
        except KeyboardInterrupt:
            print("cond-ros run: interrupted while compiling the kernels; no step was run (the kernels compiled "
                  "so far are cached)", file=sys.stderr)
            return 130
        if args.view:
            from ..view import run_viewed
            rtf = 1.0 if args.real_time_factor is None else args.real_time_factor
            result = run_viewed(scene, steps, desc=args.scene, progress=not args.quiet, real_time_factor=rtf,
                                paused=args.paused, linger_s=args.linger, host=args.host, port=args.port,
                                fps=args.fps)
            if result is None:
                return 1
        else:
            with StopSignals() as stop:  # Ctrl-C or SIGTERM: the steps made so far are written and summarized
                result = run_scene(scene, steps, progress=not args.quiet, desc=args.scene,
                                   control=_paced(sim.dt, args.real_time_factor), stop=stop)
            if stop():
                print(f"cond-ros run: stopped by {stop.name} after {len(result.rows)} of {steps} steps; the "
                      "outputs cover those", file=sys.stderr)
    except SimulationError as exc:
        print(f"cond-ros run: {exc}", file=sys.stderr)
        return 1
    if args.out:
        result.write_csv(args.out)
    if args.plot:
        result.write_ft_plot(args.plot, f"{args.scene}: F/T force and penetration")
    print(format_summary(args.scene, result.summary()))
    for kind, path in (("per-step CSV", args.out), ("F/T plot", args.plot)):
        if path:
            print(f"  {kind}: {path}")
    stopped = not args.view and len(result.rows) < steps  # as cond-ros record: 128 + N after a stop signal
    return 128 + stop.received if stopped else 0


def _paced(dt: float, real_time_factor):
    """A headless run's pacing: None (as fast as possible) unless a real-time factor > 0 is asked for."""
    if not real_time_factor:
        return None
    from ..view import RunControl
    return RunControl(dt, real_time_factor)


def _cmd_launch(args) -> int:
    from ..ros import LAUNCHES, run_launch
    if _unknown("launch", "launch", args.name, LAUNCHES):
        return 2
    if rclpy_missing("launch"):
        return 2
    overrides = {k: v for k, v in (("scene", args.scene), ("overlay", args.overlay),
                                   ("real_time_factor", args.real_time_factor),
                                   ("lockstep", "true" if args.lockstep else None),
                                   ("use_sim_time", args.use_sim_time), ("rviz", "true" if args.rviz else None),
                                   ("view", "true" if args.view else None))
                 if v is not None}
    try:
        return run_launch(args.name, overrides, duration=args.duration)
    except ValueError as exc:
        print(f"cond-ros launch: {exc}", file=sys.stderr)
        return 2


def _cmd_soak(args) -> int:
    import os
    if rclpy_missing("soak"):
        return 2
    from ..cosim import ConfigError, load_scene_parameter
    try:
        load_scene_parameter(args.scene, script=False)  # the node would fail on it only after its start
    except ConfigError as exc:
        print(f"cond-ros soak: {exc}", file=sys.stderr)
        return 2
    problems = [f"--duration must be > 0 s, got {args.duration:g}"] if not args.duration > 0 else []
    problems += [f"--rate must be in (0, 10000] Hz, got {args.rate:g}"] if not 0 < args.rate <= 10_000 else []
    existing = os.path.isdir(args.out)  # the soak writes into it; else it makes it
    if problem := (output_problem(os.path.join(args.out, "soak.csv")) if existing
                   else output_problem(args.out, new=True)):
        problems.append(f"--out: {problem}")
    if problems:
        print("cond-ros soak: " + "; ".join(problems), file=sys.stderr)
        return 2
    from ..ros import SoakOptions, run_soak
    try:
        result = run_soak(SoakOptions(scene=args.scene, duration_s=args.duration, rate_hz=args.rate,
                                      burst=args.burst, burst_period_s=args.burst_period), args.out)
    except RuntimeError as exc:  # the node did not come up, or died during the soak: its log says why
        print(f"cond-ros soak: FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"soak {'PASSED' if result['passed'] else 'FAILED'} after {result['seconds']:.0f} s: node RSS "
          f"{result.get('rss_after_warmup_mb', float('nan')):.1f} -> {result.get('rss_end_mb', float('nan')):.1f} MB "
          f"({result.get('rss_growth_pct', float('nan')):+.2f} %), fds {result.get('fds_growth')} / threads "
          f"{result.get('threads_growth')} grown, {result['commands_sent_per_s']:.0f} commands/s sent, "
          f"{result['commands_accepted_per_s']:.0f}/s accepted, {result['commands_rejected']} rejected, "
          f"{len(result['faults'])} failed steps reset, "
          f"real-time factor {result['real_time_factor_median']}, {result['overruns']} overruns; {args.out}/soak.json")
    for problem in result.get("problems", []):
        print(f"  {problem}")
    return 0 if result["passed"] else 1


COMPILE_DEFAULT_SCENES = ("panda_cable_small",)  # the launch's kernels: panda_cable differs in cable length only


def _cmd_compile(args) -> int:
    """Fill the numba cache with the kernels of the node's step on each scene, and say where and how long."""
    import time

    from ..cosim import ConfigError, build_scene, validate_config, warm_up
    from ..sim import ModelError, SimulationError, jit
    try:
        configs = [validate_config(dict(scene=name)) for name in args.scenes or COMPILE_DEFAULT_SCENES]
        scenes = [(config.scene, build_scene(config, script=False)) for config in configs]
    except ConfigError as exc:
        print(f"cond-ros compile: {exc}", file=sys.stderr)
        return 2
    where = jit.CACHE_DIR or "__pycache__ beside the sources in " + jit.PACKAGE_DIR
    print(f"compiling the kernels of {', '.join(name for name, _ in scenes)} into {where}", flush=True)
    total = time.perf_counter()
    for name, scene in scenes:
        start = time.perf_counter()
        try:
            warm_up(scene)
        except (ModelError, SimulationError) as exc:
            print(f"cond-ros compile: {name}: {exc}", file=sys.stderr)
            return 1
        print(f"  {name}: {time.perf_counter() - start:.1f} s", flush=True)
    print(f"compiled in {time.perf_counter() - total:.1f} s; later starts load the cached kernels")
    return 0


def _cmd_build_interfaces(args) -> int:
    from ..ros import INTERFACE_CACHE, InterfaceBuildError, build_interface_wheel, install_interface_wheel
    try:
        wheel = build_interface_wheel(Path(args.cache) if args.cache else INTERFACE_CACHE)
        if args.install:
            install_interface_wheel(wheel)
            print(f"installed {wheel.name}; cond_sim now serves the simulation_interfaces services")
        else:
            print(f"built {wheel} (pip install it, or run again with --install)")
    except InterfaceBuildError as exc:
        print(f"cond-ros build-interfaces: {exc}", file=sys.stderr)
        return 1 if "failed" in str(exc) else 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cond-ros", description="COND contact simulation for ROS 2.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a built-in scene")
    run.add_argument("scene", help="scene name (see `cond-ros scenes`)")
    run.add_argument("--headless", action="store_true", help="no viewer (the default; kept for scripts)")
    run.add_argument("--view", action="store_true",
                     help="serve the browser 3D view while it runs (needs the view extra: pip install "
                          "'cond_ros[view]')")
    run.add_argument("--real-time-factor", type=float, default=None,
                     help="target simulated / wall time (default: 1 with --view, else as fast as possible)")
    run.add_argument("--paused", action="store_true", help="with --view: start paused (Play or Step in the viewer)")
    run.add_argument("--linger", type=float, default=None,
                     help="with --view: seconds the viewer stays open after the run (default: until Ctrl-C)")
    run.add_argument("--plot", default=None, help="write a PNG of the F/T force and the penetration over time")
    run.add_argument("--steps", type=int, default=None, help="steps to run (default: the scene's duration)")
    run.add_argument("--dt", type=float, default=None, help="time step [s] (default: the scene's, else 0.01)")
    run.add_argument("--solver", default=None,
                     help="contact solver (cond, penalty, pgs, apgd, bisection, newton, primal_newton, compliant; "
                          "default: the scene's)")
    run.add_argument("--out", help="write one CSV row per step: time, solver statistics, joint positions, tool pose, "
                                   "F/T readings (sensor and base frame)")
    run.add_argument("--scene-file", default=None, help="load this scene YAML instead of config/SCENE.yaml")
    run.add_argument("--overlay", default=None, help="a scene overlay YAML (key paths or parameter names set to "
                                                     "numbers; what cond-ros fit writes)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    add_view_options(run)
    run.set_defaults(func=_cmd_run)
    bench = sub.add_parser("bench", help="run a benchmark (box_sliding, chebyshev, scaling, cloth_drape, panda_pick, "
                                         "panda_cable, ros_panda_cable, soft_mat, soft_ball, soft_gripper, "
                                         "ball_stiffness, paper)")
    bench.add_argument("name")
    bench.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    bench.add_argument("--quick", action="store_true", help="smaller problem sizes (CI)")
    bench.add_argument("--out", help="also write the JSON to this file")
    bench.add_argument("--report", default=None,
                       help="paper: also write paper.json, paper.md and plots to this directory "
                            "(e.g. benchmarks/results)")
    bench.add_argument("--segments", type=int, default=None, help="panda_cable: cable segments (default 320)")
    bench.add_argument("--solver", default=None,
                       help="panda_cable: contact solver (default: the scene's COND at the paper's 1e-4, 200 "
                            "iterations; primal_newton: 1e-7, 50 iterations)")
    bench.add_argument("--steps", type=int, default=None, help="panda_cable: steps (default: the whole 55 s)")
    bench.add_argument("--csv", default=None, help="panda_cable: per-step CSV path (default: in the temp dir)")
    bench.add_argument("--duration", type=float, default=None,
                       help=f"ros_panda_cable: simulated seconds (default {ROS_BENCH_DEFAULT_DURATION_S:g})")
    bench.add_argument("--scene", default=None, help="ros_panda_cable: scene (default panda_cable, 320 segments)")
    bench.add_argument("--real-time-factor", type=real_time_factor_option, default=None,
                       help="ros_panda_cable: the node's target real-time factor, 0 = as fast as it can (default 1)")
    bench.set_defaults(func=_cmd_bench)
    launch = sub.add_parser("launch", help="start a launch's ROS 2 nodes without launch_ros (panda_cable)")
    launch.add_argument("name", help="launch name (panda_cable: the sim and the winding demo controller)")
    launch.add_argument("--scene", default=None, help="scene name or YAML path (default panda_cable)")
    launch.add_argument("--overlay", default=None, help="a scene overlay YAML that cond_sim applies (what cond-ros fit "
                                                        "writes)")
    launch.add_argument("--real-time-factor", default=None, help="target simulated / wall time (default 1.0)")
    launch.add_argument("--lockstep", action="store_true", help="each step waits for the controller's command")
    launch.add_argument("--use-sim-time", default=None, help="true|false: the controller runs on /clock (default true)")
    launch.add_argument("--rviz", action="store_true",
                        help="also start rviz2 with config/panda_cable.rviz (needs a ROS 2 distribution's rviz2; its "
                             "exit does not stop the launch)")
    launch.add_argument("--view", action="store_true",
                        help="cond_sim serves the browser 3D view on http://127.0.0.1:8080 (the view extra)")
    launch.add_argument("--duration", type=float, default=None, help="stop after this many wall seconds")
    launch.set_defaults(func=_cmd_launch)
    soak = sub.add_parser("soak", help="the node beside a controller flooding every command topic, sampled each "
                                       "second: memory, descriptors, threads, real-time factor; CSV, PNG, verdict")
    soak.add_argument("--scene", default="panda_cable_small", help="scene name or YAML path (default "
                                                                   "panda_cable_small)")
    soak.add_argument("--duration", type=float, default=600.0, help="wall seconds (default 600)")
    soak.add_argument("--rate", type=float, default=1000.0, help="messages per second on each command topic")
    soak.add_argument("--burst", type=int, default=10_000, help="extra JointState commands in one second of each "
                                                                "burst period (default 10000)")
    soak.add_argument("--burst-period", type=float, default=20.0, help="seconds between bursts (default 20)")
    soak.add_argument("--out", default="soak", help="output directory (soak.csv, soak.png, soak.json, logs)")
    soak.set_defaults(func=_cmd_soak)
    compile_ = sub.add_parser("compile", help="compile the numba kernels ahead of a launch (first start: ~30-100 s "
                                              "on 2 cores; later starts load them from the cache)")
    compile_.add_argument("scenes", nargs="*", help="scenes whose node step to compile (default: panda_cable_small, "
                                                    "whose kernels panda_cable shares)")
    compile_.set_defaults(func=_cmd_compile)
    interfaces = sub.add_parser("build-interfaces",
                                help="build the simulation_interfaces package (no wheel on PyPI) from the sources "
                                     "in the package with the rosidl wheels, ~30 s; the node then serves it")
    interfaces.add_argument("--install", action="store_true", help="pip install the wheel into this interpreter")
    interfaces.add_argument("--cache", default=None,
                            help="where wheels are kept (default ~/.cache/cond_ros/interfaces); a second call with "
                                 "the same sources only installs")
    interfaces.set_defaults(func=_cmd_build_interfaces)
    scenes = sub.add_parser("scenes", help="list built-in scenes")
    scenes.set_defaults(func=_cmd_scenes)
    add_bag_parsers(sub)
    add_fit_parsers(sub)
    add_sweep_parser(sub)
    add_view_parser(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
