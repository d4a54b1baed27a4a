"""Build the simulated scene that a :class:`~cond_ros.cosim.config.SimConfig` asks for (no ROS import).

The scene's own settings (dt, solver and its options, F/T sensors) are the defaults; the parameters that
are set override them. Errors are :class:`~cond_ros.cosim.config.ConfigError` naming the parameter or the
scene key, so the node stops before it creates any publisher.
"""
from __future__ import annotations

import dataclasses

import yaml

from ..resources import ResourceError, scene_files
from ..scenes import BUILT_IN, Overlay, Scene, load_named_scene, read_overlay, with_options
from ..sim import ModelError, SimulatedFTSensor, override_options
from .commands import CommandState
from .config import ConfigError, SimConfig, scene_path
from .joint_names import JointNameMap, UnknownJointError, model_joint_names


def _sensor(model, sensor: SimulatedFTSensor, config: SimConfig) -> SimulatedFTSensor:
    """The scene's sensor with the node's noise and seed settings applied."""
    changes = {}
    if not config.sensor_noise:
        changes.update(noise_std=[0.0] * 6, bias=[0.0] * 6, bias_drift_std=[0.0] * 6)
    if config.sensor_seed >= 0:
        changes["seed"] = config.sensor_seed
    if not changes:
        return sensor
    return SimulatedFTSensor(model, dataclasses.replace(sensor.spec, **changes), sensor.robot)


def scene_parameter_file(scene: str) -> str | None:
    """The scene YAML that a ``scene`` parameter names (None: a scene built in code); ConfigError if none."""
    try:
        packaged = scene_files()
    except ResourceError as exc:
        raise ConfigError(f"scene {scene!r}: {exc}") from None
    return scene_path(scene, packaged, BUILT_IN)


def load_scene_parameter(scene: str, *, script: bool = True, overlay: str | Overlay = "") -> Scene:
    """The scene that a ``scene`` parameter names; with ``script=False``, without its scripted motion;
    ``overlay`` (a file, or settings made in memory) changes numbers of its scene file first."""
    path = scene_parameter_file(scene)
    try:
        if isinstance(overlay, str):
            overlay = read_overlay(overlay) if overlay else None
        return load_named_scene(scene, path=path, script=script, overlay=overlay)
    except (ModelError, OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"scene {scene!r}: {exc}") from None


def build_scene(config: SimConfig, *, script: bool = True, overlay: Overlay | None = None) -> Scene:
    """The scene of ``config.scene`` with its overlay (``overlay``, else the file ``config.overlay``), dt, solver
    and sensor settings applied (``script``: see :func:`load_scene_parameter`)."""
    scene = load_scene_parameter(config.scene, script=script, overlay=overlay or config.overlay)
    model = scene.simulator.model
    try:
        # the parameters' 0 / "" mean "the scene's own"
        options = override_options(scene.simulator.options, dt=config.dt if config.dt > 0 else None,
                                   solver=config.solver or None,
                                   tolerance=config.solver_tolerance if config.solver_tolerance > 0 else None,
                                   max_iterations=config.solver_max_iterations if config.solver_max_iterations > 0
                                   else None)
        scene = with_options(scene, options)
        sensors = [_sensor(model, s, config) for s in scene.sensors]
    except ModelError as exc:
        raise ConfigError(f"scene {config.scene!r}: {exc}") from None
    return scene._replace(sensors=sensors)


def warm_up(scene: Scene) -> None:
    """:meth:`Scene.warm_up <cond_ros.scenes.scene.Scene.warm_up>` with the node's kind of step: it holds the
    start configuration with gravity compensation (the node's default), so the kinematics of the command
    path compile too, not only the simulator's."""
    sim = scene.simulator
    scene.warm_up(CommandState(sim.model).control(sim.state.time, sim.state.robot_q, gravity_compensation=True))


def command_mapping(model, command_joints) -> tuple[JointNameMap, list]:
    """The model's joint names and the DOF order of Float64MultiArray commands (``command_joints``; empty:
    every DOF in /joint_states order). Raises ConfigError naming a bad ``command_joints``."""
    dof_names, mimic_names = model_joint_names(model)
    try:
        names = JointNameMap(dof_names, mimic_names)
        return names, names.dofs(list(command_joints) or dof_names)[0]
    except (UnknownJointError, ValueError) as exc:
        raise ConfigError(f"command_joints: {exc}") from None


def restart_scene(scene: Scene, commands: CommandState, robot_q=None, robot_qd=None) -> None:
    """Back to the scene's initial state, or with the given joint positions and velocities of every DOF (the
    commands then hold those positions): the simulator, its F/T sensors and the held commands."""
    sim = scene.simulator
    state = None
    if robot_q is not None or robot_qd is not None:
        state = sim.model.state()
        if robot_q is not None:
            state.robot_q[:] = robot_q
        if robot_qd is not None:
            state.robot_qd[:] = robot_qd
    sim.reset(state)
    for sensor in scene.sensors:
        sensor.reset()
    commands.reset()
    if robot_q is not None:
        commands.position[:] = robot_q
