"""The Alternative Annotator Test against the authors' published figures and the libraries.

``data/alt_test_reference.json.gz`` is derived from the authors' repository (github.com/nitaytech/AltTest,
commit 18428b1): the human and LLM annotations of the nine datasets the reference notebook evaluates
(unit ids and labels replaced by indices and codes) and every (winning rate, advantage probability)
pair the notebook prints. Attribution as the file's ``attribution`` field states: Calderon, Reichart &
Dror (ACL 2025); cite the original datasets' papers when using their data.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ttest_1samp
from statsmodels.stats.multitest import multipletests

from validation.alttest.statistics import (
    NO_RATER_TESTED,
    NUMBERS_NEEDED,
    AltTestBlock,
    AltTestOptions,
    alt_test,
    alt_test_records,
    by_rejections,
    metric_for_level,
)

REFERENCE = json.loads(gzip.decompress((Path(__file__).parent / "data" / "alt_test_reference.json.gz").read_bytes()))
CASES = [(dataset, model) for dataset, data in REFERENCE["datasets"].items() for model in data["expected"]]


def _records(data: dict, model: str) -> tuple[dict, dict]:
    people = {rater: {unit: value for unit, value in pairs} for rater, pairs in data["people"].items()}
    return people, {unit: value for unit, value in data["models"][model]}


class ReferenceFiguresTests:
    def test_every_printed_pair_is_in_the_fixture(self):
        assert len(CASES) == 52

    @pytest.mark.parametrize(("dataset", "model"), CASES)
    def test_winning_rate_and_advantage_probability_equal_the_notebook_at_two_decimals(self, dataset, model):
        data = REFERENCE["datasets"][dataset]
        people, labels = _records(data, model)
        result = alt_test_records(
            people, labels, options=AltTestOptions(epsilon=data["epsilon"], metric=data["metric"])
        )
        winning_rate, advantage = data["expected"][model]
        assert f"{result.winning_rate:.2f}" == f"{winning_rate:.2f}"
        assert f"{result.advantage_probability:.2f}" == f"{advantage:.2f}"
        assert result.passed is (winning_rate >= 0.5)


def _indicators(people: dict, model: dict, excluded: str, metric: str) -> tuple[list[int], list[int]]:
    """The reference procedure's indicators for one excluded annotator, written out from Algorithm 1."""
    model_wins, human_wins = [], []
    for unit, own in people[excluded].items():
        others = [labels[unit] for name, labels in people.items() if name != excluded and unit in labels]
        if not others or unit not in model:
            continue
        if metric == "accuracy":
            human, guess = np.mean([own == o for o in others]), np.mean([model[unit] == o for o in others])
        else:
            human = -np.sqrt(np.mean([(own - o) ** 2 for o in others]))
            guess = -np.sqrt(np.mean([(model[unit] - o) ** 2 for o in others]))
        model_wins.append(int(guess >= human))
        human_wins.append(int(human >= guess))
    return model_wins, human_wins


class PValueTests:
    @pytest.mark.parametrize(("dataset", "model"), [("mtbench", "gpt-4o"), ("lesion", "gemini_pro"), ("wax", "gpt-4o")])
    def test_each_annotators_p_value_is_scipys_one_sided_t_test_of_the_indicators(self, dataset, model):
        data = REFERENCE["datasets"][dataset]
        people, labels = _records(data, model)
        result = alt_test_records(
            people, labels, options=AltTestOptions(epsilon=data["epsilon"], metric=data["metric"])
        )
        assert result.raters
        for rater in result.raters:
            model_wins, human_wins = _indicators(people, labels, rater.rater, data["metric"])
            differences = np.subtract(human_wins, model_wins)
            expected = ttest_1samp(differences, data["epsilon"], alternative="less").pvalue
            assert rater.n == len(differences)
            assert rater.p_value == pytest.approx(expected, rel=1e-9, abs=1e-300)
            assert rater.model_win_share == pytest.approx(np.mean(model_wins))


class BenjaminiYekutieliTests:
    @pytest.mark.parametrize(
        "p_values",
        [
            [0.001, 0.002, 0.003, 0.2],
            [0.01, 0.02, 0.03, 0.04, 0.05],
            [0.0001, 0.5, 0.0101, 0.0102, 0.9, 0.011],
            [0.04, 0.04, 0.001],
            [0.3, 0.6],
        ],
    )
    def test_rejections_equal_statsmodels_fdr_by(self, p_values):
        expected = multipletests(p_values, alpha=0.05, method="fdr_by")[0]
        assert by_rejections(p_values, 0.05).tolist() == expected.tolist()

    def test_the_harmonic_sum_makes_it_stricter_than_benjamini_hochberg(self):
        p_values = [0.01, 0.02, 0.03, 0.04]
        assert multipletests(p_values, alpha=0.05, method="fdr_bh")[0].all()
        assert not by_rejections(p_values, 0.05).any()

    def test_an_undefined_p_value_counts_among_the_hypotheses_and_is_never_rejected(self):
        # 0.025 passes rank 2 of 2 (0.05 * 2/2 / 1.5) but not rank 2 of 3 (0.05 * 2/3 / (11/6)).
        assert by_rejections([0.001, None, 0.025], 0.05).tolist() == [True, False, False]
        assert by_rejections([0.001, 0.025], 0.05).tolist() == [True, True]


