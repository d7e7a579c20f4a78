"""validation.agreement beyond one coefficient: joint agreement over dimensions, majority vs a
reference, confusion matrices, mean ratings, the random-guess F1 and the exposure comparison."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from tests.validation.unit.agreement_data import (
    FLEISS_1971,
    STATA_RATE_TABLE,
    expand,
    records_from,
)
from validation import agreement
from validation.agreement import (
    DimensionInput,
    cohen_kappa,
    confusion_matrix,
    dimension_agreement,
    exposure_comparison,
    joint_agreement,
    mean_rating,
    random_guess_f1,
)
from validation.agreement import bootstrap as agreement_bootstrap


def _copa_like(n_units: int, seed: int, raters: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_units)
    return np.where(rng.random((n_units, raters)) < 0.7, truth[:, None], rng.integers(0, 3, (n_units, raters)))


class JointAgreementTests:
    def test_one_dimension_matches_dimension_agreement_with_the_same_resamples(self):
        matrix = expand(STATA_RATE_TABLE)
        joint = joint_agreement(
            {"v": DimensionInput(ratings=matrix, level="ordinal")}, raters=["a", "b"], bootstrap=60, seed=4
        ).dimensions["v"]
        single = dimension_agreement(records_from(matrix, raters=["a", "b"]), level="ordinal", bootstrap=60, seed=4)
        assert joint == single

    def test_copa_table7_overall_is_the_mean_of_the_factor_rows(self):
        """CoPA Table 7: 0.643 and 0.754 are the means of the six factor rows, which Overall reproduces."""
        kappas = [0.622, 0.687, 0.609, 0.641, 0.663, 0.637]
        rhos = [0.733, 0.830, 0.744, 0.744, 0.683, 0.788]
        assert round(float(np.mean(kappas)), 3) == 0.643
        assert round(float(np.mean(rhos)), 3) == 0.754

    def test_overall_is_the_mean_over_dimensions_with_an_interval_from_the_same_resamples(self):
        dims = {f"f{i}": DimensionInput(ratings=_copa_like(80, i), level="ordinal") for i in range(3)}
        joint = joint_agreement(dims, raters=["a", "b"], bootstrap=100, seed=2)
        linear = [joint.dimensions[n].cohen_kappa.linear.statistic for n in dims]
        overall = joint.overall["cohen_kappa.linear"]
        assert overall.statistic == pytest.approx(np.mean(linear), abs=1e-15)
        assert overall.confidence_interval is not None and overall.n_resamples == 100
        assert overall.confidence_interval.low < overall.statistic < overall.confidence_interval.high
        assert joint.bootstrap is not None and joint.bootstrap.seed == 2

    def test_overall_is_null_when_a_dimension_is_undefined(self):
        dims = {
            "varied": DimensionInput(ratings=_copa_like(20, 1), level="ordinal"),
            "constant": DimensionInput(ratings=np.ones((20, 2)), level="ordinal"),
        }
        overall = joint_agreement(dims, raters=["a", "b"]).overall["cohen_kappa.unweighted"]
        assert overall.statistic is None and overall.reason == "undefined for constant"

    def test_the_reference_can_stay_out_of_the_coefficients(self):
        humans = _copa_like(60, 3)
        judge = _copa_like(60, 9, raters=1)
        both = np.hstack([humans, judge]).astype(float)
        # The judge rated ten more units that no person rated.
        both = np.vstack([both, np.column_stack([np.full((10, 2), np.nan), np.zeros(10)])])
        result = joint_agreement(
            {"v": DimensionInput(ratings=both, level="ordinal")},
            raters=["h1", "h2", "llm"],
            reference="llm",
            reference_in_coefficients=False,
        ).dimensions["v"]
        people = cohen_kappa(humans, weights="linear", level="ordinal")
        assert (result.n_units, result.n_raters, result.n_ratings) == (60, 2, 120)
        assert result.cohen_kappa.linear.statistic == pytest.approx(people.statistic, abs=1e-15)
        assert result.fleiss_kappa.statistic is not None  # units only the judge rated do not make it incomplete
        assert result.spearman.n_units == 60
        assert result.raters == ("h1", "h2")
        payload = result.to_json_dict()
        assert payload["reference"] == "llm" and payload["reference_in_coefficients"] is False

    def test_threads_give_the_same_intervals(self, monkeypatch):
        dims = {"v": DimensionInput(ratings=_copa_like(300, 5, raters=3), level="ordinal")}
        monkeypatch.setattr(agreement_bootstrap, "THREADED_FROM_UNITS", 1)
        monkeypatch.setattr(agreement_bootstrap, "BOOTSTRAP_THREADS", 1)
        serial = joint_agreement(dims, raters=["a", "b", "c"], bootstrap=40, seed=8)
        monkeypatch.setattr(agreement_bootstrap, "BOOTSTRAP_THREADS", 3)
        threaded = joint_agreement(dims, raters=["a", "b", "c"], bootstrap=40, seed=8)
        assert threaded == serial

    def test_fixed_categories_keep_unobserved_ones_in_the_weights(self):
        """On a 0-3 scale where nobody used 2, 1 vs 3 is two steps, not one as the observed ranks say."""
        ratings = np.array([[0, 0], [0, 1], [1, 1], [1, 3], [3, 3], [3, 0], [0, 0], [1, 1]], dtype=float)
        scale = joint_agreement(
            {"v": DimensionInput(ratings=ratings, level="ordinal", categories=(0, 1, 2, 3))}, raters=["a", "b"]
        ).dimensions["v"]
        table = [[2, 1, 0, 0], [0, 2, 0, 1], [0, 0, 0, 0], [1, 0, 0, 1]]
        expected = sm_cohens_kappa(table, weights=np.arange(4.0), wt="linear", return_results=False)
        assert scale.cohen_kappa.linear.statistic == pytest.approx(expected, abs=1e-12)
        observed_only = cohen_kappa(ratings, weights="linear", level="ordinal").statistic
        assert scale.cohen_kappa.linear.statistic != pytest.approx(observed_only, abs=1e-6)

    def test_a_rating_outside_the_categories_is_refused(self):
        with pytest.raises(ValueError, match="is not one of the categories"):
            joint_agreement({"v": DimensionInput(ratings=[[0, 3]], level="ordinal", categories=(0, 1, 2))}, raters="ab")

    def test_dimensions_must_share_units_and_raters(self):
        with pytest.raises(ValueError, match="differs from"):
            joint_agreement(
                {
                    "a": DimensionInput(ratings=np.zeros((3, 2)), level="nominal"),
                    "b": DimensionInput(ratings=np.zeros((4, 2)), level="nominal"),
                },
                raters=["x", "y"],
            )
        with pytest.raises(ValueError, match="columns but 3 raters"):
            joint_agreement({"a": DimensionInput(ratings=np.zeros((3, 2)), level="nominal")}, raters=["x", "y", "z"])

    def test_no_ratings_at_all_gives_nulls(self):
        result = joint_agreement({"v": DimensionInput(ratings=np.zeros((0, 0)), level="ordinal")}, raters=[])
        payload = result.dimensions["v"].to_json_dict()
        assert payload["n_units"] == 0 and payload["krippendorff_alpha"] is None
        assert payload["notes"]["krippendorff_alpha"] == agreement.NO_RATINGS


class MajorityVsReferenceTests:
    def test_majority_of_the_other_raters_against_the_reference(self):
        # Columns: two people, then the LLM. Unit 3 has a tie between the people and is left out;
        # unit 5 has no LLM rating (a failed item) and is left out.
        ratings = np.array(
            [[0, 0, 0], [1, 1, 1], [0, 1, 1], [2, 2, 1], [2, 2, np.nan], [1, 1, 1], [2, 2, 2], [0, 0, 1]],
            dtype=float,
        )
        result = dimension_agreement(
            records_from(ratings, raters=["h1", "h2", "llm"]), level="ordinal", reference="llm"
        ).majority_vs_reference
        pairs = [(0, 0), (1, 1), (2, 1), (1, 1), (2, 2), (0, 1)]  # (majority, llm) without units 3 and 5
        table = np.zeros((3, 3))
        for a, b in pairs:
            table[a, b] += 1
        assert result.percent_agreement.statistic == pytest.approx(4 / 6)
        assert result.percent_agreement.n_units == 6
        assert result.cohen_kappa.unweighted.statistic == pytest.approx(
            sm_cohens_kappa(table, return_results=False), abs=1e-12
        )
        assert result.cohen_kappa.quadratic.statistic == pytest.approx(
            sm_cohens_kappa(table, weights=np.arange(3.0), wt="quadratic", return_results=False), abs=1e-12
        )

    def test_no_majority_anywhere_is_null_with_a_reason(self):
        ratings = [[0, 1, 0], [1, 0, 1]]
        result = dimension_agreement(
            records_from(ratings, raters=["h1", "h2", "llm"]), level="nominal", reference="llm"
        )
        payload = result.to_json_dict()
        assert payload["majority_vs_reference"]["percent_agreement"] is None
        assert payload["notes"]["majority_vs_reference.percent_agreement"] == agreement.NO_MAJORITY_PAIRS


class ConfusionMatrixTests:
    def test_two_raters_give_their_contingency_table(self):
        matrix = confusion_matrix(expand(STATA_RATE_TABLE), level="ordinal", raters=["A", "B"])
        assert [list(r) for r in matrix.counts] == STATA_RATE_TABLE
        assert (matrix.rows, matrix.columns, matrix.n_pairs) == ("A", "B", 85)
        assert matrix.categories == (1, 2, 3, 4)

    def test_more_raters_pool_every_ordered_pair(self):
        matrix = confusion_matrix(FLEISS_1971)
        counts = np.array(matrix.counts)
        np.testing.assert_array_equal(counts, counts.T)
        assert matrix.n_pairs == 30 * 6 * 5

    def test_reference_rows_are_the_majority_and_categories_can_be_fixed(self):
        ratings = [["pass", "pass", "fail"], ["fail", "fail", "fail"], ["pass", "fail", "pass"]]
        matrix = confusion_matrix(ratings, reference=2, categories=["fail", "pass", "unsure"], raters=["a", "b", "llm"])
        assert matrix.categories == ("fail", "pass", "unsure")
        assert [list(r) for r in matrix.counts] == [[1, 0, 0], [1, 0, 0], [0, 0, 0]]
        assert (matrix.rows, matrix.columns) == ("majority of the other raters", "llm")


class MeanRatingTests:
    def test_mean_over_all_ratings_with_an_optional_mask(self):
        ratings = np.array([[1, 0], [1, 1], [np.nan, 0]], dtype=float)
        assert mean_rating(ratings).statistic == pytest.approx(3 / 5)
        mask = np.array([[True, True], [False, False], [True, True]])
        assert mean_rating(ratings, mask=mask).statistic == pytest.approx(1 / 3)
        assert mean_rating(ratings, mask=mask).n_units == 2

    def test_bootstrap_interval_is_seeded(self):
        ratings = np.random.default_rng(1).integers(0, 2, (50, 2)).astype(float)
        first = mean_rating(ratings, bootstrap=200, seed=3)
        assert first == mean_rating(ratings, bootstrap=200, seed=3)
        assert first.confidence_interval.low <= first.statistic <= first.confidence_interval.high

    def test_no_rating_is_null(self):
        result = mean_rating(np.full((2, 2), np.nan))
        assert result.statistic is None and result.reason == agreement.NO_RATINGS


class RandomGuessF1Tests:
    def test_formula_on_hand_computed_instances(self):
        """IntentGrasp App. A.3: (v/u) * 2/(1+v) per instance, averaged over N."""
        assert random_guess_f1([1], [10]).statistic == pytest.approx(0.1)
        assert random_guess_f1([2], [4]).statistic == pytest.approx(1 / 3)
        assert random_guess_f1([1, 2], [10, 4]).statistic == pytest.approx((0.1 + 1 / 3) / 2)
        assert random_guess_f1([1, 2], [10, 4]).n_units == 2

    def test_it_is_the_expected_f1_of_one_random_guess(self):
        from annotation.kinds.intent_mcq import instance_f1

        rng = np.random.default_rng(0)
        instances = [(list(range(v)), u) for v, u in [(1, 10), (2, 4), (3, 5), (1, 2)]]
        simulated = np.mean(
            [np.mean([instance_f1([int(rng.integers(0, u))], key) for _ in range(20_000)]) for key, u in instances]
        )
        expected = random_guess_f1([len(k) for k, _ in instances], [u for _, u in instances]).statistic
        assert simulated == pytest.approx(expected, abs=0.01)

    def test_bad_counts_are_refused(self):
        with pytest.raises(ValueError, match="correct answers <= options"):
            random_guess_f1([3], [2])


class ExposureComparisonTests:
    def test_agreement_with_the_suggestion_shown_and_hidden(self):
        judge = np.array([0, 1, 2, 0, 1, 2, 0, 1], dtype=float)
        # Column 1 always saw the suggestion and copied it; column 2 never saw it and matched half.
        people = np.column_stack([judge, [0, 1, 2, 0, 2, 0, 1, 2]])
        visible = np.column_stack([np.ones(8), np.zeros(8)])
        result = exposure_comparison(people, judge, visible, level="ordinal", weighting="linear")
        assert result.agreement_shown.statistic == 1.0
        assert result.agreement_hidden.statistic == pytest.approx(4 / 8)
        assert result.agreement_difference.statistic == pytest.approx(0.5)
        hidden = np.zeros((3, 3))
        for a, b in zip(people[:, 1].astype(int), judge.astype(int), strict=True):
            hidden[a, b] += 1
        expected = sm_cohens_kappa(hidden, weights=np.arange(3.0), wt="linear", return_results=False)
        assert result.kappa_hidden.statistic == pytest.approx(expected, abs=1e-12)
        assert result.kappa_difference.statistic == pytest.approx(1.0 - expected, abs=1e-12)
        assert (result.n_pairs_shown, result.n_pairs_hidden) == (8, 8)

    def test_unrecorded_exposure_is_left_out_and_intervals_share_resamples(self):
        rng = np.random.default_rng(4)
        judge = rng.integers(0, 2, 60).astype(float)
        people = np.where(rng.random((60, 3)) < 0.8, judge[:, None], 1 - judge[:, None])
        visible = rng.integers(-1, 2, (60, 3))
        result = exposure_comparison(people, judge, visible, level="nominal", bootstrap=100, seed=1)
        assert result.n_pairs_shown == int((visible == 1).sum())
        assert result.n_pairs_hidden == int((visible == 0).sum())
        for key in ("kappa_shown", "kappa_hidden", "kappa_difference", "agreement_difference"):
            interval = getattr(result, key).confidence_interval
            assert interval is not None and interval.low <= getattr(result, key).statistic <= interval.high

    def test_no_hidden_ratings_gives_null_differences_with_reasons(self):
        result = exposure_comparison([[1], [0]], [1, 0], [[1], [1]], level="nominal")
        assert result.kappa_hidden.statistic is None
        assert result.kappa_difference.reason == agreement.NO_EXPOSURE_PAIRS.format(which="hidden")
