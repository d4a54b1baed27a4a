"""The ``cond-ros`` command: run scenes headless and run benchmarks.

    cond-ros run SCENE [--view] [--steps N] [--solver cond] [--out run.csv] [--plot ft.png]
    cond-ros view SCENE | RUN.csv | BAG [--scene S] [--port P]
    cond-ros bench NAME [--json] [--quick] [--out FILE]
    cond-ros launch NAME [--scene S] [--real-time-factor R] [--lockstep] [--use-sim-time true|false]
    cond-ros scenes
    cond-ros compile [SCENE ...]
    cond-ros record SCENE --out BAG [--duration S] [--storage mcap|sqlite3]
    cond-ros replay BAG --scene SCENE --out BAG [--drive auto|commands|joint_states] [--duration S]
    cond-ros salvage PARTIAL --out BAG
    cond-ros compare REAL SIM --real-topic T [--sim-topic T] [--lag none|auto|S] [--tare [S]] [--window S]
                     [--transform X Y Z ROLL PITCH YAW] [--rate HZ] [--out DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys

from .output_paths import output_problem
from .stop_signals import StopSignals
from .view import add_view_options, add_view_parser
from pathlib import Path


def _unknown(command: str, what: str, name: str, registry) -> bool:
    """Report an unknown name with the available ones; True if ``name`` is unknown."""
    if name in registry:
        return False
    print(f"cond-ros {command}: unknown {what} {name!r}; available: {', '.join(sorted(registry))}", file=sys.stderr)
    return True


def _cmd_scenes(args) -> int:
    from .scenes import scene_names
    for name in scene_names():
        print(name)
    return 0


ROS_BENCHMARKS = ("ros_panda_cable",)  # need the ros extra; run by cond_ros.ros.bench
ROS_BENCH_DEFAULT_DURATION_S = 60.0  # simulated seconds (about 70 s at 320 segments here)


def _cmd_bench(args) -> int:
    from .tools import BENCHMARKS
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
            from .ros import bench_ros_panda_cable
        except ImportError as exc:
            print(f"cond-ros bench: {args.name} needs rclpy ({exc}); pip install -e '.[ros]'", file=sys.stderr)
            return 2
        result = bench_ros_panda_cable(duration=ros_only.get("duration", ROS_BENCH_DEFAULT_DURATION_S),
                                       scene=ros_only.get("scene", "panda_cable"),
                                       real_time_factor=ros_only.get("real_time_factor", 1.0), quiet=args.json)
    else:
        if args.report is not None:
            extra["report"] = args.report
        from .sim import ModelError
        try:
            result = BENCHMARKS[args.name](quick=args.quick, quiet=args.json, **extra)
        except ModelError as exc:
            print(f"cond-ros bench: {exc}", file=sys.stderr)
            return 2
    text = json.dumps(result, indent=None if args.json else 2)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")
    print(text)
    return 0


RUN_MAX_STEPS = 1_000_000  # the per-step table of one run (~40 columns): 320 MB at this size
RUN_DT_RANGE = (1e-6, 1.0)  # [s]: the node's dt parameter stops at 1 s too


def _cmd_run(args) -> int:
    from .scenes import load_named_scene, scene_names
    from .sim import ModelError, SimulationError
    from .tools import format_summary, run_scene, warm_up_timed
    if args.scene_file is None and _unknown("run", "scene", args.scene, scene_names()):
        return 2
    from .view import view_option_problems, viewer_missing
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
        scene = load_named_scene(args.scene, dt=args.dt, solver=args.solver, path=args.scene_file)
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
        warm_up_timed(scene, progress=not args.quiet)
        if args.view:
            from .view import run_viewed
            rtf = 1.0 if args.real_time_factor is None else args.real_time_factor
            result = run_viewed(scene, steps, desc=args.scene, progress=not args.quiet, real_time_factor=rtf,
                                paused=args.paused, linger_s=args.linger, host=args.host, port=args.port,
                                fps=args.fps)
            if result is None:
                return 1
        else:
            result = run_scene(scene, steps, progress=not args.quiet, desc=args.scene,
                               control=_paced(sim.dt, args.real_time_factor))
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
    return 0


def _paced(dt: float, real_time_factor):
    """A headless run's pacing: None (as fast as possible) unless a real-time factor > 0 is asked for."""
    if not real_time_factor:
        return None
    from .view import RunControl
    return RunControl(dt, real_time_factor)


