"""Helpers and fixtures of the bag tools' tests (a module of its own name: test/ros has a conftest too, so
``from conftest import`` would find whichever came first): a fast contact scene, and bags recorded and
replayed from it once per session.

The scene (``slide_scene``): the Panda lowers its open fingers onto a table, presses and slides them
along x, so the wrist F/T sensor sees the friction force (mu times the normal force) within a second;
about 15 ms per step here. Its YAML is written into the session's tmp dir, with the friction
coefficient and the sensor noise as parameters.
"""
import os

import numpy as np
import pytest

from cond_ros.bags.io import BagReader
from cond_ros.bags.record import record_scene
from cond_ros.bags.replay import replay_bag
from cond_ros.cosim.config import validate_config

FT_TOPIC = "/cond_sim/ft/wrist_ft"  # measured: noise_std below, seeded
FT_TRUTH = "/cond_sim/ft/wrist_ft/ground_truth"
DURATION = 1.8  # [s]: approach, press, slide, hold
MU_NOMINAL, MU_CHANGED = 0.5, 0.8
NOISE_STD = (0.05, 0.05, 0.05, 0.002, 0.002, 0.002)  # the scene's F/T noise [N, N m]

SCENE = """# The Panda lowers its open fingers onto a table (slowly over the last 2.5 cm), presses and slides them
# along x: the wrist F/T sensor sees the friction force, mu times the normal force.
name: panda_slide
dt: 0.01
duration: {duration}
solver: {{name: cond, tolerance: 1.0e-6, max_iterations: 500}}
contact: {{virtual_node_gain: 1.0e+4, contact_margin: 0.005}}
robots:
  - name: panda
    urdf: urdf/panda.urdf
    q: [0.0, -0.3831, 0.0, -1.7152, 0.0, 1.3321, 0.7854, 0.04]   # TCP at (0.4, 0, 0.65), pointing down
    drive_stiffness: [2000, 2000, 2000, 2000, 600, 600, 200, 500]
    drive_damping: [80, 80, 80, 80, 20, 20, 8, 20]
    mu: {mu}
colliders:
  - {{type: box, position: [0.45, 0.0, 0.2], size: [0.4, 0.6, 0.4], mu: {mu}}}   # table top at z = 0.4
sensors:
  - name: wrist_ft
    robot: panda
    parent_link: ft_sensor_link
    child_link: panda_hand
    frame: parent
    noise_std: [{noise}]
    seed: 3
script:
  robot: panda
  tool_link: panda_tcp
  waypoints:
    - {{t: 0.0}}
    - {{t: 0.35, tool: {{position: [0.4, 0.0, 0.42], rpy: [3.14159265, 0.0, 0.0]}}}}
    - {{t: 0.6, tool: {{position: [0.4, 0.0, 0.397], rpy: [3.14159265, 0.0, 0.0]}}}}
    - {{t: 0.75}}
    - {{t: 1.55, tool: {{position: [0.48, 0.0, 0.397], rpy: [3.14159265, 0.0, 0.0]}}}}
"""


def write_scene(path, *, mu=MU_NOMINAL, noise=NOISE_STD, duration=DURATION) -> str:
    with open(path, "w") as fh:
        fh.write(SCENE.format(mu=mu, noise=", ".join(str(v) for v in noise), duration=duration))
    return str(path)


def sim_config(scene_path, **values):
    return validate_config(dict(scene=str(scene_path), **values))


def read_raw(bag) -> dict:
    """{topic: [(log time, message bytes re-serialized)]} of every topic (for bit-for-bit comparisons)."""
    from cond_ros.bags.io import typestore
    out = {}
    with BagReader(bag) as reader:
        for topic, log_ns, msg in reader.messages(list(reader.topics)):
            out.setdefault(topic, []).append((log_ns, bytes(typestore().serialize_cdr(msg, msg.__msgtype__))))
    return out


@pytest.fixture(scope="session")
def bag_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bags")


@pytest.fixture(scope="session")
def scenes(bag_dir):
    """(nominal, changed friction) scene YAML paths."""
    return (write_scene(bag_dir / "slide_nominal.yaml"), write_scene(bag_dir / "slide_changed.yaml", mu=MU_CHANGED))


@pytest.fixture(scope="session")
def real_nominal(bag_dir, scenes):
    """A "real" bag: the nominal scene recorded with sensor noise (sqlite3, as ros2 bag's default)."""
    path = bag_dir / "real_nominal"
    record_scene(sim_config(scenes[0]), path, duration_s=DURATION, storage="sqlite3", progress=False)
    return str(path)


@pytest.fixture(scope="session")
def real_changed(bag_dir, scenes):
    """A "real" bag whose friction differs from the nominal sim's (mcap)."""
    path = bag_dir / "real_changed"
    record_scene(sim_config(scenes[1]), path, duration_s=DURATION, progress=False)
    return str(path)


@pytest.fixture(scope="session")
def replay_of_changed(bag_dir, scenes, real_changed):
    """The nominal sim replayed from the changed-friction bag's commands (mcap): (bag, summary)."""
    path = bag_dir / "replay_changed"
    summary = replay_bag(real_changed, path, sim_config(scenes[0]), progress=False)
    return str(path), summary


@pytest.fixture(scope="session")
def replay_of_nominal(bag_dir, scenes, real_nominal):
    """The nominal sim replayed from the nominal bag's commands: (bag, summary)."""
    path = bag_dir / "replay_nominal"
    summary = replay_bag(real_nominal, path, sim_config(scenes[0]), progress=False)
    return str(path), summary


def injected_real(sim_series, *, lag, bias, noise, rate, seed):
    """A "real" series made from a sim series: sampled at ``rate`` [Hz] on its own clock, ``lag`` [s] later
    (real(t) = sim(t - lag), linear between the sim's samples), plus ``bias`` and seeded gaussian ``noise``."""
    t_sim = (sim_series.stamps_ns - sim_series.stamps_ns[0]) * 1e-9
    lag_ns = int(round(lag * 1e9))
    first = int(sim_series.stamps_ns[0]) + lag_ns
    count = int(np.floor((t_sim[-1]) * rate)) + 1
    stamps = first + np.round(np.arange(count) * 1e9 / rate).astype(np.int64)
    t_real = (stamps - lag_ns - sim_series.stamps_ns[0]) * 1e-9
    clean = np.column_stack([np.interp(t_real, t_sim, sim_series.values[:, j]) for j in range(6)])
    rng = np.random.default_rng(seed)
    values = clean + np.asarray(bias) + rng.standard_normal(clean.shape) * np.asarray(noise)
    keep = stamps > 0  # rosbag2 times are unsigned: a negative lag starts the real clock before the bag's 0
    return stamps[keep], values[keep]


def write_wrenches(path, topic, stamps, values, frame_id, storage, *, log_offset_ns=0):
    """A bag with one WrenchStamped topic (log time = stamp + ``log_offset_ns``)."""
    from cond_ros.bags import messages
    from cond_ros.bags.io import BagWriter
    with BagWriter(path, storage=storage) as writer:
        for ns, row in zip(stamps, values):
            writer.write(topic, int(ns) + log_offset_ns, messages.wrench(row, frame_id, int(ns)))
    return str(path)


@pytest.fixture
def scratch(tmp_path):
    os.makedirs(tmp_path, exist_ok=True)
    return tmp_path
