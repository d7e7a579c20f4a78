"""run_judge, as docs/cli.md states it: exit 0 / 1 bad input / 2 usage; JSON on stdout; progress on stderr."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.kinds import get_kind
from judges.backends.baseline import BaselineBackend
from judges.errors import MODEL_REQUIRED
from judges.management.commands.run_judge import Command
from judges.models import Judge, JudgeChunk, Suggestion
from tests.judges.conftest import add_items
from tests.support.fake_server import Reply, valid_answer


def run_judge(*args: str) -> tuple[dict, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("run_judge", *args, stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def exit_code(*argv: str) -> int:
    with pytest.raises(SystemExit) as caught:
        Command().run_from_argv(["manage.py", "run_judge", *argv])
    return caught.value.code


@pytest.mark.django_db(transaction=True)
class RunJudgeTests:
    def test_baseline_run_with_wait(self, copa):
        add_items(copa, 5)
        result, progress = run_judge(copa.slug, "--backend", "baseline", "--wait")
        assert result["label"] == "baseline" and result["baseline"] is True and result["model"] == ""
        assert (result["status"], result["total"], result["ok"], result["failed"], result["pending"]) == (
            "completed",
            5,
            5,
            0,
            0,
        )
        assert result["prompt"] == "copa_jaccard.v1" and result["judge_created"] is True
        assert f"run {result['run']} completed: 5/5 done (5 ok, 0 failed)" in progress

    def test_openai_run_against_a_server_reports_failures_honestly(self, copa, llm_server):
        add_items(copa, 4)
        llm_server.script = lambda r: Reply.json({"scores": {"CT": 3}}) if "#0#" in r.text else valid_answer(r)
        result, _ = run_judge(
            copa.slug,
            "--backend",
            "openai",
            "--model",
            "Qwen/Qwen3-32B",
            "--prompt",
            "copa_likert_evaluation",
            "--concurrency",
            "2",
            "--wait",
        )
        assert (result["ok"], result["failed"], result["label"]) == (3, 1, "openai · Qwen/Qwen3-32B")
        assert Suggestion.objects.filter(status="failed", value__isnull=True).count() == 1
        again, _ = run_judge(copa.slug, "--backend", "openai", "--model", "Qwen/Qwen3-32B")
        assert again["judge"] == result["judge"] and again["judge_created"] is False
        assert Judge.objects.count() == 1

    def test_without_wait_it_prints_the_run_and_returns(self, copa):
        add_items(copa, 2)
        result, err = run_judge(copa.slug, "--backend", "baseline", "--prompt", "copa_inclusion.v1")
        assert result["prompt"] == "copa_inclusion.v1" and err == ""

    def test_no_shuffle_makes_a_judge_without_a_seed_that_keeps_the_option_order(self, make_project, llm_server):
        mcq = make_project("intent_mcq", slug="mcq")
        add_items(mcq, 2)
        options = get_kind("intent_mcq").example_payload()["options"]
        result, _ = run_judge(mcq.slug, "--backend", "openai", "--model", "m", "--no-shuffle", "--wait")
        assert (result["seed"], result["ok"]) == (None, 2) and Judge.objects.get().seed is None
        for request in llm_server.requests:
            shown = "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", options, strict=False))
            assert shown in request.text and "seed" not in request.body
        seeded, _ = run_judge(mcq.slug, "--backend", "openai", "--model", "m", "--seed", "7")
        assert seeded["seed"] == 7 and seeded["judge"] != result["judge"]

    def test_bad_input_exits_1(self, copa):
        with pytest.raises(CommandError) as caught:
            run_judge("no-such-project", "--backend", "baseline")
        assert caught.value.returncode == 1 and "no project with slug 'no-such-project'" in str(caught.value)
        with pytest.raises(CommandError) as caught:
            run_judge(copa.slug, "--backend", "baseline", "--prompt", "intentgrasp_mcq_da")
        assert caught.value.returncode == 1 and "unknown prompt 'intentgrasp_mcq_da'" in str(caught.value)

    def test_a_stopped_run_exits_1_with_its_reason(self, copa, llm_server):
        add_items(copa, 2)
        llm_server.script = lambda r: Reply.http_error(404, "model not found")
        with pytest.raises(CommandError) as caught:
            run_judge(copa.slug, "--backend", "openai", "--model", "nope", "--wait")
        assert caught.value.returncode == 1 and "HTTP 404 from the server: model not found" in str(caught.value)


class BrokenBackend(BaselineBackend):
    def complete(self, requests, **options):
        raise RuntimeError("boom")


@pytest.mark.django_db(transaction=True)
def test_a_crashing_worker_is_reported_not_waited_for_forever(copa, settings):
    """With in-process tasks nothing would ever finish the run: --wait says why instead of waiting."""
    settings.CONCORD_JUDGE_BACKENDS = {
        **settings.CONCORD_JUDGE_BACKENDS,
        "baseline": "tests.judges.unit.test_run_judge_command.BrokenBackend",
    }
    add_items(copa, 2)
    with pytest.raises(CommandError) as caught:
        run_judge(copa.slug, "--backend", "baseline", "--wait")
    assert caught.value.returncode == 1 and "did not finish in this process: RuntimeError: boom" in str(caught.value)
    chunk = JudgeChunk.objects.get()
    assert (chunk.status, chunk.last_error, chunk.attempts) == ("pending", "RuntimeError: boom", 1)
    assert not Suggestion.objects.exists()


class UsageTests:
    def test_usage_errors_exit_2(self, settings, capsys):
        settings.JUDGE_MODEL = ""
        assert exit_code("some-project", "--backend", "llama") == 2
        assert exit_code("some-project") == 2
        assert exit_code("some-project", "--backend", "openai") == 2
        assert MODEL_REQUIRED.format(backend="openai") in capsys.readouterr().err
        assert exit_code("some-project", "--backend", "baseline", "--concurrency", "0") == 2
        assert exit_code("some-project", "--backend", "baseline", "--concurrency", "40000") == 2
        assert exit_code("some-project", "--backend", "baseline", "--seed", "7", "--no-shuffle") == 2
