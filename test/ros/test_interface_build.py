"""``cond-ros build-interfaces``: a missing tool is named before any work; a cached wheel is reused. (The
build itself runs in the README's test command, and test_sim_services.py uses its result.)"""
import subprocess
import sys

from cond_ros.ros import build_interface_wheel, interface_build


def test_missing_tools_are_named_before_any_work(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    command = [sys.executable, "-m", "cond_ros.cli", "build-interfaces", "--cache", str(tmp_path / "c")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120,
                            env={"PATH": str(empty), "HOME": str(tmp_path)})
    assert result.returncode == 2, result.stderr
    assert "needs cmake, cc, c++ on PATH" in result.stderr
    assert not any((tmp_path / "c").rglob("*.whl"))


def test_a_cached_wheel_is_reused(tmp_path):
    """The cache is keyed by the sources' digest: a wheel there is returned without building."""
    out = tmp_path / interface_build.sources_digest()
    out.mkdir()
    wheel = out / "ros_simulation_interfaces-2.1.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    said = []
    assert build_interface_wheel(tmp_path, log=said.append) == wheel
    assert "built before from the same sources" in said[0]


def test_sources_are_packaged_and_digested():
    files = {p.relative_to(interface_build.SOURCES).as_posix() for p in interface_build.SOURCES.rglob("*")
             if p.is_file()}
    assert {"build_wheel.sh", "simulation_interfaces/CMakeLists.txt", "simulation_interfaces/package.xml",
            "simulation_interfaces/action/SimulateSteps.action",
            "simulation_interfaces/srv/StepSimulation.srv"} <= files
    assert len(interface_build.sources_digest()) == 16
