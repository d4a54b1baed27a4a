"""Scene YAML -> ModelBuilder calls: a loaded :class:`Scene` (model, simulator, sensors) with the scripted robot
motion the scene describes (built here from the ``script`` section; the motions themselves are in ``motion.py``).

A scene file (see ``config/panda_pick.yaml``, ``config/panda_cable.yaml``) has the sections ``dt``,
``duration``, ``solver``, ``contact``, ``robots``, ``bodies``, ``colliders``, ``cables``, ``soft_bodies``,
``sensors`` and ``script`` (waypoints, or a recorded tool ``trajectory`` followed through IK). Every missing,
malformed or unknown entry is reported as a :class:`ModelError` naming the file and the key path
(``robots[0].q``); an unknown key, or a solver option the solver does not take, with the closest known one.
"""
from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
from typing import NamedTuple, Optional

import numpy as np
import yaml
from scipy.spatial.transform import Rotation

from ..resources import packaged_file
from ..sim import (DEFAULT_DT, DEFAULT_SOLVER, ArticulationKinematics, BodyMount, Control, DampingPolicy, FemMaterial,
                   Model, ModelBuilder, ModelError, Rod, RodMaterial, SimOptions, SimulatedFTSensor, Simulator,
                   SoftBody, TetMesh, add_rod, add_soft_body, box_inertia, box_mesh, clamp_rod_end, cylinder_mesh,
                   load_urdf, mount_body, particle, read_mesh, robot_link_point, solve_ik, spec_from_dict,
                   sphere_inertia, sphere_mesh, world_point)
from .motion import Motion, ScriptedMotion, TrajectoryMotion
from .tool_trajectory import IKTrack, ToolTrajectory, rigid_rotation, track_with_ik


class _LineDict(dict):
    """A YAML mapping that knows the line of each of its keys (``lines``) and of itself (``line``)."""

    line: int | None = None
    lines: dict = {}