def _rclpy_missing(command: str) -> bool:
    """True, and the one-line message naming the extra, when rclpy cannot be imported."""
    import importlib.util
    if importlib.util.find_spec("rclpy") is not None:
        return False
    print(f"cond-ros {command}: rclpy is not installed; pip install -e '.[ros]' (or source a ROS 2 distribution)",
          file=sys.stderr)
    return True


def _cmd_launch(args) -> int:
    from .ros import LAUNCHES, run_launch
    if _unknown("launch", "launch", args.name, LAUNCHES):
        return 2
    if _rclpy_missing("launch"):
        return 2
    overrides = {k: v for k, v in (("scene", args.scene), ("real_time_factor", args.real_time_factor),
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
    if _rclpy_missing("soak"):
        return 2
    from .cosim import ConfigError, load_scene_parameter
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
    from .ros import SoakOptions, run_soak
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

    from .cosim import ConfigError, build_scene, validate_config, warm_up
    from .sim import ModelError, SimulationError, jit
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


def _sim_config(command: str, args):
    """The node parameters that ``record`` and ``replay`` take (None and a message on stderr if invalid)."""
    from .cosim import ConfigError, validate_config
    values = dict(scene=args.scene, dt=args.dt or 0.0, solver=args.solver or "",
                  gravity_compensation=not args.no_gravity_compensation)
    if args.sensor_noise is not None:
        values["sensor_noise"] = args.sensor_noise == "true"
    if args.sensor_seed is not None:
        values["sensor_seed"] = args.sensor_seed
    try:
        return validate_config(values)
    except ConfigError as exc:
        print(f"cond-ros {command}: {exc}", file=sys.stderr)
        return None


def _bag_tool(command: str, run, *, json_errors: bool = False) -> int:
    """Run ``run()``; a bad bag, scene or option is printed with exit code 2 (nothing is left behind). With
    ``json_errors`` the error is also printed as the one JSON object ``{"valid": false, "error": ...}``."""
    from .bags import BagError
    from .cosim import ConfigError
    try:
        return run()
    except (BagError, ConfigError, ValueError, OSError) as exc:
        print(f"cond-ros {command}: {exc}", file=sys.stderr)
        if json_errors:
            print(json.dumps(dict(valid=False, error=str(exc))))
        return 2


def _cmd_record(args) -> int:
    from .bags import record_scene
    config = _sim_config("record", args)
    if config is None:
        return 2

    def run():
        with StopSignals() as signals:  # Ctrl-C or SIGTERM: the bag is closed with the steps recorded so far
            summary = record_scene(config, args.out, duration_s=args.duration, storage=args.storage,
                                   progress=not args.quiet, stop=signals)
        print(f"recorded {summary.steps} steps ({summary.simulated_s:g} s simulated) of {args.scene} in "
              f"{summary.wall_s:.1f} s to {summary.out}: "
              + ", ".join(f"{topic} {n}" for topic, n in summary.counts.items()))
        if summary.stopped:
            print(f"cond-ros record: stopped by {signals.name} after {summary.steps} of {summary.steps_asked} "
                  "steps; the bag is complete up to there", file=sys.stderr)
            return 128 + signals.received
        return 0
    return _bag_tool("record", run)


def _cmd_salvage(args) -> int:
    from .bags import salvage_bag

    def run():
        scanned, writer = salvage_bag(args.partial, args.out)
        lost = ("the file was complete" if scanned.complete else
                f"{scanned.size - scanned.intact_bytes} bytes after the last complete chunk were lost")
        print(f"salvaged {len(scanned.messages)} messages up to log time {scanned.end_ns * 1e-9:.3f} s into "
              f"{writer.path} ({lost}): "
              + ", ".join(f"{topic} {n}" for topic, n in writer.counts.items()))
        return 0
    return _bag_tool("salvage", run)


def _cmd_replay(args) -> int:
    from .bags import replay_bag
    from .view import ReplayView, view_option_problems, viewer_missing
    config = _sim_config("replay", args)
    if config is None:
        return 2
    if args.view and (problems := view_option_problems(args) + ([m] if (m := viewer_missing()) else [])):
        print("cond-ros replay: " + "; ".join(problems), file=sys.stderr)
        return 2
    observer = ReplayView(real_time_factor=1.0, host=args.host, port=args.port, fps=args.fps) if args.view else None

    def run():
        try:
            summary = replay_bag(args.bag, args.out, config, drive=args.drive,
                                 joint_states_topic=args.joint_states_topic, start_ns=args.start_ns,
                                 duration_s=args.duration, storage=args.storage, progress=not args.quiet,
                                 observer=observer)
        finally:
            if observer is not None:
                observer.close()
        print(f"replayed {summary.steps} steps of {args.scene} driven by {summary.drive} "
              f"({', '.join(summary.topics_in)}) from stamp {summary.t0_ns} ns in {summary.wall_s:.1f} s to "
              f"{summary.out}: " + ", ".join(f"{topic} {n}" for topic, n in summary.counts.items()))
        for warning in summary.warnings:
            print(f"warning: {warning}")
        return 0
    return _bag_tool("replay", run)


def _real_time_factor(text: str) -> float:
    """The node's ``real_time_factor`` range, [0, 1000] (0: as fast as it can)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 1000.0:  # also NaN
        raise argparse.ArgumentTypeError(f"must be in [0, 1000] (0: as fast as it can), got {text}")
    return value


def _lag_option(text: str):
    if text in ("none", "auto"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected none, auto or a lag in seconds, got {text!r}") from None


def _cmd_compare(args) -> int:
    from .bags import CompareOptions, WrenchTransform, compare_bags, summary_text, write_report

    def run():
        transform = None
        if args.transform is not None:
            transform = WrenchTransform.from_xyz_rpy(args.transform[:3], args.transform[3:])
        options = CompareOptions(real_topic=args.real_topic, sim_topic=args.sim_topic, lag=args.lag,
                                 max_lag_s=args.max_lag, tare_s=args.tare, window_s=args.window, transform=transform,
                                 rate_hz=args.rate, stamps=args.stamps, preset=args.preset,
                                 joint_states_topic=args.joint_states_topic)
        options.check()  # before the scene is built
        convention = None
        if args.preset is not None:
            if args.scene is None:
                raise ValueError(f"--preset {args.preset} needs --scene: the sim's scene (its F/T sensor's frame, "
                                 "direction and tool)")
            from .bags import sensor_convention
            from .cosim import build_scene, validate_config
            scene = build_scene(validate_config(dict(scene=args.scene)), script=False)
            convention = sensor_convention(scene, args.stiffness_frame)
        comparison = compare_bags(args.real, args.sim, options, progress=not (args.quiet or args.json),
                                  convention=convention)
        files = write_report(comparison, args.out, plots=not args.no_plots)
        if args.json:
            result = comparison.to_dict()
            result["files"] = files
            print(json.dumps(result, allow_nan=False))
        else:
            print(summary_text(comparison))
            print(f"report: {files['markdown']}")
        return 0
    return _bag_tool("compare", run, json_errors=args.json)


def _cmd_play(args) -> int:
    if _rclpy_missing("play"):
        return 2
    from .bags import BagError
    from .ros import plan_playback, play_bag
    try:  # the bag, its topics and their message types, before ROS starts
        plan_playback(args.bag, args.topics, rate=args.rate, clock_hz=args.clock)
    except (BagError, ValueError) as exc:
        print(f"cond-ros play: {exc}", file=sys.stderr)
        return 2
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from .ros import keep_discovery_local
    keep_discovery_local()  # as cond_sim
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)  # Ctrl-C ends the playback below, not rclpy
    try:
        summary = play_bag(args.bag, rate=args.rate, topics=args.topics, clock_hz=args.clock, loop=args.loop,
                           delay=args.delay, wait_for_subscribers=args.wait_for_subscribers)
        print(f"played {summary.messages} messages in {summary.wall_s:.1f} s ({summary.loops} "
              f"pass{'es' if summary.loops > 1 else ''}): " + ", ".join(f"{t} {n}" for t, n in summary.counts.items()))
    except KeyboardInterrupt:
        print("cond-ros play: stopped", file=sys.stderr)
    except BagError as exc:  # the file changed or broke while playing
        print(f"cond-ros play: {exc}", file=sys.stderr)
        return 1
    finally:
        rclpy.try_shutdown()
    return 0


def _cmd_build_interfaces(args) -> int:
    from .ros import INTERFACE_CACHE, InterfaceBuildError, build_interface_wheel, install_interface_wheel
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


def _add_sim_options(parser) -> None:
    parser.add_argument("--out", required=True, help="the bag to write (a new rosbag2 directory)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="bag storage (default mcap)")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds to run")
    parser.add_argument("--dt", type=float, default=None, help="time step [s] (default: the scene's)")
    parser.add_argument("--solver", default=None,
                        help="contact solver (cond, penalty, pgs, apgd, bisection, newton, primal_newton, compliant; "
                             "default: the scene's)")
    parser.add_argument("--sensor-noise", choices=("true", "false"), default=None,
                        help="F/T readings with the scene's noise (default true, as the node)")
    parser.add_argument("--sensor-seed", type=int, default=None, help="seed of the F/T noise (default: the scene's)")
    parser.add_argument("--no-gravity-compensation", action="store_true",
                        help="do not add g(q) to the joint efforts (the node's gravity_compensation:=false)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_bag_parsers(sub) -> None:
    record = sub.add_parser("record", help="run a scene in-process (its script through the demo controller) and "
                                           "write the node's topics to a bag, without ROS")
    record.add_argument("scene", help="scene name (see `cond-ros scenes`) or scene YAML path")
    _add_sim_options(record)
    record.set_defaults(func=_cmd_record)
    salvage = sub.add_parser("salvage", help="write the intact part of a killed recording (an mcap without its "
                                             "summary, in a .NAME.*.partial directory) as a complete bag")
    salvage.add_argument("partial", help="the .partial directory, the bag directory in it, or its .mcap file")
    salvage.add_argument("--out", required=True, help="the new bag (a rosbag2 directory that must not exist)")
    salvage.set_defaults(func=_cmd_salvage)
    replay = sub.add_parser("replay", help="drive the sim from a bag's commands or joint states, in lockstep, and "
                                           "write its joint states, F/T and contact wrenches to a new bag")
    replay.add_argument("bag", help="the recorded bag (rosbag2 directory, .mcap or .db3)")
    replay.add_argument("--scene", required=True, help="scene name or scene YAML path of the sim to replay")
    replay.add_argument("--view", action="store_true", help="watch the replay in the browser 3D view, at real time "
                                                            "(its slider: 0 = as fast as possible; the view extra)")
    add_view_options(replay)
    _add_sim_options(replay)
    replay.add_argument("--drive", choices=("auto", "commands", "joint_states"), default="auto",
                        help="what drives the sim: the node's command topics, or recorded joint states as position "
                             "targets (default auto: commands if the bag has any)")
    replay.add_argument("--joint-states-topic", default="/joint_states", help="joint states to drive from "
                                                                               "(default /joint_states)")
    replay.add_argument("--start-ns", type=int, default=None,
                        help="the bag stamp [ns] of simulated time 0 (default: the bag's first log time for "
                             "commands, the first joint state's stamp for joint states)")
    replay.set_defaults(func=_cmd_replay)
    compare = sub.add_parser("compare", help="compare a real and a simulated wrench topic: RMSE, MAE, max error, "
                                             "bias, correlation per axis; markdown report and plots")
    compare.add_argument("real", help="the bag recorded on the robot")
    compare.add_argument("sim", help="the simulated bag (e.g. from cond-ros replay)")
    compare.add_argument("--real-topic", default=None,
                         help="WrenchStamped topic of the real bag (or a Franka state topic with --preset); "
                              "required without --preset")
    compare.add_argument("--preset", default=None,
                         choices=("ati-netft", "franka-fr3", "franka-fr3-base", "franka-ros1", "multipanda"),
                         help="the real bag's layout: its topic, message field, frame and sign, converted into the "
                              "sim sensor's meaning (needs --scene); reads ROS 1 .bag files too")
    compare.add_argument("--scene", default=None, help="with --preset: the sim's scene name or YAML path")
    compare.add_argument("--joint-states-topic", default="/joint_states",
                         help="with --preset franka-fr3-base: the real bag's joint states, which give the arm's pose "
                              "(default /joint_states)")
    compare.add_argument("--stiffness-frame", default="",
                         help="with a Franka preset: the link of K in the scene's URDF (default: the first *tcp link "
                              "fixed below the sensor)")
    compare.add_argument("--sim-topic", default=None,
                         help="WrenchStamped topic of the sim bag (default: its only /cond_sim/ft/*/ground_truth)")
    compare.add_argument("--lag", type=_lag_option, default="none",
                         help="remove a constant lag: none (default), auto (cross-correlation) or seconds; "
                              "positive: the real data come later than the sim's")
    compare.add_argument("--max-lag", type=float, default=1.0, help="auto: largest lag considered [s] (default 1)")
    compare.add_argument("--tare", type=float, nargs="?", const=1.0, default=None,
                         help="remove each series' mean over the first S seconds (default S = 1) of the overlap, "
                              "as a sensor is tared; the difference is reported as the real sensor's bias")
    compare.add_argument("--window", type=float, default=5.0, help="window of the windowed metrics [s] (default 5)")
    compare.add_argument("--transform", type=float, nargs=6, metavar=("X", "Y", "Z", "ROLL", "PITCH", "YAW"),
                         default=None, help="pose of the sim's wrench frame in the real sensor's frame [m, rad]; "
                                            "needed when the frame_ids differ")
    compare.add_argument("--rate", type=float, default=None,
                         help="resample both onto a uniform grid at this rate [Hz] (default: the real's stamps)")
    compare.add_argument("--stamps", choices=("header", "log"), default="header",
                         help="time of a message: header.stamp (default) or the bag's log time")
    compare.add_argument("--out", default="compare_report", help="report directory (default compare_report)")
    compare.add_argument("--no-plots", action="store_true", help="no PNG plots")
    compare.add_argument("--json", action="store_true", help="print one JSON object (the report) and nothing else")
    compare.add_argument("--quiet", action="store_true", help="no progress bars")
    compare.set_defaults(func=_cmd_compare)
    play = sub.add_parser("play", help="publish a bag's topics as recorded (ros2 bag play, on the pip path)")
    play.add_argument("bag", help="rosbag2 directory, .mcap or .db3")
    play.add_argument("--rate", type=float, default=1.0, help="playback speed (default 1: as recorded)")
    play.add_argument("--clock", type=float, nargs="?", const=100.0, default=None, metavar="HZ",
                      help="publish /clock from the bag's time at HZ wall rate (default 100); the bag's own /clock "
                           "is then not played")
    play.add_argument("--topics", nargs="+", default=None, help="play only these topics (default: all)")
    play.add_argument("--loop", action="store_true", help="start over at the end, until Ctrl-C")
    play.add_argument("--delay", type=float, default=0.5,
                      help="wall seconds between creating the publishers and the first message, for subscribers to "
                           "match (default 0.5)")
    play.add_argument("--wait-for-subscribers", type=float, default=0.0, metavar="S",
                      help="first wait up to S wall seconds until every topic has a subscriber (default 0: don't)")
    play.set_defaults(func=_cmd_play)


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
    bench.add_argument("--real-time-factor", type=_real_time_factor, default=None,
                       help="ros_panda_cable: the node's target real-time factor, 0 = as fast as it can (default 1)")
    bench.set_defaults(func=_cmd_bench)
    launch = sub.add_parser("launch", help="start a launch's ROS 2 nodes without launch_ros (panda_cable)")
    launch.add_argument("name", help="launch name (panda_cable: the sim and the winding demo controller)")
    launch.add_argument("--scene", default=None, help="scene name or YAML path (default panda_cable)")
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
    _add_bag_parsers(sub)
    add_view_parser(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
