"""Celery tasks: each takes ids, re-fetches and calls one service.

A run is one task per chunk (``judge_chunk_task``; ``judge_chunk_gpu_task`` for vLLM, routed to
the "gpu" queue by settings.CELERY_TASK_ROUTES) plus a watcher per running run that hands out again
the chunks of a worker that vanished. Chunk tasks are acks_late and idempotent: a redelivered or
duplicated message claims nothing and writes nothing.
"""

from __future__ import annotations

import logging

from celery import Task, current_app, shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError

from judges.errors import BackendUnavailable
from judges.execution import chunk_abandon, judge_chunk_process
from judges.generation.execution import generation_chunk_abandon, generation_chunk_process
from judges.generation.selectors import running_generation_run_ids
from judges.generation.services import (
    generation_run_chunks_mark_sent,
    generation_run_new_watch,
    generation_run_watch,
)
from judges.selectors import running_run_ids
from judges.services import Dispatch, judge_run_chunks_mark_sent, judge_run_new_watch, judge_run_watch

logger = logging.getLogger(__name__)


class ChunkTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        chunk_id = args[0] if args else kwargs["chunk_id"]
        chunk_abandon(chunk_id=chunk_id, error=f"{type(exc).__name__}: {exc}")


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


@shared_task(name="judges.tasks.judge_chunk_task", **CHUNK_TASK)
def judge_chunk_task(self, chunk_id: int) -> None:
    judge_chunk_process(chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(name="judges.tasks.judge_chunk_gpu_task", **CHUNK_TASK)
def judge_chunk_gpu_task(self, chunk_id: int) -> None:
    judge_chunk_process(chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(acks_late=True, ignore_result=True)
def judge_run_watch_task(run_id: int, token: str) -> None:
    dispatch = judge_run_watch(run_id=run_id, token=token)
    if dispatch is None:
        return
    send_chunks(dispatch)
    judge_run_watch_task.apply_async((run_id, token), countdown=settings.JUDGE_WATCH_SECONDS)


def send_chunks(dispatch: Dispatch) -> None:
    task = judge_chunk_gpu_task if dispatch.gpu else judge_chunk_task
    for chunk_id in dispatch.chunk_ids:
        task.delay(chunk_id)


def start_watch(*, run_id: int, countdown: float | None = None) -> None:
    # Tasks that run in-process (tests) need no watcher, and one would call itself forever.
    if current_app.conf.task_always_eager:
        return
    token = judge_run_new_watch(run_id=run_id)
    if token is not None:
        wait = settings.JUDGE_WATCH_SECONDS if countdown is None else countdown
        judge_run_watch_task.apply_async((run_id, token), countdown=wait)


def judge_run_dispatch(*, run_id: int) -> None:
    """Send a started or resumed run's waiting chunks to the workers and watch it. Call on commit."""
    send_chunks(judge_run_chunks_mark_sent(run_id=run_id))
    start_watch(run_id=run_id)


@worker_ready.connect
def watch_running_runs(sender=None, **kwargs) -> None:
    """A starting worker takes over the watch of every running run: after a crash nobody else would."""
    try:
        run_ids = running_run_ids()
    except DatabaseError:
        logger.warning("could not look for running judge runs", exc_info=True)
        return
    for run_id in run_ids:
        start_watch(run_id=run_id, countdown=0)


# -- generation runs (judges.generation): the same chunked, leased, acks-late machinery -----------------


class GenerationChunkTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        chunk_id = args[0] if args else kwargs["chunk_id"]
        generation_chunk_abandon(chunk_id=chunk_id, error=f"{type(exc).__name__}: {exc}")


GENERATION_CHUNK_TASK = {**CHUNK_TASK, "base": GenerationChunkTask}


@shared_task(name="judges.tasks.generation_chunk_task", **GENERATION_CHUNK_TASK)
def generation_chunk_task(self, chunk_id: int) -> None:
    generation_chunk_process(chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(name="judges.tasks.generation_chunk_gpu_task", **GENERATION_CHUNK_TASK)
def generation_chunk_gpu_task(self, chunk_id: int) -> None:
    generation_chunk_process(chunk_id=chunk_id, final_attempt=_final_attempt(self))


@shared_task(acks_late=True, ignore_result=True)
def generation_run_watch_task(run_id: int, token: str) -> None:
    dispatch = generation_run_watch(run_id=run_id, token=token)
    if dispatch is None:
        return
    send_generation_chunks(dispatch)
    generation_run_watch_task.apply_async((run_id, token), countdown=settings.JUDGE_WATCH_SECONDS)


def send_generation_chunks(dispatch: Dispatch) -> None:
    task = generation_chunk_gpu_task if dispatch.gpu else generation_chunk_task
    for chunk_id in dispatch.chunk_ids:
        task.delay(chunk_id)


def start_generation_watch(*, run_id: int, countdown: float | None = None) -> None:
    if current_app.conf.task_always_eager:
        return
    token = generation_run_new_watch(run_id=run_id)
    if token is not None:
        wait = settings.JUDGE_WATCH_SECONDS if countdown is None else countdown
        generation_run_watch_task.apply_async((run_id, token), countdown=wait)


def generation_run_dispatch(*, run_id: int) -> None:
    """Send a started or resumed generation run's waiting chunks to the workers and watch it. Call on commit."""
    send_generation_chunks(generation_run_chunks_mark_sent(run_id=run_id))
    start_generation_watch(run_id=run_id)


@worker_ready.connect
def watch_running_generation_runs(sender=None, **kwargs) -> None:
    """A starting worker takes over the watch of every running generation run."""
    try:
        run_ids = running_generation_run_ids()
    except DatabaseError:
        logger.warning("could not look for running generation runs", exc_info=True)
        return
    for run_id in run_ids:
        start_generation_watch(run_id=run_id, countdown=0)
