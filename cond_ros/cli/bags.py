"""The bag commands of ``cond-ros``: record, salvage, replay, compare and play (rosbag2 on the pip path).

    cond-ros record SCENE --out BAG [--duration S] [--storage mcap|sqlite3]
    cond-ros replay BAG --scene SCENE --out BAG [--drive auto|commands|joint_states] [--duration S] [--view]
    cond-ros salvage PARTIAL --out BAG
    cond-ros compare REAL SIM --real-topic T [--sim-topic T] [--lag none|auto|S] [--tare [S]] [--window S]
                     [--transform X Y Z ROLL PITCH YAW] [--rate HZ] [--out DIR] [--json]
    cond-ros play BAG [--rate R] [--clock [HZ]] [--topics T ...] [--loop]
"""
from __future__ import annotations

import argparse
import json
import sys

from ..stop_signals import StopSignals
from ..view import add_view_options
from .checks import rclpy_missing


def _sim_config(command: str, args):
    """The node parameters that ``record`` and ``replay`` take (None and a message on stderr if invalid)."""
    from ..cosim import ConfigError, validate_config
    values = dict(scene=args.scene, overlay=args.overlay or "", dt=args.dt or 0.0, solver=args.solver or "",
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
    from ..bags import BagError
    from ..cosim import ConfigError
    try:
        return run()
    except (BagError, ConfigError, ValueError, OSError) as exc:
        print(f"cond-ros {command}: {exc}", file=sys.stderr)
        if json_errors:
            print(json.dumps(dict(valid=False, error=str(exc))))
        return 2


def _cmd_record(args) -> int:
    from ..bags import record_scene
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
    from ..bags import salvage_bag

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
    from ..bags import replay_bag
    from ..view import ReplayView, view_option_problems, viewer_missing
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


def real_time_factor_option(text: str) -> float:
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
    from ..bags import CompareOptions, WrenchTransform, compare_bags, summary_text, write_report

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
            from ..bags import sensor_convention
            from ..cosim import build_scene, validate_config
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
    if rclpy_missing("play"):
        return 2
    from ..bags import BagError
    from ..ros import plan_playback, play_bag
    try:  # the bag, its topics and their message types, before ROS starts
        plan_playback(args.bag, args.topics, rate=args.rate, clock_hz=args.clock)
    except (BagError, ValueError) as exc:
        print(f"cond-ros play: {exc}", file=sys.stderr)
        return 2
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from ..ros import keep_discovery_local
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


def _add_sim_options(parser) -> None:
    parser.add_argument("--out", required=True, help="the bag to write (a new rosbag2 directory)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="bag storage (default mcap)")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds to run")
    parser.add_argument("--dt", type=float, default=None, help="time step [s] (default: the scene's)")
    parser.add_argument("--overlay", default=None,
                        help="a scene overlay YAML (key paths or parameter names set to numbers; what cond-ros fit "
                             "writes)")
    parser.add_argument("--solver", default=None,
                        help="contact solver (cond, penalty, pgs, apgd, bisection, newton, primal_newton, compliant; "
                             "default: the scene's)")
    parser.add_argument("--sensor-noise", choices=("true", "false"), default=None,
                        help="F/T readings with the scene's noise (default true, as the node)")
    parser.add_argument("--sensor-seed", type=int, default=None, help="seed of the F/T noise (default: the scene's)")
    parser.add_argument("--no-gravity-compensation", action="store_true",
                        help="do not add g(q) to the joint efforts (the node's gravity_compensation:=false)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_bag_parsers(sub) -> None:
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
