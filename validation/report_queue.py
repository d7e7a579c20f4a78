"""The requests' side of heavy agreement computations: read the cached state, queue a task once.

See ``validation.report_jobs`` for the cap, the cache key and the states.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache

from annotation.models import Project
from validation.report_jobs import FAILED, FAILED_SECONDS, NOT_STARTED, QUEUED, STALLED, JobKind, JobState, job_key
from validation.reports import ReportParameters
from validation.reports.build import judge_info
from validation.tasks import agreement_compute_task, report_build_task

__all__ = ["agreement_job", "report_job"]

logger = logging.getLogger(__name__)


def report_job(*, project: Project, parameters: ReportParameters, retry: bool = False) -> JobState:
    """The full report for these parameters from a worker: done (``result`` is the Report) or not yet.

    Queues the task when nothing is cached for these inputs (or, with ``retry``, after a failure).
    Raises UnknownJudgeRun before queueing when the parameters name another project's run.
    """
    return _job("report", project, parameters, retry, report_build_task)


def agreement_job(*, project: Project, parameters: ReportParameters, retry: bool = False) -> JobState:
    """Per-dimension agreement (the API's JSON) from a worker: done (``result`` is the dict) or not yet."""
    return _job("agreement", project, parameters, retry, agreement_compute_task)


def _job(kind: JobKind, project: Project, parameters: ReportParameters, retry: bool, task: Any) -> JobState:
    key = job_key(kind=kind, project=project, parameters=parameters)
    state = cache.get(key)
    timeout = settings.CONCORD_REPORT_JOB_SECONDS
    if state is not None and state.pending and time.time() - state.started_at > timeout:
        state = JobState(FAILED, state.started_at, error=STALLED.format(seconds=timeout))
        cache.set(key, state, FAILED_SECONDS)
    if state is not None and not (retry and state.status == FAILED):
        return state
    # A run that is not this project's is the caller's mistake: refused now, not reported by the worker.
    judge_info(project, parameters.judge_run_id)
    queued = JobState(QUEUED, time.time())
    # add() lets exactly one of several simultaneous requests queue the task.
    if retry:
        cache.set(key, queued, timeout + 60)
    elif not cache.add(key, queued, timeout + 60):
        return cache.get(key) or queued
    try:
        task.delay(key=key, project_id=project.pk, parameters=parameters.to_json_dict())
    except Exception as exc:  # a broker that cannot be reached: say so instead of waiting
        logger.exception("could not queue %s job %s", kind, key)
        cache.set(key, JobState(FAILED, queued.started_at, error=NOT_STARTED.format(error=exc)), FAILED_SECONDS)
    # With tasks run in-process (tests, CELERY_TASK_ALWAYS_EAGER) the result is already there.
    return cache.get(key) or queued
