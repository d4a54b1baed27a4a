"""``cond-ros fit`` and ``cond-ros sweep``: a scene's parameters against a recorded bag, or over a set of values.

    cond-ros fit SCENE --bag REAL --real-topic T [--preset P] [--params mu,youngs_modulus,...] [--bounds N=LO:HI ...]
                 [--window T0:T1] [--drive auto|script|commands|joint_states] [--budget N] [--workers K]
                 [--backend local|ray] [--address ADDR] [--out DIR] [--seed S]
    cond-ros sweep SCENE --param NAME=V1,V2,... | NAME=LO:HI ... [--samples N] [--duration S] [--backend ...]
"""
from __future__ import annotations

import shlex
import sys

from .bags import _lag_option


def _params(text: str) -> list:
    return [name.strip() for name in text.split(",") if name.strip()]


def _cmd_fit(args) -> int:
    from ..bags import BagError
    from ..cosim import ConfigError
    from ..fit import (FitError, Loss, check_search, fit, open_backend, out_dir_problem, parse_bounds, parse_window,
                       prepare_fit, weakly_determined, write_fit_report)
    from ..sim import ModelError
    names = _params(args.params)
    try:
        if problem := out_dir_problem(args.out):
            raise FitError(f"--out: {problem}")
        check_search(len(names), budget=args.budget, seed=args.seed, popsize=args.popsize, polish_share=args.polish)
        problem = prepare_fit(args.scene, args.bag, params=names, bounds=parse_bounds(args.bounds, names),
                              real_topic=args.real_topic, preset=args.preset, window=parse_window(args.window),
                              drive=args.drive, loss=Loss.parse(args.weights), lag=args.lag, max_lag_s=args.max_lag,
                              tare_s=args.tare, stamps=args.stamps, sim_topic=args.sim_topic,
                              joint_states_topic=args.joint_states_topic, stiffness_frame=args.stiffness_frame,
                              overlay=args.overlay, dt=args.dt, solver=args.solver, progress=not args.quiet)
        backend = open_backend(problem.spec, args.backend, workers=args.workers, address=args.address)
    except KeyboardInterrupt:
        print("cond-ros fit: interrupted before the search started; nothing written", file=sys.stderr)
        return 130
    except (FitError, ConfigError, BagError, ModelError, ValueError, OSError) as exc:
        print(f"cond-ros fit: {exc}", file=sys.stderr)
        return 2
    first = problem.first
    print(f"fitting {', '.join(names)} of {args.scene} to {problem.spec.real.name}: {problem.spec.steps} steps per "
          f"rollout ({first.wall_s:.2f} s here), driven by {problem.spec.drive}, on {backend.name} with "
          f"{backend.workers} workers; loss of the scene as it is {first.loss:.6g}", flush=True)
    try:
        result = fit(problem.params, backend, budget=args.budget, seed=args.seed, first=first,
                     popsize=args.popsize, progress=not args.quiet, sensitivity=not args.no_sensitivity,
                     polish_share=args.polish)
    except FitError as exc:
        print(f"cond-ros fit: {exc}", file=sys.stderr)
        return 2
    finally:
        backend.close()
    command = "cond-ros " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    files = write_fit_report(problem, result, args.out, command=command, plots=not args.no_plots)
    best = result.best
    print(f"{len(result.rollouts)} rollouts in {result.wall_s:.1f} s ({result.ended}), {len(result.failed)} failed; "
          f"loss {result.before.loss:.6g} -> {best.loss:.6g}")
    for p in result.params:
        print(f"  {p.name}: {p.start:.6g} -> {best.settings[p.name]:.6g}")
    for line in weakly_determined(result):
        print(f"warning: {line}")
    print(f"fitted overlay: {files['overlay']} (cond-ros run/launch/replay --overlay); report: {files['markdown']}")
    if result.ended == "interrupted":
        print("cond-ros fit: interrupted; the outputs hold the best of the rollouts made", file=sys.stderr)
        return 130
    if result.ended == "failed":
        print("cond-ros fit: every rollout failed; see the report", file=sys.stderr)
        return 1
    return 0


