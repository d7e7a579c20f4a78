"""validation.agreement: every measure against published values, then the degenerate cases.

Reference data sets (each test cites its source again):

- Fleiss (1971), Table 1: 30 patients, 6 psychiatric diagnoses each, 5 categories; kappa = .430,
  P-bar = .556. The per-patient assignment below is R irr's ``diagnoses`` (also statsmodels'
  ``test_inter_rater.py``); its category counts per patient are Fleiss' table.
- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": section A (binary, 2 observers,
  alpha = .095), section B (nominal a-e, 2 observers, alpha = .692), section C (4 observers x 12 units
  with missing values: nominal .743, ordinal .815, interval .849).
- StataCorp, Stata Base Reference Manual, "kappa - Interrater agreement", two-rater example
  (rate.dta: two radiologists' ratings of 85 xeromammograms, Boyd et al. 1982, as tabulated in
  Altman 1991): agreement 63.53%, kappa 0.4728; wgt(w) 0.5684; wgt(w2) 0.6714.
- Hollander & Wolfe (1973), Nonparametric Statistical Methods, p. 187 (tuna quality; the example of
  R's ``?cor.test``): Spearman rho = 0.6 (S = 48), Kendall tau = 0.4444 (T = 26, one-sided
  p = 0.05972).
- R package Metrics (Hamner & Frasco), ``ScoreQuadraticWeightedKappa``: the help page's example
  (rater.a = 1,4,5,5,2,1; rater.b = 2,2,4,5,3,3; output 0.56) and the cases in its test suite
  (tests/testthat/test-classification.R): 0.4, 0.75, 1.0, 0.8421052631578947, 0.6956521739130435.
  These are published quadratic-weighted kappas with their data; Stata's wgt(w2) 0.6714 above is
  recomputed here but was not checked against the manual's printed output.
- CoPA (paper 001), Table 7: the "Overall" row is the mean of the six factor rows (0.643, 0.754).
- IntentGrasp (paper 002), Appendix A.3: the random-guess F1 is the mean of (v/u) * 2/(1+v).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from tests.validation.unit.agreement_data import (
    FLEISS_1971,
    HUNTER_L,
    KRIPPENDORFF_A,
    KRIPPENDORFF_B,
    KRIPPENDORFF_C,
    PANEL_SCORE,
    STATA_RATE_TABLE,
    contains_nan,
    expand,
    nan,
    records_from,
)
from validation import agreement
from validation.agreement import (
    ConfidenceInterval,
    DimensionInput,
    Rating,
    cohen_kappa,
    dimension_agreement,
    fleiss_kappa,
    joint_agreement,
    krippendorff_alpha,
    percent_agreement,
    rank_correlation,
)
from validation.agreement.coding import coded_from_array


class CohenKappaTests:
    def test_stata_rate_example_unweighted_linear_quadratic(self):
        """Stata [R] kappa, rate.dta (Boyd et al. 1982): kappa 0.4728, wgt(w) 0.5684, wgt(w2) 0.6714."""
        ratings = expand(STATA_RATE_TABLE)
        assert cohen_kappa(ratings).statistic == pytest.approx(0.4728, abs=5e-5)
        assert cohen_kappa(ratings, weights="linear", level="ordinal").statistic == pytest.approx(0.5684, abs=5e-5)
        assert cohen_kappa(ratings, weights="quadratic", level="ordinal").statistic == pytest.approx(0.6714, abs=5e-5)
        assert cohen_kappa(ratings).n_units == 85

    def test_sas_printout_in_statsmodels_tests(self):
        """SAS PROC FREQ printout quoted in statsmodels' test_inter_rater.py (table10): 0.4842, linear 0.4701."""
        ratings = expand([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
        assert cohen_kappa(ratings).statistic == pytest.approx(0.4842, abs=5e-5)
        assert cohen_kappa(ratings, weights="linear", level="ordinal").statistic == pytest.approx(0.4701, abs=5e-5)

    def test_ordinal_weights_use_ranks_so_non_integer_values_give_the_same_kappa(self):
        integer = expand(STATA_RATE_TABLE)
        uneven = expand(STATA_RATE_TABLE, categories=[0.5, 1.25, 3.0, 10.0])
        for weights in ("linear", "quadratic"):
            assert cohen_kappa(uneven, weights=weights, level="ordinal").statistic == pytest.approx(
                cohen_kappa(integer, weights=weights, level="ordinal").statistic, abs=1e-12
            )

    def test_interval_weights_use_the_values_as_scores(self):
        scores = [1.0, 2.0, 3.0, 5.0]
        result = cohen_kappa(expand(STATA_RATE_TABLE, categories=scores), weights="linear", level="interval")
        expected = sm_cohens_kappa(STATA_RATE_TABLE, weights=scores, wt="linear", return_results=False)
        assert result.statistic == pytest.approx(expected, abs=1e-12)
        assert result.statistic != pytest.approx(0.5684, abs=1e-3)

    def test_only_units_rated_by_both_raters_count(self):
        ratings = np.vstack([expand(STATA_RATE_TABLE), [[1, nan], [nan, 4]]])
        result = cohen_kappa(ratings)
        assert result.n_units == 85
        assert result.statistic == pytest.approx(0.4728, abs=5e-5)

    def test_one_shared_category_is_undefined_with_a_reason(self):
        result = cohen_kappa([[1, 1], [1, 1], [1, 1]])
        assert result.statistic is None
        assert result.reason == agreement.ONE_CATEGORY

    def test_raters_who_never_meet_are_undefined(self):
        result = cohen_kappa([[1, nan], [nan, 2]])
        assert result.statistic is None
        assert result.reason == agreement.NO_SHARED_UNITS

    def test_weighted_kappa_at_nominal_level_is_refused(self):
        with pytest.raises(ValueError, match="need level 'ordinal' or 'interval'"):
            cohen_kappa([[1, 2], [2, 2]], weights="linear")

    def test_three_raters_is_refused(self):
        with pytest.raises(ValueError, match="exactly 2 raters"):
            cohen_kappa([[1, 2, 1], [2, 2, 1]])

    def test_unknown_weights_are_refused(self):
        with pytest.raises(ValueError, match="weights must be one of"):
            cohen_kappa([[1, 2], [2, 2]], weights="cubic", level="ordinal")


class FleissKappaTests:
    def test_fleiss_1971_psychiatric_diagnoses(self):
        """Fleiss (1971), Psychological Bulletin 76(5), p. 380: kappa = .430 (R irr: 0.4302445)."""
        result = fleiss_kappa(FLEISS_1971)
        assert result.statistic == pytest.approx(0.430, abs=5e-4)
        assert result.statistic == pytest.approx(0.4302445, abs=1e-7)
        assert result.n_units == 30

    def test_string_categories_give_the_same_kappa(self):
        names = {1: "depression", 2: "personality disorder", 3: "schizophrenia", 4: "neurosis", 5: "other"}
        labelled = np.vectorize(names.get, otypes=[object])(FLEISS_1971)
        assert fleiss_kappa(labelled).statistic == pytest.approx(0.4302445, abs=1e-7)

    def test_incomplete_data_is_undefined_with_a_reason(self):
        ratings = FLEISS_1971.astype(float)
        ratings[0, 0] = nan
        result = fleiss_kappa(ratings)
        assert result.statistic is None
        assert result.reason == agreement.INCOMPLETE.format(k=1, n=30, m=6)

    def test_single_rater_is_undefined(self):
        result = fleiss_kappa([[1], [2], [3]])
        assert result.statistic is None
        assert result.reason == agreement.NEEDS_RATERS.format(n=1)

    def test_all_ratings_in_one_category_is_undefined(self):
        result = fleiss_kappa([["yes", "yes", "yes"], ["yes", "yes", "yes"]])
        assert result.statistic is None
        assert result.reason == agreement.ONE_CATEGORY


class KrippendorffAlphaTests:
    @pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
    def test_krippendorff_2011_section_c(self, level, published):
        """Krippendorff (2011), section C: 4 observers, 12 units, missing data."""
        result = krippendorff_alpha(KRIPPENDORFF_C.T, level=level)
        assert result.statistic == pytest.approx(published, abs=5e-4)
        assert result.n_units == 11  # unit 12 has one value and is not pairable

    def test_krippendorff_2011_section_a_binary(self):
        """Krippendorff (2011), section A: binary data, two observers: alpha = .095."""
        result = krippendorff_alpha(np.array(KRIPPENDORFF_A).T, level="nominal")
        assert result.statistic == pytest.approx(0.095, abs=5e-4)

    def test_krippendorff_2011_section_b_string_categories(self):
        """Krippendorff (2011), section B: nominal categories a-e, two observers: alpha = .692."""
        result = krippendorff_alpha(np.array(KRIPPENDORFF_B, dtype=object).T, level="nominal")
        assert result.statistic == pytest.approx(0.692, abs=5e-4)

    def test_section_c_as_strings_at_nominal_level(self):
        names = {1.0: "very low", 2.0: "low", 3.0: "mid", 4.0: "high", 5.0: "very high"}
        labelled = np.array([[names.get(v) for v in row] for row in KRIPPENDORFF_C], dtype=object)
        assert krippendorff_alpha(labelled.T, level="nominal").statistic == pytest.approx(0.743, abs=5e-4)

    def test_non_integer_ordinal_values_keep_the_ordinal_alpha(self):
        """The ordinal metric uses ranks and frequencies only: an order-preserving relabelling keeps .815."""
        relabel = {1.0: 0.5, 2.0: 1.5, 3.0: 2.25, 4.0: 7.0, 5.0: 10.0}
        uneven = np.vectorize(lambda v: relabel.get(v, nan))(KRIPPENDORFF_C)
        assert krippendorff_alpha(uneven.T, level="ordinal").statistic == pytest.approx(0.815, abs=5e-4)
        assert krippendorff_alpha(uneven.T, level="interval").statistic != pytest.approx(0.849, abs=5e-3)

    def test_strings_need_the_nominal_level(self):
        with pytest.raises(ValueError, match="level 'ordinal' needs numeric ratings"):
            krippendorff_alpha([["a", "b"], ["b", "b"]], level="ordinal")

    def test_no_pairable_unit_is_undefined(self):
        result = krippendorff_alpha([[1, nan], [nan, 2]], level="nominal")
        assert result.statistic is None
        assert result.reason == agreement.NO_PAIRABLE_UNITS

    def test_one_category_is_undefined(self):
        result = krippendorff_alpha([[2, 2], [2, 2], [2, nan], [nan, 3]], level="interval")
        assert result.statistic is None
        assert result.reason == agreement.ONE_CATEGORY_ALPHA

    def test_unknown_level_is_refused(self):
        with pytest.raises(ValueError, match="level must be one of nominal, ordinal, interval"):
            krippendorff_alpha([[1, 2]], level="ratio")


class PercentAgreementTests:
    def test_fleiss_1971_p_bar(self):
        """Fleiss (1971), p. 380: mean agreement over patients P-bar = .556."""
        assert percent_agreement(FLEISS_1971).statistic == pytest.approx(0.556, abs=5e-4)

    def test_stata_rate_example_observed_agreement(self):
        """Stata [R] kappa, rate.dta: 'Agreement 63.53%'."""
        assert percent_agreement(expand(STATA_RATE_TABLE)).statistic == pytest.approx(0.6353, abs=5e-5)

    def test_units_with_one_rating_are_left_out_and_units_weigh_equally(self):
        # Unit 1: 1 of 3 pairs agree; unit 2: 1 of 1; unit 3 has a single rating.
        result = percent_agreement([["a", "a", "b"], ["c", "c", None], ["a", None, None]])
        assert result.statistic == pytest.approx((1 / 3 + 1) / 2)
        assert result.n_units == 2

    def test_no_unit_with_two_ratings_is_undefined(self):
        result = percent_agreement([["a", None], [None, "b"]])
        assert result.statistic is None
        assert result.reason == agreement.NO_PAIRABLE_UNITS


class RankCorrelationTests:
    def test_hollander_wolfe_tuna_spearman(self):
        """Hollander & Wolfe (1973), p. 187, as in R ?cor.test: rho = 0.6 (S = 48)."""
        result = rank_correlation(np.column_stack([HUNTER_L, PANEL_SCORE]), reference=1, method="spearman")
        assert result.statistic == pytest.approx(0.6, abs=1e-12)
        assert result.n_units == 9
        # SciPy's p-value: t distribution with n - 2 df.
        assert result.pvalue == pytest.approx(stats.spearmanr(HUNTER_L, PANEL_SCORE).pvalue, abs=1e-12)

    def test_hollander_wolfe_tuna_kendall(self):
        """Hollander & Wolfe (1973), p. 187, as in R ?cor.test: tau = 0.4444 (T = 26), one-sided p = 0.05972."""
        result = rank_correlation(np.column_stack([HUNTER_L, PANEL_SCORE]), reference=1, method="kendall")
        assert result.statistic == pytest.approx(4 / 9, abs=1e-12)
        assert result.pvalue == pytest.approx(2 * 0.05972, abs=1e-4)  # exact, two-sided

    def test_uses_the_mean_of_the_other_raters_over_units_the_reference_rated(self):
        ratings = np.array(
            [[1, 2, 1], [2, nan, 2], [3, 3, 2], [4, 5, 5], [nan, nan, 3], [2, 2, nan], [5, 4, 4]], dtype=float
        )
        # Paired: the reference (column 2) rated the unit and at least one other rater did.
        paired = ~np.isnan(ratings[:, 2]) & ~np.isnan(ratings[:, :2]).all(axis=1)
        mean_others = np.nanmean(ratings[paired, :2], axis=1)
        expected = stats.spearmanr(mean_others, ratings[paired, 2])
        result = rank_correlation(ratings, reference=2)
        assert result.n_units == 5
        assert result.statistic == pytest.approx(expected.statistic, abs=1e-12)
        assert result.pvalue == pytest.approx(expected.pvalue, abs=1e-12)

    def test_fewer_than_three_pairs_is_undefined(self):
        result = rank_correlation([[1, 2], [2, 3], [3, nan]], reference=1)
        assert result.statistic is None
        assert result.reason == agreement.TOO_FEW_PAIRS.format(n=2)

    def test_constant_reference_is_undefined(self):
        result = rank_correlation([[1, 2], [2, 2], [3, 2]], reference=1, method="kendall")
        assert result.statistic is None
        assert result.reason == agreement.CONSTANT.format(which="reference rating")

    def test_bad_reference_column_is_refused(self):
        with pytest.raises(ValueError, match="reference must be a column index"):
            rank_correlation([[1, 2], [2, 3]], reference=2)


class DimensionAgreementTests:
    def test_json_shape_for_two_raters_with_reference_and_bootstrap(self):
        records = records_from(expand(STATA_RATE_TABLE), raters=["human", "llm"])
        result = dimension_agreement(records, level="ordinal", reference="llm", bootstrap=50, seed=3)
        payload = result.to_json_dict()
        assert list(payload) == [
            "level",
            "n_units",
            "n_raters",
            "n_ratings",
            "percent_agreement",
            "cohen_kappa",
            "fleiss_kappa",
            "krippendorff_alpha",
            "reference",
            "reference_in_coefficients",
            "spearman",
            "kendall",
            "majority_vs_reference",
            "n",
            "ci",
            "bootstrap",
            "notes",
        ]
        assert (payload["n_units"], payload["n_raters"], payload["n_ratings"]) == (85, 2, 170)
        assert payload["cohen_kappa"]["quadratic"] == pytest.approx(0.6714, abs=5e-5)
        assert set(payload["spearman"]) == {"rho", "p", "n"}
        assert set(payload["kendall"]) == {"tau", "p", "n"}
        assert payload["spearman"]["n"] == 85
        assert set(payload["ci"]) == {
            "percent_agreement",
            "cohen_kappa",
            "fleiss_kappa",
            "krippendorff_alpha",
            "spearman",
            "kendall",
            "majority_vs_reference",
        }
        # With two raters the "majority" of the other raters is the human; the reference counts as
        # a rater (agreement_stats' default), so the majority kappa is the two-rater kappa.
        assert payload["majority_vs_reference"]["cohen_kappa"]["quadratic"] == pytest.approx(0.6714, abs=5e-5)
        assert payload["majority_vs_reference"]["n"] == 85
        assert set(payload["ci"]["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}
        low, high = payload["ci"]["krippendorff_alpha"]
        assert low <= high
        assert payload["bootstrap"]["n_resamples"] == 50
        assert payload["notes"] == {}
        json.dumps(payload, allow_nan=False)

    def test_without_reference_or_bootstrap_those_keys_are_absent(self):
        payload = dimension_agreement(records_from(FLEISS_1971), level="nominal").to_json_dict()
        for key in ("reference", "spearman", "kendall", "ci", "bootstrap"):
            assert key not in payload

    def test_more_than_two_raters_gives_null_cohen_kappa_with_a_note(self):
        payload = dimension_agreement(records_from(FLEISS_1971), level="nominal").to_json_dict()
        assert payload["cohen_kappa"] is None
        assert payload["notes"]["cohen_kappa"] == "needs exactly 2 raters; found 6"
        assert payload["fleiss_kappa"] == pytest.approx(0.430, abs=5e-4)
        assert payload["percent_agreement"] == pytest.approx(0.556, abs=5e-4)

    def test_section_c_records_give_published_alphas_and_null_fleiss(self):
        records = records_from(KRIPPENDORFF_C.T, raters=list("ABCD"))
        for level, published in (("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)):
            payload = dimension_agreement(records, level=level).to_json_dict()
            assert payload["krippendorff_alpha"] == pytest.approx(published, abs=5e-4)
            assert (payload["n_units"], payload["n_raters"], payload["n_ratings"]) == (12, 4, 41)
            assert payload["fleiss_kappa"] is None
            assert payload["notes"]["fleiss_kappa"] == agreement.INCOMPLETE.format(k=4, n=12, m=4)

    def test_weighted_kappa_is_null_at_the_nominal_level(self):
        payload = dimension_agreement(records_from(expand(STATA_RATE_TABLE)), level="nominal").to_json_dict()
        assert payload["cohen_kappa"]["unweighted"] == pytest.approx(0.4728, abs=5e-5)
        assert payload["cohen_kappa"]["linear"] is None
        assert payload["notes"]["cohen_kappa.linear"] == agreement.NOMINAL_WEIGHTS

    def test_all_ratings_in_one_category_give_nulls_with_reasons_never_nan(self):
        records = records_from([["yes", "yes"], ["yes", "yes"], ["yes", "yes"]])
        payload = dimension_agreement(records, level="nominal", bootstrap=20).to_json_dict()
        assert payload["percent_agreement"] == 1.0
        assert payload["cohen_kappa"] == {"unweighted": None, "linear": None, "quadratic": None}
        assert payload["fleiss_kappa"] is None
        assert payload["krippendorff_alpha"] is None
        assert payload["notes"]["cohen_kappa.unweighted"] == agreement.ONE_CATEGORY
        assert payload["notes"]["cohen_kappa.linear"] == agreement.NOMINAL_WEIGHTS
        assert payload["notes"]["fleiss_kappa"] == agreement.ONE_CATEGORY
        assert payload["notes"]["krippendorff_alpha"] == agreement.ONE_CATEGORY_ALPHA
        assert payload["ci"]["krippendorff_alpha"] is None
        assert not contains_nan(payload)
        json.dumps(payload, allow_nan=False)

    def test_one_problem_behind_all_three_cohen_kappas_is_noted_once(self):
        payload = dimension_agreement(records_from([[1, 1], [1, 1]]), level="ordinal").to_json_dict()
        assert payload["notes"]["cohen_kappa"] == agreement.ONE_CATEGORY
        assert "cohen_kappa.linear" not in payload["notes"]

    def test_a_single_rater_gives_nulls_not_a_crash(self):
        records = [Rating("u1", "ann", 1), Rating("u2", "ann", 2), Rating("u3", "ann", 3)]
        payload = dimension_agreement(records, level="ordinal", reference="ann", bootstrap=10).to_json_dict()
        assert payload["n_raters"] == 1
        assert payload["percent_agreement"] is None
        assert payload["cohen_kappa"] is None
        assert payload["notes"]["fleiss_kappa"] == agreement.NEEDS_RATERS.format(n=1)
        assert payload["notes"]["krippendorff_alpha"] == agreement.NO_PAIRABLE_UNITS
        assert payload["notes"]["spearman"] == agreement.NO_OTHER_RATER
        assert not contains_nan(payload)

    def test_units_with_one_rating_only(self):
        records = [Rating("u1", "a", 1), Rating("u2", "b", 2), Rating("u3", "a", 1), Rating("u3", "b", None)]
        result = dimension_agreement(records, level="ordinal")
        assert (result.n_units, result.n_raters, result.n_ratings) == (3, 2, 3)
        assert result.percent_agreement.reason == agreement.NO_PAIRABLE_UNITS
        assert result.krippendorff_alpha.reason == agreement.NO_PAIRABLE_UNITS
        assert result.cohen_kappa.unweighted.reason == agreement.NO_SHARED_UNITS

    def test_non_integer_ordinal_values_match_their_ranks(self):
        relabel = {1.0: 0.5, 2.0: 1.5, 3.0: 2.25, 4.0: 7.0}
        ratings = expand(STATA_RATE_TABLE)
        uneven = np.vectorize(relabel.get)(ratings)
        ranked = dimension_agreement(records_from(ratings), level="ordinal").to_json_dict()
        relabelled = dimension_agreement(records_from(uneven), level="ordinal").to_json_dict()
        for key in ("percent_agreement", "fleiss_kappa", "krippendorff_alpha"):
            assert relabelled[key] == pytest.approx(ranked[key], abs=1e-12)
        for weighting in ("unweighted", "linear", "quadratic"):
            assert relabelled["cohen_kappa"][weighting] == pytest.approx(ranked["cohen_kappa"][weighting], abs=1e-12)

    def test_string_categories(self):
        records = records_from(np.array(KRIPPENDORFF_B, dtype=object).T, raters=["A", "B"])
        payload = dimension_agreement(records, level="nominal").to_json_dict()
        assert payload["krippendorff_alpha"] == pytest.approx(0.692, abs=5e-4)
        assert payload["percent_agreement"] == pytest.approx(9 / 12)

    def test_rank_correlation_is_null_at_the_nominal_level(self):
        records = records_from(expand(STATA_RATE_TABLE), raters=["human", "llm"])
        payload = dimension_agreement(records, level="nominal", reference="llm").to_json_dict()
        assert payload["spearman"] is None
        assert payload["notes"]["spearman"] == agreement.NOMINAL_CORRELATION

    def test_unknown_reference_gives_null_correlations_with_a_reason(self):
        records = records_from(expand(STATA_RATE_TABLE), raters=["human", "llm"])
        payload = dimension_agreement(records, level="ordinal", reference="gpt").to_json_dict()
        assert payload["kendall"] is None
        assert payload["notes"]["kendall"] == agreement.NO_REFERENCE.format(ref="gpt")

    def test_reference_correlation_matches_rank_correlation(self):
        records = records_from(np.column_stack([HUNTER_L, PANEL_SCORE]), raters=["lab", "panel"])
        payload = dimension_agreement(records, level="interval", reference="panel").to_json_dict()
        assert payload["spearman"]["rho"] == pytest.approx(0.6, abs=1e-12)
        assert payload["kendall"]["tau"] == pytest.approx(4 / 9, abs=1e-12)
        assert payload["kendall"]["n"] == 9

    def test_no_ratings_at_all(self):
        payload = dimension_agreement([Rating("u1", "a", None)], level="nominal").to_json_dict()
        assert (payload["n_units"], payload["n_raters"], payload["n_ratings"]) == (0, 0, 0)
        assert payload["notes"]["krippendorff_alpha"] == agreement.NO_RATINGS
        assert not contains_nan(payload)


class BootstrapTests:
    records = records_from(KRIPPENDORFF_C.T, raters=list("ABCD"))

    def test_same_seed_gives_the_same_intervals(self):
        first = dimension_agreement(self.records, level="interval", bootstrap=200, seed=7)
        second = dimension_agreement(self.records, level="interval", bootstrap=200, seed=7)
        assert first == second
        assert first.to_json_dict() == second.to_json_dict()

    def test_another_seed_gives_other_intervals(self):
        first = dimension_agreement(self.records, level="interval", bootstrap=200, seed=7)
        other = dimension_agreement(self.records, level="interval", bootstrap=200, seed=8)
        assert first.krippendorff_alpha.confidence_interval != other.krippendorff_alpha.confidence_interval
        assert first.krippendorff_alpha.statistic == other.krippendorff_alpha.statistic

    def test_interval_is_the_percentile_interval_of_unit_resamples(self):
        result = dimension_agreement(self.records, level="interval", bootstrap=300, seed=11)
        alpha = result.krippendorff_alpha
        assert isinstance(alpha.confidence_interval, ConfidenceInterval)
        assert -1 <= alpha.confidence_interval.low <= alpha.statistic <= alpha.confidence_interval.high <= 1
        assert alpha.n_resamples is not None and 0 < alpha.n_resamples <= 300
        assert result.fleiss_kappa.confidence_interval is None  # undefined point estimate: no interval
        assert result.bootstrap is not None and result.bootstrap.n_resamples == 300

    def test_degenerate_resamples_are_left_out_and_counted(self):
        # Two of three units are all "a": some resamples hold only "a", where kappa is undefined.
        records = records_from([["a", "a"], ["a", "a"], ["a", "b"]])
        result = dimension_agreement(records, level="nominal", bootstrap=100, seed=0)
        kappa = result.cohen_kappa.unweighted
        assert kappa.statistic is not None
        assert kappa.n_resamples is not None and kappa.n_resamples < 100
        assert result.notes()["ci.cohen_kappa.unweighted"].endswith("of 100 resamples where it is defined")

    def test_results_are_frozen(self):
        result = dimension_agreement(self.records, level="nominal")
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.n_units = 3  # type: ignore[misc]  # the write the test expects refused


class InputValidationTests:
    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"level": "ratio"}, "level must be one of"),
            ({"level": "nominal", "bootstrap": -1}, "bootstrap must be a non-negative integer"),
            ({"level": "nominal", "bootstrap": 2.5}, "bootstrap must be a non-negative integer"),
            ({"level": "nominal", "seed": "x"}, "seed must be a non-negative integer"),
            ({"level": "nominal", "confidence_level": 1.0}, "confidence_level must be in"),
        ],
    )
    def test_bad_options(self, options, message):
        with pytest.raises(ValueError, match=message):
            dimension_agreement([Rating("u1", "a", "x")], **options)

    def test_duplicate_rating(self):
        with pytest.raises(ValueError, match="unit 'u1' already has a rating by rater 'a'"):
            dimension_agreement([Rating("u1", "a", 1), Rating("u1", "a", 2)], level="ordinal")

    def test_string_at_interval_level(self):
        with pytest.raises(ValueError, match="level 'interval' needs numeric ratings; got 'high'"):
            dimension_agreement([Rating("u1", "a", "high")], level="interval")

    def test_mixed_strings_and_numbers(self):
        with pytest.raises(ValueError, match="mix strings and numbers"):
            dimension_agreement([Rating("u1", "a", "x"), Rating("u1", "b", 1)], level="nominal")

    def test_infinite_value(self):
        with pytest.raises(ValueError, match="not a finite number"):
            dimension_agreement([Rating("u1", "a", math.inf)], level="interval")

    def test_malformed_record(self):
        with pytest.raises(ValueError, match=r"expected \(unit, rater, value\)"):
            dimension_agreement([("u1", "a")], level="nominal")  # type: ignore[list-item]  # malformed on purpose

    def test_ratings_array_must_be_two_dimensional(self):
        with pytest.raises(ValueError, match="must be 2-D"):
            percent_agreement([1, 2, 3])


class QuadraticWeightedKappaTests:
    """R Metrics' ScoreQuadraticWeightedKappa: published quadratic-weighted kappas with their data."""

    @pytest.mark.parametrize(
        ("first", "second", "published"),
        [
            # ?ScoreQuadraticWeightedKappa example, min.rating 1, max.rating 5: "[1] 0.56".
            ((1, 4, 5, 5, 2, 1), (2, 2, 4, 5, 3, 3), 0.56),
            # tests/testthat/test-classification.R
            ((1, 2, 1), (1, 2, 2), 0.4),
            ((1, 2, 3, 1, 2, 3), (1, 2, 3, 1, 3, 2), 0.75),
            ((1, 2, 3), (1, 2, 3), 1.0),
            ((1, 3, 5), (2, 4, 6), 0.8421052631578947),
            ((1, 3, 3, 5), (2, 4, 5, 6), 0.6956521739130435),
        ],
    )
    def test_metrics_package_values(self, first, second, published):
        # Every category between the minimum and maximum is observed, so ranks equal the values.
        ratings = np.array([first, second], dtype=float).T
        assert cohen_kappa(ratings, weights="quadratic", level="ordinal").statistic == pytest.approx(
            published, abs=1e-12
        )
        assert cohen_kappa(ratings, weights="quadratic", level="interval").statistic == pytest.approx(
            published, abs=1e-12
        )


class FleissTableTests:
    def test_category_counts_are_the_table_aggregate_raters_builds(self):
        """Fleiss' kappa is fed the per-unit category counts; they equal statsmodels' aggregate_raters."""
        from statsmodels.stats.inter_rater import aggregate_raters

        coded = coded_from_array(FLEISS_1971, "nominal")
        table, _ = aggregate_raters(coded.codes.astype(int), n_cat=len(coded.domain))
        np.testing.assert_array_equal(coded.counts, table)


class NumericPathTests:
    def test_vectorised_coding_matches_the_record_path(self):
        records = records_from(KRIPPENDORFF_C.T, raters=list("ABCD"))
        for level in ("nominal", "ordinal", "interval"):
            from_records = dimension_agreement(records, level=level)
            from_matrix = joint_agreement(
                {"v": DimensionInput(ratings=KRIPPENDORFF_C.T, level=level)}, raters=list("ABCD")
            ).dimensions["v"]
            assert from_matrix.to_json_dict() == from_records.to_json_dict()

    def test_booleans_and_infinities_are_refused(self):
        with pytest.raises(ValueError, match="booleans"):
            krippendorff_alpha(np.array([[True, False]]), level="nominal")
        with pytest.raises(ValueError, match="not a finite number"):
            krippendorff_alpha(np.array([[1.0, np.inf]]), level="interval")
