"""IPQA-Eval (IPQA §2.1): the matching, precision/recall/F1 by hand, the pairs and ipqa_eval commands,
the page, and the matcher's agreement with people on the ipqa_eval_match kind."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Item, Role
from annotation.services import membership_add
from judges.prompting import get_prompt
from tests.validation.conftest import add_items, annotate, suggest
from tests.validation.evaluations.test_commands import (
    assert_pdflatex_compiles,
    assert_well_formed_booktabs,
    run_command,
)
from validation.kinds.ipqa_core_intent.ipqa_eval import NO_ITEMS, item_score, macro_scores, maximum_matching
from validation.kinds.ipqa_core_intent.ipqa_pairs import pair_external_id
from validation.models import ReportSnapshot
from validation.reports import ReportParameters, build_report

STAT_KEYS = {"statistic", "confidence_interval"}
QUESTION = "How do I keep my sourdough starter alive while travelling?"


# -- the pure functions ------------------------------------------------------------------------------


class MatchingTests:
    def test_the_matching_is_maximum_not_greedy(self):
        # Greedy in order would take (0, 0) and leave prediction 1 unmatched; the maximum matches both.
        assert sorted(maximum_matching([[True, True], [True, False]])) == [(0, 1), (1, 0)]

    def test_one_gold_intent_is_credited_once(self):
        # Three predictions all match gold 0 only: one pair, not three.
        assert maximum_matching([[True, False], [True, False], [True, False]]) == [(0, 0)]

    def test_precision_recall_f1_by_hand(self):
        # 3 predicted, 2 gold, a maximum matching of 2: P = 2/3, R = 2/2, F1 = 2PR/(P+R) = 2·2/(3+2) = 0.8.
        score = item_score([[True, True], [True, False], [False, False]])
        assert (score.matched, score.precision, score.recall) == (2, pytest.approx(2 / 3), 1.0)
        assert score.f1 == pytest.approx(0.8) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))

    def test_no_prediction_scores_zero_and_no_gold_is_refused(self):
        empty = item_score(np.zeros((0, 2), dtype=bool))
        assert (empty.precision, empty.recall, empty.f1) == (0.0, 0.0, 0.0)
        with pytest.raises(ValueError, match="at least one gold core intent"):
            item_score(np.zeros((2, 0), dtype=bool))

    def test_macro_is_the_mean_over_items_with_a_seeded_interval(self):
        scores = [item_score([[True, True], [True, False], [False, False]]), item_score([[False]])]
        macro = macro_scores(scores, bootstrap=200, seed=3)
        assert macro.precision.statistic == pytest.approx((2 / 3 + 0) / 2)
        assert macro.recall.statistic == pytest.approx(0.5)
        assert macro.f1.statistic == pytest.approx(0.4)
        low, high = macro.f1.confidence_interval
        assert 0 <= low <= 0.4 <= high <= 0.8  # resampling two items: means between 0 and 0.8
        assert macro_scores(scores, bootstrap=200, seed=3) == macro
        nothing = macro_scores([], bootstrap=10)
        assert nothing.f1.statistic is None and nothing.f1.reason == NO_ITEMS


# -- projects, pairs and runs ------------------------------------------------------------------------


def gold(*intents: tuple[str, bool, bool]) -> dict:
    return {"intents": [{"intent": i, "expressed": e, "core": c} for i, e, c in intents]}


def write_lines(path, records) -> str:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return str(path)


PREDICTIONS = [
    {"external_id": "q1", "predicted_intents": ["a1", "a2", "a3"]},
    {"external_id": "q2", "predicted_intents": ["c1"]},
    {"external_id": "q3", "predicted_intents": ["x"]},
    {"external_id": "q4", "predicted_intents": ["y"]},
    {"external_id": "q5", "predicted_intents": ["d1"]},
    {"external_id": "q6", "predicted_intents": ["e1"]},
]


@pytest.fixture
def ipqa(make_project, judge_run, tmp_path):
    """An IPQA project with known-answer gold, the match project built from PREDICTIONS, and a run:
    q1 matches 2 of 3 predictions to its 2 gold intents, q2 none, q3 has no core intent, q4 no gold,
    q5's pair failed, q6's pair was never judged."""
    project = make_project("ipqa_core_intent", slug="ipqa")
    payload = {"question": QUESTION, "selected_answer": "Dry it.", "candidate_intents": ["A", "B", "C", "D", "E"]}
    golds = {
        "q1": gold(("A", True, True), ("B", True, True), ("C", True, False)),
        "q2": gold(("C", True, True)),
        "q3": gold(("A", True, False)),
        "q4": None,
        "q5": gold(("D", True, True)),
        "q6": gold(("E", True, True)),
    }
    for external_id, value in golds.items():
        pay = {**payload, "candidate_intents": [j["intent"] for j in value["intents"]] if value else ["A"]}
        Item.objects.create(project=project, external_id=external_id, payload=pay, gold_value=value)
    match = make_project("ipqa_eval_match", slug="match")
    predictions = write_lines(tmp_path / "predictions.jsonl", PREDICTIONS)
    built = json.loads(run_command("ipqa_eval_pairs", "ipqa", "--predictions", predictions, "--into", "match"))
    run = judge_run(match)
    decisions = {("q1", "a1", "A"): True, ("q1", "a1", "B"): True, ("q1", "a2", "A"): True, ("q1", "a2", "B"): False}
    decisions |= {("q1", "a3", "A"): False, ("q1", "a3", "B"): False, ("q2", "c1", "C"): False}
    for (source, predicted, gold_intent), matched in decisions.items():
        item = Item.objects.get(project=match, external_id=pair_external_id(source, predicted, gold_intent))
        suggest(run, item, {"match": matched})
    suggest(run, Item.objects.get(project=match, external_id=pair_external_id("q5", "d1", "D")), None, failure="x")
    return project, match, run, predictions, built


@pytest.mark.django_db
class PairsCommandTests:
    def test_one_item_per_predicted_and_gold_core_intent(self, ipqa):
        project, match, _, predictions, built = ipqa
        assert built == {
            "project": "ipqa",
            "into": "match",
            "items": 4,
            "created": 3 * 2 + 1 + 1 + 1,
            "existing": 0,
            "skipped": {"no gold yet": 1, "the gold has no core intent": 1, "no predicted intent": 0},
        }
        item = Item.objects.get(project=match, external_id=pair_external_id("q1", "a2", "B"))
        assert item.payload == {
            "question": QUESTION,
            "predicted_intent": "a2",
            "gold_intent": "B",
            "source": {"project": "ipqa", "external_id": "q1"},
        }
        again = json.loads(run_command("ipqa_eval_pairs", "ipqa", "--predictions", predictions, "--into", "match"))
        assert (again["created"], again["existing"]) == (0, 9) and match.items.count() == 9

    def test_a_bad_predictions_file_names_line_and_field_and_stores_nothing(self, ipqa, tmp_path):
        _, match, _, _, _ = ipqa
        before = match.items.count()
        bad = write_lines(
            tmp_path / "bad.jsonl",
            [
                {"external_id": "q1", "predicted_intents": ["new"]},
                {"external_id": "q2", "predicted_intents": ["ok", ""]},
                {"external_id": "q1", "predicted_intents": ["again"]},
                {"external_id": "q5", "intents": ["x"]},
                "not json",
            ],
        )
        with pytest.raises(CommandError) as caught:
            run_command("ipqa_eval_pairs", "ipqa", "--predictions", bad, "--into", "match")
        message = str(caught.value)
        assert caught.value.returncode == 1
        assert "line 2, field predicted_intents[1]: must not be empty" in message
        assert "line 3, field external_id: external id 'q1' was given on line 1" in message
        assert "line 4, record: missing required field 'predicted_intents'" in message
        assert "line 4, record: unknown field 'intents'" in message
        assert "line 5" in message
        assert match.items.count() == before

    def test_an_unknown_item_and_a_wrong_kind_exit_1(self, ipqa, tmp_path):
        unknown = write_lines(tmp_path / "u.jsonl", [{"external_id": "nope", "predicted_intents": ["a"]}])
        with pytest.raises(CommandError, match="line 1, field external_id: no item 'nope' in project 'ipqa'") as caught:
            run_command("ipqa_eval_pairs", "ipqa", "--predictions", unknown, "--into", "match")
        assert caught.value.returncode == 1
        with pytest.raises(CommandError, match="ipqa_eval_match projects") as caught:
            run_command("ipqa_eval_pairs", "ipqa", "--predictions", unknown, "--into", "ipqa")
        assert caught.value.returncode == 1


@pytest.mark.django_db
class IpqaEvalCommandTests:
    def test_json_has_the_documented_shape_and_the_hand_computed_numbers(self, ipqa):
        _, _, run, predictions, _ = ipqa
        result = json.loads(
            run_command("ipqa_eval", "ipqa", "--predictions", predictions, "--run", str(run.pk), "--bootstrap", "100")
        )
        assert set(result) == {
            "project",
            "match_project",
            "run",
            "bootstrap",
            "counts",
            "macro",
            "by_complexity",
            "items",
            "left_out",
        }
        assert (result["project"], result["match_project"]) == ("ipqa", "match")
        assert set(result["run"]) == {"run", "label", "prompt", "is_baseline"}
        assert result["run"]["prompt"] == "ipqa_eval_intent_matching.v1" and result["run"]["is_baseline"] is False
        assert result["bootstrap"] == {"n_resamples": 100, "seed": 0, "confidence_level": 0.95}
        assert result["counts"] == {
            "predicted_items": 6,
            "evaluated": 2,
            "no_gold": 1,
            "no_gold_core_intent": 1,
            "pair_failed": 1,
            "pair_unjudged": 1,
        }
        q1, q2 = result["items"]
        assert set(q1) == {
            "external_id",
            "n_predicted",
            "n_gold",
            "n_expressed",
            "matched",
            "matching",
            "precision",
            "recall",
            "f1",
        }
        assert (q1["n_expressed"], q1["n_gold"], q2["n_expressed"], q2["n_gold"]) == (3, 2, 1, 1)
        # q1: a1 matches A and B, a2 matches A: the maximum matching is a1-B, a2-A (2 of 3 predictions).
        assert (q1["external_id"], q1["matched"], q1["matching"]) == ("q1", 2, [[0, 1], [1, 0]])
        assert (q1["precision"], q1["recall"], q1["f1"]) == (pytest.approx(2 / 3), 1.0, pytest.approx(0.8))
        assert (q2["external_id"], q2["precision"], q2["recall"], q2["f1"]) == ("q2", 0.0, 0.0, 0.0)
        macro = result["macro"]
        assert all(set(macro[m]) == STAT_KEYS for m in ("precision", "recall", "f1"))
        assert macro["precision"]["statistic"] == pytest.approx(1 / 3)
        assert macro["recall"]["statistic"] == pytest.approx(0.5)
        assert macro["f1"]["statistic"] == pytest.approx(0.4)
        low, high = macro["f1"]["confidence_interval"]
        assert 0 <= low <= 0.4 <= high <= 0.8
        # By question complexity: q2 (1 expressed, 1 core) scores 0, q1 (3 expressed, 2 core) F1 0.8.
        by = result["by_complexity"]
        assert [(g["n"], g["n_items"], g["f1"]["statistic"]) for g in by["expressed_intents"]] == [
            (1, 1, 0.0),
            (3, 1, pytest.approx(0.8)),
        ]
        assert [(g["n"], g["recall"]["statistic"]) for g in by["core_intents"]] == [(1, 0.0), (2, 1.0)]
        assert {e["external_id"]: e["reason"] for e in result["left_out"]} == {
            "q3": "the gold has no core intent",
            "q4": "no gold yet",
            "q5": "a pair failed in the run",
            "q6": "a pair has no answer in the run",
        }

    def test_latex_is_booktabs_and_markdown_and_csv_carry_the_table(self, ipqa):
        _, _, run, predictions, _ = ipqa
        args = ("ipqa_eval", "ipqa", "--predictions", predictions, "--run", str(run.pk), "--bootstrap", "0")
        latex = run_command(*args, "--format", "latex")
        assert_well_formed_booktabs(latex)
        assert r"\label{tab:concord-ipqa_eval}" in latex and r"40.0\%" in latex
        assert "| F1 | 40.0% |" in run_command(*args, "--format", "md")
        assert "ipqa_eval,Recall,Macro over items,0.5" in run_command(*args, "--format", "csv")

    def test_bad_input_exits_1(self, ipqa, tmp_path):
        project, match, run, predictions, _ = ipqa
        bad = write_lines(tmp_path / "bad.jsonl", [{"external_id": "q1", "predicted_intents": ["a", "a"]}])
        for args, message in (
            (("--predictions", bad, "--run", str(run.pk)), r"line 1, field predicted_intents: entries must not repeat"),
            (("--predictions", predictions, "--run", "999999"), "no judge run 999999"),
            (("--predictions", predictions, "--run", str(run.pk), "--bootstrap", "100001"), "at most"),
            (("--predictions", str(tmp_path / "missing.jsonl"), "--run", str(run.pk)), "cannot read"),
        ):
            with pytest.raises(CommandError, match=message) as caught:
                run_command("ipqa_eval", "ipqa", *args)
            assert caught.value.returncode == 1
        with pytest.raises(CommandError, match="ipqa_core_intent projects") as caught:
            run_command("ipqa_eval", "match", "--predictions", predictions, "--run", str(run.pk))
        assert caught.value.returncode == 1


@pytest.mark.django_db
class IpqaEvalPageTests:
    def test_researchers_and_experts_read_it_annotators_are_refused(self, ipqa, make_user, client):
        project, match, run, predictions, _ = ipqa
        url = reverse("evaluation", args=[project.slug, "ipqa"])
        for name, role, status in (("r", Role.RESEARCHER, 200), ("e", Role.EXPERT, 200), ("a", Role.ANNOTATOR, 403)):
            user = make_user(name)
            membership_add(project=project, user=user, role=role)
            membership_add(project=match, user=user, role=role)
            client.force_login(user)
            with open(predictions, "rb") as upload:
                response = client.post(url, {"predictions": upload, "run": run.pk, "bootstrap": 20, "output": "page"})
            assert response.status_code == status, name
            if status == 200:
                assert "IPQA-Eval: core intent identification" in response.content.decode()

    def test_a_run_of_a_match_project_the_reader_cannot_read_is_refused(self, ipqa, make_user, client):
        project, _, run, predictions, _ = ipqa
        user = make_user("r")
        membership_add(project=project, user=user, role=Role.RESEARCHER)  # not a member of the match project
        client.force_login(user)
        with open(predictions, "rb") as upload:
            response = client.post(
                reverse("evaluation", args=[project.slug, "ipqa"]),
                {"predictions": upload, "run": run.pk, "output": "page"},
            )
        assert response.status_code == 400 and b"IPQA-Eval: core intent identification" not in response.content

    def test_the_page_downloads_latex_and_is_linked_from_the_report(self, ipqa, make_user, client):
        project, match, run, predictions, _ = ipqa
        user = make_user("r")
        membership_add(project=project, user=user, role=Role.RESEARCHER)
        membership_add(project=match, user=user, role=Role.RESEARCHER)
        client.force_login(user)
        url = reverse("evaluation", args=[project.slug, "ipqa"])
        assert url in client.get(reverse("report", args=[project.slug])).content.decode()
        with open(predictions, "rb") as upload:
            response = client.post(url, {"predictions": upload, "run": run.pk, "bootstrap": 0, "output": "latex"})
        assert response.status_code == 200 and response["Content-Type"].startswith("application/x-tex")
        assert_well_formed_booktabs(response.content.decode())


@pytest.mark.django_db
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_ipqa_eval_latex_table_compiles_with_booktabs(ipqa, tmp_path):
    _, _, run, predictions, _ = ipqa
    latex = run_command("ipqa_eval", "ipqa", "--predictions", predictions, "--run", str(run.pk), "--format", "latex")
    assert_pdflatex_compiles(latex, tmp_path)


# -- the ipqa_eval_match kind: its prompt, baseline and report -----------------------------------------


class MatcherPromptTests:
    def test_the_matching_prompt_keeps_its_text_and_hash_and_answers_in_the_kind_s_value(self):
        prompt = get_prompt("ipqa_eval_intent_matching")
        assert (prompt.key, prompt.kind, prompt.is_judge) == ("ipqa_eval_intent_matching.v1", "ipqa_eval_match", True)
        payload = {
            "question": QUESTION,
            "predicted_intent": "To keep the starter alive without feeding it",
            "gold_intent": "To preserve the starter without feeding",
        }
        request = prompt.build(item_id=1, payload=payload)
        # The SHA-256 of the messages and schema as the prompt was first shipped (a generator then).
        assert request.prompt_sha256 == "88850fa59d5dd2663fba65b8fb36d4b1a6c0639783633e6fef347ebb953532dd"
        assert prompt.parse('{"match": false}', request) == {"match": False}

    def test_the_jaccard_baseline_matches_at_half_the_content_words(self):
        baseline = get_prompt("ipqa_eval_jaccard")
        same = {"question": "q", "predicted_intent": "To roast coffee beans", "gold_intent": "To roast beans at home"}
        other = {**same, "predicted_intent": "To buy a grinder"}
        # {roast, coffee, beans} vs {roast, beans, home}: 2 of 4 words, Jaccard 0.5 → match.
        assert baseline.compute(baseline.build(item_id=1, payload=same)) == {"match": True}
        assert baseline.compute(baseline.build(item_id=1, payload=other)) == {"match": False}
        assert baseline.title.startswith("Baseline")


@pytest.mark.django_db
class MatchReportTests:
    def test_people_s_kappa_and_the_matcher_s_kappa_and_accuracy_by_hand(self, make_project, judge_run):
        project = make_project("ipqa_eval_match", slug="match")
        items = list(add_items(project, [f"p{i}" for i in range(8)]).values())
        ann, bob, llm = [1, 1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0, 0, 1], [1, 1, 0, 0, 0, 0, 0, 0]
        run = judge_run(project)
        for item, a, b, m in zip(items, ann, bob, llm, strict=True):
            annotate(project, item, "ann", {"match": bool(a)})
            annotate(project, item, "bob", {"match": bool(b)})
            suggest(run, item, {"match": bool(m)})
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=50))
        table = report.table("ipqa_eval_match")
        assert table.columns == (
            "",
            "Cohen's κ",
            "% agreement",
            "Share match",
            "κ (majority vs LLM)",
            "Accuracy of LLM",
        )
        kappa, agree, share, judge_kappa, accuracy = table.rows[0].cells
        # People agree on 6 of 8; both say "match" half the time: p_e = 0.5, κ = (0.75 - 0.5) / 0.5.
        assert (kappa.value, agree.value, share.value) == (pytest.approx(0.5), pytest.approx(0.75), 0.5)
        # Their two ties (p3, p7) are left out; on 6 pairs the majority is 1,1,1,0,0,0 and the LLM 1,1,0,0,0,0:
        # accuracy 5/6, p_e = 0.5·(2/6) + 0.5·(4/6) = 0.5, κ = (5/6 - 0.5) / 0.5 = 2/3.
        assert (judge_kappa.value, accuracy.value) == (pytest.approx(2 / 3), pytest.approx(5 / 6))
        assert kappa.ci is not None and accuracy.ci is not None


@pytest.mark.django_db
class IpqaEvalFreezeTests:
    def _researcher(self, ipqa, make_user, client):
        project, match, *_ = ipqa
        user = make_user("r")
        membership_add(project=project, user=user, role=Role.RESEARCHER)
        membership_add(project=match, user=user, role=Role.RESEARCHER)
        client.force_login(user)

    def test_frozen_from_the_page_with_its_predictions_and_checked_by_the_command(self, ipqa, make_user, client):
        project, _, run, predictions, _ = ipqa
        self._researcher(ipqa, make_user, client)
        with open(predictions, "rb") as upload:
            response = client.post(
                reverse("evaluation_freeze", args=[project.slug, "ipqa"]),
                {"predictions": upload, "run": run.pk, "bootstrap": 20, "title": "camera-ready"},
            )
        snapshot = ReportSnapshot.objects.get()
        assert response.status_code == 302 and response["Location"].endswith(f"/snapshots/{snapshot.pk}/")
        assert (snapshot.evaluation, snapshot.kind, snapshot.title) == ("ipqa_eval", "ipqa_core_intent", "camera-ready")
        assert snapshot.parameters["predictions"]["q1"] == ["a1", "a2", "a3"]
        page = client.get(response["Location"]).content.decode()
        assert "the paper evaluation <code>ipqa_eval</code>" in page
        # The header names the predictions by their digest, not their text.
        assert "predictions_sha256" in snapshot.markdown and '"predictions": {' not in snapshot.markdown
        check = json.loads(run_command("ipqa_eval", "ipqa", "--check", str(snapshot.pk)))
        assert check["numbers_match"] and check["inputs_match"]
        # A changed match decision shows on the next check.
        match_item = Item.objects.get(external_id=pair_external_id("q2", "c1", "C"))
        match_item.suggestions.update(value={"match": True})
        check = json.loads(run_command("ipqa_eval", "ipqa", "--check", str(snapshot.pk)))
        assert not check["numbers_match"] and not check["inputs_match"]

    def test_the_api_scores_an_uploaded_file_and_refuses_a_bad_one(self, ipqa, make_user, client, tmp_path):
        project, _, run, predictions, _ = ipqa
        self._researcher(ipqa, make_user, client)
        api = reverse("api_evaluation", args=[project.slug, "ipqa"])
        with open(predictions, "rb") as upload:
            data = client.post(api, {"predictions": upload, "run": run.pk, "bootstrap": 0}).json()
        assert data["macro"]["f1"]["statistic"] == pytest.approx(0.4)
        bad = write_lines(tmp_path / "bad.jsonl", [{"external_id": "q1", "predicted_intents": ["a", "a"]}])
        with open(bad, "rb") as upload:
            refused = client.post(api, {"predictions": upload, "run": run.pk, "bootstrap": 0})
        assert refused.status_code == 400 and "entries must not repeat" in json.dumps(refused.json())
        assert ReportSnapshot.objects.count() == 0
        assert client.get(reverse("api_evaluation", args=[project.slug, "mcq"])).status_code == 404
