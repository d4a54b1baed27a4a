"""ament_python package ``cond_ros`` (also a plain pip package: ``pip install -e .``)."""
import os
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "cond_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    # the simulation_interfaces definitions and their build script (cond-ros build-interfaces)
    package_data={f"{PACKAGE}.ros": ["interface_sources/*.sh", "interface_sources/*/*.*",
                                      "interface_sources/*/*/*.*"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", [path for path in glob("config/*") if os.path.isfile(path)]),
        (f"share/{PACKAGE}/config/ros2_control", glob("config/ros2_control/*")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*")),
    ],
    python_requires=">=3.10",
    install_requires=["numpy>=1.24", "scipy>=1.10", "numba>=0.59", "PyYAML>=6", "tqdm>=4.60",
                      "yourdfpy>=0.0.60", "trimesh>=5",
                      # tetrahedral meshes (.msh, .vtk, .vtu); rosbag2 without ROS; compare plots
                      "meshio>=5.3", "rosbags>=0.10", "matplotlib>=3.7",
                      # sparse LDL^T (Apache-2.0) for the Delassus operator of the impulse-space baselines
                      "qdldl>=0.1.7",
                      # numba's TBB threading layer, which numba picks where it is installed: its workers yield
                      # while they wait and then sleep, so the FEM scenes' parallel A x neither pays libgomp's
                      # wake-ups nor spins against your controller (benchmarks/thread_waiting.py). Wheels for x86-64
                      # only; elsewhere numba runs on OpenMP. The PyPI binaries are under the Intel Simplified
                      # Software License (permissive; oneTBB's source is Apache-2.0)
                      "tbb>=2021.6; platform_machine == 'x86_64' or platform_machine == 'AMD64'"],
    extras_require={
        # ROS 2 Kilted client libraries as PyPI wheels; leave them out where ROS 2 comes from apt.
        "ros": ["ros-rclpy", "ros-rmw-fastrtps-cpp", "ros-std-msgs", "ros-std-srvs", "ros-sensor-msgs",
                "ros-geometry-msgs", "ros-trajectory-msgs", "ros-rosgraph-msgs", "ros-visualization-msgs",
                "ros-diagnostic-msgs"],
        # the browser 3D viewer (cond-ros run --view, cond-ros view; MIT): a three.js page served from Python
        "view": ["viser>=1.0"],
        # cond-ros fit's search: CMA-ES (BSD-3)
        "fit": ["cma>=3.3"],
        # cond-ros fit / sweep --backend ray: rollouts on a Ray cluster (Apache-2.0)
        "ray": ["cma>=3.3", "ray>=2.9"],
        # independent references used only by tests: a conic solver, Pinocchio, the example-robot-data Panda;
        # colcon, to test the distribution's install path (a plain colcon build)
        "test": ["pytest>=7", "clarabel>=0.7", "pin>=3", "example-robot-data>=4", "colcon-common-extensions>=0.3",
                 # expands urdf/panda.ros2_control.xacro (test/test_ros2_control_files.py)
                 "xacro>=2",
                 # the code's layout: import layers and lint (test/test_code_layout.py)
                 "import-linter>=2", "ruff>=0.5",
                 # drives the system's headless chromium in the viewer's browser test (test/view/test_browser.py)
                 "selenium>=4.10",
                 # cond-ros fit and sweep, on both backends (test/fit/)
                 "cma>=3.3", "ray>=2.9"],
    },
    zip_safe=False,
    maintainer="cond_ros developers",
    maintainer_email="dev@cond-ros.org",
    description="COND contact simulation with a ROS 2 co-simulation node",
    license="Apache-2.0",
    entry_points={"console_scripts": ["cond-ros = cond_ros.cli:main",
                                      # ROS 2 nodes (`ros2 run cond_ros cond_sim`; setup.cfg puts them in lib/cond_ros)
                                      "cond_sim = cond_ros.ros.node:main",
                                      "cond_demo_controller = cond_ros.ros.demo_controller:main"]},
)
