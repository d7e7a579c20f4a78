"""Celery tasks: each takes ids, re-fetches and calls one service."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from annotation.importing import import_job_run
from annotation.models import ImportJob
from annotation.selectors import import_progress_key
from annotation.services import import_job_discard_upload


@shared_task(acks_late=True, ignore_result=True)
def import_job_task(job_id: int) -> None:
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status not in (ImportJob.Status.PENDING, ImportJob.Status.RUNNING):
        import_job_discard_upload(job=job)  # already finished: a redelivered message must not import twice
        return
    key = import_progress_key(job_id)

    def progress(bytes_read: int, records: int) -> None:
        cache.set(key, {"bytes": bytes_read, "records": records}, timeout=3600)

    try:
        import_job_run(job=job, progress=progress)
    finally:
        # Done, rejected or failed, the upload is not kept. A worker killed mid-import never gets
        # here: the message is delivered again and the file is still there to import.
        import_job_discard_upload(job=job)
