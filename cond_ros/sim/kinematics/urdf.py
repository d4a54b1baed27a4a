"""URDF -> :class:`~cond_ros.sim.kinematics.articulation.Articulation`.

The XML is read strictly with lxml (syntax errors name the line) and each ``<link>`` / ``<joint>``
element is parsed by yourdfpy's element parsers; everything yourdfpy accepts silently (missing
links, cycles, unknown joint types, inconsistent inertia, lower > upper, zero axes, missing
meshes) is checked here. Every problem raises :class:`~cond_ros.sim.validate.ModelError` naming
the file, the element (link or joint name, line) and what is wrong.

Conventions:
    * Links are stored depth-first from the single root link, a link's children in the order their
      joints appear in the file. DOFs are numbered in that same order over the moving joints
      (revolute, continuous, prismatic), skipping fixed and mimic joints; a mimic joint reuses the
      mimicked joint's DOF with its multiplier/offset, and its own <limit>/<dynamics> are ignored
      (as is <mimic> on a fixed joint).
    * Origins: URDF rpy is roll-pitch-yaw about fixed axes, R = Rz(yaw) Ry(pitch) Rx(roll).
    * Inertia is stored about the COM in the link frame: I_link = R I R^T with R the rotation of
      the <inertial> origin. Links without <inertial> get mass 0 and zero inertia. Checked: mass >= 0,
      inertia PSD (PD if mass > 0), principal moments I1 + I2 >= I3 (1e-9 relative tolerance).
    * Collision meshes become one bounding primitive each (mesh_primitives=True): the smaller of a
      box and a capsule aligned with the principal axes of the vertices; with mesh_primitives=False
      mesh collisions are skipped and their files are never opened.
    * Floating and planar joints are parsed but rejected (robots are fixed-base for now).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import trimesh
import yourdfpy
from lxml import etree

from ..model import GeometryType, JointType
from ..validate import ModelError, finite_array, rotation_matrix
from .articulation import Articulation

_JOINT_TYPES = {"fixed": JointType.FIXED, "revolute": JointType.REVOLUTE,
                "continuous": JointType.CONTINUOUS, "prismatic": JointType.PRISMATIC}
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_NUMBER_LISTS = {"xyz": (3,), "rpy": (3,), "size": (3,), "scale": (1, 3)}  # attribute -> allowed lengths


def load_urdf(source, *, package_dirs=(), base_transform=np.eye(4), mesh_primitives=True) -> Articulation:
    """Load a URDF robot (file path or XML string) as an :class:`Articulation`.

    Args:
        source: path to a ``.urdf`` file, or the XML text itself (a str starting with ``<``, or bytes).
        package_dirs: folders searched for ``package://NAME/rest`` URIs, each either the package
            folder ``NAME`` itself or a folder containing ``NAME/``. Then ``$AMENT_PREFIX_PATH``
            entries (``PREFIX/share/NAME``), then the URDF file's folder and its ancestors (one
            named ``NAME`` or containing ``NAME/``). Relative filenames are relative to the URDF's
            folder (the current directory for an XML string).
        base_transform: world <- root link, 4x4 homogeneous.
        mesh_primitives: fit a bounding box/capsule to each collision mesh (loads it with trimesh);
            False skips mesh collisions.

    Raises:
        ModelError: on any malformed input, naming the element.
    """
    return _Loader(source, package_dirs, mesh_primitives).build(base_transform)


def fit_bounding_primitive(points, n_radii=48):
    """The smaller-volume enclosing box or capsule of ``points`` (N x 3), along their principal axes.

    Returns (GeometryType, transform points-frame <- primitive frame (4x4), size (3,)) with the
    :class:`GeometryType` size conventions (a capsule of zero length is returned as a SPHERE).
    """
    pts = np.unique(np.asarray(points, dtype=np.float64).reshape(-1, 3), axis=0)
    centre = pts.mean(axis=0)
    _, axes = np.linalg.eigh((pts - centre).T @ (pts - centre))
    axes = axes * [np.sign(np.linalg.det(axes)), 1.0, 1.0]  # a proper rotation
    local = (pts - centre) @ axes
    lo, hi = local.min(axis=0), local.max(axis=0)
    mid, half = 0.5 * (hi + lo), 0.5 * (hi - lo)
    best = (float(np.prod(2.0 * half)) if np.all(half > 0.0) else np.inf, GeometryType.BOX, axes, mid, half)
    sphere_r = float(np.sqrt(np.max(np.sum((local - mid) ** 2, axis=1))))
    for k in range(3):
        a, b = [i for i in range(3) if i != k]
        d, z = np.hypot(local[:, a] - mid[a], local[:, b] - mid[b]), local[:, k]
        r_min = float(d.max())
        for r in np.linspace(r_min, max(r_min, sphere_r), n_radii):
            h = np.sqrt(np.maximum(r * r - d * d, 0.0))
            top, bottom = float(np.max(z - h)), float(np.min(z + h))  # segment must cover [bottom, top]
            half_len = max(0.5 * (top - bottom), 0.0)
            volume = np.pi * r * r * 2.0 * half_len + 4.0 / 3.0 * np.pi * r ** 3
            if volume < best[0]:
                rot = axes[:, [a, b, k]] * [np.sign(np.linalg.det(axes[:, [a, b, k]])), 1.0, 1.0]
                centre_local = np.zeros(3)
                centre_local[[a, b, k]] = mid[a], mid[b], 0.5 * (top + bottom)
                kind = GeometryType.CAPSULE if half_len > 0.0 else GeometryType.SPHERE
                best = (volume, kind, rot, centre_local, np.array([r, half_len, 0.0]))
    _, kind, rot, centre_local, size = best
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = rot, centre + axes @ centre_local
    return kind, transform, size


def _numbers_ok(text, lengths):
    try:
        values = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        return False
    return len(values) in lengths and bool(np.all(np.isfinite(values)))


class _Loader:
    def __init__(self, source, package_dirs, mesh_primitives):
        dirs = [package_dirs] if isinstance(package_dirs, (str, os.PathLike)) else package_dirs
        self.package_dirs, self.mesh_primitives = [Path(d) for d in dirs], mesh_primitives
        parser = etree.XMLParser(remove_comments=True, remove_pis=True, resolve_entities=False, no_network=True)
        is_text = isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("<"))
        path = None if is_text else Path(source).expanduser()
        self.label = "URDF string" if is_text else str(source)
        self.file_dir = None if is_text else path.resolve().parent  # package:// fallback searches from here
        self.folder = self.file_dir or Path.cwd()  # relative mesh filenames
        if path is not None and not path.is_file():
            raise ModelError(f"URDF file {str(source)!r} not found")
        try:
            self.root = (etree.fromstring(source.encode() if isinstance(source, str) else source, parser) if is_text
                         else etree.parse(str(path), parser).getroot())
        except etree.XMLSyntaxError as exc:
            line, col = exc.position
            raise ModelError(f"{self.label}: XML syntax error at line {line}, column {col}: {exc.msg}") from None
        if self.root.tag != "robot" or not self.root.get("name"):
            self.fail(f"the root element must be <robot name=...>, got <{self.root.tag}> with name "
                      f"{self.root.get('name')!r}")

    def fail(self, msg):
        raise ModelError(f"{self.label}: {msg}")

    def parse(self, what, fn, element):
        """Run one of yourdfpy's element parsers; its raw exceptions become ModelError naming ``what``."""
        try:
            return fn(element)
        except Exception as exc:  # yourdfpy raises bare ValueError / KeyError / AttributeError / IndexError
            self.fail(f"{what}: cannot parse <{element.tag}>: {type(exc).__name__}: {exc}")

    def check_numbers(self, what, element):
        """xyz / rpy / size / scale attributes anywhere below ``element`` must be 3 (scale: 1 or 3) finite numbers."""
        for el in element.iter():
            for key, text in el.attrib.items():
                if key in _NUMBER_LISTS and not _numbers_ok(text, _NUMBER_LISTS[key]):
                    self.fail(f"{what}: <{el.tag} {key}={text!r}> (line {el.sourceline}) must be "
                              f"{' or '.join(map(str, _NUMBER_LISTS[key]))} finite numbers")

    def number(self, what, text, *, low=-np.inf, default=None):
        """``text`` as a float >= low (not NaN); ``default`` when None (None: required)."""
        if text is None and default is not None:
            return default
        try:
            value = float(text)
        except (TypeError, ValueError):
            self.fail(f"{what}> is missing" if text is None else f"{what}={text!r}> is not a number")
        if not value >= low:
            self.fail(f"{what}={text!r}> must be a number >= {low}")
        return value

    # -- elements ------------------------------------------------------------------------------
    def elements(self, tag):
        """(name, element, description) of each top-level <tag>; names present and unique."""
        first_line = {}
        for el in self.root.findall(tag):
            name = el.get("name")
            if not name:
                self.fail(f"<{tag}> at line {el.sourceline} has no name attribute")
            if name in first_line:
                self.fail(f"{tag} {name!r} is defined twice (lines {first_line[name]} and {el.sourceline})")
            first_line[name] = el.sourceline
            self.what[tag][name] = f"{tag} {name!r} (line {el.sourceline})"
            yield name, el, self.what[tag][name]

    def read_links(self):
        links, self.what = {}, {"link": {}, "joint": {}}
        for name, el, what in self.elements("link"):
            inertial = el.find("inertial")
            if inertial is not None:
                self.check_numbers(what, inertial)
                if inertial.find("mass[@value]") is None:
                    self.fail(f"{what}: <inertial> needs <mass value=...>")
                inertia = inertial.find("inertia")
                missing = [k for k in _INERTIA_KEYS if inertia is None or inertia.get(k) is None]
                if missing:
                    self.fail(f"{what}: <inertial> needs <inertia> with {', '.join(missing)}")
            links[name] = (el, self.parse(what, yourdfpy.URDF._parse_inertial, inertial))
        if not links:
            self.fail("no <link> elements")
        return links

    def read_joints(self, links):
        joints = {}
        for name, el, what in self.elements("joint"):
            kind = el.get("type")
            if kind in ("floating", "planar"):
                self.fail(f"{kind} joint {name!r} (line {el.sourceline}) is not supported yet (robots are fixed-base); "
                          "drop the joint and place its child link as the root with base_transform")
            if kind not in _JOINT_TYPES:
                self.fail(f"{what}: unknown joint type {kind!r} (expected one of {', '.join(_JOINT_TYPES)})")
            for role in ("parent", "child"):
                tag = el.find(role)
                if tag is None or not tag.get("link"):
                    self.fail(f"{what}: missing <{role} link=...>")
                if tag.get("link") not in links:
                    self.fail(f"{what}: {role} link {tag.get('link')!r} is not defined")
            self.check_numbers(what, el)
            joints[name] = self.parse(what, yourdfpy.URDF._parse_joint, el)
        return joints

    def topology(self, links, joints):
        """Links depth-first from the root and each non-root link's parent joint."""
        parent_joint, children = {}, {name: [] for name in links}
        for name, joint in joints.items():
            if joint.child in parent_joint:
                self.fail(f"link {joint.child!r} has two parent joints, "
                          f"{parent_joint[joint.child].name!r} and {name!r}")
            parent_joint[joint.child] = joint
            children[joint.parent].append(joint.child)
        roots = [name for name in links if name not in parent_joint]
        if len(roots) > 1:
            self.fail(f"{len(roots)} root links (links no joint has as child): {', '.join(map(repr, roots))}; "
                      "a URDF needs exactly one, connect the others with joints")
        order, stack = [], roots[:1]
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(reversed(children[name]))
        if len(order) < len(links):
            seen, name = [], next(n for n in links if n not in set(order))
            while name not in seen:
                seen.append(name)
                name = parent_joint[name].parent
            loop = seen[seen.index(name):][::-1]  # parent before child
            self.fail(f"joints {', '.join(repr(parent_joint[n].name) for n in loop[1:] + loop[:1])} form a cycle: "
                      f"links {' -> '.join(map(repr, loop + loop[:1]))} (parent -> child)")
        return order, parent_joint

    # -- assembly ------------------------------------------------------------------------------
    def build(self, base_transform):
        base = finite_array("base_transform", base_transform, (4, 4))
        rotation_matrix("base_transform[:3, :3]", base[:3, :3])
        if not np.allclose(base[3], [0.0, 0.0, 0.0, 1.0]):
            raise ModelError(f"base_transform: last row must be (0, 0, 0, 1), got {base[3].tolist()}")
        joints = self.read_joints(links := self.read_links())
        order, parent_joint = self.topology(links, joints)
        index, n_links = {name: i for i, name in enumerate(order)}, len(order)
        link_parent, joint_dof = np.full(n_links, -1, dtype=np.int64), np.full(n_links, -1, dtype=np.int64)
        joint_type, multiplier, offset = np.zeros(n_links, dtype=np.int64), np.ones(n_links), np.zeros(n_links)
        joint_origin, joint_axis = np.tile(np.eye(4), (n_links, 1, 1)), np.tile([1.0, 0.0, 0.0], (n_links, 1))
        joint_names, dof_links, mimics = [""], [], []
        for i, name in enumerate(order[1:], 1):
            joint = parent_joint[name]
            what = self.what["joint"][joint.name]
            joint_names.append(joint.name)
            link_parent[i], joint_type[i] = index[joint.parent], _JOINT_TYPES[joint.type]
            if joint.origin is not None:
                joint_origin[i] = joint.origin
            axis = np.asarray(joint.axis, dtype=np.float64)
            if np.linalg.norm(axis) > 1e-12:
                joint_axis[i] = axis / np.linalg.norm(axis)
            elif joint.type != "fixed":
                self.fail(f"{what}: axis {axis.tolist()} has zero length")
            if joint.mimic is not None and joint.type != "fixed":  # a fixed joint's <mimic> is ignored
                mimics.append((i, joint, what))
            elif joint.type != "fixed":
                joint_dof[i] = len(dof_links)
                dof_links.append(i)
        for i, joint, what in mimics:
            target, other = joint.mimic.joint, joints.get(joint.mimic.joint)
            if other is None or other.mimic is not None or other.type == "fixed":
                problem = ("it is not defined" if other is None else "it is fixed" if other.type == "fixed"
                           else "it is a mimic joint itself")
                self.fail(f"{what}: cannot mimic joint {target!r}: {problem}")
            joint_dof[i] = joint_dof[index[other.child]]
            multiplier[i] = self.number(f"{what}: <mimic multiplier", joint.mimic.multiplier, default=1.0)
            offset[i] = self.number(f"{what}: <mimic offset", joint.mimic.offset, default=0.0)
        dof = np.array([self.dof_row(parent_joint[order[i]]) for i in dof_links]).reshape(-1, 6).T.copy()
        mass, com, inertia, geoms = np.zeros(n_links), np.zeros((n_links, 3)), np.zeros((n_links, 3, 3)), []
        for i, name in enumerate(order):
            (el, inertial), what = links[name], self.what["link"][name]
            if inertial is not None:
                mass[i], com[i], inertia[i] = self.inertial(what, inertial)
            for collision in el.findall("collision"):
                geoms.extend((i, *g) for g in self.collision(what, collision))
        return Articulation(
            name=self.root.get("name"), link_name=list(order), link_parent=link_parent, joint_name=joint_names,
            joint_type=joint_type, joint_origin=joint_origin, joint_axis=joint_axis, joint_dof=joint_dof,
            joint_multiplier=multiplier, joint_offset=offset, link_mass=mass, link_com=com, link_inertia=inertia,
            dof_count=len(dof_links), dof_name=[joint_names[i] for i in dof_links], dof_lower=dof[0],
            dof_upper=dof[1], dof_velocity_limit=dof[2], dof_effort_limit=dof[3], dof_damping=dof[4],
            dof_friction=dof[5], base_transform=base, geom_link=np.array([g[0] for g in geoms], dtype=np.int64),
            geom_type=np.array([int(g[1]) for g in geoms], dtype=np.int64),
            geom_origin=np.array([g[2] for g in geoms]).reshape(-1, 4, 4),
            geom_size=np.array([g[3] for g in geoms]).reshape(-1, 3))

    def dof_row(self, joint):
        """(lower, upper, velocity limit, effort limit, damping, friction) of a DOF-owning joint."""
        what, limit, dyn = self.what["joint"][joint.name], joint.limit, joint.dynamics
        get = lambda obj, key: None if obj is None else getattr(obj, key)  # noqa: E731
        lower = self.number(f"{what}: <limit lower", get(limit, "lower"), default=-np.inf)
        upper = self.number(f"{what}: <limit upper", get(limit, "upper"), default=np.inf)
        if joint.type == "continuous":
            lower, upper = -np.inf, np.inf
        if lower > upper:
            self.fail(f"{what}: lower limit {lower} > upper limit {upper}")
        return (lower, upper, self.number(f"{what}: <limit velocity", get(limit, "velocity"), low=0.0, default=np.inf),
                self.number(f"{what}: <limit effort", get(limit, "effort"), low=0.0, default=np.inf),
                *(self.number(f"{what}: <dynamics {key}", get(dyn, key), low=0.0, default=0.0)  # strings in yourdfpy
                  for key in ("damping", "friction")))

    def inertial(self, what, inertial):
        m = self.number(f"{what}: <mass value", inertial.mass, low=0.0)
        tensor = np.asarray(inertial.inertia, dtype=np.float64)  # symmetric by construction (six attributes)
        if not (np.isfinite(m) and np.all(np.isfinite(tensor))):
            self.fail(f"{what}: mass {m} and inertia {tensor.tolist()} must be finite")
        moments = np.linalg.eigvalsh(tensor)
        tol = 1e-9 * max(float(np.max(np.abs(moments))), 1e-300)
        if moments[0] < -tol:
            self.fail(f"{what}: inertia is not positive semi-definite (principal moments {moments.tolist()})")
        if m > 0.0 and moments[0] <= tol:
            self.fail(f"{what}: inertia must be positive definite for mass {m} "
                      f"(principal moments {moments.tolist()})")
        if moments[0] + moments[1] < moments[2] - tol:
            self.fail(f"{what}: principal moments {moments.tolist()} violate the triangle inequality "
                      "(I1 + I2 >= I3), no rigid body has this inertia")
        origin = np.eye(4) if inertial.origin is None else inertial.origin
        return m, origin[:3, 3], origin[:3, :3] @ tensor @ origin[:3, :3].T

    def collision(self, what, element):
        """(type, link <- geometry transform, size) for one <collision>, or nothing for a skipped mesh."""
        geometry = element.find("geometry")
        shapes = [] if geometry is None else [c for c in geometry if isinstance(c.tag, str)]
        where = f"{what}: <collision> (line {element.sourceline})"
        if len(shapes) != 1:
            self.fail(f"{where} needs exactly one shape inside <geometry>, found {len(shapes)}")
        self.check_numbers(where, element)
        shape, tag = shapes[0], etree.QName(shapes[0]).localname
        if tag == "capsule":  # not standard URDF: yourdfpy rejects it
            origin = self.parse(where, yourdfpy.URDF._parse_origin, element.find("origin"))
            radius = self.number(f"{where}: <capsule radius", shape.get("radius"), low=0.0)
            length = self.number(f"{where}: <capsule length", shape.get("length"), low=0.0)
            size, kind = [radius, 0.5 * length, 0.0], GeometryType.CAPSULE
        elif tag in ("box", "sphere", "cylinder", "mesh"):
            parsed = self.parse(where, yourdfpy.URDF._parse_collision, element)
            origin, g = parsed.origin, parsed.geometry
            if g.box is not None:
                size, kind = 0.5 * np.asarray(g.box.size, dtype=np.float64), GeometryType.BOX
            elif g.sphere is not None:
                size, kind = [g.sphere.radius, 0.0, 0.0], GeometryType.SPHERE
            elif g.cylinder is not None:
                size, kind = [g.cylinder.radius, 0.5 * g.cylinder.length, 0.0], GeometryType.CYLINDER
            else:
                if not self.mesh_primitives:
                    return []
                kind, fit, size = self.mesh(where, g.mesh)
                origin = (np.eye(4) if origin is None else origin) @ fit
        else:
            self.fail(f"{where}: unknown geometry <{tag}> (expected box, sphere, cylinder, capsule or mesh)")
        size = np.asarray(size, dtype=np.float64)
        used = {GeometryType.BOX: 3, GeometryType.CYLINDER: 2}.get(kind, 1)  # capsule length >= 0 checked above
        if not (np.all(np.isfinite(size)) and np.all(size[:used] > 0.0)):
            self.fail(f"{where}: <{tag}> dimensions must be finite and positive, got {size.tolist()}")
        return [(kind, np.eye(4) if origin is None else np.asarray(origin, dtype=np.float64), size)]

    def mesh(self, where, mesh):
        path = self.resolve(where, mesh.filename or "")
        try:
            loaded = trimesh.load(str(path), force="mesh", process=False)
            vertices = np.asarray(loaded.vertices, dtype=np.float64)
        except Exception as exc:  # trimesh raises many kinds
            self.fail(f"{where}: cannot load mesh {str(path)!r}: {type(exc).__name__}: {exc}")
        if vertices.size == 0 or not np.all(np.isfinite(vertices)):
            self.fail(f"{where}: mesh {str(path)!r} has no (finite) vertices")
        if mesh.scale is not None:
            vertices = vertices * np.broadcast_to(np.asarray(mesh.scale, dtype=np.float64), (3,))
        return fit_bounding_primitive(vertices)

    def resolve(self, where, uri):
        """A mesh URI (package://, file://, absolute or relative path) -> an existing file."""
        if uri.startswith("package://"):
            package, _, rest = uri[len("package://"):].partition("/")
            candidates = []
            for folder in self.package_dirs:
                candidates += ([folder / rest] if folder.name == package else []) + [folder / package / rest]
            for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
                candidates.append(Path(prefix) / "share" / package / rest)
            for folder in ([self.file_dir, *self.file_dir.parents] if self.file_dir else []):
                candidates += ([folder / rest] if folder.name == package else []) + [folder / package / rest]
        elif uri.startswith("file://"):
            candidates = [Path(uri[len("file://"):])]
        elif "://" in uri:
            self.fail(f"{where}: unsupported mesh URI {uri!r} (use package://, file:// or a path)")
        else:
            candidates = [self.folder / Path(uri).expanduser()]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        self.fail(f"{where}: mesh file {uri!r} not found (looked for {', '.join(map(str, candidates[:8]))}"
                  f"{', ...' if len(candidates) > 8 else ''})")
