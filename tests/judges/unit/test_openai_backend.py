"""The openai backend against a local server that fails as each test scripts it.

Whatever the server does, every item ends OK with a valid value or failed with a reason and the raw
answer; retries are bounded; a rerun adds no rows; and no failure is ever stored as a score.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db import connection

from annotation.kinds.copa_likert import FACTORS
from judges.models import Judge, Suggestion
from tests.judges.conftest import add_items, make_judge, run_now
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db(transaction=True)

SCORES_3 = {"scores": {**dict.fromkeys(FACTORS, 1), "CT": 3}}


def judge_for(server, **options):
    return make_judge("copa_likert", "openai", **options)


def marker(request) -> int:
    return int(request.text.split("#")[1])


def assert_every_item_settled(project, judge) -> dict[int, Suggestion]:
    """One suggestion per item: OK with a valid value, or failed with a reason and no value."""
    by_item = {}
    for item in project.items.all():
        (suggestion,) = Suggestion.objects.filter(judge=judge, item=item)
        if suggestion.status == "ok":
            assert project.task_kind.check_value(suggestion.value, payload=item.payload) == []
            assert suggestion.failure_reason == ""
        else:
            assert suggestion.status == "failed" and suggestion.value is None and suggestion.failure_reason
        by_item[int(item.external_id.split("-")[1])] = suggestion
    return by_item


class ScriptedFaultTests:
    def test_every_fault_ends_ok_or_failed_with_its_reason_and_retries_are_bounded(self, copa, settings, llm_server):
        settings.JUDGE_REQUEST_TIMEOUT = 0.3
        behaviours = {
            0: lambda r: valid_answer(r),
            1: lambda r: Reply.http_error(429, "slow down", retry_after=0) if r.attempt <= 2 else valid_answer(r),
            2: lambda r: Reply.http_error(500, "engine overloaded"),
            3: lambda r: Reply.json({"scores": dict.fromkeys(FACTORS, 2)}, delay=1.0 if r.attempt == 1 else 0),
            4: lambda r: Reply.text('{"scores": {"CT": 1,'),
            5: lambda r: Reply.json(SCORES_3),
            6: lambda r: Reply.dropped() if r.attempt == 1 else valid_answer(r),
            7: lambda r: Reply.dropped(),
            8: lambda r: Reply.json({"scores": dict.fromkeys(FACTORS, 0)}, delay=1.0),
            9: lambda r: Reply.text("not json") if r.attempt == 1 else valid_answer(r),
        }
        llm_server.script = lambda r: behaviours[marker(r)](r)
        add_items(copa, len(behaviours))
        judge = judge_for(llm_server)
        run = run_now(judge, copa)
        assert (run.status, run.ok_count, run.failed_count, run.pending_count) == ("completed", 5, 5, 0)
        got = assert_every_item_settled(copa, judge)

        ok = {n: got[n].attempts for n in got if got[n].status == "ok"}
        assert ok == {0: 1, 1: 3, 3: 2, 6: 2, 9: 2}
        assert got[3].value == {"scores": dict.fromkeys(FACTORS, 2)}

        # Transient faults: 3 tries per request, and the chunk tried twice (JUDGE_CHUNK_RETRIES = 1).
        assert "HTTP 500 from the server: engine overloaded (gave up after 3 attempts)" in got[2].failure_reason
        assert "connection failed" in got[7].failure_reason and "gave up after 3 attempts" in got[7].failure_reason
        assert "timed out" in got[8].failure_reason
        for n in (2, 7, 8):
            assert llm_server.attempts_for(f"#{n}#") == 3 * 2
        # Invalid answers: asked twice (JUDGE_PARSE_ATTEMPTS), then failed with the raw text, never scored.
        assert got[4].raw_output == '{"scores": {"CT": 1,' and got[4].failure_reason.startswith("not valid JSON")
        assert got[5].failure_reason == "scores.CT: must be one of 0, 1, 2, got 3 (after 2 answers)"
        assert '"CT": 3' in got[5].raw_output and got[5].value is None
        assert llm_server.attempts_for("#4#") == llm_server.attempts_for("#5#") == 2

        # A rerun retries the failed items only, and adds no row.
        before = len(llm_server.requests)
        rerun = run_now(judge, copa)
        assert (rerun.ok_count, rerun.failed_count) == (5, 5)
        assert Suggestion.objects.filter(judge=judge).count() == len(behaviours)
        asked_again = {marker(r) for r in llm_server.requests[before:]}
        assert asked_again == {2, 4, 5, 7, 8}
        assert_every_item_settled(copa, judge)

    def test_a_score_out_of_range_is_never_stored_as_a_number(self, copa, llm_server):
        llm_server.script = lambda r: Reply.json(SCORES_3)
        add_items(copa, 3)
        judge = judge_for(llm_server)
        run = run_now(judge, copa)
        assert (run.ok_count, run.failed_count) == (0, 3)
        assert list(Suggestion.objects.values_list("value", flat=True)) == [None, None, None]

    def test_a_refused_request_fails_that_item_alone(self, copa, llm_server):
        llm_server.script = lambda r: Reply.http_error(400, "prompt too long") if "#1#" in r.text else valid_answer(r)
        add_items(copa, 3)
        judge = judge_for(llm_server)
        run = run_now(judge, copa)
        got = assert_every_item_settled(copa, judge)
        assert (run.ok_count, run.failed_count) == (2, 1)
        assert got[1].failure_reason == "HTTP 400 from the server: prompt too long" and got[1].attempts == 1

    def test_an_answer_cut_off_at_max_tokens_says_so(self, copa, llm_server):
        llm_server.script = lambda r: Reply.text('{"scores": {', finish_reason="length")
        add_items(copa, 1)
        judge = judge_for(llm_server, max_tokens=7)
        run_now(judge, copa)
        reason = Suggestion.objects.get().failure_reason
        assert reason.startswith("the answer was cut off at max_tokens (7); not valid JSON")

    def test_a_reply_that_is_not_a_chat_completion_fails_that_item_with_what_the_server_sent(self, copa, llm_server):
        replies = {
            0: Reply.raw(b"<html>Bad gateway page</html>"),
            1: Reply.raw(b'{"object": "error"}'),
            2: Reply.raw(b"[1, 2]"),
        }
        llm_server.script = lambda r: replies.get(marker(r)) or valid_answer(r)
        add_items(copa, 4)
        judge = judge_for(llm_server)
        run = run_now(judge, copa)
        got = assert_every_item_settled(copa, judge)
        assert (run.ok_count, run.failed_count) == (1, 3)
        assert got[0].failure_reason.startswith("the server's reply is not a chat completion: not JSON")
        assert got[0].raw_output == "<html>Bad gateway page</html>"
        no_choices = "the server's reply is not a chat completion: no choices"
        assert got[1].failure_reason == got[2].failure_reason == no_choices
        assert got[1].raw_output == '{"object": "error"}' and got[1].attempts == 1
        assert got[3].tokens_in and got[3].tokens_out  # the usage of a real completion is kept


class RequestTests:
    def test_requests_carry_the_schema_sampling_parameters_and_seed(self, copa, llm_server):
        add_items(copa, 1)
        judge = judge_for(llm_server, temperature=0.7, max_tokens=300, seed=365)
        run_now(judge, copa)
        (request,) = llm_server.requests
        body = request.body
        assert (body["model"], body["temperature"], body["max_completion_tokens"], body["seed"]) == (
            "test-model",
            0.7,
            300,
            365,
        )
        schema = body["response_format"]["json_schema"]
        assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
        assert schema["name"] == "copa_likert_evaluation"
        assert schema["schema"]["properties"]["scores"]["properties"]["CT"] == {"type": "integer", "enum": [0, 1, 2]}
        assert [m["role"] for m in body["messages"]] == ["system", "user"]

    def test_concurrency_is_bounded_per_worker(self, copa, llm_server):
        llm_server.script = lambda r: Reply.json({"scores": dict.fromkeys(FACTORS, 1)}, delay=0.05)
        add_items(copa, 12)
        run_now(judge_for(llm_server), copa, concurrency=3)
        assert 2 <= llm_server.max_in_flight <= 3

    def test_the_api_key_comes_from_the_variable_the_endpoint_names(self, copa, llm_server, settings, monkeypatch):
        monkeypatch.setenv("GPU_POOL_KEY", "key-from-env")
        settings.LLM_ENDPOINTS = {"gpu-pool": {"base_url": llm_server.base_url, "api_key_env": "GPU_POOL_KEY"}}
        add_items(copa, 2, change=lambda n, payload: None)
        run_now(judge_for(llm_server, endpoint="gpu-pool"), copa)
        run_now(judge_for(llm_server, name="default key", seed=7), copa)
        keys = [r.headers["authorization"] for r in llm_server.requests]
        assert keys == ["Bearer key-from-env"] * 2 + ["Bearer test-key"] * 2
        assert "key-from-env" not in str(list(Judge.objects.values()))

    def test_judge_cannot_target_unconfigured_url(self, copa, llm_server, settings):
        """A judge row naming anything but a configured endpoint (written past the services) sends nothing."""
        add_items(copa, 2)
        judge = judge_for(llm_server)
        Judge.objects.filter(pk=judge.pk).update(endpoint="http://attacker.test/v1")
        run = run_now(Judge.objects.get(pk=judge.pk), copa)
        assert run.status == "failed" and "unknown endpoint 'http://attacker.test/v1'" in run.last_error
        assert llm_server.requests == [] and not Suggestion.objects.filter(status="ok").exists()

    def test_it_runs_from_a_thread_whose_event_loop_is_already_running(self, copa, llm_server):
        """As under a notebook or a browser-test harness: the chunk's loop runs on its own thread."""
        add_items(copa, 3)
        judge = judge_for(llm_server)
        finished = []

        async def inside_a_loop():
            finished.append(run_now(judge, copa))

        def on_a_thread_of_its_own():  # whatever loop the test runner's own thread may hold
            try:
                asyncio.run(inside_a_loop())
            finally:
                connection.close()

        thread = threading.Thread(target=on_a_thread_of_its_own)
        thread.start()
        thread.join()
        assert [(run.status, run.ok_count) for run in finished] == [("completed", 3)]
