"""copa_eval, mcq_eval and build_mcq end to end: projects, judge runs and people, numbers by hand."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Item
from tests.validation.conftest import annotate, copa_value, suggest
from tests.validation.evaluations.conftest import mcq_item
from validation.kinds.copa_likert.copa import NOT_NORMALISED
from validation.models import ReportSnapshot

STAT_KEYS = {"statistic", "confidence_interval"}

pytestmark = pytest.mark.django_db


def run_command(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


class CopaEvalCommandTests:
    def test_json_has_the_documented_shape_and_the_hand_computed_numbers(self, copa):
        project, _, llm, baseline = copa
        data = json.loads(
            run_command(
                "copa_eval",
                "copa",
                "--run",
                str(llm.pk),
                "--run",
                str(baseline.pk),
                "--bootstrap",
                "200",
                "--seed",
                "3",
            )
        )
        assert set(data) == {"project", "evaluators"} and data["project"] == "copa"
        factor, lexical = data["evaluators"]
        assert set(factor) == {
            "label",
            "run",
            "n_pairs",
            "excluded_pairs",
            "accuracy",
            "tie_rate",
            "margin",
            "ablation",
            "by_category",
            "by_source",
            "factor_correlations",
        }
        assert (factor["run"], factor["n_pairs"], factor["excluded_pairs"]) == (llm.pk, 2, 1)
        assert set(factor["accuracy"]) == STAT_KEYS
        assert factor["accuracy"]["statistic"] == pytest.approx(0.5)
        assert factor["tie_rate"]["statistic"] == pytest.approx(0.5)
        assert factor["margin"]["statistic"] == pytest.approx((0.25 + 0) / 2)
        assert list(factor["ablation"]) == ["CT", "SA", "SC", "CLM", "MS", "AMR"]
        assert set(factor["ablation"]["CT"]) == {"accuracy", "tie_rate", "margin"}
        # Without CT the p2 pair is 5/10 vs 4/10: a win.
        assert factor["ablation"]["CT"]["accuracy"]["statistic"] == pytest.approx(1.0)
        # Jaccard of the raw texts: p1 1 vs 0 (win), p2 0 vs 1/2 (loss), p3 equal (tie): accuracy only.
        assert (lexical["n_pairs"], lexical["accuracy"]["statistic"]) == (3, pytest.approx(1 / 3))
        assert lexical["tie_rate"] == {"statistic": None, "confidence_interval": None, "reason": NOT_NORMALISED}
        assert lexical["ablation"] == {}

    def test_people_s_gold_is_an_evaluator(self, copa, make_user):
        project, items, _, _ = copa
        for item, scores in (
            (items["p1"][0], (0,)),
            (items["p1"][1], (2,)),
            (items["p2"][0], (2,)),
            (items["p2"][1], (1,)),
        ):
            annotate(project, item, "ann", copa_value(*scores))
        project.adjudication_rules = {"min_raters": 1}
        project.save(update_fields=["adjudication_rules"])
        data = json.loads(run_command("copa_eval", "copa", "--people", "--bootstrap", "0"))
        (people,) = data["evaluators"]
        assert (people["run"], people["n_pairs"], people["excluded_pairs"]) == (None, 2, 1)
        assert people["accuracy"] == {"statistic": 0.5, "confidence_interval": None}
        assert people["margin"]["statistic"] == pytest.approx((-1 + 0.5) / 2)

    def test_latex_is_booktabs_and_markdown_and_csv_carry_the_table(self, copa):
        _, _, llm, _ = copa
        latex = run_command("copa_eval", "copa", "--run", str(llm.pk), "--format", "latex", "--bootstrap", "50")
        assert_well_formed_booktabs(latex)
        assert r"\label{tab:concord-copa_table3}" in latex and r"50.0\%" in latex
        markdown = run_command("copa_eval", "copa", "--run", str(llm.pk), "--format", "md", "--bootstrap", "0")
        assert "| Evaluator | Pairs | Excluded | Acc ↑ | Tie ↓ | Margin ↑ |" in markdown
        assert "1 pair ids lack an accepted or a top-voted answer" in markdown
        csv_text = run_command("copa_eval", "copa", "--run", str(llm.pk), "--format", "csv", "--bootstrap", "0")
        assert csv_text.splitlines()[0] == "table,row,column,value,ci_low,ci_high,note,n"
        assert "copa_table4_1,w/o CT" in csv_text

    def test_freeze_then_check_matches_until_the_data_change(self, copa):
        project, items, llm, _ = copa
        frozen = json.loads(run_command("copa_eval", "copa", "--run", str(llm.pk), "--bootstrap", "100", "--freeze"))
        snapshot = ReportSnapshot.objects.get(pk=frozen["snapshot"])
        assert snapshot.evaluation == "copa_eval" and "tab:concord-copa_table3" in snapshot.latex
        check = json.loads(run_command("copa_eval", "copa", "--check", str(snapshot.pk)))
        assert (check["inputs_match"], check["numbers_match"], check["error"]) == (True, True, None)
        suggest(llm, items["p3"][1], copa_value(0), prompt_sha256="q" * 64)  # the failed answer now scored
        check = json.loads(run_command("copa_eval", "copa", "--check", str(snapshot.pk)))
        assert check["inputs_match"] is False and check["numbers_match"] is False
        assert any(d["path"].startswith("evaluation.evaluators[0].n_pairs") for d in check["differences"])

    def test_bad_input_exits_1(self, copa, make_project):
        _, _, llm, _ = copa
        make_project("intent_mcq", slug="mcq")
        for args, message in (
            (("copa_eval", "copa"), "at least one judge run"),
            (("copa_eval", "copa", "--run", "999999"), "does not exist"),
            (("copa_eval", "mcq", "--people"), "copa_likert projects"),
            (("copa_eval", "copa", "--run", str(llm.pk), "--run", str(llm.pk)), "twice"),
            (("copa_eval", "copa", "--people", "--bootstrap", "100001"), "at most"),
        ):
            with pytest.raises(CommandError, match=message) as caught:
                run_command(*args)
            assert caught.value.returncode == 1


def assert_well_formed_booktabs(latex: str) -> None:
    assert latex.startswith("% Requires \\usepackage{booktabs}.")
    begins, ends = re.findall(r"\\begin\{(\w+)\}", latex), re.findall(r"\\end\{(\w+)\}", latex)
    assert begins and sorted(begins) == sorted(ends)
    for block in re.findall(r"\\begin\{tabular\}.*?\\end\{tabular\}", latex, re.DOTALL):
        assert block.index(r"\toprule") < block.index(r"\midrule") < block.index(r"\bottomrule")
        columns = len(re.match(r"\\begin\{tabular\}\{(\w+)\}", block).group(1))
        for line in block.splitlines():
            if line.endswith(r"\\"):
                assert len(re.split(r"(?<!\\)&", line)) == columns, line
    # Captions and cells: outside math, every special character is escaped (& only separates cells).
    text_lines = [line for line in latex.splitlines() if line.startswith(r"\caption") or line.endswith(r"\\")]
    for line in text_lines:
        plain = re.sub(r"(?<!\\)\$.*?(?<!\\)\$", "", line).replace(" & ", " ")
        assert not re.search(r"(?<!\\)[%#_&$^~]", plain), line


class McqEvalCommandTests:
    def test_runs_baselines_and_breakdowns_by_hand(self, mcq):
        _, plain, shuffled = mcq
        data = json.loads(run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--run", str(shuffled.pk)))
        first, second = data["runs"]
        assert (first["label"].split(":")[0], second["label"].split(":")[0]) == ("no shuffle", "shuffle-7")
        assert (first["n_instances"], first["n_answered"], first["parse_failures"], first["not_covered"]) == (
            3,
            2,
            1,
            0,
        )
        assert first["f1"]["failures_left_out"] == pytest.approx((1 + 2 / 3) / 2)
        assert first["f1"]["failures_scored_zero"] == pytest.approx((1 + 2 / 3) / 3)
        assert second["f1"]["failures_scored_zero"] == pytest.approx(2 / 3)
        zero = data["over_runs"]["failures_scored_zero"]
        values = [(1 + 2 / 3) / 3, 2 / 3]
        assert zero["mean"] == pytest.approx(sum(values) / 2)
        assert zero["std"] == pytest.approx(abs(values[0] - values[1]) / 2**0.5)  # sample std of two
        # Random guess: v/u·2/(1+v) = 1/4, (2/4)(2/3), 1/4.
        assert data["random_guess"]["statistic"] == pytest.approx((0.25 + 1 / 3 + 0.25) / 3)
        assert data["human"]["measured"] == {"statistic": pytest.approx(0.75), "n_answers": 2, "n_instances": 2}
        # Table 6: SNIPS 67% on 2 instances, SciCite 86% on 1.
        assert data["human"]["estimated"]["statistic"] == pytest.approx((2 * 0.67 + 0.86) / 3)
        by_form = {g["group"]: g for g in data["breakdowns"]["text_form"]}
        assert by_form["monologue"]["runs"][0] == {
            "run": plain.pk,
            "failures_left_out": None,
            "failures_scored_zero": 0.0,
        }
        labels = {g["group"]: g["n_instances"] for g in data["breakdowns"]["label_type"]}
        assert labels == {"multiple": 1, "single": 2}
        assert {g["group"] for g in data["breakdowns"]["domain"]} == {"daily life", "writing"}

    def test_own_human_score_table_and_its_errors(self, mcq, tmp_path):
        _, plain, _ = mcq
        table = tmp_path / "scores.csv"
        table.write_text("dataset,score\nsnips,50%\nSciCite,\n")
        data = json.loads(run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--human-scores", str(table)))
        assert data["human"]["estimated"]["statistic"] == pytest.approx(0.5)
        assert data["human"]["estimated"]["n_instances"] == 2
        table.write_text("dataset,score\nsnips,lots\n")
        with pytest.raises(CommandError, match="line 2, field score") as caught:
            run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--human-scores", str(table))
        assert caught.value.returncode == 1

    def test_latex_compiles_shape_and_freeze_round_trip(self, mcq):
        _, plain, shuffled = mcq
        latex = run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--run", str(shuffled.pk), "--format", "latex")
        assert_well_formed_booktabs(latex)
        frozen = json.loads(run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--freeze", "--title", "t"))
        check = json.loads(run_command("mcq_eval", "mcq", "--check", str(frozen["snapshot"])))
        assert check["numbers_match"] and check["inputs_match"]


class McqEvalStatisticsCommandTests:
    def test_std_choice_is_in_the_json_and_the_tables(self, mcq):
        _, plain, shuffled = mcq
        runs = ("--run", str(plain.pk), "--run", str(shuffled.pk))
        values = [(1 + 2 / 3) / 3, 2 / 3]  # failures scored 0, by hand (see above)
        for std, ddof in (("sample", 1), ("population", 0)):
            data = json.loads(run_command("mcq_eval", "mcq", *runs, "--std", std))
            assert data["std"] == {"name": std, "ddof": ddof}
            zero = data["over_runs"]["failures_scored_zero"]
            expected = float(np.std(values, ddof=ddof))
            mean = sum(values) / 2
            assert (zero["std"], zero["ddof"], zero["two_sigma"]) == (
                pytest.approx(expected),
                ddof,
                pytest.approx(2 * expected),
            )
            assert zero["error_bar"] == [pytest.approx(mean - 2 * expected), pytest.approx(mean + 2 * expected)]
            markdown = run_command("mcq_eval", "mcq", *runs, "--std", std, "--format", "md")
            assert f"{std} std (ddof {ddof})".capitalize() + " over runs" in markdown
            assert "2-sigma error bar (±)" in markdown
        with pytest.raises(CommandError):
            run_command("mcq_eval", "mcq", *runs, "--std", "both")

    def test_error_bar_table_and_plot(self, mcq, tmp_path):
        _, plain, shuffled = mcq
        runs = ("--run", str(plain.pk), "--run", str(shuffled.pk))
        plot = tmp_path / "bars.svg"
        csv_text = run_command("mcq_eval", "mcq", *runs, "--std", "population", "--format", "csv", "--plot", str(plot))
        assert plot.read_text().startswith("<?xml") and "<svg" in plot.read_text()
        # Daily life (i1, i2): scored 0 is 5/6 in the plain run, 1/2 in the shuffled one; std 1/6, 2σ 1/3.
        rows = {tuple(line.split(",")[:3]): line.split(",")[3] for line in csv_text.splitlines()[1:]}
        assert float(rows[("mcq_error_bars", "daily life", "F1 scored 0")]) == pytest.approx(2 / 3)
        assert float(rows[("mcq_error_bars", "daily life", "2σ")]) == pytest.approx(1 / 3)
        assert float(rows[("mcq_error_bars", "daily life", "Low")]) == pytest.approx(1 / 3)

    def test_partial_answers_get_the_released_scorer_s_credit_in_the_scored_zero_column_only(
        self, make_project, judge_run
    ):
        project = make_project("intent_mcq", slug="partial")
        i1 = mcq_item(project, "i1", [2], "SNIPS", "daily life", "query")
        i2 = mcq_item(project, "i2", [0], "SNIPS", "daily life", "query")
        plain = judge_run(project, seed=None)
        mixed = suggest(plain, i1, None, failure="answer[1]: must be one of A, B, C, D")
        mixed.raw_output = json.dumps({"answer": ["C", "K"]})  # C is option 2 (no shuffle), K is no option
        mixed.save(update_fields=["raw_output"])
        suggest(plain, i2, None, failure="not json")
        (run,) = json.loads(run_command("mcq_eval", "partial", "--run", str(plain.pk)))["runs"]
        assert (run["parse_failures"], run["partial_credit"], run["n_answered"]) == (2, 1, 0)
        assert run["f1"]["failures_left_out"] is None  # still failures there
        # 2|{2}∩{2}| / (|{2}| + 1 invalid + |{2}|) = 2/3 for i1, 0 for i2.
        assert run["f1"]["failures_scored_zero"] == pytest.approx((2 / 3) / 2)

    def test_a_random_guess_run_is_labelled_a_baseline_not_a_shuffle(self, mcq, judge_run):
        project, plain, _ = mcq
        guess = judge_run(project, backend="baseline", seed=42)
        runs = json.loads(run_command("mcq_eval", "mcq", "--run", str(plain.pk), "--run", str(guess.pk)))["runs"]
        assert runs[1]["label"].startswith("baseline, seed 42: ") and "shuffle" not in runs[1]["label"]
        assert (runs[1]["shuffled"], runs[1]["baseline"], runs[0]["baseline"]) == (False, True, False)


class BuildMcqTests:
    def test_a_text_with_several_gold_intents_keeps_every_correct_option(self):
        from validation.mcq import LabelStatement, mcq_instances

        labels = [
            LabelStatement("a", "D", "book", "To book a flight.", ("book and pay", "book only"), "travel", "query"),
            LabelStatement("b", "D", "pay", "To pay.", ("book and pay",), "travel", "query"),
            LabelStatement("c", "D", "other", "To do other.", ("other",), "travel", "query"),
        ]
        records = {r["context"]: r for r in mcq_instances(labels, seed=5)}
        assert len(records) == 3
        both = records["book and pay"]
        assert sorted(both["options"][i] for i in both["answers"]) == ["To book a flight.", "To pay."]
        assert both["meta"]["label_type"] == "multiple" and both["meta"]["labels"] == ["book", "pay"]
        assert records["book only"]["meta"]["label_type"] == "single"
        assert both["meta"]["domain"] == "travel" and both["context_type"] == "query"

    def test_downsampling_per_dataset_is_seeded(self):
        from validation.mcq import LabelStatement, mcq_instances

        labels = [
            LabelStatement(f"l{i}", "D", f"x{i}", f"To {i}.", tuple(f"t{i}-{j}" for j in range(5))) for i in range(4)
        ]
        first = [r["external_id"] for r in mcq_instances(labels, seed=1, max_per_dataset=6)]
        assert len(first) == 6 and first == [r["external_id"] for r in mcq_instances(labels, seed=1, max_per_dataset=6)]
        assert first != [r["external_id"] for r in mcq_instances(labels, seed=2, max_per_dataset=6)]


class McqModelsTests:
    def test_runs_group_by_model_and_avg_over_models_is_the_mean_of_their_means(self, mcq, judge_run):
        project, plain, shuffled = mcq
        guess = judge_run(project, backend="baseline", seed=42)
        items = {item.external_id: item for item in project.items.all()}
        for external_id, chosen in (("i1", [0]), ("i2", [2]), ("i3", [2])):  # F1 1, 0, 1
            suggest(guess, items[external_id], {"chosen": chosen})
        runs = ("--run", str(plain.pk), "--run", str(shuffled.pk), "--run", str(guess.pk))
        data = json.loads(run_command("mcq_eval", "mcq", *runs, "--std", "population"))
        llm, baseline = data["models"]
        assert (llm["runs"], baseline["runs"]) == ([plain.pk, shuffled.pk], [guess.pk])
        llm_mean = ((1 + 2 / 3) / 3 + 2 / 3) / 2  # failures scored 0, the two option orders
        assert llm["over_runs"]["failures_scored_zero"]["mean"] == pytest.approx(llm_mean)
        assert baseline["over_runs"]["failures_scored_zero"]["std"] is None  # one run
        average = data["avg_over_models"]
        assert average["n_models"] == 2
        assert average["over_runs"]["failures_scored_zero"] == pytest.approx((llm_mean + 2 / 3) / 2)
        # Writing (i3 alone): the LLM scores 0 then 1 (mean 1/2), the baseline 1.
        writing = average["breakdowns"]["domain"]["writing"]["failures_scored_zero"]
        assert llm["breakdowns"]["domain"]["writing"]["failures_scored_zero"] == pytest.approx(0.5)
        assert writing == pytest.approx((0.5 + 1) / 2)
        markdown = run_command("mcq_eval", "mcq", *runs, "--format", "md")
        assert "| **Avg. over Models** |" in markdown and "(IntentGrasp Table 10)" in markdown


class BuildMcqSetsTests:
    def test_max_per_dataset_keeps_n_valid_instances_where_n_exist(self):
        from validation.mcq import BuildCounts, LabelStatement, mcq_instances

        # Twelve labels of dataset D, each with a text of its own, and one text ("all") that exemplifies
        # every label: twelve correct statements cannot fit ten options, so it is no instance. Asking for
        # twelve keeps the twelve valid ones, whatever the seed.
        labels = [LabelStatement(f"l{i}", "D", f"x{i}", f"To {i}.", (f"t{i}", "all")) for i in range(12)]
        for seed in range(20):
            counts = BuildCounts()
            records = list(mcq_instances(labels, seed=seed, max_per_dataset=12, counts=counts))
            assert len(records) == 12 and "all" not in {r["context"] for r in records}
            assert (counts.too_many_answers, counts.downsampled) == (1, 0)
        assert len(list(mcq_instances(labels, seed=1, max_per_dataset=3))) == 3

    def test_source_facts_travel_from_the_label_meta_to_the_breakdowns(self, make_project, judge_run):
        from validation.mcq import LabelStatement, mcq_instances, source_facts

        facts = source_facts({"synthetic": True, "sensitive": False, "year": 2019})
        assert facts == (("annotation", "synthetic"), ("sensitive", "no"), ("year", "2019"))
        assert source_facts({"synthetic": "yes", "year": True}) == ()
        labels = [
            LabelStatement("a", "S", "x", "To x.", ("t1",), source_facts=facts),
            LabelStatement("b", "S", "y", "To y.", ("t2",), source_facts=facts),
            LabelStatement("c", "H", "x", "To hx.", ("h1",), source_facts=source_facts({"synthetic": False})),
            LabelStatement("d", "H", "y", "To hy.", ("h2",), source_facts=source_facts({"synthetic": False})),
        ]
        project = make_project("intent_mcq", slug="facts")
        records = list(mcq_instances(labels, seed=3))
        items = [
            Item.objects.create(project=project, external_id=r["external_id"], payload={k: r[k] for k in PAYLOAD})
            for r in records
        ]
        run = judge_run(project, seed=None)
        for item in items:  # right on the synthetic dataset S, wrong on the human-annotated H
            key = item.payload["answers"]
            suggest(run, item, {"chosen": key if item.payload["meta"]["dataset"] == "S" else [1 - key[0]]})
        data = json.loads(run_command("mcq_eval", "facts", "--run", str(run.pk)))
        by_style = {g["group"]: g["runs"][0]["failures_left_out"] for g in data["breakdowns"]["annotation"]}
        assert by_style == {"human": 0.0, "synthetic": 1.0}
        assert {g["group"] for g in data["breakdowns"]["sensitive"]} == {"no", "(none)"}
        assert {g["group"]: g["n_instances"] for g in data["breakdowns"]["year"]} == {"2019": 2, "(none)": 2}


PAYLOAD = ("context", "context_type", "question", "options", "answers", "meta")


def assert_pdflatex_compiles(latex: str, folder: Path) -> None:
    """The tables compile in a minimal article with booktabs, as a paper would include them."""
    document = folder / "t.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + latex
        + "\n\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
