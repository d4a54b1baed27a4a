"""Acceptance of ``compare``: a replayed bag against itself is exactly zero; a known lag, bias and noise
injected into it are recovered (lag within one sample, bias within 1 %, RMSE = noise within 5 %), in both
storages; frames and bad input are handled."""
from dataclasses import replace as dataclass_replace

import numpy as np
import pytest
from bag_helpers import FT_TRUTH, injected_real, write_wrenches

from cond_ros.bags.compare import CompareOptions, compare_bags, compare_series
from cond_ros.bags.frames import WrenchTransform
from cond_ros.bags.io import BagError, BagReader, BagWriter
from cond_ros.bags.metrics import AXES
from cond_ros.bags.series import read_wrench_series

REAL_RATE = 2000.0  # [Hz] (an ATI Net F/T streams at up to 7 kHz); the sim's samples are 10 ms apart
BIAS = (1.5, -2.0, 3.0, 0.15, -0.12, 0.2)  # [N, N m]
NOISE = (0.1, 0.1, 0.1, 0.005, 0.005, 0.005)  # [N, N m]
MEASURED = {}  # numbers for the closing note (printed with -s)


def copy_bag(src, dst, storage):
    """The same messages in another storage (sqlite3 <-> mcap)."""
    with BagReader(src) as reader, BagWriter(dst, storage=storage) as writer:
        for topic, log_ns, msg in reader.messages(list(reader.topics)):
            writer.write(topic, log_ns, msg)
    return str(dst)


@pytest.fixture(scope="module")
def sim_bags(replay_of_changed, bag_dir):
    """The replayed bag in both storages: {storage: path}."""
    mcap = replay_of_changed[0]
    return {"mcap": mcap, "sqlite3": copy_bag(mcap, bag_dir / "replay_changed_sqlite3", "sqlite3")}


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_replayed_bag_against_itself_is_exactly_zero(sim_bags, storage):
    """Every metric of every axis and window is exactly 0 (correlation 1), with lag estimation and tare on,
    for the F/T ground truth and a contact wrench topic."""
    bag = sim_bags[storage]
    for topic in (FT_TRUTH, "/cond_sim/contact_wrench/box0/panda_leftfinger"):
        c = compare_bags(bag, bag, CompareOptions(real_topic=topic, sim_topic=topic, lag="auto", tare_s=0.5,
                                                  window_s=0.5))
        assert c.lag_s == 0.0 and c.masked == 0 and len(c.t) == len(c.real.stamps_ns)
        for metrics in [c.overall] + [w.metrics for w in c.windows]:
            for axis in AXES:
                m = metrics[axis]
                assert (m.rmse, m.mae, m.max_error, m.bias) == (0.0, 0.0, 0.0, 0.0)
                assert m.correlation is None or abs(m.correlation - 1.0) < 1e-12


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize("lag", [0.0437, -0.0213])
def test_injected_lag_bias_and_noise_are_recovered(sim_bags, tmp_path, storage, lag):
    """The sim's F/T at 2 kHz on a "real" clock lagging by ``lag`` (not a whole sample of either), plus a
    bias and seeded gaussian noise: compare --lag auto --tare 1 gives the lag within one real sample (0.5 ms),
    the bias within 1 % per axis and an RMSE within 5 % of the noise's standard deviation per axis.

    Margins (measured over 20 seeds at 1 kHz): the bias error's spread is the noise mean's over the tare
    window (0.21 % of fx's bias at 1 kHz, 0.15 % at 2 kHz), the RMSE's is 1 / sqrt(2 N) (1.2 % at 3 600
    samples), so the 1 % and 5 % bounds sit 4 to 7 standard deviations out; the lag comes within 0.01 ms."""
    sim = read_wrench_series(sim_bags[storage], FT_TRUTH)
    stamps, values = injected_real(sim, lag=lag, bias=BIAS, noise=NOISE, rate=REAL_RATE, seed=11)
    real = write_wrenches(tmp_path / "real", "/ft_sensor/wrench", stamps, values, sim.frame_id, storage,
                          log_offset_ns=250_000)
    c = compare_bags(real, sim_bags[storage], CompareOptions(real_topic="/ft_sensor/wrench", sim_topic=FT_TRUTH,
                                                             lag="auto", tare_s=1.0, window_s=0.5))
    bias = c.tare["real"] - c.tare["sim"]
    rmse = np.array([c.overall[a].rmse for a in AXES])
    MEASURED[(storage, lag)] = dict(lag_error_ms=(c.lag_s - lag) * 1e3, bias_error_pct=(bias - BIAS) / np.abs(BIAS)
                                    * 100, rmse_over_noise=rmse / NOISE, samples=len(c.t))
    print(storage, lag, MEASURED[(storage, lag)])
    assert abs(c.lag_s - lag) < 1.0 / REAL_RATE
    assert np.all(np.abs(bias - BIAS) < 0.01 * np.abs(BIAS)), bias
    assert np.all(np.abs(rmse / NOISE - 1.0) < 0.05), rmse / NOISE
    assert np.all(np.abs([c.overall[a].bias for a in AXES]) < 0.2 * np.asarray(NOISE))  # tared: no bias left
    assert c.lag_estimate.reliable and not c.warnings


