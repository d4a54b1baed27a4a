"""The code's layout holds: the import layers of setup.cfg's ``[importlinter]`` contracts (the physics core
imports nothing above it, the ROS-free layers never import ROS, the packages stack one way, no import
circles) and ``ruff check`` with ``ruff.toml``. Both tools come with the ``test`` extra."""
import ast
import importlib
import importlib.util
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
    assert "0 broken" in result.stdout and "5 kept" in result.stdout, result.stdout[-2000:]


def test_ruff_is_clean():
    result = _run(_tool("ruff"), "check", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


# The top-level packages and their declared public names: code outside a package imports only these.
PACKAGES = ("sim", "scenes", "cosim", "bags", "tools", "view", "ros")
NEEDS_RCLPY = {"SimNode", "bench_ros_panda_cable"}


@pytest.mark.parametrize("package", PACKAGES)
def test_public_api_imports(package):
    """Every name of a package's ``__all__`` exists (lazy ones are loaded here), once each."""
    module = importlib.import_module(f"cond_ros.{package}")
    names = list(module.__all__)
    assert names and len(names) == len(set(names)), f"cond_ros.{package}.__all__ is empty or repeats a name"
    if package == "ros" and importlib.util.find_spec("rclpy") is None:
        names = [n for n in names if n not in NEEDS_RCLPY]
    missing = [n for n in names if getattr(module, n, None) is None]
    assert not missing, f"cond_ros.{package}.__all__ names what it does not have: {missing}"


def _imports_between_packages():
    """(file, line, imported module, names) of every import in cond_ros/ that reaches another top-level package."""
    package_dir = ROOT / "cond_ros"
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir)
        own = rel.parts[0] if len(rel.parts) > 1 else None
        module = ".".join(("cond_ros",) + rel.with_suffix("").parts)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [(alias.name, []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module
                targets = [(target, [alias.name for alias in node.names])]
            else:
                continue
            for target, names in targets:
                parts = target.split(".")
                if parts[0] == "cond_ros" and len(parts) > 1 and parts[1] in PACKAGES and parts[1] != own:
                    yield f"{rel}:{node.lineno}", target, names


def test_outside_code_imports_only_public_names():
    scanned = list(_imports_between_packages())
    assert len(scanned) > 20, "the scan found too few imports between packages to be looking at the code"
    wrong = []
    for where, target, names in scanned:
        package = ".".join(target.split(".")[:2])
        if target != package:
            wrong.append(f"{where}: imports {target} (a private module; import from {package})")
            continue
        public = set(importlib.import_module(package).__all__)
        wrong += [f"{where}: {package}.{n} is not in {package}.__all__" for n in names if n not in public]
    assert not wrong, "\n".join(wrong)
