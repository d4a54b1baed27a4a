"""Helpers and fixtures of the bag tools' tests (a module of its own name: test/ros has a conftest too, so
``from conftest import`` would find whichever came first): a fast contact scene, and bags recorded and
replayed from it once per session.

The scene (``slide_scene``): the Panda lowers its open fingers onto a table, presses and slides them
along x, so the wrist F/T sensor sees the friction force (mu times the normal force) within a second;
about 15 ms per step here. It ships as ``config/slide_mu05.yaml`` and ``config/slide_mu08.yaml`` (the README's
bag example runs them by name), with mu 0.5 and 0.8.
"""
import os

import numpy as np
import pytest
import yaml

from cond_ros.bags.io import BagReader
from cond_ros.bags.record import record_scene
from cond_ros.bags.replay import replay_bag
from cond_ros.cosim.config import validate_config

FT_TOPIC = "/cond_sim/ft/wrist_ft"  # measured: noise_std below, seeded
FT_TRUTH = "/cond_sim/ft/wrist_ft/ground_truth"
DURATION = 1.8  # [s]: approach, press, slide, hold
MU_NOMINAL, MU_CHANGED = 0.5, 0.8
NOISE_STD = (0.05, 0.05, 0.05, 0.002, 0.002, 0.002)  # the scene's F/T noise [N, N m]

SCENES = ("slide_mu05", "slide_mu08")  # config/: the README's bag example, nominal and changed friction


def _scene_path(name: str, mu: float) -> str:
    """The packaged scene ``name``, checked to be the one these tests assume (its mu, noise and duration)."""
    from cond_ros.resources import scene_files
    path = scene_files()[name]
    with open(path) as fh:
        data = yaml.safe_load(fh)
    assert data["robots"][0]["mu"] == mu and data["colliders"][0]["mu"] == mu, path
    assert tuple(data["sensors"][0]["noise_std"]) == NOISE_STD and data["duration"] == DURATION, path
    return path


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
    """(nominal, changed friction) scene YAML paths: config/slide_mu05.yaml and slide_mu08.yaml."""
    return _scene_path(SCENES[0], MU_NOMINAL), _scene_path(SCENES[1], MU_CHANGED)


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
