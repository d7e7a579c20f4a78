import os
from typing import Any

import pytest

# Playwright's sync API runs an event loop; Django's ORM calls from the same thread are still safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# Tests never reach a model or dataset hub: `datasets` only reads the files the tests write.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_files(settings, tmp_path):
    """Uploads and the file cache go to a per-test folder, never to the developer's var/."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # Hashing strength is not under test; the default hasher costs a second per sign-in here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if not settings.CACHE_URL:
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture(autouse=True)
def _celery_eager(request):
    """Unit tests run tasks in-process; tests marked `integration` talk to a real worker."""
    from config.celery import app

    eager = request.node.get_closest_marker("integration") is None
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = eager
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def make_user(django_user_model):
    def make(username: str, password: str = "pw-for-tests-1"):
        return django_user_model.objects.create_user(username=username, password=password)

    return make


@pytest.fixture
def make_project(db):
    from annotation.services import project_create

    def make(kind: str = "copa_likert", slug: str | None = None, **options):
        return project_create(slug=slug or kind.replace("_", "-"), kind=kind, **options)

    return make


@pytest.fixture
def judge_run():
    """``make(project, backend="openai")``: a judge of the project's kind and a run of it over the items."""
    from judges.services import judge_get_or_create, judge_run_start

    def make(project, *, backend: str = "openai", name: str = "", prompt: str = "", seed: int = 42):
        options: dict[str, Any] = {
            "project": project,
            "backend": backend,
            "name": name,
            "prompt": prompt,
            "seed": seed,
        }
        if backend == "openai":
            options |= {"model": "test-llm-7b"}
        judge, _ = judge_get_or_create(**options)
        return judge_run_start(judge=judge, project=project)

    return make
