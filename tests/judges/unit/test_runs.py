"""Runs: chunks, claims and leases, reruns without duplicates, cancel and resume, stopping on errors."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Item
from judges.errors import (
    CHUNK_GAVE_UP,
    JUDGE_OF_ANOTHER_PROJECT,
    RUN_ALREADY_ACTIVE,
    JudgeInvalid,
    RunStateError,
)
from judges.execution import judge_chunk_process
from judges.models import JudgeChunk, Suggestion
from judges.runs.execution import chunk_abandon, chunk_claim
from judges.runs.services import chunk_record, run_cancel, run_chunks_mark_sent, run_new_watch, run_resume, run_watch
from judges.runs.types import ChunkWork
from judges.selectors import run_progress, suggestion_values
from judges.services import (
    judge_run_start,
)
from judges.tasks import run_dispatch
from tests.judges.conftest import add_items, make_judge, run_now
from tests.support.fake_server import Reply, valid_answer

# The lease thread has its own database connection: it must see committed rows.
pytestmark = pytest.mark.django_db(transaction=True)


def openai_judge(server, **options):
    return make_judge("copa_likert", "openai", **options)


class RunTests:
    def test_every_item_gets_one_ok_suggestion_with_its_measurements(self, copa, llm_server):
        items = add_items(copa, 12)
        run = run_now(openai_judge(llm_server), copa, chunk_size=5)
        assert (run.status, run.total, run.ok_count, run.failed_count, run.pending_count) == ("completed", 12, 12, 0, 0)
        assert run.chunks.count() == 3 and set(run.chunks.values_list("status", flat=True)) == {"done"}
        assert run.started_at <= run.finished_at
        suggestions = Suggestion.objects.filter(run=run)
        assert sorted(suggestions.values_list("item_id", flat=True)) == [i.pk for i in items]
        for s in suggestions.select_related("item"):
            assert copa.task_kind.check_value(s.value, payload=s.item.payload) == []
            assert len(s.prompt_sha256) == 64 and s.raw_output and s.attempts == 1
            assert s.tokens_in > 0 and s.tokens_out > 0 and s.latency_ms > 0
        assert len(llm_server.requests) == 12
        progress = run_progress(run=run)
        assert progress.percent == 100 and progress.items_per_s > 0 and progress.eta_seconds is None

    def test_rerun_reuses_answers_and_creates_no_duplicates(self, copa, llm_server):
        add_items(copa, 8)
        judge = openai_judge(llm_server)
        first = run_now(judge, copa)
        second = run_now(judge, copa)
        assert len(llm_server.requests) == 8  # the second run asked nothing
        assert Suggestion.objects.filter(judge=judge).count() == 8
        assert (second.status, second.ok_count) == ("completed", 8)
        assert [v for _, v in suggestion_values(run_id=second.pk)] == [v for _, v in suggestion_values(run_id=first.pk)]

    def test_rerun_retries_the_failed_items_in_place(self, copa, llm_server):
        add_items(copa, 6)
        judge = openai_judge(llm_server)
        llm_server.script = lambda r: Reply.text("not json") if "#3#" in r.text else valid_answer(r)
        first = run_now(judge, copa)
        failed = Suggestion.objects.get(judge=judge, status="failed")
        assert (first.ok_count, first.failed_count) == (5, 1)
        llm_server.script = valid_answer
        second = run_now(judge, copa)
        assert (second.ok_count, second.failed_count) == (6, 0)
        fixed = Suggestion.objects.get(pk=failed.pk)
        assert (fixed.status, fixed.run_id, fixed.failure_reason) == ("ok", second.pk, "")
        assert Suggestion.objects.filter(judge=judge).count() == 6
        assert llm_server.attempts_for("#3#") == 2 + 1 and llm_server.attempts_for("#2#") == 1

    def test_an_empty_project_completes_at_once(self, copa, llm_server):
        run = run_now(openai_judge(llm_server), copa)
        assert (run.status, run.total) == ("completed", 0)

    def test_a_judge_of_another_project_is_refused(self, make_project, copa, llm_server):
        other = make_project("copa_likert", slug="other")
        with pytest.raises(JudgeInvalid) as caught:
            judge_run_start(judge=openai_judge(llm_server, name="copa judge"), project=other)
        assert caught.value.message == JUDGE_OF_ANOTHER_PROJECT.format(judge="copa judge", project="other")
        assert not other.judge_runs.exists()

    def test_a_second_running_run_of_one_judge_is_refused(self, copa, llm_server):
        add_items(copa, 2)
        judge = openai_judge(llm_server)
        run = judge_run_start(judge=judge, project=copa)  # not sent: it stays running
        with pytest.raises(RunStateError) as caught:
            judge_run_start(judge=judge, project=copa)
        assert caught.value.message == RUN_ALREADY_ACTIVE.format(run=run.pk)


class ChunkClaimTests:
    def test_a_redelivered_chunk_does_nothing(self, copa, llm_server):
        add_items(copa, 4)
        run = run_now(openai_judge(llm_server), copa)
        chunk = run.chunks.get()
        assert judge_chunk_process(chunk_id=chunk.pk) is None
        assert len(llm_server.requests) == 4 and Suggestion.objects.count() == 4

    def test_a_chunk_held_under_a_live_lease_is_not_taken(self, copa, llm_server):
        add_items(copa, 4)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa)
        chunk = chunk_claim(run_type="judge", chunk_id=run.chunks.get().pk)
        assert chunk is not None and chunk_claim(run_type="judge", chunk_id=chunk.pk) is None

    def test_a_worker_that_lost_its_lease_records_nothing(self, copa, llm_server):
        add_items(copa, 4)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa)
        stale = chunk_claim(run_type="judge", chunk_id=run.chunks.get().pk)
        JudgeChunk.objects.filter(pk=stale.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        fresh = chunk_claim(run_type="judge", chunk_id=stale.pk)
        assert fresh is not None and fresh.claim_token != stale.claim_token and fresh.attempts == 2
        assert (
            chunk_record(
                run_type="judge", chunk=stale, token=stale.claim_token, work=ChunkWork([], size=4), outcomes=[]
            )
            is None
        )
        judge_chunk_process(chunk_id=stale.pk)  # the chunk is held by `fresh`: nothing to take
        assert not Suggestion.objects.exists()

    def test_the_watcher_hands_out_again_a_chunk_whose_worker_vanished(self, copa, llm_server):
        add_items(copa, 6)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa, chunk_size=3)
        first, second = run.chunks.all()
        dead = chunk_claim(run_type="judge", chunk_id=first.pk)  # a worker took it, then was killed
        JudgeChunk.objects.filter(pk=dead.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        JudgeChunk.objects.filter(pk=second.pk).update(enqueued_at=timezone.now())
        token = run_new_watch(run_type="judge", run_id=run.pk)
        dispatch = run_watch(run_type="judge", run_id=run.pk, token=token)
        assert dispatch.chunk_ids == [first.pk]  # the other one was sent a moment ago
        assert JudgeChunk.objects.get(pk=first.pk).status == "pending"
        assert run_watch(run_type="judge", run_id=run.pk, token="an-older-watcher") is None
        for chunk_id in (first.pk, second.pk):
            judge_chunk_process(chunk_id=chunk_id)
        run.refresh_from_db()
        assert (run.status, run.ok_count) == ("completed", 6) and Suggestion.objects.count() == 6

    def test_dispatch_marks_every_waiting_chunk_sent_once_across_batches(self, copa, llm_server, monkeypatch):
        monkeypatch.setattr("judges.leasing.MARK_SENT_BATCH", 2)
        add_items(copa, 5)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa, chunk_size=1)
        with CaptureQueriesContext(connection) as queries:
            dispatch = run_chunks_mark_sent(run_type="judge", run_id=run.pk)
        assert sum(q["sql"].startswith('UPDATE "judges_judgechunk"') for q in queries.captured_queries) == 3
        assert sorted(dispatch.chunk_ids) == sorted(run.chunks.values_list("pk", flat=True))
        assert set(run.chunks.values_list("sends", flat=True)) == {1}
        assert not run.chunks.filter(enqueued_at__isnull=True).exists()

    def test_a_chunk_that_keeps_failing_stops_the_run_with_its_error(self, copa, settings, llm_server):
        settings.JUDGE_CHUNK_MAX_CLAIMS = 2
        add_items(copa, 2)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa)
        chunk = run.chunks.get()
        for _ in range(2):
            chunk_claim(run_type="judge", chunk_id=chunk.pk)
            chunk_abandon(run_type="judge", chunk_id=chunk.pk, error="KeyError: 'boom'")
        run.refresh_from_db()
        assert run.status == "failed"
        assert run.last_error == CHUNK_GAVE_UP.format(number=0, attempts=2, error="KeyError: 'boom'")


class CancelResumeTests:
    def test_cancel_stops_the_run_and_resume_finishes_it_without_redoing(self, copa, llm_server):
        add_items(copa, 8)
        run = judge_run_start(judge=openai_judge(llm_server), project=copa, chunk_size=4)
        first, second = run.chunks.all()
        judge_chunk_process(chunk_id=first.pk)
        run_cancel(run=run)
        assert judge_chunk_process(chunk_id=second.pk) is None  # a cancelled run's chunks are not taken
        run.refresh_from_db()
        assert (run.status, run.ok_count, run.pending_count) == ("cancelled", 4, 4)
        with pytest.raises(RunStateError):
            run_cancel(run=run)
        run_resume(run=run)
        run_dispatch(run_type="judge", run_id=run.pk)
        run.refresh_from_db()
        assert (run.status, run.ok_count, run.done_at_resume) == ("completed", 8, 4)
        assert len(llm_server.requests) == 8
        with pytest.raises(RunStateError):
            run_resume(run=run)

    def test_cancel_during_a_chunk_keeps_the_finished_items(self, copa, settings, llm_server):
        settings.JUDGE_LEASE_SECONDS = 0.3  # the heartbeat, and so the cancel check, every 0.1 s
        add_items(copa, 20)
        llm_server.script = lambda r: Reply.json(
            {"scores": dict.fromkeys(["CT", "SA", "SC", "CLM", "MS", "AMR"], 1)}, delay=0.05
        )
        run = judge_run_start(judge=openai_judge(llm_server), project=copa, concurrency=1)
        threading.Timer(0.4, lambda: run_cancel(run=run)).start()
        judge_chunk_process(chunk_id=run.chunks.get().pk)
        run.refresh_from_db()
        assert run.status == "cancelled" and 0 < run.ok_count < 20
        assert run.chunks.get().status == "pending"
        run_resume(run=run)
        run_dispatch(run_type="judge", run_id=run.pk)
        run.refresh_from_db()
        assert (run.status, run.ok_count) == ("completed", 20)
        assert len(llm_server.requests) == 20 and Suggestion.objects.count() == 20


class StopTests:
    def test_a_refused_key_stops_the_run_with_the_reason_and_scores_nothing(self, copa, llm_server):
        add_items(copa, 5)
        llm_server.script = lambda r: Reply.http_error(401, "Incorrect API key provided")
        run = run_now(openai_judge(llm_server), copa)
        assert run.status == "failed" and "HTTP 401" in run.last_error and "Incorrect API key" in run.last_error
        assert not Suggestion.objects.exists() and run.pending_count == 5
        llm_server.script = valid_answer
        run_resume(run=run)
        run_dispatch(run_type="judge", run_id=run.pk)
        run.refresh_from_db()
        assert (run.status, run.ok_count) == ("completed", 5)

    def test_items_added_after_the_start_belong_to_a_later_run(self, copa, llm_server):
        add_items(copa, 3)
        judge = openai_judge(llm_server)
        run = judge_run_start(judge=judge, project=copa)
        add_items(copa, 2, start=3)
        run_dispatch(run_type="judge", run_id=run.pk)
        run.refresh_from_db()
        assert (run.total, run.ok_count) == (3, 3)
        assert len(list(suggestion_values(run_id=run.pk))) == 3
        later = run_now(judge, copa)
        assert (later.total, later.ok_count) == (5, 5) and Item.objects.count() == 5
        assert len(llm_server.requests) == 5
