"""The evaluation statistics against hand-computed examples and the papers' own numbers."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from validation.agreement import random_guess_f1
from validation.kinds.copa_likert.copa import NO_PAIRS, NOT_NORMALISED, factor_ablation, normalised_score, preference
from validation.kinds.intent_mcq.human_scores import (
    BAD_SCORE,
    DEFAULT_TABLE,
    TableError,
    default_human_scores,
    parse_human_scores,
)
from validation.kinds.intent_mcq.mcq_eval import ONE_RUN, estimated_human_f1, run_f1, spread_over_runs

NAN = math.nan
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
#: Four scored pairs and one the evaluator failed on (accepted side missing). Worked by hand:
#: S_acc, S_top = 9/12 vs 6/12 (win, +0.25); 6/12 vs 6/12 (tie); 0 vs 12/12 (loss, -1); 12/12 vs 0 (win, +1).
ACCEPTED = [[2, 2, 2, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0] * 6, [2] * 6, [NAN] * 6]
TOP = [[1] * 6, [2, 1, 1, 1, 1, 0], [2] * 6, [0] * 6, [1] * 6]


class CopaPreferenceTests:
    def test_normalised_score_is_the_sum_over_twelve(self):
        """CoPA §4.1/§5.2: six 0-2 scores normalised to [0, 1]."""
        assert normalised_score([[2, 2, 2, 1, 1, 1], [2] * 6, [0] * 6]).tolist() == [0.75, 1.0, 0.0]
        assert math.isnan(normalised_score([[NAN] * 6])[0])

    def test_accuracy_tie_and_margin_match_the_worked_example(self):
        result = preference(normalised_score(ACCEPTED), normalised_score(TOP))
        assert (result.n_pairs, result.excluded_pairs) == (4, 1)
        assert result.accuracy.statistic == pytest.approx(2 / 4)
        assert result.tie_rate.statistic == pytest.approx(1 / 4)
        assert result.margin.statistic == pytest.approx((0.25 + 0 - 1 + 1) / 4)

    def test_leaving_a_factor_out_renormalises_over_the_other_five(self):
        ablation = factor_ablation(np.array(ACCEPTED), np.array(TOP), factors=FACTORS)
        assert list(ablation) == list(FACTORS)
        # Without CT: 7/10 vs 5/10 (win +0.2); 5/10 vs 4/10 (win +0.1); 0 vs 1 (loss); 1 vs 0 (win).
        without_ct = ablation["CT"]
        assert without_ct.accuracy.statistic == pytest.approx(3 / 4)
        assert without_ct.tie_rate.statistic == pytest.approx(0.0)
        assert without_ct.margin.statistic == pytest.approx((0.2 + 0.1 - 1 + 1) / 4)
        assert without_ct.excluded_pairs == 1

    def test_unnormalised_scores_report_accuracy_only(self):
        result = preference([0.3, 0.1, 0.2], [0.1, 0.2, 0.2], normalised=False, bootstrap=50)
        assert result.accuracy.statistic == pytest.approx(1 / 3)
        assert result.tie_rate.statistic is None and result.tie_rate.reason == NOT_NORMALISED
        assert result.margin.statistic is None and result.margin.reason == NOT_NORMALISED

    def test_no_scored_pair_gives_none_with_the_reason(self):
        result = preference([NAN], [0.5])
        assert result.accuracy.statistic is None and result.accuracy.reason == NO_PAIRS
        assert result.excluded_pairs == 1

    def test_bootstrap_is_seeded_and_brackets_the_estimate(self):
        rng = np.random.default_rng(3)
        acc, top = rng.integers(0, 13, 200) / 12, rng.integers(0, 13, 200) / 12
        first = preference(acc, top, bootstrap=400, seed=7)
        assert first == preference(acc, top, bootstrap=400, seed=7)
        assert (
            first.accuracy.confidence_interval
            != preference(acc, top, bootstrap=400, seed=8).accuracy.confidence_interval
        )
        for result in (first.accuracy, first.tie_rate, first.margin):
            low, high = result.confidence_interval
            assert low <= result.statistic <= high and result.n_resamples == 400

    def test_bad_arguments_are_refused(self):
        with pytest.raises(ValueError, match="one length"):
            preference([1, 2], [1])
        with pytest.raises(ValueError, match="bootstrap"):
            preference([1], [1], bootstrap=-1)


class McqStatisticsTests:
    def test_a_run_f1_with_failures_left_out_and_scored_zero(self):
        # Three answered instances (1, 0.5, 0) and one parse failure.
        result = run_f1([1.0, 0.5, 0.0, NAN])
        assert result.failures_left_out.statistic == pytest.approx(1.5 / 3)
        assert result.failures_scored_zero.statistic == pytest.approx(1.5 / 4)
        assert (result.n_instances, result.n_answered, result.n_unanswered) == (4, 3, 1)

    def test_mean_and_sample_std_reproduce_table_8(self):
        """IntentGrasp Table 8, Llama3-70B All Set: 42.69, 44.08, 44.36, 44.55 → 43.92 (0.84)."""
        spread = spread_over_runs([42.69, 44.08, 44.36, 44.55])
        assert round(spread.mean, 2) == 43.92 and round(spread.std, 2) == 0.84
        assert spread_over_runs([0.4]).std is None and spread_over_runs([0.4]).reason == ONE_RUN

    def test_random_guess_matches_the_appendix_formula(self):
        """App. A.3: mean of (v/u)·2/(1+v). v=1,u=4 → 0.25; v=2,u=5 → 0.4·2/3."""
        assert random_guess_f1([1, 2], [4, 5]).statistic == pytest.approx((0.25 + 0.4 * 2 / 3) / 2)

    def test_estimated_human_baseline_is_weighted_by_instances(self):
        result = estimated_human_f1({"A": 100, "B": 300, "C": 50}, {"A": 0.9, "B": 0.5, "C": None})
        assert result.statistic == pytest.approx((100 * 0.9 + 300 * 0.5) / 400) and result.n_units == 400

    @pytest.mark.parametrize(("column", "expected"), [("paper_all", 0.811), ("paper_gem", 0.833)])
    def test_table_6_gives_the_paper_s_human_baselines(self, column, expected):
        """App. A.2: 81.1% on All Set and 83.3% on Gem Set from Table 6's scores and counts."""
        table = default_human_scores()
        with DEFAULT_TABLE.open(encoding="utf-8") as handle:
            counts = {row["dataset"]: int(row[column]) for row in csv.DictReader(handle)}
        result = estimated_human_f1(counts, {name: table.score_of(name) for name in counts})
        assert round(result.statistic, 3) == expected

    def test_score_table_takes_fractions_percentages_and_blanks(self):
        table = parse_human_scores("dataset,score\nMultiWOZ-2.2,75.5%\nB,0.5\nC,none\n", source="t")
        assert table.score_of("multiwoz22") == pytest.approx(0.755)
        assert (table.score_of("B"), table.score_of("C"), table.score_of("D")) == (0.5, None, None)

    def test_score_table_errors_name_the_line_and_column(self):
        with pytest.raises(TableError) as caught:
            parse_human_scores("dataset,score\nA,1.5\n,0.2\n", source="t")
        assert [(e.line, e.field) for e in caught.value.errors] == [(2, "score"), (3, "dataset")]
        assert caught.value.errors[0].message == BAD_SCORE.format(text="1.5")
