"""A real Celery worker is killed with SIGKILL in the middle of a generation run and started again:
the run still ends with exactly one outcome per record and exactly the items those outcomes make."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from annotation.models import Item
from judges.generation.services import generation_run_start
from judges.models import GenerationChunk, GenerationRecord, GenerationRun
from judges.tasks import run_dispatch
from tests.integration import conftest as integration
from tests.judges.generation.conftest import write_threads
from tests.judges.integration.test_worker_killed_mid_run import start_worker, workers  # noqa: F401 - fixture
from tests.support.fake_server import FakeLLMServer, valid_answer

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

RECORDS = 120
KILL_AT_RECORD = 50


def test_a_worker_killed_mid_run_leaves_exactly_one_outcome_per_record(make_project, workers, tmp_path):  # noqa: F811
    killed = threading.Event()

    def script(request):
        if f"#{KILL_AT_RECORD}#" in request.text and not killed.is_set():
            killed.set()
            os.kill(workers[0].pid, signal.SIGKILL)
        reply = valid_answer(request)
        reply.delay = 0.005
        return reply

    project = make_project("ipqa_core_intent")
    path = write_threads(tmp_path / "t.jsonl", RECORDS)
    with FakeLLMServer(script) as server:
        run = generation_run_start(
            project=project, step="ipqa_intents", path=path, backend="openai", model="m", chunk_size=20, concurrency=4
        )
        workers.append(start_worker(server.base_url))
        run_dispatch(run_type="generation", run_id=run.pk)

        assert killed.wait(120), "the run never reached the record where the worker is killed"
        workers[0].wait(timeout=30)
        assert workers[0].returncode == -signal.SIGKILL
        orphans = list(GenerationChunk.objects.filter(run=run, status="running").values_list("pk", "claimed_by"))
        assert len(orphans) == 1, "the killed worker held the chunk it was working on"
        assert not Item.objects.filter(project=project).exists(), "items wait for every record's outcome"

        workers.append(start_worker(server.base_url))
        run = integration.wait_for(
            lambda: GenerationRun.objects.filter(pk=run.pk, status="completed").first(), timeout=120
        )

    assert (run.ok_count, run.failed_count, run.pending_count, run.items_created) == (RECORDS, 0, 0, RECORDS)
    statuses = list(GenerationRecord.objects.filter(run=run).values_list("status", flat=True))
    assert statuses.count("ok") == len(statuses) == RECORDS
    ids = list(Item.objects.filter(project=project).values_list("external_id", flat=True))
    assert len(ids) == len(set(ids)) == RECORDS
    orphan = GenerationChunk.objects.get(pk=orphans[0][0])
    assert orphan.status == "done" and orphan.attempts >= 2 and orphan.claimed_by != orphans[0][1]
