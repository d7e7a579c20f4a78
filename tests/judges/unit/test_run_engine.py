"""The run engine: judge runs and generation runs are run types of one engine, with one set of tasks,
lifecycle services and pages; each run type words its own messages and keeps its own runs apart."""

from __future__ import annotations

import threading

import pytest
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from config.celery import app
from judges.backends import get_backend
from judges.backends.base import CallOptions, RetryPolicy
from judges.errors import CANNOT_CANCEL, RunStateError
from judges.execution import JUDGE_RUNS, JudgeRuns
from judges.generation.execution import GENERATION_RUNS, GenerationRuns
from judges.generation.services import generation_run_start
from judges.models import GenerationRun, JudgeRun
from judges.runs.execution import chunk_claim
from judges.runs.services import chunk_record, run_cancel, run_finish_if_done, run_new_watch, run_watch
from judges.runs.types import get_run_type, run_type_names, run_type_of
from judges.services import judge_run_start
from tests.judges.conftest import add_items, make_judge
from tests.judges.generation.conftest import write_threads

pytestmark = pytest.mark.django_db(transaction=True)


class RunTypeRegistryTests:
    def test_both_run_types_are_found_by_name_and_by_their_run(self):
        assert run_type_names() == sorted([JUDGE_RUNS, GENERATION_RUNS])
        assert isinstance(run_type_of(JudgeRun()), JudgeRuns) and isinstance(
            run_type_of(GenerationRun()), GenerationRuns
        )
        with pytest.raises(KeyError, match="unknown run type 'nope'"):
            get_run_type("nope")

    def test_one_task_pair_and_one_watcher_serve_every_run_type(self):
        app.loader.import_default_modules()  # what a starting worker imports: the apps' tasks modules
        registered = set(app.tasks)
        assert {
            "judges.tasks.run_chunk_task",
            "judges.tasks.run_chunk_gpu_task",
            "judges.tasks.run_watch_task",
        } <= registered
        assert not {name for name in registered if name.startswith(("judges.tasks.judge_", "judges.tasks.generation_"))}
        route = app.amqp.router.route({}, "judges.tasks.run_chunk_gpu_task", (GENERATION_RUNS, 1), {})
        assert route["queue"].name == "gpu"


class LifecycleTests:
    def test_each_run_type_words_its_refusals_with_its_own_name(self, copa, ipqa_project, tmp_path):
        add_items(copa, 2)
        judge_run = judge_run_start(judge=make_judge(copa, "baseline"), project=copa)
        generation_run = generation_run_start(
            project=ipqa_project, step="ipqa_intents", path=write_threads(tmp_path / "t.jsonl", 2), backend="baseline"
        )
        for run, label in ((judge_run, "run"), (generation_run, "generation run")):
            run_cancel(run=run)
            with pytest.raises(RunStateError) as caught:
                run_cancel(run=run)
            assert caught.value.message == CANNOT_CANCEL.format(label=label, run=run.pk, status="cancelled")

    def test_the_watcher_finishes_a_generation_run_whose_last_chunk_was_recorded_but_not_finished(
        self, ipqa_project, tmp_path
    ):
        run = generation_run_start(
            project=ipqa_project, step="ipqa_intents", path=write_threads(tmp_path / "t.jsonl", 2), backend="baseline"
        )
        # A worker that recorded the last chunk and died before the import: it claimed, asked and
        # recorded, as chunk_process does, and never reached the finish.
        spec = get_run_type(GENERATION_RUNS)
        chunk = chunk_claim(run_type=GENERATION_RUNS, chunk_id=run.chunks.get().pk)
        prompt = spec.prompt(chunk.run)
        work = spec.chunk_work(chunk, prompt)
        options = CallOptions(concurrency=1, timeout=5.0, retry=RetryPolicy.from_settings())
        outcomes = get_backend("baseline").complete(
            work.requests, judge=spec.call_config(chunk.run), prompt=prompt, options=options, stop=threading.Event()
        )
        report = chunk_record(
            run_type=GENERATION_RUNS, chunk=chunk, token=chunk.claim_token, work=work, outcomes=outcomes
        )
        assert report.waiting == 0
        run.refresh_from_db()
        assert run.status == "running" and not ipqa_project.items.exists()
        token = run_new_watch(run_type=GENERATION_RUNS, run_id=run.pk)
        assert run_watch(run_type=GENERATION_RUNS, run_id=run.pk, token=token) is None
        run.refresh_from_db()
        assert (run.status, run.items_created, ipqa_project.items.count()) == ("completed", 2, 2)
        assert run_finish_if_done(run_type=GENERATION_RUNS, run_id=run.pk) is None  # once only


class RunPageTests:
    def test_a_run_types_pages_never_reach_a_run_of_the_other_type(self, client, copa, make_user, tmp_path):
        researcher = make_user("res")
        membership_add(project=copa, user=researcher, role=Role.RESEARCHER)
        add_items(copa, 2)
        run = judge_run_start(judge=make_judge(copa, "baseline"), project=copa)
        client.force_login(researcher)
        assert client.get(reverse("judge_run_progress", args=[copa.slug, run.pk])).status_code == 200
        assert client.get(reverse("generation_run_progress", args=[copa.slug, run.pk])).status_code == 404
        assert client.post(reverse("generation_run_cancel", args=[copa.slug, run.pk])).status_code == 404
        assert JudgeRun.objects.get(pk=run.pk).status == "running"


@pytest.fixture
def ipqa_project(make_project):
    return make_project("ipqa_core_intent", slug="ipqa-gen")
