"""The fit's search, parameters and loss, on objectives with a known minimum (no simulation: see
test_recovery.py for the fit of a scene to a bag)."""
import math

import numpy as np
import pytest

from cond_ros.fit import FitError, Loss, fit, make_parameters, parse_bounds, weakly_determined
from cond_ros.fit.parameters import settings_at, start_coordinates
from cond_ros.fit.search import _sensitivity
from cond_ros.fit.rollout import RolloutResult, parse_window
from cond_ros.fit.sweep import SweepParameter, sweep_samples

DOCUMENT = {"cables": [{"youngs_modulus": 3.0e6, "mu": 1.0, "segment_damping": {"linear": 0.01, "angular": 0.01}}],
            "colliders": [{"mu": 1.0}], "contact": {"virtual_node_gain": 1.0e4}}
TRUTH = {"youngs_modulus": 4.2e6, "mu": 0.7}


SAMPLES = 240  # 40 samples of the six axes
# two orthonormal residual directions: the loss below is then exactly the quadratic its docstring names
DIRECTIONS = np.linalg.qr(np.random.default_rng(0).standard_normal((SAMPLES, 2)))[0]


class Quadratic:
    """A backend whose rollouts' residual is linear in ln(value / TRUTH) (plus ``curvature`` x its square, and
    white noise of std ``noise`` fixed by a seed), along orthonormal directions weighted 1 and sqrt(mu_weight):
    without noise the loss, the residual's sum of squares, is sum_k w_k ln(value_k / truth_k)^2 (+ curvature
    terms), 0 at TRUTH. ``fail`` makes the rollouts with youngs_modulus above it fail; ``interrupt_after``
    raises KeyboardInterrupt at that batch."""

    name, workers = "quadratic", 1

    def __init__(self, fail=math.inf, interrupt_after=None, mu_weight=1.0, noise=0.0, curvature=0.0,
                 smooth=False):
        self.fail, self.interrupt_after, self.batches = fail, interrupt_after, 0
        self.columns = DIRECTIONS * [1.0, math.sqrt(mu_weight)]
        if smooth:  # a misfit slow in time, the same on every axis, of the noise's RMS
            self.noise = noise * math.sqrt(2) * np.repeat(np.sin(np.linspace(0, np.pi, SAMPLES // 6)), 6)
        else:
            self.noise = noise * np.random.default_rng(1).standard_normal(SAMPLES)
        self.curvature = curvature

    def map(self, batch, on_done=None):
        self.batches += 1
        if self.interrupt_after is not None and self.batches > self.interrupt_after:
            raise KeyboardInterrupt
        out = []
        for s in batch:
            if s["youngs_modulus"] > self.fail:
                out.append(RolloutResult(dict(s), math.inf, {}, "SimulationError: diverged", 0.0))
                continue
            d = np.log([s["youngs_modulus"] / TRUTH["youngs_modulus"], s["mu"] / TRUTH["mu"]])
            residual = self.columns @ (d + self.curvature * d ** 2) + self.noise
            loss = float(residual @ residual)
            out.append(RolloutResult(dict(s), loss, {"fx": loss}, None, 0.0, residual=residual))
        return out


def test_parameters_span_their_bounds_on_their_scale():
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    e, mu = params
    assert (e.low, e.high, e.log) == (1.5e6, 6.0e6, True) and (mu.low, mu.high, mu.log) == (0.5, 2.0, False)
    assert e.value(0.5) == pytest.approx(3.0e6) and mu.value(0.5) == pytest.approx(1.25)  # geometric / arithmetic
    np.testing.assert_allclose(start_coordinates(params), [0.5, 1 / 3])
    assert settings_at(params, start_coordinates(params)) == pytest.approx({"youngs_modulus": 3.0e6, "mu": 1.0})
    bounds = parse_bounds(["mu=0.2:1.5:log"], ["mu"])
    assert make_parameters(DOCUMENT, ["mu"], bounds)[0].log is True
    for args, message in (((["mu"], {"mu": (1.5, 2.0, None)}), "outside"), ((["friction"], None), "friction"),
                          (([], None), "name at least one"), ((["mu", "mu"], None), "repeats"),
                          ((["mu", "cables[0].mu"], None), r"both set cables\[0\].mu")):
        with pytest.raises(FitError, match=message):
            make_parameters(DOCUMENT, *args)
    for text, message in (("mu=1", "expected NAME=LOW:HIGH"), ("e=1:2", "not one of"), ("mu=2:1", "LOW < HIGH"),
                          ("mu=a:b", "must be numbers"), ("mu=1:2:cubic", "expected NAME")):
        with pytest.raises(FitError, match=message):
            parse_bounds([text], ["mu"])


def test_the_loss_weighs_each_axis_rmse():
    rmse = dict(fx=1.0, fy=2.0, fz=3.0, tx=0.1, ty=0.2, tz=0.3)
    assert Loss()(rmse) == pytest.approx(6.6)
    assert Loss.parse("tx=10,ty=10,tz=10")(rmse) == pytest.approx(12.0)
    for text in ("fq=1", "fx=-1", "fx", "fx=nan"):
        with pytest.raises(FitError, match="--weights"):
            Loss.parse(text)
    with pytest.raises(FitError, match="every weight is 0"):
        Loss.parse("fx=0,fy=0,fz=0,tx=0,ty=0,tz=0")
    assert parse_window("2:10.5") == (2.0, 10.5) and parse_window(None) is None
    for text in ("10:2", "a:b", "1", "-1:2"):
        with pytest.raises(FitError, match="--window"):
            parse_window(text)


def test_cma_finds_a_known_minimum_and_a_seed_fixes_the_search():
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(), budget=150, seed=3, progress=False, sensitivity=True)
    best = result.best.settings
    assert best["youngs_modulus"] == pytest.approx(TRUTH["youngs_modulus"], rel=1e-3)
    assert best["mu"] == pytest.approx(TRUTH["mu"], rel=1e-3)
    assert result.before.settings == pytest.approx({"youngs_modulus": 3.0e6, "mu": 1.0})
    assert len(result.rollouts) <= 150 and result.ended in ("budget", "converged")
    again = fit(params, Quadratic(), budget=150, seed=3, progress=False)
    assert [r.settings for r in again.rollouts] == [r.settings for r in result.rollouts]
    other = fit(params, Quadratic(), budget=150, seed=4, progress=False)
    assert [r.settings for r in other.rollouts] != [r.settings for r in result.rollouts]
    # at the minimum the loss rises both ways, by the quadratic's own amount
    rows = {r["name"]: r for r in result.sensitivity}
    assert rows["mu"]["loss_up"] == pytest.approx(math.log(1.05) ** 2, rel=0.05)
    assert all(r["determined"] for r in result.sensitivity)
    with pytest.raises(FitError, match="--budget"):
        fit(params, Quadratic(), budget=3, progress=False)


def test_the_polish_finds_what_cma_es_cannot_tell_apart():
    """mu moves the loss 10^4 times less than Young's modulus, and the residual is not linear: CMA-ES alone
    leaves mu percent off; the Levenberg-Marquardt polish on the residual traces lands on the truth."""
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    model = dict(mu_weight=1e-4, curvature=0.3)
    alone = fit(params, Quadratic(**model), budget=60, seed=0, progress=False, polish_share=0.0)
    polished = fit(params, Quadratic(**model), budget=60, seed=0, progress=False)
    assert len(polished.rollouts) <= 60
    assert abs(alone.best.settings["mu"] / TRUTH["mu"] - 1) > 1e-2
    assert polished.best.settings["mu"] == pytest.approx(TRUTH["mu"], rel=1e-4)
    assert polished.best.settings["youngs_modulus"] == pytest.approx(TRUTH["youngs_modulus"], rel=1e-6)
    assert polished.best.loss < 1e-3 * alone.best.loss
    with pytest.raises(FitError, match="--polish"):
        fit(params, Quadratic(), budget=60, progress=False, polish_share=1.0)


def test_standard_errors_are_the_least_squares_ones():
    """White noise of std 0.01 on a residual linear in ln(value): least squares gives each ln(value) the
    standard error 0.01 / |its direction| = 0.01 for Young's modulus and 0.1 for mu (weight 1e-2). The
    sensitivity table reports them within the scatter of a 240-sample noise estimate, and calls mu, 10 %
    uncertain, weakly determined."""
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(mu_weight=1e-2, noise=0.01), budget=60, seed=0, progress=False)
    rows = {r["name"]: r for r in result.sensitivity}
    assert rows["youngs_modulus"]["relative_error"] == pytest.approx(0.01, rel=0.15)
    assert rows["mu"]["relative_error"] == pytest.approx(0.1, rel=0.15)
    assert rows["youngs_modulus"]["determined"] and not rows["mu"]["determined"]
    (line,) = weakly_determined(result)
    assert line.startswith("mu is weakly determined by this recording: its standard error is ")
    # a misfit as large but slow in time is not 240 independent samples: the errors widen
    smooth = fit(params, Quadratic(mu_weight=1e-2, noise=0.01, smooth=True), budget=60, seed=0, progress=False)
    widened = {r["name"]: r["relative_error"] for r in smooth.sensitivity}
    assert widened["youngs_modulus"] > 3 * rows["youngs_modulus"]["relative_error"]


def test_failed_rollouts_are_penalized_and_reported_not_raised():
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(fail=4.6e6), budget=100, seed=0, progress=False)
    assert result.failed and all("diverged" in r.error for _, r in result.failed)
    assert not result.best.failed and result.best.settings["mu"] == pytest.approx(0.7, rel=0.02)
    assert fit(params, Quadratic(fail=0.0), budget=20, seed=0, progress=False).ended == "failed"


