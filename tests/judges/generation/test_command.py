"""generate_items: one JSON object on stdout; exit 0 finished, 1 bad input (line and field), 2 usage."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Item
from tests.judges.generation.conftest import LABELS, write_threads
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db


def generate(*args: str) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("generate_items", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


class GenerateItemsCommandTests:
    def test_prints_the_run_summary_and_exits_0_with_failures_listed_on_request(
        self, make_project, llm_server, tmp_path, settings
    ):
        settings.JUDGE_CHUNK_RETRIES = 0
        llm_server.script = lambda r: Reply.text("not json") if "#1#" in r.text else valid_answer(r)
        project = make_project("ipqa_core_intent")
        path = write_threads(tmp_path / "t.jsonl", 3)
        summary, _ = generate(
            project.slug, "--from", str(path), "--step", "ipqa_intents", "--backend", "openai", "--model", "m",
            "--wait", "--failures",
        )  # fmt: skip
        failures = summary.pop("failures")
        assert summary == {
            "project": project.slug,
            "run": project.generation_runs.get().pk,
            "step": "ipqa_intents",
            "records": 3,
            "items_created": 2,
            "failed": 1,
        }
        assert [(f["line"], f["raw_output"]) for f in failures] == [(2, "not json")]
        assert "not valid JSON" in failures[0]["reason"]

    def test_limit_takes_the_first_records_only(self, make_project):
        project = make_project("label_contextualization")
        summary, _ = generate(
            project.slug, "--from", str(LABELS), "--step", "label_statement", "--backend", "baseline", "--limit", "4"
        )
        assert (summary["records"], summary["items_created"]) == (4, 4)
        assert Item.objects.filter(project=project).count() == 4

    def test_a_bad_line_exits_1_naming_the_line_and_field_and_starts_nothing(self, make_project, tmp_path, capsys):
        project = make_project("ipqa_core_intent")
        path = write_threads(tmp_path / "t.jsonl", 3, change=lambda n, t: t.pop("answers") if n == 2 else None)
        with pytest.raises(CommandError) as caught:
            call_command(
                "generate_items", project.slug, "--from", str(path), "--step", "ipqa_intents", "--backend", "baseline"
            )
        assert caught.value.returncode == 1
        assert "line 3, field answers: missing" in capsys.readouterr().err
        assert not project.generation_runs.exists()

    @pytest.mark.parametrize(
        "extra",
        [
            ["--step", "ipqa_intents", "--backend", "baseline", "--profile-from", "current"],
            ["--step", "ipqa_intents", "--backend", "baseline", "--limit", "0"],
            ["--step", "ipqa_intents", "--backend", "openai", "--temperature", "3"],
        ],
    )
    def test_usage_errors_exit_2(self, make_project, threads_file, extra):
        project = make_project("ipqa_core_intent")
        with pytest.raises(CommandError) as caught:
            call_command("generate_items", project.slug, "--from", str(threads_file), "--model", "m", *extra)
        assert caught.value.returncode == 2

    def test_a_step_of_another_kind_exits_1(self, make_project, threads_file):
        project = make_project("copa_likert")
        with pytest.raises(CommandError) as caught:
            call_command(
                "generate_items",
                project.slug,
                "--from",
                str(threads_file),
                "--step",
                "ipqa_intents",
                "--backend",
                "baseline",
            )
        assert caught.value.returncode == 1 and "copa_likert project" in str(caught.value)
