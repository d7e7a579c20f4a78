"""Stratified samples: people-only and stratified prediction-powered intervals that cover at their level,
effective n against the interval shown, lambda undefined for a constant model, and plans out of reach."""

import numpy as np
import ppi_py
import pytest
from statsmodels.stats.weightstats import DescrStatsW

from validation.estimates.entries import MODEL_DOES_NOT_HELP, DimensionArrays, one_estimate
from validation.estimates.inference import MODEL_CONSTANT, NOT_REACHABLE, plan_from_sample, plan_labels
from validation.estimates.stratified import StratumArrays, stratified_people_mean, stratified_prediction_powered_mean

REPETITIONS = 200


def stratified_population(rng, *, sizes=(1800, 200), labelled=(50, 50), shares=(0.3, 0.8)):
    """Two strata of binary labels with different rates; a model that tracks them noisily; a fixed
    number drawn at random in each stratum (a stratified sample of very unequal inclusion probabilities)."""
    strata, truths = [], []
    for name, size, n, share in zip("ab", sizes, labelled, shares, strict=True):
        truth = (rng.random(size) < share).astype(float)
        model = np.clip(truth * 0.6 + 0.2 + rng.normal(0, 0.3, size), 0, 1)
        drawn = np.zeros(size, bool)
        drawn[rng.choice(size, n, replace=False)] = True
        strata.append(StratumArrays(name=name, y=truth[drawn], yhat=model[drawn], yhat_unlabeled=model[~drawn]))
        truths.append(truth)
    return strata, np.concatenate(truths).mean()


class CoverageTests:
    def test_both_stratified_intervals_cover_within_two_and_a_half_points_of_nominal(self):
        """200 seeded repetitions, strata of 1,800 and 200 items with 50 + 50 labelled, the estimand the
        mean of the project's own 2,000 items: the 95% people-only interval (Σ W_h² s_h² / n_h with the
        finite-population correction) and the stratified PPI interval each cover 92.5-97.5% of the time.
        The frequency-weight interval the page gave before (DescrStatsW with 1/π weights) covers less."""
        covered = {"people": 0, "stratified_ppi": 0, "frequency_weights": 0}
        for repetition in range(REPETITIONS):
            rng = np.random.default_rng(4000 + repetition)
            strata, truth = stratified_population(rng)
            people = stratified_people_mean(strata, alpha=0.05, fpc=True)
            powered = stratified_prediction_powered_mean(strata, alpha=0.05, fpc=True)
            covered["people"] += people.ci[0] <= truth <= people.ci[1]
            covered["stratified_ppi"] += powered.ci[0] <= truth <= powered.ci[1]
            y = np.concatenate([s.y for s in strata])
            w = np.concatenate([np.full(len(s.y), s.size / len(s.y)) for s in strata])
            low, high = DescrStatsW(y, weights=w / w.sum() * len(y), ddof=1).zconfint_mean(alpha=0.05)
            covered["frequency_weights"] += low <= truth <= high
        rates = {key: value / REPETITIONS for key, value in covered.items()}
        assert 0.925 <= rates["people"] <= 0.975
        assert 0.925 <= rates["stratified_ppi"] <= 0.975
        assert rates["frequency_weights"] < 0.925

    def test_each_stratum_has_its_own_lambda_from_ppi_py(self):
        strata, _ = stratified_population(np.random.default_rng(1))
        powered = stratified_prediction_powered_mean(strata, alpha=0.05, fpc=True)
        for stratum in strata:
            low, high = ppi_py.ppi_mean_ci(stratum.y, stratum.yhat, stratum.yhat_unlabeled, alpha=0.05, lam=None)
            fixed = ppi_py.ppi_mean_ci(
                stratum.y, stratum.yhat, stratum.yhat_unlabeled, alpha=0.05, lam=powered.lam[stratum.name]
            )
            assert (fixed[0][0], fixed[1][0]) == pytest.approx((low[0], high[0]))
        assert powered.lam["a"] != powered.lam["b"]


