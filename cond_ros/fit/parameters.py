"""The parameters a fit or a sweep moves: names, bounds, scale, and the unit box the optimizer searches.

A parameter is a setting of a scene overlay (:mod:`cond_ros.scenes.overlay`): a parameter name that stands for
every key of one physical quantity in the scene file (``mu``, ``youngs_modulus``, ``segment_damping``), or one
key path (``cables[0].damping_time``). The optimizer works in the unit box [0, 1]^n; each coordinate maps onto
its parameter's bounds, on a log scale for the stiffness-like quantities that span decades (a step of the
optimizer is then a ratio, not a difference).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..scenes import PARAMETER_PATHS, current_value, expand, format_key_path

# quantities whose plausible values span decades: searched on a log scale unless the bounds say otherwise
LOG_SCALED = ("youngs_modulus", "damping_time", "segment_damping", "virtual_node_gain", "density")
DEFAULT_SPAN = 2.0  # default bounds: the scene's value / 2 .. x 2


class FitError(ValueError):
    """A fit or sweep that cannot start: the message names the option and what is wrong with it."""


@dataclasses.dataclass(frozen=True)
class FitParameter:
    """One parameter: its name (a setting of an overlay), the scene's value, bounds and scale."""

    name: str
    start: float
    low: float
    high: float
    log: bool

    def value(self, x: float) -> float:
        """The parameter's value at unit coordinate ``x`` (clipped to [0, 1])."""
        x = min(1.0, max(0.0, float(x)))
        if self.log:
            return float(math.exp(math.log(self.low) + x * (math.log(self.high) - math.log(self.low))))
        return float(self.low + x * (self.high - self.low))

    def coordinate(self, value: float) -> float:
        """The unit coordinate of ``value``."""
        if self.log:
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _is_log(name: str) -> bool:
    return any(part in LOG_SCALED for part in name.replace("[", ".").split("."))


def parse_bounds(texts, names) -> dict:
    """``NAME=LOW:HIGH[:log|:linear]`` entries -> {name: (low, high, log or None)}; FitError naming a bad one."""
    out = {}
    for text in texts or ():
        name, sep, rest = str(text).partition("=")
        parts = rest.split(":")
        if not sep or len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("log", "linear")):
            raise FitError(f"--bounds {text!r}: expected NAME=LOW:HIGH or NAME=LOW:HIGH:log|linear")
        if name not in names:
            raise FitError(f"--bounds {text!r}: {name!r} is not one of the parameters ({', '.join(names)})")
        try:
            low, high = float(parts[0]), float(parts[1])
        except ValueError:
            raise FitError(f"--bounds {text!r}: LOW and HIGH must be numbers") from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise FitError(f"--bounds {text!r}: expected finite LOW < HIGH")
        out[name] = (low, high, None if len(parts) == 2 else parts[2] == "log")
    return out


def make_parameters(document, names, bounds=None, source: str = "scene") -> list:
    """The :class:`FitParameter` of each of ``names`` in the scene document ``document``: its start is the
    scene's value, its bounds ``bounds[name]`` or the start / 2 .. x 2; FitError naming a parameter the scene
    does not have, bounds that do not hold the start, or a log scale over values <= 0."""
    if not names:
        raise FitError("--params: name at least one parameter (e.g. mu,youngs_modulus,segment_damping; names: "
                       f"{', '.join(PARAMETER_PATHS)}, or key paths such as cables[0].damping_time)")
    if len(set(names)) != len(names):
        raise FitError(f"--params: a parameter repeats: {', '.join(names)}")
    bounds = bounds or {}
    params, claimed = [], {}
    for name in names:
        try:
            start = current_value(document, name)
            paths = expand(document, name)
        except ValueError as exc:
            raise FitError(f"--params: {source}: {exc}") from None
        for path in paths:  # two parameters on one key would fight over it
            if path in claimed:
                raise FitError(f"--params: {name} and {claimed[path]} both set {format_key_path(path)}")
            claimed[path] = name
        low, high, log = bounds.get(name, (None, None, None))
        if low is None:
            if start <= 0.0:
                raise FitError(f"--bounds: {name} is {start:g} in the scene; give its bounds (NAME=LOW:HIGH)")
            low, high = start / DEFAULT_SPAN, start * DEFAULT_SPAN
        log = _is_log(name) if log is None else log
        if log and low <= 0.0:
            raise FitError(f"--bounds: {name}: a log scale needs LOW > 0, got {low:g} (add :linear)")
        if not low <= start <= high:
            raise FitError(f"--bounds: {name}: the scene's value {start:g} is outside [{low:g}, {high:g}]")
        params.append(FitParameter(name, start, low, high, log))
    return params


def settings_at(params, x) -> dict:
    """{name: value} of the parameters at unit coordinates ``x``."""
    return {p.name: p.value(xi) for p, xi in zip(params, np.asarray(x, dtype=float))}


def start_coordinates(params) -> np.ndarray:
    return np.array([p.coordinate(p.start) for p in params])
