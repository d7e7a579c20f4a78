"""Fixtures for the judges tests: a scripted local LLM server, projects with items, quick retries."""

from __future__ import annotations

import copy

import pytest

from annotation.kinds import get_kind
from annotation.models import Item, Project
from annotation.services import project_create
from judges.models import Judge
from judges.services import judge_get_or_create
from tests.support.fake_server import FakeLLMServer


@pytest.fixture(autouse=True)
def _quick_retries(settings):
    """Backoff is not under test here, only that retries are bounded and counted."""
    settings.JUDGE_RETRY_BASE_SECONDS = 0.001
    settings.JUDGE_RETRY_MAX_SECONDS = 0.005
    settings.JUDGE_REQUEST_TIMEOUT = 5.0
    settings.JUDGE_TRANSPORT_ATTEMPTS = 3
    settings.JUDGE_PARSE_ATTEMPTS = 2
    settings.JUDGE_CHUNK_RETRIES = 1
    settings.OPENAI_API_KEY = "test-key"


@pytest.fixture(autouse=True)
def _eager_retries():
    """In-process tasks retry the way a worker does (Celery re-applies them) instead of raising Retry."""
    from config.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = previous


@pytest.fixture
def llm_server(settings):
    """The scripted server, configured as the default endpoint (judges name endpoints, never URLs)."""
    with FakeLLMServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        yield server


def add_items(project: Project, count: int, *, start: int = 0, change=None) -> list[Item]:
    """``count`` items of the project's kind built from its example; question/context texts carry
    a marker ``#<n>#`` so a server script can tell the items apart."""
    kind = get_kind(project.kind)
    items = []
    for n in range(start, start + count):
        payload = copy.deepcopy(kind.example_payload())
        for field in ("question", "context"):
            if isinstance(payload.get(field), str):
                payload[field] = f"#{n}# {payload[field]}"
            elif isinstance(payload.get(field), dict):
                payload[field]["question"] = f"#{n}# {payload[field]['question']}"
        if project.kind == "label_contextualization":
            payload["label"] = f"#{n}# {payload['label']}"
        if change:
            change(n, payload)
        items.append(Item(project=project, external_id=f"item-{n:05d}", payload=payload))
    return Item.objects.bulk_create(items)


def make_judge(kind: str | Project = "copa_likert", backend: str = "openai", **options) -> Judge:
    """A judge of the given project, or of the first project of the given kind (made if there is none)."""
    if backend != "baseline":
        options.setdefault("model", "test-model")
    project = kind if isinstance(kind, Project) else Project.objects.filter(kind=kind).order_by("pk").first()
    if project is None:
        project = project_create(slug=f"judged-{kind.replace('_', '-')}", kind=kind)
    judge, _ = judge_get_or_create(project=project, backend=backend, **options)
    return judge


@pytest.fixture
def copa(make_project):
    return make_project("copa_likert")


def run_now(judge: Judge, project: Project, **options):
    """Start a run and send its chunks; with in-process tasks it is finished on return."""
    from judges.models import JudgeRun
    from judges.services import judge_run_start
    from judges.tasks import run_dispatch

    run = judge_run_start(judge=judge, project=project, **options)
    run_dispatch(run_type="judge", run_id=run.pk)
    return JudgeRun.objects.get(pk=run.pk)