class EffectiveNTests:
    def test_never_above_n_when_the_prediction_powered_interval_is_wider(self):
        """A model of pure noise, two strata of very different rates: the pooled-weight PPI interval
        carries the spread between the strata, the stratified people-only one shown does not, so the
        former is wider, effective n is below n and the page says so."""
        rng = np.random.default_rng(3)
        strata = np.repeat([0, 1], 1000)
        human = np.concatenate([(rng.random(1000) < 0.1), (rng.random(1000) < 0.9)]).astype(float)
        model = rng.random(2000)
        drawn = np.zeros(2000, bool)
        drawn[rng.choice(1000, 15, replace=False)] = True
        drawn[1000 + rng.choice(1000, 15, replace=False)] = True
        arrays = DimensionArrays(
            model=model, human=np.where(drawn, human, np.nan), strata=strata, in_sample=drawn, stratum_names=("a", "b")
        )
        entry = one_estimate(arrays, np.ones(2000, bool), alpha=0.05, fpc=True)
        people, powered = entry["people_only"], entry["prediction_powered"]
        assert powered["ci"][1] - powered["ci"][0] > people["ci"][1] - people["ci"][0]
        half = (people["ci"][1] - people["ci"][0]) / (powered["ci"][1] - powered["ci"][0])
        assert powered["effective_n"] == round(30 * half**2) < 30
        assert powered["model_helps"] is False
        assert MODEL_DOES_NOT_HELP.format(which="prediction-powered") in entry["warnings"]


class ConstantModelTests:
    def test_lambda_is_undefined_with_the_reason_and_the_people_only_figure_is_used(self):
        rng = np.random.default_rng(4)
        human = rng.integers(0, 3, 300).astype(float)
        labelled = np.zeros(300, bool)
        labelled[:60] = True
        arrays = DimensionArrays(
            model=np.zeros(300), human=np.where(labelled, human, np.nan), strata=None, in_sample=None
        )
        entry = one_estimate(arrays, np.ones(300, bool), alpha=0.05, fpc=True)
        powered = entry["prediction_powered"]
        assert powered["lambda"] is None and powered["lambda_reason"] == MODEL_CONSTANT
        assert powered["estimate"] == entry["people_only"]["estimate"] == pytest.approx(human[:60].mean())
        assert powered["effective_n"] == 60
        assert MODEL_DOES_NOT_HELP.format(which="prediction-powered") in entry["warnings"]


class UnreachablePlanTests:
    def test_a_target_out_of_reach_within_the_items_says_so(self):
        rng = np.random.default_rng(5)
        truth = rng.integers(0, 3, 27).astype(float)
        model = truth + rng.normal(0, 0.5, 27)
        plan = plan_from_sample(truth, model, half_width=0.01, alpha=0.05, population=27)
        assert plan.people_only_n > 27 and plan.prediction_powered_n is None
        assert plan.prediction_powered_reason == NOT_REACHABLE.format(population=27, half_width=0.01)
        reachable = plan_from_sample(truth, model, half_width=0.45, alpha=0.05, population=27)
        assert reachable.prediction_powered_n < reachable.people_only_n <= 27
        assert (
            plan_labels(half_width=0.01, alpha=0.05, sd=0.8, correlation=0.9, population=27).prediction_powered_n
            is None
        )

    def test_the_prediction_powered_n_reaches_the_target(self):
        """ppi_py's pair, checked: the effective n of n labelled and the rest unlabelled reaches the
        people-only n, and one label fewer would not."""
        rng = np.random.default_rng(6)
        truth = rng.integers(0, 3, 400).astype(float)
        model = truth + rng.normal(0, 0.7, 400)
        for width in (0.3, 0.15, 0.1):
            plan = plan_from_sample(truth[:80], model[:80], half_width=width, alpha=0.05, population=400)
            rho2, n, people = plan.correlation**2, plan.prediction_powered_n, plan.people_only_n
            effective = [k * 400 / (k + (1 - rho2) * (400 - k)) for k in (n - 1, n)]
            assert effective[0] < people <= effective[1]
            assert n < people
