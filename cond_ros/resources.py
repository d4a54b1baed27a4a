"""Where the package's data files are: scenes and the winding trajectory (``config/``), robots (``urdf/``),
launch files (``launch/``): one resolver for every install layout.

``setup.py``'s ``data_files`` put them in ``<prefix>/share/cond_ros``; only a source checkout (and an
editable install of it) has them beside the code. The layouts, in the order they are tried:

1. a source checkout or editable install: the directory above the package holds ``package.xml``;
2. ``<prefix>/share/cond_ros``, ``<prefix>`` three levels above ``site-packages`` (pip into a venv or
   ``--user``, a wheel, a plain ``colcon build``, a distribution's ``/opt/ros/<distro>``);
3. every ``<prefix>`` of ``AMENT_PREFIX_PATH`` that the ament index says has ``cond_ros`` (a sourced
   workspace whose Python path differs from the share directory's);
4. the installed distribution's own file list (``importlib.metadata``: a wheel installed with an unusual
   scheme), then ``sys.prefix`` and the user base.

A directory counts only if it holds this package's ``package.xml``. Nothing here imports the rest of
``cond_ros``, so every layer may use it.
"""
from __future__ import annotations

import functools
import os
import site
import sys

PACKAGE = "cond_ros"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
MARKER = "package.xml"  # installed to share/cond_ros by setup.py, and at the root of a checkout


class ResourceError(FileNotFoundError):
    """The package's data directory (or a file in it) is missing; the message says where it looked."""


def _is_share_dir(path: str) -> bool:
    marker = os.path.join(path, MARKER)
    try:
        with open(marker, encoding="utf-8") as fh:
            return f"<name>{PACKAGE}</name>" in fh.read()
    except OSError:
        return False


def _ament_prefixes() -> list:
    index = os.path.join("share", "ament_index", "resource_index", "packages", PACKAGE)
    return [prefix for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
            if prefix and os.path.isfile(os.path.join(prefix, index))]


def _distribution_share_dirs() -> list:
    """Share directories that the installed distribution's RECORD lists (a wheel's data files)."""
    try:
        from importlib import metadata
        files = metadata.files(PACKAGE) or []
    except Exception:  # not installed as a distribution (a checkout on sys.path), or a broken RECORD
        return []
    suffix = ("share", PACKAGE, MARKER)
    return [os.path.dirname(os.path.abspath(str(f.locate()))) for f in files if tuple(f.parts[-3:]) == suffix]


def candidate_dirs() -> list:
    """Every directory that may hold the data files, in the order they are tried (see the module doc)."""
    site_packages = os.path.dirname(PACKAGE_DIR)
    prefixes = [os.path.normpath(os.path.join(site_packages, "..", "..", ".."))] + _ament_prefixes()
    candidates = [os.path.dirname(PACKAGE_DIR)]
    candidates += [os.path.join(prefix, "share", PACKAGE) for prefix in prefixes]
    candidates += _distribution_share_dirs()
    candidates += [os.path.join(prefix, "share", PACKAGE) for prefix in (sys.prefix, site.getuserbase())]
    return list(dict.fromkeys(os.path.normpath(c) for c in candidates))


@functools.lru_cache(maxsize=None)
def share_dir() -> str:
    """The directory that holds ``config/``, ``urdf/`` and ``launch/``; ResourceError if there is none."""
    candidates = candidate_dirs()
    for path in candidates:
        if _is_share_dir(path):
            return path
    raise ResourceError(f"{PACKAGE}: its data files (scenes, URDFs, launch files) are not installed; looked for "
                        f"{MARKER} in " + ", ".join(candidates) + ". Reinstall the package (pip install . or "
                        "colcon build), which puts them in <prefix>/share/cond_ros.")


def packaged_file(relative: str) -> str:
    """The path of a data file shipped with the package, e.g. ``urdf/panda.urdf`` or ``config/soft_ball.yaml``.

    The path is returned whether or not the file exists, so the caller's error names the file it wanted;
    ResourceError only when the data directory itself is missing.
    """
    return os.path.join(share_dir(), relative)


def config_dir() -> str:
    """The directory of the packaged scene files (``config/NAME.yaml``)."""
    return packaged_file("config")


def scene_files() -> dict:
    """``{name: path}`` of every packaged scene file ``config/NAME.yaml``."""
    directory = config_dir()
    names = sorted(f for f in os.listdir(directory) if f.endswith(".yaml")) if os.path.isdir(directory) else []
    return {name[:-len(".yaml")]: os.path.join(directory, name) for name in names}
