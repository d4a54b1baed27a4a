"""A fit's problem, checked whole before any rollout: the scene and its parameters, the real recording over the
loss window, how the sim is driven and how far, and the first rollout (the scene as it is), run here.

Everything that can be wrong with the options, the scene or the bag is found here, in this process, and named
(a :class:`~cond_ros.fit.parameters.FitError`, a ConfigError or a BagError), before a worker starts.
"""
from __future__ import annotations

import dataclasses

from ..bags import BagReader, CompareOptions, read_drive, read_real_series, sensor_convention
from ..cosim import ConfigError, build_scene, ft_topics, resolve_topic, scene_parameter_file, validate_config
from ..scenes import Overlay, read_overlay, read_scene_yaml
from .parameters import FitError, make_parameters
from .rollout import DRIVES, Evaluator, Loss, RolloutSpec, steps_to_cover, window_series


@dataclasses.dataclass
class FitProblem:
    """The checked problem: the spec every worker gets, the parameters, the scene's name and file, and an
    evaluator in this process (it ran the first rollout, and reruns the start and the best for the report)."""

    spec: RolloutSpec
    params: list
    scene: str
    scene_file: str
    evaluator: Evaluator
    first: object  # the first RolloutResult: the scene as it is


def scene_document(scene: str, overlay: Overlay | None = None):
    """(the scene file's path, its YAML document with ``overlay`` applied); FitError for a scene built in code."""
    path = scene_parameter_file(scene)
    if path is None:
        raise FitError(f"scene {scene!r} is built in code; fits and sweeps change numbers of a scene YAML")
    document = read_scene_yaml(path)
    return path, overlay.apply(document, path) if overlay is not None else document


def prepare_fit(scene: str, bag: str, *, params, bounds=None, real_topic: str | None = None,
                preset: str | None = None, window=None, drive: str = "auto", loss: Loss = Loss(),
                lag="none", max_lag_s: float = 1.0, tare_s: float | None = None, stamps: str = "header",
                sim_topic: str | None = None, joint_states_topic: str = "/joint_states", stiffness_frame: str = "",
                overlay: str | None = None, dt: float | None = None, solver: str | None = None,
                gravity_compensation: bool = True, feedforward: bool = True, progress: bool = True) -> FitProblem:
    """Check everything and run the first rollout; raises FitError, ConfigError or BagError naming the
    problem (a first rollout that fails is a FitError with its error: every other would fail the same way)."""
    if drive not in DRIVES:
        raise FitError(f"--drive: expected one of {', '.join(DRIVES)}, got {drive!r}")
    values = dict(scene=scene, dt=dt or 0.0, solver=solver or "", sensor_noise=False,
                  gravity_compensation=gravity_compensation, contact_wrench_rate=-1.0)
    config = validate_config(values)
    base = read_overlay(overlay) if overlay else None
    path, document = scene_document(scene, base)
    parameters = make_parameters(document, params, bounds, source=path)
    compare = CompareOptions(real_topic=real_topic, sim_topic=sim_topic, lag=lag, max_lag_s=max_lag_s,
                             tare_s=tare_s, stamps=stamps, preset=preset, joint_states_topic=joint_states_topic)
    try:
        compare.check()
    except ValueError as exc:
        raise FitError(str(exc)) from None
    built = build_scene(config, script=False, overlay=base)
    if sim_topic is None:
        topics = [resolve_topic(ft_topics(sensor.spec.name)[1]) for sensor in built.sensors]
        if len(topics) != 1:
            raise FitError(f"scene {scene!r} has {len(topics)} F/T sensors; name the one to fit with --sim-topic "
                           f"({', '.join(topics) or 'none'})")
        compare = dataclasses.replace(compare, sim_topic=topics[0])
    convention = None
    if preset is not None:
        try:
            convention = sensor_convention(built, stiffness_frame)
        except ValueError as exc:
            raise ConfigError(f"scene {scene!r}: {exc}") from None
    real, compare = read_real_series(bag, compare, progress=progress, convention=convention)
    real = window_series(real, window)
    plan = None
    if drive == "script":
        if not _has_script(document):
            raise FitError(f"--drive script: scene {scene!r} has no script")
        with BagReader(bag) as reader:
            t0_ns = reader.start_ns
    else:
        plan = read_drive(bag, drive=drive, joint_states_topic=joint_states_topic, progress=progress)
        drive, t0_ns = plan.drive, plan.t0_ns
    steps = steps_to_cover(real, t0_ns, built.simulator.dt, compare)
    spec = RolloutSpec(values, drive, str(bag), plan, t0_ns, steps, real, compare.sim_topic, compare, loss,
                       feedforward, dict(base.settings) if base is not None else {})
    evaluator = spec.evaluator()
    first = evaluator({p.name: p.start for p in parameters}, keep_series=True)  # the report's "before" trace
    if first.failed:
        raise FitError(f"the scene as it is cannot be scored against {real.name}: {first.error}")
    return FitProblem(spec, parameters, scene, path, evaluator, first)


def _has_script(document) -> bool:
    return isinstance(document, dict) and "script" in document
