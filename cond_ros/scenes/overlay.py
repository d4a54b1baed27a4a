"""Scene overlays: named numbers of a scene file changed without editing it (``--overlay fitted.yaml``).

A setting names what it changes by a key path into the scene YAML (``cables[0].youngs_modulus``,
``colliders[*].mu``; ``*`` is every item of a list) or by a parameter name that stands for every key path
of that physical quantity the scene file sets (:data:`PARAMETER_PATHS`: ``mu`` is every friction
coefficient, ``youngs_modulus`` every cable's and FEM body's). ``cond-ros fit`` writes its result as an
overlay file, and ``run``, ``launch``, ``record``, ``replay``, ``sweep`` and the node (parameter ``overlay``)
read one:

    # what wrote it, when (comments are free)
    scene: panda_cable          # the scene it was made for (information: it may be applied to another)
    set:
      youngs_modulus: 3.1e+6
      cables[0].segment_damping.linear: 0.013

Settings apply to the YAML document before the scene is built, so the scene loader checks the result as it
checks a file (ranges, unknown keys), and errors name the overlay and the key path.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import re

import yaml

from ..sim import ModelError

# parameter name -> the key paths it stands for (those the scene file sets)
PARAMETER_PATHS = {
    "mu": ("robots[*].mu", "bodies[*].mu", "colliders[*].mu", "cables[*].mu", "soft_bodies[*].material.mu"),
    "youngs_modulus": ("cables[*].youngs_modulus", "soft_bodies[*].material.youngs_modulus"),
    "poisson_ratio": ("cables[*].poisson_ratio", "soft_bodies[*].material.poisson_ratio"),
    "density": ("cables[*].density", "soft_bodies[*].material.density"),
    "damping_time": ("cables[*].damping_time", "soft_bodies[*].material.damping_time"),
    "segment_damping": ("cables[*].segment_damping.linear", "cables[*].segment_damping.angular"),
    "virtual_node_gain": ("contact.virtual_node_gain",),
}
_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[(?:\d+|\*)\])*)")
_INDEX = re.compile(r"\[(\d+|\*)\]")


def parse_key_path(text: str) -> tuple:
    """``cables[0].segment_damping.linear`` -> ("cables", 0, "segment_damping", "linear"); ``*`` stays "*".
    Raises ValueError naming the malformed path."""
    parts = []
    for piece in str(text).split("."):
        match = _PART.fullmatch(piece)
        if match is None:
            raise ValueError(f"{text!r}: not a key path (expected e.g. cables[0].youngs_modulus or colliders[*].mu)")
        parts.append(match.group(1))
        parts += [index if index == "*" else int(index) for index in _INDEX.findall(match.group(2))]
    return tuple(parts)


def format_key_path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) or part == "*" else (f".{part}" if out else part)
    return out


def _walk(data, parts: tuple, done: tuple, *, keep_missing: bool):
    """Every concrete key path that ``parts`` (after ``done``) matches in ``data``; raises ValueError for a
    path that leads nowhere (unless ``keep_missing``: then it matches nothing)."""
    if not parts:
        return [done]
    head, rest = parts[0], parts[1:]
    where = format_key_path(done) or "the scene"
    if head == "*" or isinstance(head, int):
        if not isinstance(data, list):
            if keep_missing:
                return []
            raise ValueError(f"{format_key_path(done + (head,))}: {where} is not a list")
        indices = range(len(data)) if head == "*" else [head]
        if head != "*" and not 0 <= head < len(data):
            if keep_missing:
                return []
            raise ValueError(f"{format_key_path(done + (head,))}: {where} has {len(data)} items")
        return [path for i in indices for path in _walk(data[i], rest, done + (i,), keep_missing=keep_missing)]
    if not isinstance(data, dict):
        if keep_missing:
            return []
        raise ValueError(f"{format_key_path(done + (head,))}: {where} is not a mapping")
    if head not in data:
        if keep_missing:
            return []
        if not rest:  # a key the file leaves at its default: the loader checks that it is one
            return [done + (head,)]
        close = difflib.get_close_matches(head, [str(k) for k in data], n=1)
        raise ValueError(f"{format_key_path(done + (head,))}: {where} has no key {head!r}"
                         + (f"; did you mean {close[0]}?" if close else ""))
    return _walk(data[head], rest, done + (head,), keep_missing=keep_missing)


def expand(data, name: str) -> list:
    """The concrete key paths (tuples) that the setting ``name`` changes in the scene document ``data``.

    A parameter name of :data:`PARAMETER_PATHS` is every one of its key paths that the file sets (ValueError
    if none: the scene has no such quantity to change); anything else is a key path, which must lead to a
    number of the file or to a key that its mapping may take."""
    if name in PARAMETER_PATHS:
        paths = [p for pattern in PARAMETER_PATHS[name]
                 for p in _walk(data, parse_key_path(pattern), (), keep_missing=True)]
        if not paths:
            raise ValueError(f"{name}: the scene sets none of {', '.join(PARAMETER_PATHS[name])}")
        return paths
    parts = parse_key_path(name)
    if parts[0] not in PARAMETER_PATHS and isinstance(data, dict) and parts[0] not in data and len(parts) == 1:
        close = difflib.get_close_matches(name, list(PARAMETER_PATHS) + [str(k) for k in data], n=1)
        raise ValueError(f"{name}: neither a parameter ({', '.join(PARAMETER_PATHS)}) nor a key of the scene"
                         + (f"; did you mean {close[0]}?" if close else ""))
    return _walk(data, parts, (), keep_missing=False)


def _get(data, parts):
    for part in parts:
        data = data[part]
    return data


def current_value(data, name: str) -> float:
    """The scene document's value of setting ``name`` (its first key path's); ValueError if the file does not
    set it or the key paths disagree (a parameter name ties them: the fit would move them together)."""
    values = []
    for parts in expand(data, name):
        try:
            values.append(_get(data, parts))
        except (KeyError, IndexError, TypeError):
            raise ValueError(f"{format_key_path(parts)}: the scene does not set it (its default applies); "
                             "give its value to start from") from None
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values):
        raise ValueError(f"{name}: not a number in the scene ({values[0]!r})")
    if any(v != numbers[0] for v in numbers):
        paths = ", ".join(f"{format_key_path(p)} = {v:g}" for p, v in zip(expand(data, name), numbers))
        raise ValueError(f"{name}: its key paths differ in the scene ({paths}); name one key path")
    return float(numbers[0])


def apply_settings(data, settings: dict, source: str):
    """A copy of the scene document ``data`` with each setting's number put at its key paths; ModelError
    naming ``source`` and the setting when one does not fit."""
    data = copy.deepcopy(data)
    for name, value in settings.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ModelError(f"{source}: set.{name}: expected a finite number, got {value!r}")
        try:
            paths = expand(data, name)
        except ValueError as exc:
            raise ModelError(f"{source}: set.{exc}") from None
        for parts in paths:
            parent = _get(data, parts[:-1])
            old = parent.get(parts[-1]) if isinstance(parent, dict) else parent[parts[-1]]
            if old is not None and (isinstance(old, bool) or not isinstance(old, (int, float))):
                raise ModelError(f"{source}: set.{name}: {format_key_path(parts)} is {old!r} in the scene, not a "
                                 "number")
            parent[parts[-1]] = float(value)
    return data


@dataclasses.dataclass(frozen=True)
class Overlay:
    """Settings ({key path or parameter name: number}) for a scene, read from ``source`` (a file, or what made
    them in memory); ``scene`` names the scene they were made for (or None)."""

    settings: dict
    source: str = "overlay"
    scene: str | None = None

    def apply(self, data, scene_path: str):
        return apply_settings(data, self.settings, f"{self.source} (on {scene_path})")

    def to_yaml(self, header: str = "") -> str:
        body = yaml.safe_dump({**({"scene": self.scene} if self.scene else {}),
                               "set": {k: float(v) for k, v in self.settings.items()}}, sort_keys=False)
        comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
        return comments + body


OVERLAY_KEYS = ("scene", "set")


def read_overlay(path: str) -> Overlay:
    """The overlay file ``path``; ModelError naming the file and the key for anything it cannot use."""
    try:
        with open(path) as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise ModelError(f"overlay: cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path}: an overlay is a mapping with the keys {', '.join(OVERLAY_KEYS)}")
    for key in data:
        if key not in OVERLAY_KEYS:
            close = difflib.get_close_matches(str(key), OVERLAY_KEYS, n=1)
            raise ModelError(f"{path}: {key}: unknown key (known: {', '.join(OVERLAY_KEYS)})"
                             + (f"; did you mean {close[0]}?" if close else ""))
    settings = data.get("set")
    if not isinstance(settings, dict) or not settings:
        raise ModelError(f"{path}: set: expected a mapping of key paths or parameter names to numbers")
    for name, value in settings.items():
        try:
            parse_key_path(name)
        except ValueError as exc:
            raise ModelError(f"{path}: set.{exc}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ModelError(f"{path}: set.{name}: expected a finite number, got {value!r}")
    scene = data.get("scene")
    if scene is not None and not isinstance(scene, str):
        raise ModelError(f"{path}: scene: expected a scene name, got {scene!r}")
    return Overlay(dict(settings), path, scene)