def test_without_lag_removal_the_error_shows_it(sim_bags, tmp_path):
    """The same injected lag left in (--lag none): the RMSE is far above the noise (the metrics see the lag)."""
    sim = read_wrench_series(sim_bags["mcap"], FT_TRUTH)
    stamps, values = injected_real(sim, lag=0.0437, bias=BIAS, noise=NOISE, rate=REAL_RATE, seed=11)
    real = write_wrenches(tmp_path / "real", "/ft", stamps, values, sim.frame_id, "mcap")
    c = compare_bags(real, sim_bags["mcap"], CompareOptions(real_topic="/ft", sim_topic=FT_TRUTH, tare_s=1.0))
    assert c.lag_s == 0.0 and c.overall["fz"].rmse > 20 * NOISE[2]


def test_frames_must_match_or_be_transformed(sim_bags):
    """The real sensor mounted rotated and offset: without --transform the comparison refuses (naming both
    frames); with the sim frame's pose in the real frame, it matches exactly."""
    sim = read_wrench_series(sim_bags["mcap"], FT_TRUTH)
    pose = WrenchTransform.from_xyz_rpy([0.01, -0.02, 0.05], [0.1, -0.2, 2.0])
    real = dataclass_replace(sim, bag="real", topic="/ati/wrench", values=pose.apply(sim.values), frame_id="ati")
    with pytest.raises(BagError, match="'ft_sensor_link' differs from the real sensor's frame 'ati'"):
        compare_series(real, sim, CompareOptions(real_topic="/ati/wrench"))
    c = compare_series(real, sim, CompareOptions(real_topic="/ati/wrench", transform=pose))
    assert max(c.overall[a].max_error for a in AXES) < 1e-9


def test_uniform_rate_and_gaps(sim_bags):
    """--rate resamples both onto a grid; a gap in the real data is masked out (and said), not bridged."""
    sim = read_wrench_series(sim_bags["mcap"], FT_TRUTH)
    keep = np.ones(len(sim.stamps_ns), bool)
    keep[60:80] = False  # 0.2 s without messages
    real = dataclass_replace(sim, stamps_ns=sim.stamps_ns[keep], values=sim.values[keep])
    c = compare_series(real, sim, CompareOptions(real_topic="x", rate_hz=200.0))
    assert c.masked > 0 and any("gap" in w for w in c.warnings)
    assert max(c.overall[a].max_error for a in AXES) < 1e-9  # linear both sides, equal where valid


def test_no_overlap_names_both(sim_bags):
    sim = read_wrench_series(sim_bags["mcap"], FT_TRUTH)
    real = dataclass_replace(sim, bag="robot.bag", topic="/ati", stamps_ns=sim.stamps_ns + 10**10)
    with pytest.raises(BagError) as err:
        compare_series(real, sim, CompareOptions(real_topic="/ati"))
    text = str(err.value)
    assert text.startswith("robot.bag [/ati]: no overlap in time") and FT_TRUTH in text and sim.bag in text


def test_sim_topic_defaults_to_the_only_ground_truth(sim_bags, real_nominal):
    c = compare_bags(real_nominal, sim_bags["mcap"], CompareOptions(real_topic="/cond_sim/ft/wrist_ft"))
    assert c.sim.topic == FT_TRUTH and c.options.sim_topic == FT_TRUTH


def test_options_are_checked():
    for bad in (dict(lag="later"), dict(window_s=0), dict(tare_s=-1.0), dict(rate_hz=0.0), dict(max_lag_s=0)):
        with pytest.raises(ValueError):
            CompareOptions(real_topic="/x", **bad).check()
