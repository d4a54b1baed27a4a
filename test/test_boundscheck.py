"""Every scene, a scene with nothing static in it, and the command fuzz run once more with numba's bounds
checks on (issue 32: panda_pick with `colliders: []` once ended in a segmentation fault; with the checks an
index error is an IndexError that names its kernel, not a crash). The kernels compile afresh into a cache
of this test's own: numba's cache key does not hold the bounds-check flag, so a shared cache would hand
back unchecked code, or keep checked code for the runs after."""
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from cond_ros.resources import config_dir
from cond_ros.scenes.registry import BUILT_IN

ROOT = pathlib.Path(__file__).resolve().parents[1]
STEPS = 3


@pytest.fixture(scope="module")
def checked_env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("numba_boundscheck_cache")
    return dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(cache))


def _scenes() -> list:
    return sorted(set(BUILT_IN) | {p.stem for p in pathlib.Path(config_dir()).glob("*.yaml")})


def _run(env, *argv, timeout=900):
    result = subprocess.run([sys.executable, "-m", "cond_ros.cli", *argv], env=env, capture_output=True, text=True,
                            timeout=timeout, start_new_session=True)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "IndexError" not in result.stderr and "out of bounds" not in result.stderr
    return result


def test_numba_bounds_checks_are_on(checked_env):
    """The flag reaches the kernels: an out-of-bounds index in a jitted function raises in this environment."""
    code = ("import numba, numpy as np\n@numba.njit\ndef f(a, i):\n    return a[i]\n"
            "try:\n    f(np.zeros(3), 7)\nexcept IndexError as e:\n    print('raised', e)\n")
    result = subprocess.run([sys.executable, "-c", code], env=checked_env, capture_output=True, text=True, timeout=120)
    assert "raised" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("scene", _scenes())
def test_every_scene_steps_with_bounds_checks(checked_env, scene, tmp_path):
    _run(checked_env, "run", scene, "--headless", "--steps", str(STEPS), "--quiet", "--out", str(tmp_path / "run.csv"))


def test_a_scene_without_static_colliders_steps_with_bounds_checks(checked_env, tmp_path):
    spec = yaml.safe_load((pathlib.Path(config_dir()) / "panda_pick.yaml").read_text())
    spec["colliders"] = []
    scene = tmp_path / "no_colliders.yaml"
    scene.write_text(yaml.safe_dump(spec))
    _run(checked_env, "run", "panda_pick", "--scene-file", str(scene), "--headless", "--steps", "200", "--quiet",
         "--out", str(tmp_path / "run.csv"))


def test_the_command_fuzz_with_bounds_checks(checked_env):
    pytest.importorskip("rclpy")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(ROOT / "test" / "ros" / "test_fuzz.py")], env=checked_env, capture_output=True,
                            text=True, timeout=900, start_new_session=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