class _LineLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose mappings are :class:`_LineDict`: error messages can say ``file:line``."""

    def construct_mapping(self, node, deep=False):
        mapping = _LineDict(super().construct_mapping(node, deep=deep))
        mapping.line = node.start_mark.line + 1
        mapping.lines = {}
        for key_node, _ in node.value:
            with contextlib.suppress(Exception):  # an unhashable key already failed above
                mapping.lines[self.construct_object(key_node, deep=deep)] = key_node.start_mark.line + 1
        return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping)


class _Spec:
    """A mapping read with key paths in its error messages. It notes every key the loader asks for, present or
    not, so that :meth:`check_unknown` can name the keys nobody asked for: a misspelled optional key
    (``coliders``) would otherwise drop its section without a word."""

    def __init__(self, data, path, source, registry=None):
        if not isinstance(data, dict):
            raise ModelError(f"{source}: {path or 'scene'} must be a mapping, got {type(data).__name__}")
        self.data, self.path, self.source = data, path, source
        self.lines, self.line = getattr(data, "lines", {}), getattr(data, "line", None)
        self.asked: set = {"name"}  # every mapping may carry a name (a label, where nothing reads it)
        self.registry = [] if registry is None else registry  # every _Spec of one file, this one first
        self.registry.append(self)

    def _name(self, key):
        return f"{self.path}.{key}" if self.path else key

    def _at(self, key=None) -> str:
        """``file:line`` of ``key`` (or of this mapping, for a key it lacks), or the file alone."""
        line = self.lines.get(key, self.line)
        return f"{self.source}:{line}" if line is not None else self.source

    def positive(self, key, default=dataclasses.MISSING) -> float:
        value = self.number(key, default)
        if not value > 0.0:
            raise ModelError(f"{self._at(key)}: {self._name(key)} must be > 0, got {value:g}")
        return value

    def __contains__(self, key):
        self.asked.add(key)
        return key in self.data

    def get(self, key, default=dataclasses.MISSING):
        self.asked.add(key)
        if key not in self.data:
            if default is dataclasses.MISSING:
                close = difflib.get_close_matches(str(key), [str(k) for k in self.data], n=1)
                hint = f" ({self._name(close[0])} is not a key: did you mean {key}?)" if close else ""
                raise ModelError(f"{self._at()}: missing {self._name(key)}{hint}")
            return default
        return self.data[key]

    def take_all(self) -> dict:
        """Every entry, each counted as asked for (a section whose keys another part checks)."""
        self.asked.update(self.data)
        return dict(self.data)

    def number(self, key, default=dataclasses.MISSING):
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise ModelError(f"{self._at(key)}: {self._name(key)} must be a finite number, got {value!r}")
        return float(value)

    def vector(self, key, length=None, default=dataclasses.MISSING):
        value = self.get(key, default)
        try:
            arr = np.array(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"{self._at(key)}: {self._name(key)} must be a list of numbers, got {value!r}") from None
        if (length is not None and len(arr) != length) or not np.all(np.isfinite(arr)):
            raise ModelError(f"{self._at(key)}: {self._name(key)} must be {length or 'a list of'} finite numbers, "
                             f"got {value!r}")
        return arr

    def items(self, key):
        value = self.get(key, [])
        if not isinstance(value, list):
            raise ModelError(f"{self._at(key)}: {self._name(key)} must be a list")
        return [_Spec(v, f"{self._name(key)}[{i}]", self.source, self.registry) for i, v in enumerate(value)]

    def sub(self, key):
        return _Spec(self.get(key, {}), self._name(key), self.source, self.registry)

    def check_unknown(self) -> None:
        """ModelError naming the first key of the file that no part of the loader asked for, with the closest
        known key of its mapping."""
        for spec in self.registry:
            for key in spec.data:
                if key not in spec.asked:
                    hint = _closest(key, sorted(map(str, spec.asked)), "known here")
                    raise ModelError(f"{spec._at(key)}: {spec._name(key)}: unknown key{hint}")


def _closest(key, known: list, listing: str) -> str:
    """The hint after an unknown key: the closest known one, else the list of them under ``listing``."""
    close = difflib.get_close_matches(str(key), known, n=1)
    return f"; did you mean {close[0]}?" if close else f" ({listing}: {', '.join(known)})"


def _pose(spec: _Spec) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = spec.vector("position", 3)
    pose[:3, :3] = Rotation.from_euler("xyz", spec.vector("rpy", 3, [0.0, 0.0, 0.0])).as_matrix()
    return pose


class Scene(NamedTuple):
    """A loaded scene: the simulator, its scripted motion (or None), duration [s], F/T sensors, cables,
    FEM bodies (``fem.SoftBody``) and mounted bodies."""

    simulator: Simulator
    script: Optional[Motion]
    duration: float
    sensors: list
    cables: list
    soft_bodies: list = []
    mounts: list = []  # sensors.BodyMount: bodies held by a 6-axis F/T sensor
    robot_files: tuple = ()  # (robot name, URDF path) of each robot, in model order

    @property
    def tool_link(self) -> Optional[int]:
        """The link of ``script.robot`` whose pose the script follows, or None."""
        return self.script.tool_link if self.script is not None else None

    def control(self, t: float):
        """The scripted motion's :class:`~cond_ros.sim.model.Control` at time ``t`` [s]; None without a script."""
        return self.script.control(t) if self.script is not None else None

    def warm_up(self, control: Optional[Control] = None) -> None:
        """Compile (or load the cached) kernels with one step, outside any timing, then start over: the
        simulator and the sensors are back at the start, and nothing of the step stays.

        The step runs ``control`` (default: the scripted motion's at t = 0) and updates every sensor, so that
        the sensors' kernels compile too."""
        sim = self.simulator
        sim.step(control if control is not None else self.control(sim.state.time))
        for sensor in self.sensors:
            sensor.update(sim.state.time, sim.previous_state, sim.state, sim.contacts, sim.dt)
            sensor.reset()
        sim.reset()


def load_scene(path: str, *, script: bool = True) -> Scene:
    """Build a :class:`Scene` from a scene YAML file.

    With ``script=False`` the scene has no scripted motion (``Scene.script`` is None); a recorded trajectory's
    IK is then solved for its first row only, which is the robot's start configuration. The whole track
    (5 500 rows of the winding, seconds of IK) is for those who play the script, not for the simulator.
    """
    return scene_from_data(read_scene_yaml(path), path, script=script)


def read_scene_yaml(path: str):
    """The YAML document of a scene file; a :class:`ModelError` naming the file when it cannot be read or
    parsed."""
    try:
        with open(path) as fh:
            return yaml.load(fh, Loader=_LineLoader)  # a SafeLoader that notes lines
    except OSError as exc:
        raise ModelError(f"scene: cannot read {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: invalid YAML: {exc}") from exc


