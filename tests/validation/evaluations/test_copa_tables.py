"""CoPA Tables 6, A6-A9, Figure 5 and the per-category Tables 3 and 4: by hand, and against the paper."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from scipy.stats import spearmanr

from annotation.models import Item
from tests.validation.conftest import copa_value, suggest
from tests.validation.evaluations.conftest import PROFILE
from tests.validation.evaluations.test_commands import (
    assert_pdflatex_compiles,
    assert_well_formed_booktabs,
    run_command,
)
from validation.agreement import AgreementResult
from validation.kinds.copa_likert.copa import GroupMeans, factor_correlations, group_score_means
from validation.kinds.copa_likert.copa_report import NONE, _row_mean

CODES = ("CT", "SA", "SC", "CLM", "MS", "AMR")
#: The paper's cells are rounded to four decimals: a mean of them moves by up to half a unit, the printed
#: mean by another half.
PRINTED = 0.0001

pytestmark = pytest.mark.django_db

# (external id, pair, source, category, six scores): S = sum / 12 in the comments.
RESPONSES = (
    ("a1", "p1", "accepted", "Eng", (2, 2, 2, 2, 2, 2)),  # 1
    ("t1", "p1", "top-voted", "Eng", (1, 1, 1, 1, 1, 1)),  # 1/2
    ("a2", "p2", "accepted", "Sci", (2, 1, 1, 1, 1, 0)),  # 1/2
    ("t2", "p2", "top-voted", "Sci", (2, 2, 1, 1, 1, 1)),  # 2/3
    ("m1", None, "model-x", "Eng", (0, 0, 0, 0, 0, 2)),  # 1/6
)


@pytest.fixture
def categories(make_project, judge_run):
    project = make_project("copa_likert", slug="cats")
    items = {}
    for external_id, pair, source, category, _ in RESPONSES:
        payload = {"profile": PROFILE, "question": "q?", "response": "r", "response_source": source}
        payload |= {"meta": {"category": category}} | ({"pair_id": pair} if pair else {})
        items[external_id] = Item.objects.create(project=project, external_id=external_id, payload=payload)
    run = judge_run(project)
    for external_id, *_, scores in RESPONSES:
        suggest(run, items[external_id], copa_value(*scores))
    return project, run


class CopaTablesTests:
    def test_table_6_a6_a9_and_per_category_table_3_by_hand(self, categories):
        _, run = categories
        (evaluator,) = json.loads(run_command("copa_eval", "cats", "--run", str(run.pk), "--bootstrap", "0"))[
            "evaluators"
        ]
        table6 = evaluator["by_source"]
        assert list(table6) == ["accepted", "top-voted", "model-x"]
        assert table6["accepted"]["categories"]["Eng"]["score"] == pytest.approx(1.0)
        assert table6["accepted"]["categories"]["Sci"]["score"] == pytest.approx(0.5)
        assert table6["accepted"]["avg"] == pytest.approx(0.75)
        assert table6["top-voted"]["avg"] == pytest.approx((0.5 + 2 / 3) / 2)
        assert table6["model-x"]["categories"] == {
            "Eng": {"score": pytest.approx(1 / 6), "n": 1, "factors": dict.fromkeys(CODES, 0.0) | {"AMR": 1.0}}
        }
        assert table6["model-x"]["avg"] == pytest.approx(1 / 6)
        # Table A7 (Sci), top-voted: 2/2, 2/2, 1/2, ...
        assert table6["top-voted"]["categories"]["Sci"]["factors"]["SA"] == pytest.approx(1.0)
        by_category = evaluator["by_category"]
        assert by_category["Eng"]["accuracy"]["statistic"] == 1.0 and by_category["Eng"]["margin"][
            "statistic"
        ] == pytest.approx(0.5)
        assert by_category["Sci"]["accuracy"]["statistic"] == 0.0
        assert by_category["Sci"]["margin"]["statistic"] == pytest.approx(0.5 - 2 / 3)
        # Table 4 per category: without AMR the Sci pair is 6/10 vs 7/10, still a loss.
        assert by_category["Sci"]["ablation"]["AMR"]["margin"]["statistic"] == pytest.approx(0.6 - 0.7)
        # Figure 5: scipy's Spearman matrix over the five responses.
        scores = np.array([r[-1] for r in RESPONSES], dtype=float)
        expected = spearmanr(scores).statistic
        rho = evaluator["factor_correlations"]["rho"]
        assert evaluator["factor_correlations"]["n"] == 5
        assert rho[0][2] == pytest.approx(expected[0, 2]) and rho[3][5] == pytest.approx(expected[3, 5])

    def test_tables_render_in_every_format_and_latex_compiles(self, categories, tmp_path):
        _, run = categories
        args = ("copa_eval", "cats", "--run", str(run.pk), "--bootstrap", "0")
        markdown = run_command(*args, "--format", "md")
        assert "| accepted | 1.000 | 0.500 | 0.750 |" in markdown
        assert "| Evaluator | Eng Acc ↑ | Eng Tie ↓ | Eng Margin ↑ | Sci Acc ↑ |" in markdown
        assert "(CoPA Figure 5)" in markdown and "(CoPA Tables A6-A9)" in markdown
        csv_text = run_command(*args, "--format", "csv")
        assert "copa_table6_1,model-x,Eng,0.16666666666666666,,,,1" in csv_text
        latex = run_command(*args, "--format", "latex")
        assert_well_formed_booktabs(latex)
        if shutil.which("pdflatex"):
            assert_pdflatex_compiles(latex, tmp_path)

    def test_a_constant_factor_has_no_correlation(self):
        result = factor_correlations([[1, 0, 2], [1, 1, 1], [1, 2, 0]], factors=("a", "b", "c"))
        assert result.rho[0] == [None, None, None] and result.rho[1][2] == pytest.approx(-1.0)
        assert "a" in result.reason
        assert factor_correlations([[1, 2, 0]], factors=("a", "b", "c")).rho[1][1] is None


# CoPA Table 6 (the paper's rows: E&T, S&T, L&S, L&F, Avg.).
TABLE_6 = {
    "Accepted Ans.": (0.8009, 0.7984, 0.7393, 0.7946, 0.7833),
    "Random Ans.": (0.6183, 0.5774, 0.5516, 0.5418, 0.5722),
    "Top Ans.": (0.6207, 0.5941, 0.5633, 0.5886, 0.5917),
    "GPT-4o-mini No-Pers.": (0.6307, 0.4700, 0.5347, 0.5136, 0.5373),
    "GPT-4o-mini Time-Pers.": (0.6858, 0.5353, 0.5591, 0.5516, 0.5830),
    "GPT-4o-mini RAG-Pers.": (0.6964, 0.5334, 0.5748, 0.5472, 0.5909),
    "GPT-4o-mini Profile-Pers.": (0.7003, 0.5912, 0.6223, 0.5719, 0.6214),
    "Qwen 3 8B No-Pers.": (0.6671, 0.5409, 0.5803, 0.5403, 0.5821),
    "Qwen 3 8B Time-Pers.": (0.7188, 0.5691, 0.6230, 0.5638, 0.6187),
    "Qwen 3 8B RAG-Pers.": (0.7198, 0.5724, 0.6172, 0.5721, 0.6204),
    "Qwen 3 8B Profile-Pers.": (0.7341, 0.6365, 0.6729, 0.6002, 0.6609),
}
MISPRINTED_AVG = "GPT-4o-mini RAG-Pers."
# Table A6 (Engineering & Tools), the six factors: each row's mean is its Table 6 E&T cell.
TABLE_A6 = {
    "GPT-4o-mini No-Pers.": (0.5972, 0.6348, 0.6574, 0.7737, 0.4213, 0.6997),
    "GPT-4o-mini Time-Pers.": (0.6562, 0.6985, 0.7153, 0.8183, 0.4641, 0.7622),
    "GPT-4o-mini RAG-Pers.": (0.6719, 0.7020, 0.7338, 0.8200, 0.4797, 0.7714),
    "GPT-4o-mini Profile-Pers.": (0.6743, 0.7101, 0.7344, 0.8163, 0.4835, 0.7832),
    "Qwen 3 8B No-Pers.": (0.6441, 0.6765, 0.6973, 0.7726, 0.4589, 0.7535),
    "Qwen 3 8B Time-Pers.": (0.6933, 0.7297, 0.7564, 0.8403, 0.5000, 0.7934),
    "Qwen 3 8B RAG-Pers.": (0.6921, 0.7367, 0.7569, 0.8299, 0.5111, 0.7922),
    "Qwen 3 8B Profile-Pers.": (0.7135, 0.7442, 0.7841, 0.8200, 0.5272, 0.8154),
}


def _means(value: float) -> GroupMeans:
    return GroupMeans(score=AgreementResult(statistic=value, n_units=1, method="m"), factors={})


class CopaPaperTests:
    @pytest.mark.parametrize("row", [r for r in TABLE_6 if r != MISPRINTED_AVG])
    def test_table_6_avg_is_the_mean_of_the_category_columns(self, row):
        *cells, avg = TABLE_6[row]
        assert _row_mean(self.row_means(cells)) == pytest.approx(avg, abs=PRINTED)

    def test_one_printed_avg_is_not_its_row_s_mean(self):
        """GPT-4o-mini RAG-Pers.: 0.6964, 0.5334, 0.5748, 0.5472 average 0.5880; the paper prints 0.5909
        (10 of its 11 rows are their means). Concord prints the mean."""
        *cells, avg = TABLE_6[MISPRINTED_AVG]
        assert _row_mean(self.row_means(cells)) == pytest.approx(0.58795) != pytest.approx(avg, abs=PRINTED)

    def test_the_avg_leaves_a_none_column_out(self):
        """Responses without a category make a "(none)" column; the Avg. stays the mean of the named
        categories, as the paper's is of its four (Accepted Ans.: 0.7833)."""
        *cells, avg = TABLE_6["Accepted Ans."]
        means = {**self.row_means(cells), NONE: _means(0.1)}
        assert _row_mean(means) == pytest.approx(avg, abs=PRINTED)

    @staticmethod
    def row_means(cells: list[float]) -> dict[str, GroupMeans]:
        return {category: _means(v) for category, v in zip(("E&T", "S&T", "L&S", "L&F"), cells, strict=True)}

    @pytest.mark.parametrize("row", TABLE_A6)
    def test_a_table_6_cell_is_the_mean_of_its_factor_scores(self, row):
        assert np.mean(TABLE_A6[row]) == pytest.approx(TABLE_6[row][0], abs=PRINTED)

    def test_group_means_are_factor_means_over_two_and_their_mean_is_s(self):
        scores = [[2, 1, 0, 1, 2, 2], [1, 1, 1, 1, 1, np.nan], [0, 1, 2, 2, 2, 1]]
        means = group_score_means(scores, factors=CODES)
        assert means.score.n_units == 2  # the row with a missing score is left out
        assert means.factors["CT"].statistic == pytest.approx((2 + 0) / 2 / 2)
        assert np.mean([r.statistic for r in means.factors.values()]) == pytest.approx(means.score.statistic)
        assert means.score.statistic == pytest.approx((8 / 12 + 8 / 12) / 2)


