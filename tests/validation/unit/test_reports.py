"""Reports per task kind: each paper's table, the anchoring and draft tables, and the degenerate cases.

Every number in a table is checked against the statistics functions (or statsmodels/scipy) applied
to the same ratings, so the layout cannot drift from the measures.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import cohens_kappa

from annotation.kinds.rationale_inspection import FAIL, PASS
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation import agreement
from validation.agreement import exposure_comparison, random_guess_f1
from validation.ratings import judge_rater_name, project_ratings
from validation.reports import ReportParameters, UnknownJudgeRun, build_report
from validation.reports.base import ANCHORING_RANDOMISED, ANCHORING_WHICH_RATINGS, NO_JUDGE_COLUMNS
from validation.selectors import report_figures

pytestmark = pytest.mark.django_db
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
QUICK = ReportParameters(bootstrap=30, seed=1)


def cells(report, key: str) -> dict[str, list]:
    table = report.table(key)
    return {row.label: list(row.cells) for row in table.rows}


@pytest.fixture
def copa(make_project, judge_run):
    """40 responses, two annotators, an LLM judge that failed on two of them; exposure randomised."""
    project = make_project("copa_likert", suggestion_exposure="randomised")
    rng = np.random.default_rng(7)
    items = add_items(project, [f"r{i:02d}" for i in range(40)])
    truth = rng.integers(0, 3, size=(40, 6))
    run = judge_run(project)
    for i, item in enumerate(items.values()):
        answers = []
        for rater in ("ann", "bob"):
            noisy = np.where(rng.random(6) < 0.75, truth[i], rng.integers(0, 3, 6))
            answers.append((rater, copa_value(*map(int, noisy)), bool(rng.random() < 0.5)))
        if i in (3, 17):
            suggest(run, item, None, failure="the reply was not valid JSON")
        else:
            llm = np.where(rng.random(6) < 0.8, truth[i], rng.integers(0, 3, 6))
            suggest(run, item, copa_value(*map(int, llm)))
        # People rate once the run's suggestion exists (it could be shown): anchoring counts them.
        for rater, value, visible in answers:
            annotate(project, item, rater, value, visible=visible)
    return project, run


class CopaReportTests:
    def test_table_7_without_a_judge(self, copa):
        project, _ = copa
        report = build_report(project=project, parameters=QUICK)
        table = report.table("copa_table7")
        assert table.columns == ("Factor", "Human-Human (κ_w (linear))")
        assert [r.label for r in table.rows] == [*FACTORS, "Overall"]
        assert table.rows[-1].summary and NO_JUDGE_COLUMNS in table.notes
        ratings = project_ratings(project=project)
        expected = [
            agreement.cohen_kappa(ratings.matrix(f), weights="linear", level="ordinal").statistic for f in FACTORS
        ]
        values = [row.cells[0].value for row in table.rows]
        assert values[:6] == pytest.approx(expected, abs=1e-12)
        assert values[6] == pytest.approx(np.mean(expected), abs=1e-12)
        assert all(row.cells[0].ci is not None for row in table.rows)

    def test_table_7_with_the_judge_spearman_on_the_mean_human_rating(self, copa):
        project, run = copa
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=30))
        table = report.table("copa_table7")
        assert table.columns[2] == "Human-LLM (ρ)"
        ratings = project_ratings(project=project, judge_run_id=run.pk)
        judge = judge_rater_name(run.pk)
        rows = cells(report, "copa_table7")
        for factor in FACTORS:
            people, llm = ratings.matrix(factor, ["ann", "bob"]), ratings.matrix(factor, [judge])[:, 0]
            ok = ~np.isnan(llm)  # the two failed items are missing, not zeros
            assert ok.sum() == 38
            rho = stats.spearmanr(people[ok].mean(axis=1), llm[ok]).statistic
            assert rows[factor][1].value == pytest.approx(rho, abs=1e-12)
            # The judge is compared with the people, never counted among them.
            people_only = agreement.cohen_kappa(people, weights="linear", level="ordinal").statistic
            assert rows[factor][0].value == pytest.approx(people_only, abs=1e-12)
        assert report.agreement.dimensions["CT"].spearman.n_units == 38

    def test_quadratic_weights_are_a_parameter(self, copa):
        project, _ = copa
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0, weights="quadratic"))
        assert report.table("copa_table7").columns[1] == "Human-Human (κ_w (quadratic))"
        ratings = project_ratings(project=project)
        ct = agreement.cohen_kappa(ratings.matrix("CT"), weights="quadratic", level="ordinal").statistic
        assert cells(report, "copa_table7")["CT"][0].value == pytest.approx(ct)

    def test_three_annotators_give_krippendorffs_alpha(self, make_project):
        project = make_project("copa_likert")
        for i, item in enumerate(add_items(project, [f"r{i}" for i in range(10)]).values()):
            for j, rater in enumerate(("a", "b", "c")):
                annotate(project, item, rater, copa_value((i + (j == 2)) % 3))
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0))
        assert report.table("copa_table7").columns[1] == "Human-Human (α (ordinal))"

    def test_anchoring_table_matches_the_exposure_comparison(self, copa):
        project, run = copa
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=20))
        row = cells(report, "anchoring")["Cognitive Trust"]
        ratings = project_ratings(project=project, judge_run_id=run.pk)
        judge = judge_rater_name(run.pk)
        direct = exposure_comparison(
            ratings.matrix("CT", ["ann", "bob"]),
            ratings.matrix("CT", [judge])[:, 0],
            ratings.visibility("CT", ["ann", "bob"]),
            level="ordinal",
            weighting="linear",
            categories=(0, 1, 2),
            bootstrap=20,
            seed=0,
        )
        assert row[0].value == direct.n_pairs_shown and row[2].value == direct.n_pairs_hidden
        assert row[1].value == pytest.approx(direct.kappa_shown.statistic)
        assert row[4].value == pytest.approx(direct.kappa_difference.statistic)
        assert row[4].ci == pytest.approx(tuple(direct.kappa_difference.confidence_interval))
        assert direct.n_pairs_shown + direct.n_pairs_hidden == 76
        assert ANCHORING_WHICH_RATINGS in report.table("anchoring").notes
        assert ANCHORING_RANDOMISED.format(p=0.5) in report.table("anchoring").caption

    def test_ratings_made_before_the_run_s_suggestion_are_not_counted_as_hidden(self, make_project, judge_run):
        project = make_project("copa_likert")  # suggestions hidden from everyone: not randomised
        items = list(add_items(project, [f"r{i:02d}" for i in range(12)]).values())
        for item in items[:8]:  # rated before any run existed: recorded as "not visible"
            for rater in ("ann", "bob"):
                annotate(project, item, rater, copa_value(1), visible=False)
        run = judge_run(project)
        for i, item in enumerate(items):
            suggest(run, item, copa_value(i % 3))
        for item in items[8:]:
            for rater in ("ann", "bob"):
                annotate(project, item, rater, copa_value(2), visible=False)
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=0))
        row = cells(report, "anchoring")["Cognitive Trust"]
        assert (row[0].value, row[2].value) == (0, 8)  # the 4 later items x 2 people, not 24 pairs
        assert "not randomised (the project hides them)" in report.table("anchoring").caption

    def test_figures_are_svg(self, copa):
        project, run = copa
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=10))
        figures = report_figures(report=report)
        assert {f.key for f, _ in figures} >= {"copa-factors", "confusion-CT", "confusion-CT-llm"}
        assert all(uri.startswith("data:image/svg+xml;base64,") for _, uri in figures)


class IpqaReportTests:
    def test_kappa_and_agreement_for_expressed_and_core(self, make_project, judge_run):
        project = make_project("ipqa_core_intent")
        kind = project.task_kind
        intents = ["To preserve the starter without feeding", "To find someone to feed the starter"]
        items = add_items(project, [f"q{i}" for i in range(12)])
        run = judge_run(project)
        for i, item in enumerate(items.values()):
            for rater, flip in (("ann", False), ("bob", i % 4 == 0)):
                judged = [
                    {"intent": intents[0], "expressed": True, "core": (i % 3 != 0) != flip},
                    {"intent": intents[1], "expressed": i % 2 == 0, "core": False},
                ]
                annotate(project, item, rater, {"intents": judged})
            suggest(run, item, kind.example_value())
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=20))
        table = report.table("ipqa_validation")
        assert table.columns[:4] == ("Label", "Cohen's κ", "% agreement", "Share yes")
        rows = cells(report, "ipqa_validation")
        ratings = project_ratings(project=project)
        for label in ("expressed", "core"):
            matrix = ratings.matrix(label)
            assert matrix.shape == (24, 2)  # (item, intent) units
            agree = np.mean(matrix[:, 0] == matrix[:, 1])
            assert rows[label.capitalize()][1].value == pytest.approx(agree)
            assert rows[label.capitalize()][2].value == pytest.approx(np.nanmean(matrix))
        core = ratings.matrix("core")
        expected = agreement.cohen_kappa(core).statistic
        assert rows["Core"][0].value == pytest.approx(expected)
        assert len(rows["Core"]) == 5  # with the judge's columns


class RationaleReportTests:
    def test_verdict_kappa_pass_rate_and_failure_categories(self, make_project):
        project = make_project("rationale_inspection")
        items = add_items(project, [f"x{i}" for i in range(8)])
        verdicts = {
            "e1": [PASS, PASS, FAIL, FAIL, PASS, FAIL, PASS, PASS],
            "e2": [PASS, FAIL, FAIL, FAIL, PASS, FAIL, PASS, PASS],
        }
        for rater, row in verdicts.items():
            for i, (item, verdict) in enumerate(zip(items.values(), row, strict=True)):
                value = {"verdict": verdict}
                if verdict == FAIL:
                    value["failure_categories"] = ["theoretical_error"] + (
                        ["inappropriate_application"] if i % 2 else []
                    )
                annotate(project, item, rater, value)
        report = build_report(project=project, parameters=QUICK)
        verdict = cells(report, "rationale_verdict")["Verdict"]
        expected = agreement.cohen_kappa(np.array(list(verdicts.values())).T).statistic
        assert verdict[0].value == pytest.approx(expected)
        assert verdict[1].value == pytest.approx(7 / 8)
        assert verdict[2].value == pytest.approx(9 / 16)  # pass rate over all verdicts
        failures = cells(report, "rationale_failures")
        assert failures["A fabricated or misstated theory"][0].value == 1.0
        # Fail verdicts naming "inappropriate application": those on odd items (x1, x3 and x5 twice).
        assert failures["A real theory applied to a motive it does not fit"][0].value == pytest.approx(5 / 7)

    def test_all_verdicts_pass_gives_null_kappa_with_a_reason(self, make_project):
        project = make_project("rationale_inspection")
        for item in add_items(project, ["a", "b", "c"]).values():
            for rater in ("e1", "e2"):
                annotate(project, item, rater, {"verdict": PASS})
        report = build_report(project=project, parameters=QUICK)
        kappa = cells(report, "rationale_verdict")["Verdict"][0]
        assert kappa.value is None and kappa.note == agreement.ONE_CATEGORY
        assert report.numbers()["dimensions"]["verdict"]["cohen_kappa"]["unweighted"] is None
        assert report.numbers()["dimensions"]["verdict"]["percent_agreement"] == 1.0


class LabelReportTests:
    def test_review_agreement_and_draft_acceptance_per_judge(self, make_project, judge_run):
        project = make_project("label_contextualization")
        items = add_items(project, ["uses", "extends", "background", "future"])
        run = judge_run(project, prompt="intentgrasp_label_statement.v1")
        drafts = {
            "uses": "To use data, methods, etc., from the cited paper.",
            "extends": "To extend the cited work.",
            "background": "To give background.",
        }
        for external_id, text in drafts.items():
            suggest(run, items[external_id], {"action": "write", "statement": text})
        suggest(run, items["future"], None, failure="timed out")
        finals = {
            ("uses", "ann", True): "To use data, methods, etc., from the cited paper.",
            ("extends", "ann", True): "To extend the cited works.",  # one edit in 26: light
            ("background", "ann", False): "To situate the work among related studies.",
            ("uses", "bob", False): "To use data, methods, etc., from the cited paper.",
        }
        for (external_id, rater, visible), text in finals.items():
            annotate(project, items[external_id], rater, {"action": "write", "statement": text}, visible=visible)
        for rater, verdict in (("rev1", "accept"), ("rev2", "accept"), ("rev3", "revise")):
            review = {
                "action": "review",
                "statement": finals[("uses", "ann", True)],
                "author": "ann",
                "verdict": verdict,
            }
            if verdict == "revise":
                review["note"] = "too broad"
            annotate(project, items["uses"], rater, review)
        report = build_report(project=project, parameters=QUICK)
        review = cells(report, "label_review")["Review verdict"]
        assert review[1].value == pytest.approx(1 / 3)  # one agreeing pair of three
        assert review[2].value == pytest.approx(2 / 3)  # accept rate
        rows = cells(report, "draft_acceptance")
        label = next(k for k in rows if not k.startswith(" "))
        overall = rows[label]
        assert overall[0].value == 4
        assert overall[1].value == 0.5  # two drafts kept unchanged
        assert overall[2].value == 0.25 and overall[3].value == 0.25
        assert rows["  draft shown"][0].value == 2 and rows["  draft hidden"][0].value == 2
        assert "prompt intentgrasp_label_statement.v1" not in label and "intentgrasp_label_statement.v1" in label


class McqReportTests:
    def test_human_f1_beside_the_random_guess_baseline(self, make_project, judge_run):
        project = make_project("intent_mcq")
        kind = project.task_kind
        keys = {"m1": ([0], 4), "m2": ([1, 2], 4), "m3": ([3], 5), "m4": ([0], 2)}
        items = {}
        for external_id, (answers, n_options) in keys.items():
            payload = {
                **kind.example_payload(),
                "answers": answers,
                "options": [f"To do {c}." for c in "abcde"][:n_options],
            }
            items |= add_items(project, [external_id], payload=payload)
        chosen = {"ann": {"m1": [0], "m2": [1], "m3": [3], "m4": [1]}, "bob": {"m1": [0], "m2": [1, 2], "m3": [0]}}
        for rater, answers in chosen.items():
            for external_id, picked in answers.items():
                annotate(project, items[external_id], rater, {"chosen": picked})
        run = judge_run(project, backend="baseline")
        suggest(run, items["m1"], {"chosen": [0]})
        suggest(run, items["m2"], None, failure="no option parsed")
        suggest(run, items["m3"], {"chosen": [1]})
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=20))
        rows = cells(report, "mcq_performance")
        f1 = [1, 2 / 3, 1, 0, 1, 1, 0]  # ann m1..m4, bob m1..m3
        assert rows["People (mean over answers)"][0].value == pytest.approx(np.mean(f1))
        baseline = random_guess_f1([1, 2, 1, 1], [4, 4, 5, 2]).statistic
        assert rows["Random guess (expected)"][0].value == pytest.approx(baseline)
        assert rows["Random guess (expected)"][1].value == 4
        judge_row = next(k for k in rows if k.startswith("baseline ("))  # a baseline is never called an LLM
        assert rows[judge_row][0].value == pytest.approx(0.5)  # m1 right, m3 wrong; failed m2 is missing
        assert rows[judge_row][1].value == 2
        assert rows["annotator bob"][0].value == pytest.approx((1 + 1 + 0) / 3)


class DegenerateReportTests:
    def test_an_empty_project_reports_nulls_with_reasons(self, make_project):
        project = make_project("copa_likert")
        report = build_report(project=project, parameters=QUICK)
        assert report.n_units == 0
        ct = report.numbers()["dimensions"]["CT"]
        assert ct["krippendorff_alpha"] is None and ct["notes"]["krippendorff_alpha"] == agreement.NO_RATINGS
        assert report_figures(report=report) is not None

    def test_a_single_rater_gives_nulls_not_a_crash(self, make_project):
        project = make_project("copa_likert")
        for item in add_items(project, ["a", "b", "c"]).values():
            annotate(project, item, "solo", copa_value(1))
        report = build_report(project=project, parameters=QUICK)
        ct = report.numbers()["dimensions"]["CT"]
        assert ct["n_raters"] == 1 and ct["percent_agreement"] is None and ct["fleiss_kappa"] is None
        assert ct["notes"]["percent_agreement"] == agreement.NO_PAIRABLE_UNITS
        assert ct["notes"]["fleiss_kappa"] == agreement.NEEDS_RATERS.format(n=1)
        assert cells(report, "copa_table7")["CT"][0].value is None

    def test_units_with_one_rating_are_left_out(self, make_project):
        project = make_project("copa_likert")
        items = add_items(project, ["a", "b", "c"])
        annotate(project, items["a"], "ann", copa_value(0, 1, 2, 0, 1, 2))
        annotate(project, items["a"], "bob", copa_value(0, 1, 2, 0, 1, 2))
        annotate(project, items["b"], "ann", copa_value(1))
        annotate(project, items["c"], "bob", copa_value(2, 1, 0, 2, 1, 0))
        ct = build_report(project=project, parameters=QUICK).agreement.dimensions["CT"]
        assert ct.n_units == 3 and ct.percent_agreement.n_units == 1 and ct.cohen_kappa.unweighted.n_units == 1

    def test_judge_runs_of_other_projects_are_refused(self, make_project, judge_run):
        project, other = make_project("copa_likert"), make_project("copa_likert", slug="other")
        run = judge_run(other)
        with pytest.raises(UnknownJudgeRun, match="does not exist in project 'copa-likert'"):
            build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk))
        with pytest.raises(UnknownJudgeRun):
            build_report(project=project, parameters=ReportParameters(judge_run_id=99999))

    def test_every_measure_nan_free_in_the_numbers(self, copa):
        import json

        project, run = copa
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=10))
        json.dumps(report.numbers(), allow_nan=False)

    def test_the_reports_kappa_is_statsmodels_on_the_contingency_table(self, copa):
        """The table's linear-weighted kappa is statsmodels' cohens_kappa on the two people's 3x3 table."""
        project, _ = copa
        report = build_report(project=project, parameters=QUICK)
        pairs = project_ratings(project=project).matrix("CT", ["ann", "bob"]).astype(int)
        table = np.zeros((3, 3))
        np.add.at(table, (pairs[:, 0], pairs[:, 1]), 1)
        expected = cohens_kappa(table, wt="linear", weights=np.arange(3.0), return_results=False)
        assert cells(report, "copa_table7")["CT"][0].value == pytest.approx(expected, abs=1e-12)