def scene_from_data(data, path: str, *, script: bool = True) -> Scene:
    """:func:`load_scene` of the YAML document ``data`` already read (and perhaps edited); ``path`` names it
    in error messages. Relative file names in it (URDFs, meshes, trajectories) are the package's."""
    try:
        return _scene_from_data(data, path, script=script)
    except ModelError as exc:
        if str(exc).startswith(path):
            raise
        raise ModelError(f"{path}: {exc}") from exc  # the model's own checks name its arrays, not the file


# the top-level keys of a scene file: a misspelling of one is named before the build, whose own errors (a
# robot's start outside its limits) would otherwise come first (test_scene checks this against the loader)
TOP_LEVEL_KEYS = ("name", "dt", "duration", "integration_theta", "gravity", "solver", "contact", "robots", "bodies",
                  "colliders", "cables", "soft_bodies", "sensors", "script")


def _scene_from_data(data, path: str, *, script: bool) -> Scene:
    spec = _Spec(data, "", path)
    for key in spec.data:
        close = difflib.get_close_matches(str(key), TOP_LEVEL_KEYS, n=1)
        if key not in TOP_LEVEL_KEYS and close:
            raise ModelError(f"{spec._at(key)}: {key}: unknown key; did you mean {close[0]}?")
    contact = spec.sub("contact")
    gravity = spec.vector("gravity", 3, [0.0, 0.0, -9.81])
    builder = ModelBuilder(gravity=gravity)
    robots, robot_files = [], []
    script_spec = spec.sub("script") if "script" in spec else None
    track = None
    for r in spec.items("robots"):
        urdf = r.get("urdf")
        urdf_path = urdf if os.path.isabs(urdf) else packaged_file(urdf)
        art = load_urdf(urdf_path)
        n = art.dof_count
        q = r.vector("q", n)
        name = str(r.get("name", f"robot{len(robots)}"))
        if script_spec is not None and "trajectory" in script_spec and script_spec.get("robot", None) == name:
            track = _track(script_spec, art, q, path, whole=script)
            q = track.q[0].copy()  # start on the trajectory, so welds made at load time hold at rest
        builder.add_articulation(art, q=q, drive_stiffness=r.vector("drive_stiffness", n),
                                 drive_damping=r.vector("drive_damping", n), mu=r.number("mu", 0.5))
        robots.append((name, art, q))
        robot_files.append((name, urdf_path))
    mounts = []
    for b in spec.items("bodies"):
        mass = b.positive("mass")
        pos = b.vector("position", 3)
        kind = b.get("shape")
        if kind == "box":
            half = 0.5 * b.vector("size", 3)
            body = builder.add_body(pos, mass=mass, inertia=box_inertia(mass, half))
            builder.add_shape_box(body, half, mu=b.number("mu", 0.5))
        elif kind == "sphere":
            radius = b.number("radius")
            body = builder.add_body(pos, mass=mass, inertia=sphere_inertia(mass, radius))
            builder.add_shape_sphere(body, radius, mu=b.number("mu", 0.5))
        else:
            raise ModelError(f"{path}: {b.path}.shape must be 'box' or 'sphere', got {kind!r}")
        if "mount" in b:
            mounts.append(_mount_body(builder, body, b.sub("mount"), str(b.get("name", f"body{body}"))))
    for c in spec.items("colliders"):
        kind, mu = c.get("type"), c.number("mu", 0.5)
        if kind == "plane":
            builder.add_collider_plane(normal=c.vector("normal", 3, [0, 0, 1]), point=c.vector("point", 3, [0, 0, 0]),
                                       mu=mu)
        elif kind == "box":
            pose = _pose(c)
            builder.add_collider_box(pose[:3, 3], 0.5 * c.vector("size", 3), rot=pose[:3, :3], mu=mu)
        elif kind == "cylinder":
            pose = _pose(c)
            builder.add_collider_cylinder(pose[:3, 3], c.number("radius"), 0.5 * c.number("height"), rot=pose[:3, :3],
                                          mu=mu)
        else:
            raise ModelError(f"{path}: {c.path}.type must be plane, box or cylinder, got {kind!r}")
    cables = [_add_cable(builder, c, robots, path) for c in spec.items("cables")]
    soft_bodies = [_add_soft_body(builder, b, robots, path) for b in spec.items("soft_bodies")]
    # rods need policy 2: their segments' tiny rotational inertia cannot carry explicit geometric terms
    policy = contact.get("damping_policy", "geometric" if cables else "constant")
    if policy not in ("constant", "geometric"):
        raise ModelError(f"{path}: contact.damping_policy must be 'constant' or 'geometric', got {policy!r}")
    model = builder.finalize(virtual_node_gain=contact.number("virtual_node_gain", 1e5),
                             contact_margin=contact.number("contact_margin", 0.005),
                             damping_policy=(DampingPolicy.GEOMETRIC if policy == "geometric"
                                             else DampingPolicy.CONSTANT),
                             integration_theta=spec.number("integration_theta", 0.5))
    sensors = [_load_sensor(model, s_, robots, path) for s_ in spec.items("sensors")]
    solver = spec.sub("solver")
    options = {k: v for k, v in solver.take_all().items() if k != "name"}
    _check_solver_options(solver, options)
    simulator = Simulator(model, options=SimOptions(spec.number("dt", DEFAULT_DT), solver.get("name", DEFAULT_SOLVER),
                                                    options))
    if not script:
        motion = None
        if script_spec is not None:
            script_spec.take_all()  # not played: its keys are not read
    elif track is not None:
        r = [name for name, _, _ in robots].index(script_spec.get("robot"))
        motion = TrajectoryMotion(model, r, track, robots[r][1].link_index(script_spec.get("tool_link")),
                                  _flag(script_spec, "gravity_compensation", True, path),
                                  _flag(script_spec, "velocity_feedforward", True, path))
    else:
        motion = _load_script(script_spec, model, robots, path) if script_spec is not None else None
    duration = spec.number("duration", 5.0)
    spec.check_unknown()
    return Scene(simulator, motion, duration, sensors, cables, soft_bodies, mounts, tuple(robot_files))


