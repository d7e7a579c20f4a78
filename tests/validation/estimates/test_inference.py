"""Model-only, people-only and prediction-powered means on arrays, against ppi_py and statsmodels called directly."""

import numpy as np
import ppi_py
import pytest
from statsmodels.stats.weightstats import DescrStatsW

from validation.estimates.inference import (
    FEW_LABELLED,
    MIN_LABELLED,
    MODEL_CONSTANT,
    NO_UNLABELLED,
    GroupArrays,
    model_only_mean,
    people_only_difference,
    people_only_mean,
    plan_from_sample,
    plan_labels,
    ppi_lambda,
    prediction_powered_difference,
    prediction_powered_mean,
)


def biased_population(rng, *, size: int = 4000, bias: float = 0.3):
    """People's 0-2 scores and a model that scores 'bias' higher, with noise, clipped to the scale."""
    truth = rng.integers(0, 3, size).astype(float)
    model = np.clip(truth + bias + rng.normal(0, 0.4, size), 0, 2)
    return truth, model


def split(truth, model, labelled):
    return truth[labelled], model[labelled], model[~labelled]


class PredictionPoweredMeanTests:
    def test_estimate_interval_and_lambda_are_ppi_pys(self):
        rng = np.random.default_rng(1)
        truth, model = biased_population(rng)
        labelled = np.zeros(len(truth), bool)
        labelled[rng.choice(len(truth), 300, replace=False)] = True
        y, yhat, unlabelled = split(truth, model, labelled)
        result = prediction_powered_mean(y, yhat, unlabelled, alpha=0.05)
        expected = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=None)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=None)
        assert result.estimate == pytest.approx(float(expected[0]))
        assert result.ci == pytest.approx((float(low[0]), float(high[0])))
        # The lambda reported is the one ppi_mean_ci tuned: given back to it, the same interval.
        fixed = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=result.lam)
        assert result.ci == pytest.approx((float(fixed[0][0]), float(fixed[1][0])))
        assert 0 < result.lam <= 1 and (result.n_labeled, result.n_unlabeled) == (300, 3700)

    def test_effective_n_is_the_people_only_labels_for_the_same_width(self):
        """n times the squared ratio of the people-only half-width (statsmodels' interval, the one shown)
        to the PPI one; a model that gives one value everywhere has no lambda and gives n itself."""
        rng = np.random.default_rng(2)
        truth, model = biased_population(rng)
        labelled = np.zeros(len(truth), bool)
        labelled[:200] = True
        y, yhat, unlabelled = split(truth, model, labelled)
        powered = prediction_powered_mean(y, yhat, unlabelled, alpha=0.1)
        low, high = DescrStatsW(y).zconfint_mean(alpha=0.1)  # the people-only interval
        ratio = (high - low) / (powered.ci[1] - powered.ci[0])
        assert powered.effective_n == round(200 * ratio**2) and powered.effective_n > 200
        useless = prediction_powered_mean(y, np.zeros(200), np.zeros(len(unlabelled)), alpha=0.1)
        assert useless.lam is None and useless.effective_n == 200 and useless.note == MODEL_CONSTANT
        assert useless.ci == pytest.approx((low, high))

    def test_weighted_estimate_interval_and_lambda_are_ppi_pys(self):
        rng = np.random.default_rng(3)
        truth, model = biased_population(rng, size=600)
        labelled = np.zeros(600, bool)
        labelled[rng.choice(600, 80, replace=False)] = True
        pi = np.where(np.arange(600) < 200, 0.3, 0.05)
        w, w_unlabelled = 1 / pi[labelled], 1 / (1 - pi[~labelled])
        y, yhat, unlabelled = split(truth, model, labelled)
        result = prediction_powered_mean(y, yhat, unlabelled, alpha=0.05, w=w, w_unlabeled=w_unlabelled)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=None, w=w, w_unlabeled=w_unlabelled)
        assert result.ci == pytest.approx((float(low[0]), float(high[0])))
        assert result.lam == pytest.approx(ppi_lambda(y, yhat, unlabelled, w=w, w_unlabeled=w_unlabelled))
        fixed = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=result.lam, w=w, w_unlabeled=w_unlabelled)
        assert result.ci == pytest.approx((float(fixed[0][0]), float(fixed[1][0])))

    def test_a_stratified_estimate_matches_the_formula_worked_by_hand(self):
        # Two strata: A with 4 items (2 labelled, pi = 1/2), B with 6 items (2 labelled, pi = 1/3).
        y = np.array([1.0, 2.0, 0.0, 1.0])
        yhat = np.array([2.0, 2.0, 1.0, 1.0])
        unlabelled = np.array([1.0, 2.0, 0.0, 1.0, 1.0, 2.0])  # A: 1, 2; B: 0, 1, 1, 2
        pi_l, pi_u = np.array([1 / 2, 1 / 2, 1 / 3, 1 / 3]), np.array([1 / 2, 1 / 2, 1 / 3, 1 / 3, 1 / 3, 1 / 3])
        result = prediction_powered_mean(y, yhat, unlabelled, alpha=0.05, w=1 / pi_l, w_unlabeled=1 / (1 - pi_u))
        lam = result.lam
        # By hand: each stratum's share of the population (4/10, 6/10) times its imputed mean plus its rectifier.
        stratum_a = lam * np.mean([1.0, 2.0]) + np.mean([1.0 - lam * 2.0, 2.0 - lam * 2.0])
        stratum_b = lam * np.mean([0.0, 1.0, 1.0, 2.0]) + np.mean([0.0 - lam * 1.0, 1.0 - lam * 1.0])
        assert result.estimate == pytest.approx(0.4 * stratum_a + 0.6 * stratum_b)

    def test_too_few_labels_or_none_unlabelled_give_a_reason_not_a_number(self):
        few = prediction_powered_mean(np.array([1.0]), np.array([1.0]), np.array([1.0, 2.0]), alpha=0.05)
        assert few.estimate is None and few.reason == FEW_LABELLED.format(n=MIN_LABELLED)
        none_left = prediction_powered_mean(np.array([1.0, 2.0]), np.array([1.0, 1.0]), np.array([]), alpha=0.05)
        assert none_left.estimate is None and none_left.reason == NO_UNLABELLED


