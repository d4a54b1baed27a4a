"""Scenes for ``cond-ros run`` and the benchmarks: the paper's simple cases built in Python, and
every ``config/NAME.yaml`` scene file (see ``cond_ros.scenes.scene``).
"""
from __future__ import annotations

import os

import numpy as np

from ..resources import packaged_file, scene_files
from ..sim import (DampingPolicy, Model, ModelBuilder, ModelError, SimOptions, Simulator, box_inertia, override_options,
                   particle)
from .overlay import Overlay
from .scene import Scene, load_scene, read_scene_yaml, scene_from_data

BOX_HALF = 0.1  # Sec. V-B: 0.2 m cube
BOX_MASS = 0.5  # [kg]


def box_on_plane(*, mu=0.2, velocity=(0.0, 0.0, 0.0), virtual_node_gain=1e5, plane_rot=None) -> Model:
    """Sec. V-B / V-G: a 0.2 m, 0.5 kg cube on a plane, its four bottom vertices as contact points.

    The box starts touching the plane (bottom at z = 0). ``mu`` is a scalar or (mu1, mu2) along the
    plane's local x/y (anisotropic, Sec. III-E2) and ``plane_rot`` orients those axes.
    """
    builder = ModelBuilder()
    body = builder.add_body((0.0, 0.0, BOX_HALF), mass=BOX_MASS, inertia=box_inertia(BOX_MASS, (BOX_HALF,) * 3),
                            velocity=velocity)
    for sx, sy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
        builder.add_contact_point(body, (sx * BOX_HALF, sy * BOX_HALF, -BOX_HALF))
    builder.add_collider_plane(rot=plane_rot if plane_rot is not None else np.eye(3), mu=mu)
    return builder.finalize(virtual_node_gain=virtual_node_gain)


def cloth(n: int, *, size=1.0, mass=0.5, stiffness=20.0, mu=0.4, sphere_radius=0.2, drop=0.05,
          with_sphere=True, gravity=(0.0, 0.0, -9.81)) -> Model:
    """A square particle cloth of n x n nodes (structural and shear springs) above a sphere and a ground plane.

    Total mass, side length and the spring stiffness per unit strain are kept constant as ``n``
    changes, so resolutions are comparable (the paper's Fig. 11 refines the same mat).
    """
    builder = ModelBuilder(gravity=gravity)
    h = size / (n - 1)
    m = mass / (n * n)
    radius = 0.25 * h
    idx = np.arange(n * n).reshape(n, n)
    height = (2.0 * sphere_radius if with_sphere else 0.0) + radius + drop
    xs = (np.arange(n) - 0.5 * (n - 1)) * h
    for i in range(n):
        for j in range(n):
            builder.add_particle((xs[i], xs[j], height), mass=m, radius=radius, mu=mu)
    k = stiffness  # EA-like: per-spring stiffness k / length keeps strain response resolution-independent
    for i in range(n):
        for j in range(n):
            for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
                a, b = i + di, j + dj
                if 0 <= a < n and 0 <= b < n:
                    length = h * np.hypot(di, dj)
                    builder.add_spring(particle(idx[i, j]), particle(idx[a, b]), stiffness=k / length)
    builder.add_collider_plane(mu=mu)
    if with_sphere:
        builder.add_collider_sphere((0.0, 0.0, sphere_radius), sphere_radius, mu=mu)
    return builder.finalize(contact_margin=2.0 * radius, damping_policy=DampingPolicy.GEOMETRIC)


BUILT_IN = {
    "box_sliding": (lambda: box_on_plane(), 1.0),
    "cloth_drape": (lambda: cloth(24), 3.0),
}


def scene_names() -> list:
    """Every scene by name: the built-in ones and the packaged ``config/NAME.yaml`` files."""
    return sorted(set(BUILT_IN) | set(scene_files()))


def scene_file(name: str) -> str:
    """The path of the packaged ``config/NAME.yaml`` (it may not exist; the loader's error names it)."""
    return packaged_file(os.path.join("config", f"{name}.yaml"))


def load_named_scene(name: str, *, dt=None, solver=None, path=None, script: bool = True,
                     overlay: Overlay | None = None) -> Scene:
    """The :class:`~cond_ros.scenes.scene.Scene` of a built-in scene or ``config/NAME.yaml`` (or ``path``).

    ``dt`` and ``solver`` override the scene's own when given (:func:`~cond_ros.sim.options.override_options`:
    another solver starts from its defaults, the scene's own keeps its options); ``script=False`` leaves out
    its scripted motion (see :func:`~cond_ros.scenes.scene.load_scene`); ``overlay`` changes numbers of the
    scene file before it is built (:mod:`~cond_ros.scenes.overlay`).
    """
    if name in BUILT_IN and path is None:
        if overlay is not None:
            raise ModelError(f"{overlay.source}: {name} is built in code, not from a scene file; an overlay "
                             "applies to a scene YAML")
        make, duration = BUILT_IN[name]
        scene = Scene(Simulator(make(), options=SimOptions()), None, duration, [], [])
    elif overlay is not None:
        path = path or scene_file(name)
        scene = scene_from_data(overlay.apply(read_scene_yaml(path), path), f"{overlay.source} applied to {path}",
                                script=script)
    else:
        scene = load_scene(path or scene_file(name), script=script)
    return with_options(scene, override_options(scene.simulator.options, dt=dt, solver=solver))


def with_options(scene: Scene, options: SimOptions) -> Scene:
    """``scene`` stepped with ``options`` (the same scene when they are its own)."""
    if options == scene.simulator.options:
        return scene
    return scene._replace(simulator=Simulator(scene.simulator.model, options=options))


def edited_scene(name: str, edit=None):
    """``config/NAME.yaml`` with ``edit(data)`` applied to its YAML document first (None: as shipped); built
    from the edited document directly, with errors naming the file as edited."""
    if edit is None:
        return load_named_scene(name)
    path = scene_file(name)
    data = read_scene_yaml(path)
    edit(data)
    return scene_from_data(data, f"{path} (edited)")