def _check_solver_options(solver: _Spec, options: dict) -> None:
    """ModelError naming a solver option the solver does not take, with the closest one it does."""
    import inspect

    from ..sim import SOLVERS
    name = solver.get("name", DEFAULT_SOLVER)
    if name not in SOLVERS:
        return  # SimOptions names the unknown solver
    known = [p for p in inspect.signature(SOLVERS[name]).parameters if p not in ("self", "kwargs")]
    for key in options:
        if key not in known:
            hint = _closest(key, known, f"{name} takes")
            raise ModelError(f"{solver.source}: {solver._name(key)}: not an option of solver {name!r}{hint}")


def _robot(spec: _Spec, key: str, robots: list, path: str) -> int:
    names = [name for name, _, _ in robots]
    name = spec.get(key)
    if name not in names:
        raise ModelError(f"{path}: {spec._name(key)} {name!r} is not one of the robots {names}")
    return names.index(name)


def _flag(spec: _Spec, key: str, default: bool, path: str) -> bool:
    value = spec.get(key, default)
    if not isinstance(value, bool):
        raise ModelError(f"{path}: {spec._name(key)} must be true or false, got {value!r}")
    return value


def _track(script: _Spec, art, q0, path: str, *, whole: bool = True) -> IKTrack:
    """IK of a recorded tool trajectory (``script.trajectory``, a csv path relative to the package); of its
    first row only unless ``whole``.

    The rows give ``script.tool_link``'s position; their rotations are ``script.orientation_link``'s (default:
    the tool link's own). The cable-winding recording gives the tool point's position and the flange's
    (``panda_link7``) rotation; the two links must be rigidly attached (fixed joints only between them).
    """
    rel = script.get("trajectory")
    csv_path = rel if os.path.isabs(rel) else packaged_file(rel)
    links = {}
    for key in ("tool_link", "orientation_link"):
        try:
            links[key] = art.link_index(script.get(key, script.get("tool_link")))
        except KeyError as exc:
            raise ModelError(f"{path}: script.{key}: {exc.args[0]}") from None
    tool = links["tool_link"]
    fixed = set(script.get("fixed_joints", []))
    unknown = fixed - set(art.dof_name)
    if unknown:
        raise ModelError(f"{path}: script.fixed_joints: unknown joints {sorted(unknown)}")
    dofs = np.array([i for i, name in enumerate(art.dof_name) if name not in fixed], np.int64)
    kin = ArticulationKinematics(art)
    traj = ToolTrajectory.load(csv_path)
    if links["orientation_link"] != tool:
        try:
            traj = traj.with_rotation_offset(rigid_rotation(kin, links["orientation_link"], tool, q0, dofs))
        except ModelError as exc:
            raise ModelError(f"{path}: script.orientation_link: {exc}") from None
    # row 0 starts from q0 either way, so a stride past the end solves it exactly as the whole track does
    return track_with_ik(traj, kin, tool, q0, dofs, stride=1 if whole else len(traj))