class PeopleOnlyTests:
    def test_the_classical_interval_is_statsmodels(self):
        y = np.array([0.0, 1.0, 2.0, 2.0, 1.0, 1.0])
        result = people_only_mean(y, alpha=0.1)
        assert result.ci == pytest.approx(DescrStatsW(y).zconfint_mean(alpha=0.1))
        assert result.estimate == pytest.approx(7 / 6) and result.n == 6

    def test_the_model_only_mean_has_no_interval(self):
        assert model_only_mean(np.array([1.0, 2.0])) == 1.5 and model_only_mean(np.array([])) is None


class DifferenceTests:
    def test_a_group_difference_combines_each_groups_ppi_interval(self):
        rng = np.random.default_rng(4)
        truth, model = biased_population(rng, size=2000)
        truth[1::2] = np.clip(truth[1::2] - 1, 0, 2)  # group B scores lower
        in_b = np.arange(2000) % 2 == 1
        labelled = np.zeros(2000, bool)
        labelled[rng.choice(2000, 300, replace=False)] = True

        def group(members):
            return GroupArrays(truth[labelled & members], model[labelled & members], model[~labelled & members])

        result = prediction_powered_difference(group(~in_b), group(in_b), alpha=0.05)
        intervals = []
        for members in (~in_b, in_b):
            arrays = group(members)
            low, high = ppi_py.ppi_mean_ci(arrays.y, arrays.yhat, arrays.yhat_unlabeled, alpha=0.05, lam=None)
            intervals.append((low[0], high[0]))
        (low_a, high_a), (low_b, high_b) = intervals
        # Independent groups: the half-widths add in quadrature around the difference of the midpoints.
        assert result.estimate == pytest.approx((low_a + high_a) / 2 - (low_b + high_b) / 2)
        half = np.hypot((high_a - low_a) / 2, (high_b - low_b) / 2)
        assert result.ci == pytest.approx((result.estimate - half, result.estimate + half))
        assert result.ci[0] < truth[~in_b].mean() - truth[in_b].mean() < result.ci[1]
        assert len(result.lam) == 2 and result.effective_n > 300

    def test_the_people_only_difference_is_a_two_sample_interval(self):
        a, b = np.array([2.0, 2.0, 1.0, 2.0]), np.array([0.0, 1.0, 0.0, 1.0])
        result = people_only_difference(a, b, alpha=0.05)
        assert result.estimate == pytest.approx(1.75 - 0.5) and result.n == 8
        assert result.ci[0] < 1.25 < result.ci[1]


class CoverageSimulationTests:
    def test_a_biased_model_keeps_the_ppi_interval_valid(self):
        """200 seeded repetitions: the 90% PPI interval covers the truth at least 85% of the time, while
        the model-only mean is off by the model's bias (0.3 on the 0-2 scale)."""
        covered, model_errors = 0, []
        for repetition in range(200):
            rng = np.random.default_rng(1000 + repetition)
            truth = rng.integers(0, 3, 3000).astype(float)
            model = truth + 0.3 + rng.normal(0, 0.5, 3000)  # unclipped: the bias is exactly 0.3
            labelled = np.zeros(3000, bool)
            labelled[rng.choice(3000, 150, replace=False)] = True
            result = prediction_powered_mean(truth[labelled], model[labelled], model[~labelled], alpha=0.1)
            covered += result.ci[0] <= truth.mean() <= result.ci[1]
            model_errors.append(model_only_mean(model) - truth.mean())
        assert covered >= 170
        assert np.mean(model_errors) == pytest.approx(0.3, abs=0.02)


class PlanTests:
    def test_a_correlated_model_needs_fewer_labels(self):
        rng = np.random.default_rng(5)
        truth, model = biased_population(rng, size=20_000)
        plan = plan_from_sample(truth[:300], model[:300], half_width=0.05, alpha=0.05, population=20_000)
        assert plan.people_only_n == int(np.ceil((1.959963984540054 * plan.sd / 0.05) ** 2))
        expected = ppi_py.ppi_mean_power(
            truth[:300], model[:300], cost_Y=1, cost_Yhat=1e-6, effective_n=plan.people_only_n, n_max=20_000
        )
        assert plan.prediction_powered_n == expected["n"] < plan.people_only_n

    def test_stated_values_plan_without_a_sample(self):
        plan = plan_labels(half_width=0.02, alpha=0.05, sd=0.5, correlation=0.9, population=50_000)
        assert plan.people_only_n == 2401
        assert plan.prediction_powered_n < 2401 * (1 - 0.9**2) * 1.5
