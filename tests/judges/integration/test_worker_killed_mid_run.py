"""A real Celery worker is killed with SIGKILL in the middle of a run and started again: the run still
ends with exactly one suggestion per item. Works on Redis (CI) and on the filesystem broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from judges.models import JudgeChunk, JudgeRun, Suggestion
from judges.services import judge_run_start
from judges.tasks import run_dispatch
from tests.integration import conftest as integration
from tests.judges.conftest import add_items, make_judge
from tests.support.fake_server import FakeLLMServer, valid_answer

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ITEMS = 240
KILL_AT_ITEM = 100  # the worker dies while this item's request is in flight


def start_worker(base_url: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": integration.test_database_url(),
        "OPENAI_BASE_URL": base_url,  # the local server is the workers' default endpoint
        "CELERY_TASK_ALWAYS_EAGER": "false",
        # Short leases so the killed worker's chunk is handed out again within seconds.
        "JUDGE_LEASE_SECONDS": "2",
        "JUDGE_WATCH_SECONDS": "0.5",
    }
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=warning"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle"]
    return subprocess.Popen(
        command, cwd=integration.ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@pytest.fixture
def workers():
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_worker_killed_mid_run_leaves_exactly_one_suggestion_per_item(copa, workers):
    killed = threading.Event()

    def script(request):
        if f"#{KILL_AT_ITEM}#" in request.text and not killed.is_set():
            killed.set()
            os.kill(workers[0].pid, signal.SIGKILL)  # mid-chunk: its other requests are in flight too
        reply = valid_answer(request)
        reply.delay = 0.005  # keeps several requests in flight when the kill comes
        return reply

    with FakeLLMServer(script) as server:
        add_items(copa, ITEMS)
        judge = make_judge()
        run = judge_run_start(judge=judge, project=copa, chunk_size=20, concurrency=4)
        workers.append(start_worker(server.base_url))
        run_dispatch(run_type="judge", run_id=run.pk)

        assert killed.wait(120), "the run never reached the item where the worker is killed"
        workers[0].wait(timeout=30)
        assert workers[0].returncode == -signal.SIGKILL
        orphans = list(JudgeChunk.objects.filter(run=run, status="running").values_list("pk", "claimed_by"))
        assert len(orphans) == 1, "the killed worker held the chunk it was working on"
        run.refresh_from_db()
        assert run.status == "running" and 0 < run.ok_count < ITEMS

        workers.append(start_worker(server.base_url))
        run = integration.wait_for(lambda: JudgeRun.objects.filter(pk=run.pk, status="completed").first(), timeout=120)

    assert (run.ok_count, run.failed_count, run.pending_count) == (ITEMS, 0, 0)
    rows = list(Suggestion.objects.filter(judge=judge).values_list("item_id", flat=True))
    assert len(rows) == len(set(rows)) == ITEMS
    assert set(rows) == set(copa.items.values_list("pk", flat=True))
    (orphan_id, dead_worker) = orphans[0]
    orphan = JudgeChunk.objects.get(pk=orphan_id)
    assert orphan.status == "done" and orphan.attempts >= 2 and orphan.claimed_by != dead_worker
