"""The code's layout holds: the import layers of setup.cfg's ``[importlinter]`` contracts (the physics core
imports nothing above it, the ROS-free layers never import ROS, the packages stack one way, no import
circles) and ``ruff check`` with ``ruff.toml``. Both tools come with the ``test`` extra."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    """The console script ``name`` of this interpreter's environment (or on PATH)."""
    beside = pathlib.Path(sys.executable).parent / name
    path = str(beside) if beside.exists() else shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: it comes with the test extra (pip install -e '.[test]')")
    return path


def _run(*command: str) -> subprocess.CompletedProcess:
    # this checkout's package, whatever is installed
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    result = _run(_tool("lint-imports"), "--config", "setup.cfg")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout and "4 kept" in result.stdout, result.stdout[-2000:]


def test_ruff_is_clean():
    result = _run(_tool("ruff"), "check", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
