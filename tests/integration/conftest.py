import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """The URL of the database pytest-django created, for processes started by the tests."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def celery_worker_process(transactional_db):
    """A real `celery worker` process on the configured broker, pointed at the test database."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "CELERY_TASK_ALWAYS_EAGER": "false"}
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--pool=solo",
        "--loglevel=warning",
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield process
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def wait_for(predicate, *, timeout: float = 60.0, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout} s")