def _robot_link_pose(spec: _Spec, robots: list, path: str):
    """(robot index, link index, the link's world pose at the robot's initial q) of ``spec.robot`` /
    ``spec.link``."""
    r = _robot(spec, "robot", robots, path)
    _, art, q = robots[r]
    try:
        link = art.link_index(spec.get("link"))
    except KeyError as exc:
        raise ModelError(f"{path}: {spec.path}.link: {exc.args[0]}") from None
    kin = ArticulationKinematics(art)
    kin.update(q)
    return r, link, kin.link_pose[link].copy()


def _add_cable(builder: ModelBuilder, c: _Spec, robots: list, path: str) -> Rod:
    """A Cosserat-rod cable (``rod``): straight from ``start`` to ``end`` (a point, or a robot link's origin),
    its start welded to the world (``fixed_start``) and its end to the robot link (``grip``)."""
    damping = c.sub("segment_damping")
    values = dict(radius=c.positive("radius"), density=c.positive("density"),
                  youngs_modulus=c.positive("youngs_modulus"), poisson_ratio=c.number("poisson_ratio"),
                  mu=c.number("mu", 0.5),
                  damping_time=c.number("damping_time", 1e-3),
                  segment_damping=(damping.number("linear", 0.0), damping.number("angular", 0.0)))
    try:
        material = RodMaterial(**values)
    except ModelError as exc:
        raise ModelError(f"{path}: {c.path}: {exc}") from None
    start = c.vector("start", 3)
    grip = c.sub("grip") if "grip" in c else None
    if grip is not None:
        r, link, pose = _robot_link_pose(grip, robots, path)
        end = pose[:3, 3].copy()
    else:
        end = c.vector("end", 3)
    rod = add_rod(builder, start, end, int(c.number("segments")), material, chain=int(c.number("chain", 0)),
                  contact_skip_end=grip.number("length", 0.0) if grip is not None else 0.0)
    if c.get("fixed_start", True):
        clamp_rod_end(builder, rod, "start", world_point(start), rotation=_joint(c, "start_joint", path))
    if grip is not None:
        clamp_rod_end(builder, rod, "end", robot_link_point(r, link),
                      stiffness_scale=grip.number("stiffness_scale", 1.0), rotation=_joint(grip, "joint", path))
    return rod


def _joint(spec: _Spec, key: str, path: str) -> bool:
    """True for a weld (position and orientation), False for a ball joint (position only)."""
    kind = spec.get(key, "weld")
    if kind not in ("weld", "ball"):
        raise ModelError(f"{path}: {spec._name(key)} must be 'weld' or 'ball', got {kind!r}")
    return kind == "weld"


def _soft_body_mesh(m: _Spec, path: str) -> TetMesh:
    kind = m.get("type")
    if kind == "box":
        return box_mesh(0.5 * m.vector("size", 3), m.vector("cells", 3))
    if kind == "sphere":
        return sphere_mesh(m.number("radius"), int(m.number("cells")))
    if kind == "cylinder":
        return cylinder_mesh(m.number("radius"), 0.5 * m.number("height"), int(m.number("cells_across")),
                             int(m.number("cells_along")))
    if kind == "file":
        rel = m.get("path")
        return read_mesh(rel if os.path.isabs(rel) else packaged_file(rel))
    raise ModelError(f"{path}: {m.path}.type must be box, sphere, cylinder or file, got {kind!r}")