def test_an_interrupt_keeps_the_best_so_far():
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(interrupt_after=3), budget=200, seed=0, progress=False)
    assert result.ended == "interrupted" and not result.sensitivity
    assert 1 < len(result.rollouts) < 200
    assert result.best.loss == min(r.loss for r in result.rollouts)


def test_sweeps_are_grids_or_seeded_draws():
    grid = sweep_samples([SweepParameter.parse("mu=0.5,1.0"), SweepParameter.parse("youngs_modulus=4e6,5e6,6e6")],
                         None, 0)
    assert len(grid) == 6 and grid[0] == {"mu": 0.5, "youngs_modulus": 4e6}
    params = [SweepParameter.parse("youngs_modulus=4e6:5e6"), SweepParameter.parse("poisson_ratio=0.4:0.49"),
              SweepParameter.parse("mu=0.5:1.5:log")]
    draws = sweep_samples(params, None, 7)
    assert len(draws) == 20 and draws == sweep_samples(params, None, 7) and draws != sweep_samples(params, None, 8)
    assert all(4e6 <= d["youngs_modulus"] <= 5e6 and 0.4 <= d["poisson_ratio"] <= 0.49 for d in draws)
    for text, message in (("mu", "expected NAME="), ("mu=2:1", "expected finite LOW < HIGH"),
                          ("mu=a,b", "with numbers"), ("mu=0:1:log", r"LOW > 0 for :log"),
                          ("mu=1:2:3", "with numbers"), ("mu=a:2", "with numbers")):
        with pytest.raises(FitError, match=f"--param .*{message}"):
            SweepParameter.parse(text)
    with pytest.raises(FitError, match="--samples"):
        sweep_samples([SweepParameter.parse("mu=0.5,1.0")], 5, 0)


def test_when_the_sensitivity_rollouts_fail_no_parameter_is_called_weakly_determined():
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(), budget=30, seed=0, progress=False, sensitivity=False)
    result.sensitivity = _sensitivity(params, start_coordinates(params), result.best, Quadratic(fail=0.0))
    assert [r["determined"] for r in result.sensitivity] == [None, None]
    assert weakly_determined(result) == []


def test_a_search_stopped_short_of_the_minimum_is_said_so():
    """Two generations of CMA-ES leave the quadratic's minimum far off: a 5 % step of a parameter lowers the
    loss, and the fit says so instead of giving that parameter a standard error's verdict."""
    params = make_parameters(DOCUMENT, ["youngs_modulus", "mu"])
    result = fit(params, Quadratic(), budget=13, seed=0, progress=False, polish_share=0.0)
    short = [r for r in result.sensitivity if not r["at_minimum"]]
    assert short and all(r["determined"] is None for r in short)
    assert any(min(r["loss_down"], r["loss_up"]) < r["loss"] for r in short)
    lines = weakly_determined(result)
    assert any(line.startswith(f"the search stopped short of the minimum in {short[0]['name']}") for line in lines)
