"""The ``cond_sim`` node's parameters: one table of specs, and their validation (no ROS import).

The node declares every :data:`PARAMETERS` entry with a ``ParameterDescriptor`` built from the spec, reads
the values back and passes them to :func:`validate_config`. Every problem is collected and reported in
one :class:`ConfigError`, so a bad launch fails at once, naming each bad parameter, and the node never
starts half-configured.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import os

from ..output_paths import output_problem
from .interfaces import FT_PRESETS, JOINT_INTERFACES, parse_ft_output, topic_problem

# the registry of cond_ros.sim.solvers, without importing numba here (test_config checks they match)
SOLVER_NAMES = ("cond", "penalty", "pgs", "apgd", "bisection", "newton", "primal_newton", "compliant")
NS_PER_S = 1_000_000_000
MODES = ("command", "shadow")
SHADOW_JOINT_STATES_TOPIC = "~/joint_states"  # a shadow's own joint states, by default: not on the real robot's
RECORD_STORAGES = ("mcap", "sqlite3")  # rosbag2 storages of record_bag (cond_ros.bags.io.STORAGES)


class ConfigError(ValueError):
    """One or more parameters are invalid; the message names each of them."""


@dataclasses.dataclass(frozen=True)
class ParameterSpec:
    """One node parameter: its default (which fixes its type), meaning, range and whether it is live."""

    name: str
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    read_only: bool = True

    @property
    def type_name(self) -> str:
        """bool, int, float, str or str[] (the ROS parameter type follows from it)."""
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, (list, tuple)):
            return "str[]"
        return type(self.default).__name__


_RATE = "[Hz] of simulated time: > 0 that rate, 0 every step, < 0 off"
PARAMETERS = (
    ParameterSpec("scene", "panda_cable", "scene name (built-in or config/NAME.yaml) or path to a scene YAML"),
    ParameterSpec("overlay", "", "scene overlay YAML (key paths or parameter names set to numbers, as cond-ros fit "
                                 "writes) applied to the scene file; empty = none"),
    ParameterSpec("dt", 0.0, "time step [s], a whole number of nanoseconds; 0 = the scene's", 0.0, 1.0),
    ParameterSpec("real_time_factor", 1.0, "target simulated / wall time; 0 = as fast as possible", 0.0, 1000.0,
                  read_only=False),
    ParameterSpec("start_paused", False, "start paused (resume with ~/pause false, or step with ~/step)"),
    ParameterSpec("lockstep", False, "each step waits for a new command from the controller"),
    ParameterSpec("lockstep_timeout", 1.0, "[s] wall time a lockstep step waits before it holds the last command",
                  0.001, 3600.0, read_only=False),
    ParameterSpec("command_handover_timeout", 0.5, "[s] simulated time after a topic's last command to a joint (a "
                                                  "trajectory's: its end) before another topic may command it; "
                                                  "0 = the last command wins", 0.0, 3600.0, read_only=False),
    ParameterSpec("steps_per_trigger", 1, "steps that one ~/step call runs", 1, 65535, read_only=False),
    ParameterSpec("solver", "", "contact solver (cond, penalty, pgs, apgd, bisection, newton, primal_newton, "
                                "compliant); empty = the scene's"),
    ParameterSpec("solver_tolerance", 0.0, "iterative solvers: residual tolerance; 0 = the scene's", 0.0, 1.0),
    ParameterSpec("solver_max_iterations", 0, "iterative solvers: iteration cap per step; 0 = the scene's", 0,
                  1_000_000),
    ParameterSpec("gravity_compensation", True, "add g(q) to the joint efforts, as the Panda's own controller does"),
    ParameterSpec("sensor_noise", True, "F/T readings with the scene's noise, bias and drift; false: noise-free"),
    ParameterSpec("sensor_seed", -1, "seed of every F/T sensor's noise; -1 = the scene's", -1, 2**31 - 1),
    ParameterSpec("joint_state_rate", 0.0, "/joint_states " + _RATE, -1.0, 1e6),
    ParameterSpec("ft_rate", 0.0, "F/T topics " + _RATE, -1.0, 1e6),
    ParameterSpec("contact_wrench_rate", 0.0, "contact wrench topics " + _RATE, -1.0, 1e6),
    ParameterSpec("marker_rate", 10.0, "markers " + _RATE, -1.0, 1e6),
    ParameterSpec("marker_force_scale", 0.01, "[m/N] length of each contact force's line in ~/markers; 0 = none",
                  0.0, 100.0, read_only=False),
    ParameterSpec("tf_rate", 50.0, "/tf (when tf2_msgs is importable) " + _RATE, -1.0, 1e6),
    ParameterSpec("observer_output_delay", 0.0015, "[s] wall time the node sleeps after /joint_states and F/T, "
                                                  "within the step's real-time budget, before the contact wrenches, "
                                                  "markers and /tf, so that the controller wakes up on a free core; "
                                                  "0 = no sleep", 0.0, 0.1, read_only=False),
    ParameterSpec("diagnostics_period", 1.0, "[s] wall time between /diagnostics messages", 0.01, 3600.0),
    ParameterSpec("warning_period", 2.0, "[s] wall time between two warnings of one kind", 0.0, 3600.0,
                  read_only=False),
    ParameterSpec("command_joints", [], "joint order of the Float64MultiArray commands; empty = every DOF in "
                                        "/joint_states order"),
    ParameterSpec("record_bag", "", "write the published clock, joint states, F/T and contact wrenches and the "
                                    "received commands to this new rosbag2 directory; empty = off"),
    ParameterSpec("record_storage", "mcap", "storage of record_bag: mcap or sqlite3"),
    ParameterSpec("interface", "native", "joint topics: native (joint_states, joint_command, ...), topic_based "
                                         "(ros2_control's topic-based plugin: /robot_joint_states, "
                                         "/robot_joint_commands) or isaac (/isaac_joint_states, "
                                         "/isaac_joint_commands)"),
    ParameterSpec("joint_states_topic", "", "where the joint states go; empty = the interface's topic"),
    ParameterSpec("joint_commands_topic", "", "where JointState commands come from; empty = the interface's topic"),
    ParameterSpec("ft_outputs", ["native"], "F/T topics of every sensor, each PRESET or PRESET=TOPIC; presets "
                                            f"{', '.join(FT_PRESETS)}; a TOPIC may hold {{sensor}}"),
    ParameterSpec("franka_stiffness_frame", "", "franka_fr3_* F/T outputs: the link of the stiffness frame K; "
                                                "empty = the first *tcp link fixed below the sensor, else its link"),
    ParameterSpec("mode", "command", "command: the robots follow the command topics; shadow: they follow a real "
                                     "robot's measured joint states (shadow_joint_states_topic), and the predicted "
                                     "F/T is compared with the real one (shadow_ft_topics)"),
    ParameterSpec("shadow_joint_states_topic", "/joint_states", "shadow mode: the real robot's measured "
                                                                "sensor_msgs/JointState topic"),
    ParameterSpec("shadow_ft_topics", [], "shadow mode: the real F/T topics (WrenchStamped), each TOPIC or "
                                          "SENSOR=TOPIC, compared with the sensor's first ft_outputs topic; the "
                                          "residual goes to ~/ft/<sensor>/residual"),
    ParameterSpec("shadow_max_age", 0.1, "[s] shadow mode: measured joint states older than this are reported "
                                         "stale in /diagnostics", 0.001, 3600.0),
    ParameterSpec("view", False, "serve the browser 3D view on view_host:view_port (needs the view extra: pip "
                                 "install 'cond_ros[view]')"),
    ParameterSpec("view_host", "127.0.0.1", "address the view serves on (0.0.0.0: every interface)"),
    ParameterSpec("view_port", 8080, "port of the view (0: any free one; the log says which)", 0, 65535),
)
SPECS = {spec.name: spec for spec in PARAMETERS}
LIVE_PARAMETERS = tuple(spec.name for spec in PARAMETERS if not spec.read_only)


@dataclasses.dataclass(frozen=True)
class SimConfig:
    """The validated parameters (field names as in :data:`PARAMETERS`)."""

    scene: str
    dt: float
    real_time_factor: float
    start_paused: bool
    lockstep: bool
    lockstep_timeout: float
    steps_per_trigger: int
    solver: str
    solver_tolerance: float
    solver_max_iterations: int
    gravity_compensation: bool
    sensor_noise: bool
    sensor_seed: int
    joint_state_rate: float
    ft_rate: float
    contact_wrench_rate: float
    marker_rate: float
    tf_rate: float
    diagnostics_period: float
    warning_period: float
    command_joints: tuple
    record_bag: str = ""
    record_storage: str = "mcap"
    interface: str = "native"
    joint_states_topic: str = ""
    joint_commands_topic: str = ""
    ft_outputs: tuple = ("native",)
    franka_stiffness_frame: str = ""
    command_handover_timeout: float = 0.5
    marker_force_scale: float = 0.01
    view: bool = False
    view_host: str = "127.0.0.1"
    view_port: int = 8080
    observer_output_delay: float = 0.0015
    overlay: str = ""
    mode: str = "command"
    shadow_joint_states_topic: str = "/joint_states"
    shadow_ft_topics: tuple = ()
    shadow_max_age: float = 0.1


def _check(spec: ParameterSpec, value) -> str | None:
    """The problem with ``value`` for ``spec`` (None if fine)."""
    kind = spec.type_name
    if kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif kind == "str":
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    if not ok:
        return f"{spec.name}: expected {'a finite float' if kind == 'float' else kind}, got {value!r}"
    if spec.low is not None and not spec.low <= value <= spec.high:
        return f"{spec.name}: must be in [{spec.low}, {spec.high}], got {value!r}"
    return None


def check_parameter(name: str, value) -> str | None:
    """The problem with setting parameter ``name`` to ``value`` (None if fine); for live changes too."""
    if name not in SPECS:
        return f"{name}: unknown parameter (known: {', '.join(SPECS)})"
    problem = _check(SPECS[name], value)
    if problem is not None:
        return problem
    if name == "dt" and value > 0 and abs(value * NS_PER_S - round(value * NS_PER_S)) > 1e-6:
        return f"dt: must be a whole number of nanoseconds (so /clock advances by exactly dt), got {value!r}"
    if name == "solver" and value and value not in SOLVER_NAMES:
        return f"solver: expected one of {', '.join(SOLVER_NAMES)} or empty, got {value!r}"
    if name == "command_joints" and len(set(value)) != len(value):
        return f"command_joints: names repeat: {list(value)}"
    if name == "record_storage" and value not in RECORD_STORAGES:
        return f"record_storage: expected one of {', '.join(RECORD_STORAGES)}, got {value!r}"
    if name == "interface" and value not in JOINT_INTERFACES:
        return f"interface: expected one of {', '.join(JOINT_INTERFACES)}, got {value!r}"
    if name == "shadow_joint_states_topic" and not value:
        return f"{name}: must name the measured joint states' topic"
    if name in ("joint_states_topic", "joint_commands_topic", "shadow_joint_states_topic") and value:
        return topic_problem(name, value) or (f"{name}: {{sensor}} is for ft_outputs only" if "{" in value else None)
    if name == "ft_outputs":
        outputs = []
        for entry in value:
            try:
                outputs.append(parse_ft_output(entry))
            except ValueError as exc:
                return f"ft_outputs: {exc}"
        topics = [topic for _, topic in outputs]
        if len(set(topics)) != len(topics):
            return f"ft_outputs: two outputs on one topic: {list(value)}"
    if name == "mode" and value not in MODES:
        return f"mode: expected one of {', '.join(MODES)}, got {value!r}"
    if name == "shadow_ft_topics":
        for entry in value:
            topic = entry.rpartition("=")[2].strip()
            if problem := topic_problem(name, topic) or ("{" in topic and f"{name}: {{sensor}} is for ft_outputs only"):
                return problem
        if len({entry.rpartition("=")[2].strip() for entry in value}) != len(value):
            return f"shadow_ft_topics: a topic repeats: {list(value)}"
    if name == "overlay" and value and not os.path.isfile(value):
        return f"overlay: no such file: {value!r}"
    if name == "record_bag" and value and (problem := output_problem(value, new=True)):
        return f"record_bag: {problem}" + ("; choose a new path" if os.path.lexists(value) else "")
    return None


def scene_path(scene: str, packaged: dict, built_in=()) -> str | None:
    """The YAML file that ``scene`` names (None for a built-in scene); raises ConfigError if none.

    ``scene`` is a YAML path, a built-in scene's name or a name of ``packaged`` (``{name: path}``, the
    packaged scene files).
    """
    if scene.endswith((".yaml", ".yml")) or os.sep in scene:
        if not os.path.isfile(scene):
            raise ConfigError(f"scene: no such file {scene!r}")
        return scene
    if scene in built_in:
        return None
    path = packaged.get(scene)
    if path is None or not os.path.isfile(path):
        names = sorted(set(built_in) | set(packaged))
        raise ConfigError(f"scene: unknown scene {scene!r}; give a YAML path or one of {', '.join(names)}")
    return path


def undeclared_parameter_problems(names, declared) -> list:
    """One line per parameter given to the node that it does not declare (``declared``: the names it has),
    with the closest declared name: rclpy ignores such overrides without a word, so a misspelling is lost."""
    known = sorted(declared)
    problems = []
    for name in sorted(set(names) - set(declared)):
        close = difflib.get_close_matches(name, known, n=1)
        problems.append(f"{name}: not a parameter of this node, ignored"
                        + (f"; did you mean {close[0]}?" if close else ""))
    return problems


def validate_config(values: dict) -> SimConfig:
    """A :class:`SimConfig` from parameter values (missing ones take their defaults); raises ConfigError."""
    merged = {spec.name: spec.default for spec in PARAMETERS}
    merged.update(values)
    problems = [problem for name, value in merged.items() if (problem := check_parameter(name, value))]
    if not problems and merged["solver"] == "penalty" and (merged["solver_tolerance"]
                                                           or merged["solver_max_iterations"]):
        problems.append("solver_tolerance/solver_max_iterations: apply to the iterative solvers, not penalty")
    if not problems and merged["mode"] == "shadow" and merged["lockstep"]:
        problems.append("lockstep: a shadow follows the measured joint states, not a controller's commands; "
                        "set lockstep false or mode command")
    if problems:
        raise ConfigError("invalid parameters:\n  " + "\n  ".join(problems))
    if merged["mode"] == "shadow" and not merged["joint_states_topic"]:  # /joint_states is the real robot's there
        merged["joint_states_topic"] = SHADOW_JOINT_STATES_TOPIC
    merged["dt"] = float(merged["dt"])
    merged["command_joints"] = tuple(merged["command_joints"])
    merged["ft_outputs"] = tuple(merged["ft_outputs"])
    merged["shadow_ft_topics"] = tuple(merged["shadow_ft_topics"])
    for spec in PARAMETERS:
        if spec.type_name == "float":
            merged[spec.name] = float(merged[spec.name])
    return SimConfig(**merged)
