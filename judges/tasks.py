"""Celery tasks: each takes ids, re-fetches and calls one service.

A run of any run type (judges.runs.types: judge runs, generation runs) is one task per chunk
(``run_chunk_task``; ``run_chunk_gpu_task`` for vLLM, routed to the "gpu" queue by
settings.CELERY_TASK_ROUTES) plus a watcher per running run (``run_watch_task``) that hands out
again the chunks of a worker that vanished. Chunk tasks are acks_late and idempotent: a redelivered
or duplicated message claims nothing and writes nothing.

Messages name the run type and the row ids only. A message a worker cannot read (sent under an
older task name) is dropped by Celery; nothing is lost with it: a starting worker watches every
running run anew, and the watcher sends again every waiting chunk whose last send is old.
"""

from __future__ import annotations

import logging

from celery import Task, current_app, shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError

from judges.errors import BackendUnavailable
from judges.runs.execution import chunk_abandon, chunk_process
from judges.runs.services import Dispatch, run_chunks_mark_sent, run_new_watch, run_watch
from judges.runs.types import get_run_type, run_type_names

logger = logging.getLogger(__name__)


class ChunkTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        run_type, chunk_id = (args[0], args[1]) if len(args) >= 2 else (kwargs["run_type"], kwargs["chunk_id"])
        chunk_abandon(run_type=run_type, chunk_id=chunk_id, error=f"{type(exc).__name__}: {exc}")


CHUNK_TASK = {
    "base": ChunkTask,
    "bind": True,
    "acks_late": True,
    "ignore_result": True,
    # Only transient trouble is retried: an unavailable LLM server (after the per-request retries),
    # or a lost database connection. Anything else is a bug, reported on the chunk and the run.
    "autoretry_for": (BackendUnavailable, OperationalError, InterfaceError),
    "retry_backoff": 10,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": settings.JUDGE_CHUNK_RETRIES,
}


def _final_attempt(task: Task) -> bool:
    # The setting is read at run time (a lower value takes effect without a restart); the task's own
    # max_retries, fixed at import, stays the hard bound.
    return task.request.retries >= min(task.max_retries, settings.JUDGE_CHUNK_RETRIES)


@shared_task(name="judges.tasks.run_chunk_task", **CHUNK_TASK)
def run_chunk_task(self, run_type: str, chunk_id: int) -> None:
    chunk_process(run_type=run_type, chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(name="judges.tasks.run_chunk_gpu_task", **CHUNK_TASK)
def run_chunk_gpu_task(self, run_type: str, chunk_id: int) -> None:
    chunk_process(run_type=run_type, chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(name="judges.tasks.run_watch_task", acks_late=True, ignore_result=True)
def run_watch_task(run_type: str, run_id: int, token: str) -> None:
    dispatch = run_watch(run_type=run_type, run_id=run_id, token=token)
    if dispatch is None:
        return
    send_chunks(dispatch)
    run_watch_task.apply_async((run_type, run_id, token), countdown=settings.JUDGE_WATCH_SECONDS)


def send_chunks(dispatch: Dispatch) -> None:
    task = run_chunk_gpu_task if dispatch.gpu else run_chunk_task
    for chunk_id in dispatch.chunk_ids:
        task.delay(dispatch.run_type, chunk_id)


def start_watch(*, run_type: str, run_id: int, countdown: float | None = None) -> None:
    # Tasks that run in-process (tests) need no watcher, and one would call itself forever.
    if current_app.conf.task_always_eager:
        return
    token = run_new_watch(run_type=run_type, run_id=run_id)
    if token is not None:
        wait = settings.JUDGE_WATCH_SECONDS if countdown is None else countdown
        run_watch_task.apply_async((run_type, run_id, token), countdown=wait)


def run_dispatch(*, run_type: str, run_id: int) -> None:
    """Send a started or resumed run's waiting chunks to the workers and watch it. Call on commit."""
    send_chunks(run_chunks_mark_sent(run_type=run_type, run_id=run_id))
    start_watch(run_type=run_type, run_id=run_id)


@worker_ready.connect
def watch_running_runs(sender=None, **kwargs) -> None:
    """A starting worker takes over the watch of every running run: after a crash nobody else would."""
    for run_type in run_type_names():
        try:
            run_ids = list(get_run_type(run_type).running().values_list("pk", flat=True))
        except DatabaseError:
            logger.warning("could not look for running %s runs", run_type, exc_info=True)
            continue
        for run_id in run_ids:
            start_watch(run_type=run_type, run_id=run_id, countdown=0)