def add_fit_parsers(sub) -> None:
    fit = sub.add_parser("fit", help="calibrate a scene's parameters to a recorded bag's F/T (CMA-ES over parallel "
                                     "rollouts; --backend ray for a cluster)")
    fit.add_argument("scene", help="scene name or scene YAML path")
    fit.add_argument("--bag", required=True, help="the recorded bag (the robot's, or one cond-ros record wrote)")
    fit.add_argument("--real-topic", default=None, help="its WrenchStamped topic (or a Franka topic with --preset)")
    fit.add_argument("--preset", default=None,
                     choices=("ati-netft", "franka-fr3", "franka-fr3-base", "franka-ros1", "multipanda"),
                     help="the real bag's layout, converted into the sim sensor's meaning (as cond-ros compare)")
    fit.add_argument("--params", default="mu,youngs_modulus,segment_damping",
                     help="comma-separated parameter names (mu, youngs_modulus, poisson_ratio, density, damping_time, "
                          "segment_damping, virtual_node_gain) or key paths of the scene YAML (cables[0].mu); "
                          "default mu,youngs_modulus,segment_damping")
    fit.add_argument("--bounds", nargs="+", default=None, metavar="NAME=LOW:HIGH[:log|:linear]",
                     help="search bounds (default: the scene's value / 2 .. x 2; log scale for stiffness-like "
                          "parameters)")
    fit.add_argument("--window", default=None, metavar="T0:T1",
                     help="score only this span [s after the real topic's first sample] (default: all of it)")
    fit.add_argument("--drive", choices=("auto", "script", "commands", "joint_states"), default="auto",
                     help="what drives the sim: the bag's commands or joint states (as cond-ros replay), or the "
                          "scene's script (default auto: commands if the bag has any, else joint states)")
    fit.add_argument("--weights", default=None, metavar="AXIS=W,...",
                     help="the loss is sum of weight x RMSE over fx fy fz tx ty tz (default weight 1 each)")
    fit.add_argument("--budget", type=int, default=200, help="rollouts at most (default 200; the sensitivity adds 2 "
                                                             "per parameter)")
    fit.add_argument("--popsize", type=int, default=None, help="CMA-ES population (default 4 + 3 ln n)")
    fit.add_argument("--polish", type=float, default=0.4, metavar="SHARE",
                     help="the budget's share for the Levenberg-Marquardt polish of CMA-ES's best on the F/T "
                          "residual (default 0.4; 0: CMA-ES alone)")
    fit.add_argument("--seed", type=int, default=0, help="seed of the search (default 0): same seed, same fit")
    fit.add_argument("--backend", choices=("local", "ray"), default="local",
                     help="local: this machine's cores (default); ray: Ray tasks (the ray extra)")
    fit.add_argument("--workers", type=int, default=None,
                     help="parallel rollouts (default: the CPUs; with --address: the cluster's)")
    fit.add_argument("--address", default=None, help="with --backend ray: join this Ray cluster (default: start a "
                                                     "local Ray instance)")
    fit.add_argument("--out", default="fit_report", help="output directory (default fit_report)")
    fit.add_argument("--overlay", default=None, help="start from the scene with this overlay applied")
    fit.add_argument("--lag", type=_lag_option, default="none", help="as cond-ros compare: none (default), auto, S")
    fit.add_argument("--max-lag", type=float, default=1.0, help="auto: largest lag considered [s] (default 1)")
    fit.add_argument("--tare", type=float, nargs="?", const=1.0, default=None,
                     help="as cond-ros compare: remove each series' mean over the first S seconds (default 1)")
    fit.add_argument("--stamps", choices=("header", "log"), default="header", help="time of a message (default "
                                                                                    "header)")
    fit.add_argument("--sim-topic", default=None,
                     help="the sim's topic to compare (default: its only F/T sensor's ground truth)")
    fit.add_argument("--joint-states-topic", default="/joint_states",
                     help="the bag's joint states (--drive joint_states, --preset franka-fr3-base)")
    fit.add_argument("--stiffness-frame", default="", help="with a Franka preset: the link of K (as cond-ros compare)")
    fit.add_argument("--dt", type=float, default=None, help="time step [s] (default: the scene's)")
    fit.add_argument("--solver", default=None, help="contact solver (default: the scene's)")
    fit.add_argument("--no-sensitivity", action="store_true", help="skip the sensitivity table (2 rollouts per "
                                                                   "parameter)")
    fit.add_argument("--no-plots", action="store_true", help="no PNG plots")
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    fit.set_defaults(func=_cmd_fit)


