"""Running a recorded import (an ``ImportJob``): the importer its target names, the outcome on the row."""

from __future__ import annotations

import os

from annotation.errors import ImportRejected
from annotation.importing import services
from annotation.importing.annotations import import_annotations
from annotation.importing.items import import_items
from annotation.importing.reading import ProgressCallback
from annotation.models import ImportJob


def import_job_run(
    *, job: ImportJob, progress: ProgressCallback | None = None, raise_rejected: bool = False
) -> ImportJob:
    """Run a recorded import and store its outcome on the job row (outside the import's transaction).

    A refused file is the job's outcome; with ``raise_rejected`` (a request answered at once) its
    ImportRejected is raised again once recorded."""
    services.import_job_start(job=job, size_bytes=os.path.getsize(job.stored_path))
    try:
        if job.target == ImportJob.Target.ITEMS:
            result = import_items(
                project=job.project, path=job.stored_path, job=job, progress=progress, existing=job.existing
            )
        else:
            result = import_annotations(project=job.project, path=job.stored_path, job=job, progress=progress)
    except ImportRejected as exc:
        services.import_job_finish(job=job, rejected=exc)
        if raise_rejected:
            raise
        return job
    except Exception as exc:
        services.import_job_finish(job=job, error=exc)
        raise
    return services.import_job_finish(job=job, result=result)
