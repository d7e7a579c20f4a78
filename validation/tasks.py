"""Celery tasks of the validation area: each takes ids and plain parameters and calls one function."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from validation.report_jobs import job_run


@shared_task(acks_late=True, ignore_result=True)
def report_build_task(*, key: str, project_id: int, parameters: dict[str, Any]) -> None:
    """The agreement report for parameters above the per-request bootstrap cap."""
    job_run(kind="report", key=key, project_id=project_id, parameters=parameters)


@shared_task(acks_late=True, ignore_result=True)
def agreement_compute_task(*, key: str, project_id: int, parameters: dict[str, Any]) -> None:
    """The agreement API's numbers for parameters above the per-request bootstrap cap."""
    job_run(kind="agreement", key=key, project_id=project_id, parameters=parameters)
