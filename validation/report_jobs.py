"""Agreement numbers too heavy for one request: a worker computes them, cached under the inputs' fingerprint.

A page or API request computes at most ``CONCORD_REQUEST_BOOTSTRAP_MAX`` bootstrap resamples itself,
and at most ``CONCORD_REQUEST_BOOTSTRAP_WORK`` items x resamples. Above that, the first request
queues one Celery task and answers "computing"; the task reports its progress and stores its result
(or its failure) in the cache under a key made of the project's data fingerprint
(``project_data_state``) and the parameters, so every later request with the same inputs reads it,
and a change to the data gives a new key. A job that no worker finishes within
``CONCORD_REPORT_JOB_SECONDS`` counts as failed, so a page never waits forever.

This module is the worker's side and the shared state; ``validation.report_queue`` is the requests'
side (it queues the tasks of ``validation.tasks``, which call ``job_run`` here).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.core.cache import cache

from annotation.models import Project
from annotation.selectors import project_size
from validation.agreement.dimensions import Progress
from validation.reports import ReportParameters
from validation.selectors import project_data_state, project_dimension_agreement, project_report

__all__ = ["JobState", "job_key", "job_run", "needs_worker", "request_bootstrap_max"]

logger = logging.getLogger(__name__)

JobKind = Literal["report", "agreement"]
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
#: How long a finished result stays cached (its key changes with the data, so it never goes stale).
RESULT_SECONDS = 24 * 3600
#: How long a failure is remembered: later requests show it until then, or until they ask to retry.
FAILED_SECONDS = 10 * 60
STALLED = "No worker finished this computation within {seconds} s (is a Celery worker running?)."
NOT_STARTED = "The computation could not be queued: {error}"


@dataclass(frozen=True)
class JobState:
    """Where one computation stands; ``result`` is set when ``status`` is ``done``."""

    status: str
    started_at: float
    result: Any = None
    error: str = ""
    #: Share of the work done while running (0 to 1), None before the worker reports any.
    progress: float | None = None

    @property
    def pending(self) -> bool:
        return self.status in (QUEUED, RUNNING)


def request_bootstrap_max() -> int:
    """The most bootstrap resamples one request computes itself."""
    return settings.CONCORD_REQUEST_BOOTSTRAP_MAX


def needs_worker(parameters: ReportParameters, *, project: Project | None = None) -> bool:
    """Whether a worker computes these numbers: too many resamples, or too many items x resamples."""
    if parameters.bootstrap > request_bootstrap_max():
        return True
    if project is None or not parameters.bootstrap:
        return False
    size = project_size(project=project)
    return (size.regular + size.qualification) * parameters.bootstrap > settings.CONCORD_REQUEST_BOOTSTRAP_WORK


def job_key(*, kind: JobKind, project: Project, parameters: ReportParameters) -> str:
    digest = hashlib.sha256(json.dumps(parameters.to_json_dict(), sort_keys=True).encode()).hexdigest()[:24]
    return f"concord:job:{kind}:{project.pk}:{project_data_state(project=project)}:{digest}"


def _agreement_json(project: Project, parameters: ReportParameters, progress: Progress) -> dict[str, Any]:
    dimensions = project_dimension_agreement(project=project, parameters=parameters, progress=progress)
    return {"dimensions": {name: found.to_json_dict() for name, found in dimensions.items()}}


#: What each kind of job computes: the report page's Report, or the agreement API's JSON.
COMPUTE = {
    "report": lambda project, parameters, progress: project_report(
        project=project, parameters=parameters, progress=progress
    ),
    "agreement": _agreement_json,
}
#: Least seconds between two progress writes to the cache.
PROGRESS_EVERY = 0.5


def job_run(*, kind: JobKind, key: str, project_id: int, parameters: dict[str, Any]) -> None:
    """The worker's side: compute, then store the result or the failure under ``key``."""
    started = time.time()
    lifetime = settings.CONCORD_REPORT_JOB_SECONDS + 60
    cache.set(key, JobState(RUNNING, started), lifetime)
    written = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - written[0] >= PROGRESS_EVERY and total:
            written[0] = now
            cache.set(key, JobState(RUNNING, started, progress=min(done / total, 1.0)), lifetime)

    try:
        project = Project.objects.get(pk=project_id)
        result = COMPUTE[kind](project, ReportParameters.from_json_dict(parameters), progress)
    except Exception as exc:  # recorded for the page and the API; the worker carries on
        logger.exception("%s job %s failed", kind, key)
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        cache.set(key, JobState(FAILED, started, error=str(message)), FAILED_SECONDS)
        return
    cache.set(key, JobState(DONE, started, result=result), RESULT_SECONDS)
