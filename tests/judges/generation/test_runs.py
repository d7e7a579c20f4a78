"""Generation runs against the local fault-injecting OpenAI-compatible server: every record ends as
items or as a failure with its raw output and reason; items carry provenance; reruns never duplicate."""

from __future__ import annotations

import json

import pytest

from annotation.kinds.copa_likert import FACTORS
from annotation.models import Item
from judges.errors import JudgeInvalid, RunStateError
from judges.generation.execution import generation_chunk_process
from judges.generation.services import (
    GENERATION_ACTIVE,
    STEP_OF_ANOTHER_KIND,
    generation_run_start,
)
from judges.models import GenerationRecord
from judges.runs.services import run_cancel, run_resume
from judges.tasks import run_dispatch
from tests.judges.generation.conftest import LABELS, run_now, write_threads
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db


def items_of(project) -> list[Item]:
    return list(Item.objects.filter(project=project).order_by("external_id"))


class GenerationRunTests:
    def test_ipqa_intents_makes_one_item_per_thread_with_the_models_intents_and_provenance(
        self, make_project, llm_server, threads_file
    ):
        llm_server.script = lambda r: Reply.json({"intents": ["To learn it", "To learn it", "To fix it"]})
        project = make_project("ipqa_core_intent")
        run = run_now(project=project, step="ipqa_intents", path=threads_file, backend="openai", seed=7)
        assert (run.status, run.total, run.ok_count, run.failed_count, run.items_created) == ("completed", 6, 6, 0, 6)
        item = items_of(project)[0]
        assert item.payload["candidate_intents"] == ["To learn it", "To fix it"]
        generation, source = item.payload["meta"]["generation"], item.payload["meta"]["source"]
        assert generation["run"] == run.pk and generation["step"] == "ipqa_intents"
        assert generation["prompt"] == "ipqa_intent_generation.v1" and len(generation["prompt_sha256"]) == 64
        assert (generation["model"], generation["temperature"], generation["seed"]) == ("test-model", 0.0, 7)
        assert source["record_id"] == item.external_id and source["licence"].startswith("CC BY-SA")
        assert source["url"].startswith("https://")

    def test_copa_profile_makes_the_accepted_and_the_top_voted_item_of_a_question_as_one_pair(
        self, make_project, llm_server, threads_file
    ):
        project = make_project("copa_likert")
        run = run_now(project=project, step="copa_profile", path=threads_file, backend="openai")
        assert (run.total, run.items_created) == (6, 12)
        first, second = items_of(project)[:2]
        assert first.external_id.endswith(":accepted") and second.external_id.endswith(":top-voted")
        assert first.payload["pair_id"] == second.payload["pair_id"]
        assert {first.payload["response_source"], second.payload["response_source"]} == {"accepted", "top-voted"}
        assert first.payload["profile"] == second.payload["profile"] and set(first.payload["profile"]) == set(FACTORS)
        assert first.payload["response"] != second.payload["response"]

    def test_copa_rationale_samples_at_the_papers_temperature(self, make_project, llm_server, threads_file):
        project = make_project("rationale_inspection")
        run = run_now(project=project, step="copa_rationale", path=threads_file, backend="openai")
        assert run.temperature == 0.7 and {r.body["temperature"] for r in llm_server.requests} == {0.7}
        payload = items_of(project)[0].payload
        assert payload["rationale"]["rationales"] and payload["context"]["accepted_answer"]

    def test_label_statement_keeps_the_draft_with_the_labels_examples(self, make_project, llm_server):
        llm_server.script = lambda r: Reply.json({"action": "write", "statement": "To play music.", "reason": ""})
        project = make_project("label_contextualization")
        run = run_now(project=project, step="label_statement", path=LABELS, backend="openai")
        assert run.items_created == 10
        item = Item.objects.get(project=project, external_id="SNIPS:PlayMusic")
        assert item.payload["meta"]["draft"] == {"action": "write", "statement": "To play music."}
        assert len(item.payload["examples"]) == 3 and "AddToPlaylist" in item.payload["other_labels"]

    def test_faults_end_in_exact_counts_of_items_and_failures(self, make_project, llm_server, tmp_path, settings):
        """429 and a dropped connection once, slow answers: retried to items. 500 every time, invalid
        JSON, a schema violation: failures with the raw output and the reason, never items."""
        settings.JUDGE_CHUNK_RETRIES = 0

        def script(request):
            marker = request.text.split("#")[1] if "#" in request.text else ""
            if marker == "0" and request.attempt == 1:
                return Reply.http_error(429, retry_after=0)
            if marker == "1":
                return Reply.http_error(500)
            if marker == "2":
                return Reply.text('{"intents": ["To do it"')
            if marker == "3":
                return Reply.json({"intents": ["no To prefix"]})
            if marker == "4" and request.attempt == 1:
                return Reply.dropped()
            reply = valid_answer(request)
            reply.delay = 0.05 if marker == "5" else 0.0
            return reply

        llm_server.script = script
        project = make_project("ipqa_core_intent")
        path = write_threads(tmp_path / "t.jsonl", 8)
        run = run_now(project=project, step="ipqa_intents", path=path, backend="openai")
        assert (run.status, run.total, run.ok_count, run.failed_count, run.items_created) == ("completed", 8, 5, 3, 5)
        assert Item.objects.filter(project=project).count() == 5
        failed = {r.source_id.split(":")[-1]: r for r in GenerationRecord.objects.filter(run=run, status="failed")}
        assert set(failed) == {"900001", "900002", "900003"}
        assert "HTTP 500" in failed["900001"].failure_reason and failed["900001"].raw_output == ""
        assert "not valid JSON" in failed["900002"].failure_reason and failed["900002"].raw_output.startswith(
            '{"intents"'
        )
        assert "intents[0]" in failed["900003"].failure_reason and "no To prefix" in failed["900003"].raw_output
        assert not GenerationRecord.objects.filter(run=run, status="pending").exists()

    def test_a_rerun_asks_only_for_what_failed_and_never_duplicates_an_item(
        self, make_project, llm_server, tmp_path, settings
    ):
        settings.JUDGE_CHUNK_RETRIES = 0
        broken = {"on": True}
        llm_server.script = lambda r: Reply.http_error(500) if broken["on"] and "#2#" in r.text else valid_answer(r)
        project = make_project("ipqa_core_intent")
        path = write_threads(tmp_path / "t.jsonl", 5)
        first = run_now(project=project, step="ipqa_intents", path=path, backend="openai")
        assert (first.items_created, first.failed_count) == (4, 1)
        broken["on"] = False
        asked_before = len(llm_server.requests)
        second = run_now(project=project, step="ipqa_intents", path=path, backend="openai")
        assert (second.existing_count, second.ok_count, second.failed_count, second.items_created) == (4, 1, 0, 1)
        assert len(llm_server.requests) - asked_before == 1
        third = run_now(project=project, step="ipqa_intents", path=path, backend="openai")
        assert (third.existing_count, third.items_created) == (5, 0) and third.status == "completed"
        ids = list(Item.objects.filter(project=project).values_list("external_id", flat=True))
        assert len(ids) == len(set(ids)) == 5

    def test_a_profile_never_contains_the_target_question_or_anything_after_it(self, make_project, tmp_path):
        def leak(n, thread):
            thread["asker_earlier_questions"] = [
                {"question_id": 1, "title": "LATER QUESTION", "body_text": "x", "creation_date": "2099-01-01T00:00:00"},
                {
                    "question_id": thread["question_id"],
                    "title": "ITSELF",
                    "body_text": "y",
                    "creation_date": "2000-01-01T00:00:00",
                },
                {
                    "question_id": 2,
                    "title": "EARLIER QUESTION",
                    "body_text": "z",
                    "creation_date": "2000-01-02T00:00:00",
                },
            ]

        path = write_threads(tmp_path / "t.jsonl", 3, change=leak)
        ipqa, copa = make_project("ipqa_core_intent"), make_project("copa_likert")
        run_now(project=ipqa, step="ipqa_intents", path=path, backend="baseline")
        run_now(project=copa, step="copa_profile", path=path, backend="baseline", options={"profile_from": "current"})
        for item in items_of(ipqa):
            assert [q["question"] for q in item.payload["user_profile"]] == ["EARLIER QUESTION"]
        requests = GenerationRecord.objects.filter(run__project=copa).values_list("data", flat=True)
        for data in requests:
            history = [h["question"] for h in data["history"]]
            assert history[0].startswith("EARLIER QUESTION") and history[1].startswith("#")  # then the target itself
            assert not any("LATER" in h or "ITSELF" in h for h in history)
        preceding = make_project("copa_likert", slug="copa-preceding")
        run_now(project=preceding, step="copa_profile", path=path, backend="baseline")
        for data in GenerationRecord.objects.filter(run__project=preceding).values_list("data", flat=True):
            assert [h["question"][:16] for h in data["history"]] == ["EARLIER QUESTION"]

    def test_a_step_for_another_kind_is_refused_and_nothing_is_stored(self, make_project, threads_file):
        project = make_project("copa_likert")
        with pytest.raises(JudgeInvalid) as caught:
            generation_run_start(project=project, step="ipqa_intents", path=threads_file, backend="baseline")
        assert caught.value.message == STEP_OF_ANOTHER_KIND.format(
            step="ipqa_intents", made="ipqa_core_intent", project=project.slug, kind="copa_likert"
        )
        assert not project.generation_runs.exists()

    def test_a_cancelled_run_resumes_to_the_same_items(self, make_project, threads_file):
        project = make_project("ipqa_core_intent")
        run = generation_run_start(project=project, step="ipqa_intents", path=threads_file, backend="baseline")
        with pytest.raises(RunStateError) as caught:
            generation_run_start(project=project, step="ipqa_intents", path=threads_file, backend="baseline")
        assert caught.value.message == GENERATION_ACTIVE.format(run=run.pk, step="ipqa_intents")
        run_cancel(run=run)
        run_dispatch(run_type="generation", run_id=run.pk)  # a cancelled run's chunks are not taken
        assert not Item.objects.filter(project=project).exists()
        run = run_resume(run=run)
        run_dispatch(run_type="generation", run_id=run.pk)
        run.refresh_from_db()
        assert (run.status, run.items_created) == ("completed", 6)

    def test_an_endpoint_the_operator_did_not_configure_is_refused(self, make_project, threads_file):
        project = make_project("ipqa_core_intent")
        with pytest.raises(JudgeInvalid, match="unknown endpoint"):
            generation_run_start(
                project=project,
                step="ipqa_intents",
                path=threads_file,
                backend="openai",
                model="m",
                endpoint="http://x",
            )
        assert not project.generation_runs.exists()

    def test_items_are_created_only_when_every_record_has_an_outcome(self, make_project, llm_server, tmp_path):
        project = make_project("ipqa_core_intent")
        path = write_threads(tmp_path / "t.jsonl", 4)
        run = generation_run_start(
            project=project, step="ipqa_intents", path=path, backend="openai", model="m", chunk_size=2
        )
        first, second = run.chunks.order_by("number")
        generation_chunk_process(chunk_id=first.pk)
        assert not Item.objects.filter(project=project).exists()
        generation_chunk_process(chunk_id=second.pk)
        assert Item.objects.filter(project=project).count() == 4
        assert json.loads(json.dumps(Item.objects.filter(project=project).first().payload["meta"]))["generation"]