def _add_soft_body(builder: ModelBuilder, b: _Spec, robots: list, path: str) -> SoftBody:
    """An FEM body: ``mesh`` (generated or a file), ``position``/``rpy``, ``material``, optional
    ``contact_radius`` and ``attach`` (nodes within ``radius`` of a robot link point welded to the link
    where they are at load: a grasp or a mounting)."""
    pose = _pose(b)
    mesh = _soft_body_mesh(b.sub("mesh"), path).transformed(pose[:3, :3], pose[:3, 3])
    mat = b.sub("material")
    material = FemMaterial(mat.positive("youngs_modulus"), mat.number("poisson_ratio"), mat.positive("density"),
                           mu=mat.number("mu", 0.5), damping_time=mat.number("damping_time", 0.0))
    radius = b.number("contact_radius") if "contact_radius" in b else None
    body = add_soft_body(builder, mesh, material, contact_radius=radius)
    for a in b.items("attach"):
        r, link, link_pose = _robot_link_pose(a, robots, path)
        centre = link_pose[:3, :3] @ a.vector("point", 3, [0.0, 0.0, 0.0]) + link_pose[:3, 3]
        nodes = np.flatnonzero(np.linalg.norm(mesh.points - centre, axis=1) <= a.number("radius"))
        if len(nodes) == 0:
            raise ModelError(f"{path}: {a.path}: no node of {b.get('name', 'the soft body')} within "
                             f"{a.number('radius')} m of {np.round(centre, 4).tolist()}")
        stiffness = a.number("stiffness", 1e4)
        for i in nodes:
            local = link_pose[:3, :3].T @ (mesh.points[i] - link_pose[:3, 3])
            builder.add_coupling(particle(int(body.particles[i])), robot_link_point(r, link, local),
                                 stiffness=[stiffness] * 3,
                                 damping=a.number("damping", 0.0) * np.ones(3))
    return body


def _mount_body(builder: ModelBuilder, body: int, m: _Spec, name: str) -> BodyMount:
    """``mount``: the body sits on a 6-axis F/T sensor at its ``point`` (body coordinates), held where it
    is at load by ``stiffness`` [N/m] / ``rotation_stiffness`` [N m/rad] (scalars or 3 per body axis) and
    their dampings. Defaults: an ATI Gamma's stiffness (Fx, Fy 9.1e6, Fz 1.8e7 N/m; 1.1e3 N m/rad) and no
    damping."""
    gains = {}
    for key, default in (("stiffness", [9.1e6, 9.1e6, 1.8e7]), ("damping", 0.0),
                         ("rotation_stiffness", 1.1e3), ("rotation_damping", 0.0)):
        gain = m.vector(key, None, default)
        floor_ok = gain > 0 if key.endswith("stiffness") else gain >= 0
        if len(gain) not in (1, 3) or not np.all(floor_ok):
            raise ModelError(f"{m.source}: {m.path}.{key} must be one or 3 numbers "
                             f"{'> 0' if key.endswith('stiffness') else '>= 0'}, got {m.get(key, default)!r}")
        gains[key] = np.broadcast_to(gain, 3).copy()
    return mount_body(builder, body, m.vector("point", 3, [0.0, 0.0, 0.0]), name=name, **gains)


def _load_sensor(model: Model, s: _Spec, robots: list, path: str) -> SimulatedFTSensor:
    r = _robot(s, "robot", robots, path)
    fields = {k: v for k, v in s.take_all().items() if k != "robot"}  # spec_from_dict names unknown ones
    return SimulatedFTSensor(model, spec_from_dict(fields, f"{path}: {s.path}"), r)


def _load_script(script: _Spec, model: Model, robots: list, path: str) -> ScriptedMotion:
    r = _robot(script, "robot", robots, path)
    _, art, q = robots[r]
    kin = ArticulationKinematics(art)
    try:
        tool = art.link_index(script.get("tool_link"))
        gripper = [art.dof_index(name) for name in script.get("gripper_joints", [])]
    except KeyError as exc:
        raise ModelError(f"{path}: script: {exc.args[0]}") from None
    arm = np.array([i for i in range(art.dof_count) if i not in gripper])
    times, qs, closed = [], [], []
    current, is_closed = q.copy(), False
    for w in script.items("waypoints"):
        t = w.number("t")
        if times and t <= times[-1]:
            raise ModelError(f"{path}: {w.path}.t must increase, got {t} after {times[-1]}")
        if "q" in w:
            current = current.copy()
            current[:] = w.vector("q", art.dof_count)
        elif "tool" in w:
            current = solve_ik(kin, tool, _pose(w.sub("tool")), current, dofs=arm)
        if "gripper" in w:
            command = w.get("gripper")
            if command not in ("open", "close"):
                raise ModelError(f"{path}: {w.path}.gripper must be 'open' or 'close', got {command!r}")
            is_closed = command == "close"
            if not is_closed:
                current = current.copy()
                current[gripper] = art.dof_upper[gripper]
        times.append(t)
        qs.append(current.copy())
        closed.append(is_closed)
    if not times:
        raise ModelError(f"{path}: script.waypoints is empty")
    return ScriptedMotion(model, r, np.array(times), np.array(qs), np.array(closed), np.array(gripper, np.int64),
                          script.number("grip_force", 20.0))
