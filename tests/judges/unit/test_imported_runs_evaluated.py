"""Imported runs in the reports and paper evaluations: the same values give the same numbers as a
run made with run_judge, and a shuffled multiple-choice run is scored against the right options."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judges.models import JudgeRun
from tests.support.fake_server import Reply, valid_answer
from tests.validation.conftest import annotate, copa_value
from tests.validation.evaluations.conftest import copa_item
from validation.reports import ReportParameters, build_report

pytestmark = pytest.mark.django_db(transaction=True)


def command_json(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return json.loads(out.getvalue())


def numbers_only(data):
    """The numbers of a report table or an evaluation, without the labels that name the run."""
    if isinstance(data, dict):
        return {k: numbers_only(v) for k, v in data.items() if k not in ("label", "run", "title", "caption", "notes")}
    if isinstance(data, list):
        return [numbers_only(v) for v in data]
    return data if not isinstance(data, str) else None


@pytest.fixture
def copa_pairs(make_project):
    project = make_project("copa_likert", slug="copa")
    items = []
    for n in range(6):
        items.append(copa_item(project, f"p{n}-a", f"p{n}", "accepted", f"#{n}a# apple banana"))
        items.append(copa_item(project, f"p{n}-t", f"p{n}", "top-voted", f"#{n}t# cherry"))
    for position, item in enumerate(items):
        annotate(project, item, "ann1", copa_value(position % 3))
        annotate(project, item, "ann2", copa_value((position * 2) % 3, 1, position % 2, 2, 0, 1))
    return project


class ImportedCopaRunTests:
    def test_an_imported_copy_of_a_run_judge_run_gives_the_same_table7_rho_and_copa_eval(
        self, copa_pairs, llm_server, tmp_path
    ):
        # Schema-valid answers that differ by item, and one output that fails to parse.
        llm_server.script = lambda r: Reply.text("Sorry, no JSON") if "#4t#" in r.text else valid_answer(r)
        made = command_json(
            "run_judge", "copa", "--backend", "openai", "--model", "gpt-4o", "--prompt", "copa_likert_evaluation.v1",
            "--wait", "--verbosity", "0",
        )  # fmt: skip
        assert (made["ok"], made["failed"]) == (11, 1)
        exported = tmp_path / "gpt4o.jsonl"
        command_json("export_run", str(made["run"]), "-o", str(exported))
        # The same outputs as a run of the project are named and refused unless imported on purpose.
        with pytest.raises(CommandError, match=f"same outputs as run {made['run']}"):
            command_json("import_run", "copa", str(exported), "--name", "same outputs, imported")
        imported = command_json(
            "import_run", "copa", str(exported), "--name", "same outputs, imported", "--allow-same-outputs"
        )
        assert (imported["ok"], imported["failed"]) == (11, 1)
        run = JudgeRun.objects.get(pk=imported["run"])
        assert run.judge.backend == "imported" and run.judge.prompt_key == "copa_likert_evaluation.v1"

        reports = [
            build_report(project=copa_pairs, parameters=ReportParameters(judge_run_id=r, bootstrap=50))
            for r in (made["run"], run.pk)
        ]
        tables = [numbers_only(r.table("copa_table7").to_json_dict()) for r in reports]
        assert tables[0] == tables[1]
        rhos = [[d.to_json_dict()["spearman"] for d in r.agreement.dimensions.values()] for r in reports]
        assert rhos[0] == rhos[1] and all(rho is not None for rho in rhos[0])
        # Every report that uses the imported run says where its outputs came from.
        assert run.provenance["file_sha256"] in reports[1].judge.label and "imported · gpt-4o" in reports[1].judge.label

        evaluations = [
            command_json("copa_eval", "copa", "--run", str(r), "--bootstrap", "50") for r in (made["run"], run.pk)
        ]
        assert numbers_only(evaluations[0]) == numbers_only(evaluations[1])
        assert evaluations[1]["evaluators"][0]["n_pairs"] == 5  # the pair with the failed output is left out


MCQ_OPTIONS = ["To a.", "To b.", "To c.", "To d."]


@pytest.fixture
def mcq_project(make_project):
    from annotation.models import Item

    project = make_project("intent_mcq", slug="mcq")
    for external_id, answers in (("i1", [2]), ("i2", [0, 3])):
        payload = {
            "context": f"text {external_id}",
            "context_type": "query",
            "question": "Why?",
            "options": MCQ_OPTIONS,
            "answers": answers,
            "meta": {"dataset": "SNIPS", "domain": "daily life"},
        }
        Item.objects.create(project=project, external_id=external_id, payload=payload)
    return project


class ImportedMcqRunTests:
    def test_a_shuffled_run_is_scored_against_the_options_it_was_shown(self, mcq_project, tmp_path):
        # Shown as [c, a, d, b]: the model chose shown position 0 (c) for i1 and 1, 2 (a, d) for i2: all right.
        lines = [
            {"external_id": "i1", "value": {"chosen": [0]}, "option_order": [2, 0, 3, 1]},
            {"external_id": "i2", "value": {"chosen": [1, 2]}, "option_order": [2, 0, 3, 1]},
        ]
        path = tmp_path / "shuffled.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        shuffled = command_json("import_run", "mcq", str(path), "--model", "m", "--sampling", '{"seed": 7}')
        unshuffled = tmp_path / "same-letters.jsonl"
        unshuffled.write_text(
            "".join(json.dumps({k: v for k, v in line.items() if k != "option_order"}) + "\n" for line in lines)
        )
        plain = command_json("import_run", "mcq", str(unshuffled), "--model", "m")
        data = command_json("mcq_eval", "mcq", "--run", str(shuffled["run"]), "--run", str(plain["run"]))
        right, read_as_shown = data["runs"]
        assert right["label"].startswith("shuffle-7") and right["f1"]["failures_scored_zero"] == pytest.approx(1.0)
        # Read in the item's own order, the same positions are wrong: a for i1 (c is right), b and c for i2 (a, d).
        assert read_as_shown["f1"]["failures_scored_zero"] == pytest.approx((0 + 0) / 2)
        # Exported again, the run says what the model said, in the order it was shown.
        out = tmp_path / "again.jsonl"
        command_json("export_run", str(shuffled["run"]), "-o", str(out))
        assert [json.loads(line) for line in out.read_text().splitlines()[1:]] == lines
