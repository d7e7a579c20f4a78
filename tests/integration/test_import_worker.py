"""An import sent from the web reaches a real Celery worker process and lands in the database."""

import pytest

from annotation.kinds import get_kind
from annotation.models import ImportJob, Item
from annotation.services import project_create
from annotation.synthetic import synthetic_records, write_jsonl
from annotation.tasks import import_job_task
from tests.integration.conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def finished(job_id):
    job = ImportJob.objects.get(pk=job_id)
    return job if job.status not in (ImportJob.Status.PENDING, ImportJob.Status.RUNNING) else None


def test_worker_imports_a_file_and_records_the_outcome(celery_worker_process, tmp_path):
    project = project_create(slug="worker-import", kind="intent_mcq")
    path = write_jsonl(tmp_path / "items.jsonl", synthetic_records(get_kind("intent_mcq"), 500))
    job = ImportJob.objects.create(project=project, target="items", filename="items.jsonl", stored_path=str(path))
    import_job_task.delay(job.pk)
    job = wait_for(lambda: finished(job.pk))
    assert (job.status, job.rows_imported) == ("done", 500)
    assert Item.objects.filter(project=project).count() == 500


def test_worker_rejects_a_bad_file_and_keeps_the_errors(celery_worker_process, tmp_path):
    project = project_create(slug="worker-reject", kind="intent_mcq")
    path = tmp_path / "items.jsonl"
    path.write_text('{"external_id": "a", "context": "c"}\n')
    job = ImportJob.objects.create(project=project, target="items", filename="items.jsonl", stored_path=str(path))
    import_job_task.delay(job.pk)
    job = wait_for(lambda: finished(job.pk))
    assert job.status == "rejected"
    assert job.errors == ["line 1, record: missing required fields 'question', 'options', 'answers'"]
    assert not Item.objects.filter(project=project).exists()