def _cmd_sweep(args) -> int:
    from ..fit import (SWEEP_FILES, FitError, SweepParameter, SweepSpec, open_backend, scene_document, sweep_samples,
                       write_sweep)
    from ..output_paths import report_dir_problem
    from ..scenes import Overlay, expand, load_named_scene, read_overlay
    from ..sim import ModelError
    try:
        if problem := report_dir_problem(args.out, SWEEP_FILES):
            raise FitError(f"--out: {problem}")
        params = [SweepParameter.parse(text) for text in args.param]
        samples = sweep_samples(params, args.samples, args.seed)
        base = read_overlay(args.overlay) if args.overlay else None
        path, document = scene_document(args.scene, base)
        for p in params:  # every name must reach the scene file: checked before any sample runs
            try:
                expand(document, p.name)
            except ValueError as exc:
                raise FitError(f"--param: {path}: {exc}") from None
        base = dict(base.settings) if base is not None else {}
        scene = load_named_scene(args.scene, path=path, overlay=Overlay({**base, **samples[0]}, "sweep"))
        if args.duration is not None and not args.duration > 0:
            raise FitError(f"--duration: must be > 0 s, got {args.duration:g}")
        steps = int(round((args.duration if args.duration is not None else scene.duration) / scene.simulator.dt))
        spec = SweepSpec(args.scene, path, base, steps)
        backend = open_backend(spec, args.backend, workers=args.workers, address=args.address)
    except (FitError, ModelError, ValueError, OSError) as exc:
        print(f"cond-ros sweep: {exc}", file=sys.stderr)
        return 2
    from tqdm import tqdm
    print(f"sweeping {', '.join(p.name for p in params)} of {args.scene}: {len(samples)} samples of {steps} steps on "
          f"{backend.name} with {backend.workers} workers", flush=True)
    results, interrupted = [], False
    try:
        with tqdm(total=len(samples), desc="sweep", unit="sample", disable=args.quiet) as bar:
            for k in range(0, len(samples), backend.workers):
                results += backend.map(samples[k:k + backend.workers], on_done=lambda: bar.update(1))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        backend.close()
    command = "cond-ros " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    directory = write_sweep(args.out, spec, results, command=command,
                            extra=dict(backend=backend.name, workers=backend.workers, seed=args.seed))
    failed = sum(r.failed for r in results)
    print(f"{len(results)} of {len(samples)} samples, {failed} failed: {directory}/sweep.md")
    if interrupted:
        print("cond-ros sweep: interrupted; the outputs hold the samples that ran", file=sys.stderr)
        return 130
    return 1 if results and failed == len(results) else 0


def add_sweep_parser(sub) -> None:
    sweep = sub.add_parser("sweep", help="run a scene over a grid or a random set of parameter values; a table of "
                                         "the run's outputs per sample and their spread")
    sweep.add_argument("scene", help="scene name or scene YAML path (its script is played)")
    sweep.add_argument("--param", nargs="+", required=True, metavar="NAME=V1,V2|NAME=LOW:HIGH[:log]",
                       help="a parameter (as cond-ros fit --params) and its values, or a range drawn --samples times")
    sweep.add_argument("--samples", type=int, default=None, help="random draws when a parameter is a range "
                                                                 "(default 20)")
    sweep.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    sweep.add_argument("--duration", type=float, default=None, help="simulated seconds per sample (default: the "
                                                                    "scene's)")
    sweep.add_argument("--overlay", default=None, help="apply this overlay under every sample")
    sweep.add_argument("--backend", choices=("local", "ray"), default="local", help="as cond-ros fit")
    sweep.add_argument("--workers", type=int, default=None, help="parallel samples (default: the CPUs)")
    sweep.add_argument("--address", default=None, help="with --backend ray: join this Ray cluster")
    sweep.add_argument("--out", default="sweep_report", help="output directory (default sweep_report)")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.set_defaults(func=_cmd_sweep)
