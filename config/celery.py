"""The Celery application; settings come from Django's (CELERY_* names)."""

import os
from pathlib import Path

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _say_ready(**_kwargs) -> None:
    """``scripts/run-local.sh`` waits for this file to print the address last, below the worker's banner."""
    ready_file = os.environ.get("CONCORD_WORKER_READY_FILE")
    if ready_file:
        Path(ready_file).touch()