class HistoryBaselineEvaluationTests:
    def test_copa_eval_compares_answers_by_their_overlap_with_the_user_s_history(self, make_project, judge_run):
        project = make_project("copa_likert", slug="hist")
        history = ["my build keeps failing", "stepwise answers please"]
        texts = {"accepted": "stepwise fix for the failing build", "top-voted": "reinstall everything"}
        items = []
        for source, response in texts.items():
            payload = {"profile": PROFILE, "question": "q?", "response": response, "response_source": source}
            payload |= {"pair_id": "p1", "history": history}
            items.append(Item.objects.create(project=project, external_id=source, payload=payload))
        run = judge_run(project, backend="baseline", prompt="copa_history_inclusion.v1")
        for item in items:
            suggest(run, item, copa_value(0))  # the stored 0/1/2 value is not what is compared
        (evaluator,) = json.loads(run_command("copa_eval", "hist", "--run", str(run.pk), "--bootstrap", "0"))[
            "evaluators"
        ]
        # Inclusion in the history: 3 of the accepted answer's 4 words, none of the top-voted one's 2.
        assert (evaluator["n_pairs"], evaluator["accuracy"]["statistic"]) == (1, 1.0)
        assert evaluator["tie_rate"]["statistic"] is None and "by_source" not in evaluator