def _block(people: list[list[float]], model: list[float], level: str = "nominal", name: str = "d") -> AltTestBlock:
    return AltTestBlock(
        name=name, level=level, people=np.asarray(people, dtype=float), models={"m": np.asarray(model, dtype=float)}
    )


class OptionsAndUnitsTests:
    def test_an_annotator_under_the_item_minimum_is_skipped_and_counted(self):
        rng = np.random.default_rng(3)
        people = rng.integers(0, 3, size=(40, 3)).astype(float)
        people[5:, 2] = np.nan  # the third annotator rated 5 units
        run = alt_test([_block(people, people[:, 0])], ["a", "b", "c"])[0]
        pooled = run.scope("pooled")
        assert [r.rater for r in pooled.raters] == ["a", "b"]
        assert pooled.skipped == (("c", 5),)
        assert pooled.winning_rate == sum(r.rejected for r in pooled.raters) / 2

    def test_a_unit_the_model_did_not_label_is_left_out(self):
        people = np.tile([[1.0, 1.0, 0.0]], (40, 1))
        model = np.ones(40)
        model[:10] = np.nan  # failed lines
        run = alt_test([_block(people, model)], ["a", "b", "c"])[0]
        assert run.scope("pooled").n_units == 30
        assert {r.n for r in run.scope("pooled").raters} == {30}

    def test_min_raters_and_min_items_are_options(self):
        people = np.tile([[1.0, 1.0, np.nan]], (40, 1))
        people[:20, 2] = 1.0
        options = AltTestOptions(min_raters=3, min_items=10)
        pooled = alt_test([_block(people, np.ones(40))], ["a", "b", "c"], options=options)[0].scope("pooled")
        assert pooled.n_units == 20
        assert [r.n for r in pooled.raters] == [20, 20, 20]

    def test_no_annotator_tested_gives_null_rates_with_the_reason(self):
        pooled = alt_test([_block([[1, 1]] * 5, [1] * 5)], ["a", "b"])[0].scope("pooled")
        assert pooled.winning_rate is None and pooled.advantage_probability is None
        assert pooled.reason == NO_RATER_TESTED.format(min_items=30, min_raters=2)
        assert not pooled.passed

    def test_auto_takes_accuracy_for_nominal_and_neg_rmse_otherwise(self):
        assert metric_for_level("nominal") == "accuracy"
        assert metric_for_level("ordinal") == metric_for_level("interval") == "neg_rmse"

    def test_neg_rmse_is_refused_on_labels(self):
        block = AltTestBlock(
            name="topic",
            level="nominal",
            people=np.asarray([["x", "y"]], dtype=object),
            models={"m": np.asarray(["x"], dtype=object)},
        )
        with pytest.raises(ValueError, match="topic"):
            alt_test([block], ["a", "b"], options=AltTestOptions(metric="neg_rmse"))
        assert NUMBERS_NEEDED.format(dimension="topic")

    @pytest.mark.parametrize(
        "options",
        [
            AltTestOptions(epsilon=-0.1),
            AltTestOptions(q=0),
            AltTestOptions(metric="f1"),  # type: ignore[arg-type]
            AltTestOptions(min_raters=1),
            AltTestOptions(min_items=0),
            AltTestOptions(scope="all"),  # type: ignore[arg-type]
        ],
    )
    def test_bad_options_are_refused(self, options):
        with pytest.raises(ValueError):
            options.check()


class PoolingAndRankingTests:
    def test_pooled_is_the_dimensions_units_together_each_by_its_own_metric(self):
        rng = np.random.default_rng(0)
        nominal = rng.integers(0, 2, size=(50, 3)).astype(float)
        ordinal = rng.integers(1, 6, size=(50, 3)).astype(float)
        blocks = [
            AltTestBlock(name="n", level="nominal", people=nominal, models={"m": nominal[:, 0]}),
            AltTestBlock(name="o", level="ordinal", people=ordinal, models={"m": ordinal.mean(axis=1)}),
        ]
        run = alt_test(blocks, ["a", "b", "c"])[0]
        assert [s.scope for s in run.scopes] == ["pooled", "n", "o"]
        assert run.scope("n").metric == "accuracy" and run.scope("o").metric == "neg_rmse"
        pooled, per = run.scope("pooled"), [run.scope("n"), run.scope("o")]
        assert pooled.n_units == 100
        for j, rater in enumerate(pooled.raters):
            shares = [p.raters[j].model_win_share * p.raters[j].n for p in per]
            assert rater.model_win_share == pytest.approx(sum(shares) / rater.n)

    def test_runs_are_ranked_by_advantage_probability(self):
        rng = np.random.default_rng(1)
        people = rng.integers(0, 3, size=(60, 3)).astype(float)
        noisy = np.where(rng.random(60) < 0.6, rng.integers(0, 3, 60), people[:, 0]).astype(float)
        block = AltTestBlock(name="d", level="nominal", people=people, models={"noisy": noisy, "good": people[:, 1]})
        runs = alt_test([block], ["a", "b", "c"])
        assert [r.run for r in runs] == ["good", "noisy"]
        assert [r.rank for r in runs] == [1, 2]
        assert runs[0].scope("pooled").advantage_probability > runs[1].scope("pooled").advantage_probability
