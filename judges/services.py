"""Writes: judges, and the start of their runs. Keyword-only and atomic.

A run's lifecycle (cancel, resume, watch, record) is the run engine's (judges.runs). Services never
enqueue Celery tasks themselves (tasks import services, not the reverse): callers send a started
run through ``judges.tasks.run_dispatch`` on commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.errors import FieldError, ValidationFailed
from annotation.models import Item, Project
from judges.backends import backend_class, get_backend, runnable_backend_names
from judges.backends.base import JudgeBackend
from judges.endpoints import DEFAULT_ENDPOINT, UnknownEndpoint, UnknownModel, get_endpoint, local_model_source
from judges.errors import (
    JUDGE_EXISTS,
    JUDGE_OF_ANOTHER_PROJECT,
    MODEL_REQUIRED,
    NOT_RUNNABLE,
    RUN_ALREADY_ACTIVE,
    UNKNOWN_BACKEND,
    UNKNOWN_PROMPT,
    JudgeExists,
    JudgeInvalid,
    RunStateError,
)
from judges.models import Judge, JudgeChunk, JudgeRun
from judges.prompting import Prompt, get_prompt, prompts_for, sha256_json
from judges.runs.services import run_chunks_create, run_save_new

DEFAULT_SEED = 42  # the generation seed of the IntentGrasp paper's experiments (its Appendix B.1)
DEFAULT_MAX_TOKENS = 2048  # likewise


# -- judges -----------------------------------------------------------------------------------------


def judge_prompt(*, kind: str, backend: str, prompt: str = "") -> Prompt:
    """The prompt a judge of ``kind`` on ``backend`` uses: the one named, or the kind's default."""
    allowed = prompts_for(kind=kind, backend=backend)
    if not prompt and allowed:
        return allowed[0]
    try:
        chosen = get_prompt(prompt)
    except KeyError:
        chosen = None
    if chosen is None or chosen not in allowed:
        known = ", ".join(p.key for p in allowed) or "none"
        raise JudgeInvalid(UNKNOWN_PROMPT.format(prompt=prompt, kind=kind, backend=backend, known=known))
    return chosen


def operator_model_and_endpoint(*, engine: JudgeBackend, model: str, endpoint: str) -> tuple[str, str]:
    """The model and endpoint (empty for backends without a server) that a run of a model ``engine``
    uses. JudgeInvalid unless both are the operator's: an endpoint configured by name, and for backends
    that load weights themselves a model configured by name. Nothing a user types picks where requests
    go or which file or repository a worker loads."""
    model = model.strip() or settings.JUDGE_MODEL
    if not model:
        raise JudgeInvalid(MODEL_REQUIRED.format(backend=engine.name))
    if engine.loads_model:
        try:
            local_model_source(model, backend=engine.name)
        except UnknownModel as exc:
            raise JudgeInvalid(str(exc)) from None
    if not engine.needs_server:
        return model, ""
    endpoint = endpoint.strip() or DEFAULT_ENDPOINT
    try:
        get_endpoint(endpoint)
    except UnknownEndpoint as exc:
        raise JudgeInvalid(str(exc)) from None
    return model, endpoint


#: The columns that configure calls to a model: a judge's, and a generation run's (judges.models).
CALL_FIELDS = ("backend", "model", "endpoint", "temperature", "max_tokens", "seed")


@dataclass(frozen=True)
class CallRequest:
    """A call configuration as a user asked for it, before ``call_settings`` checks it."""

    backend: str
    model: str = ""
    endpoint: str = ""
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = DEFAULT_SEED


def call_settings(asked: CallRequest) -> dict[str, Any]:
    """The ``CALL_FIELDS`` a run calls the model with: the backend runnable, the model and endpoint the
    operator's. A baseline has no model, server or sampling; keeping them empty keeps one baseline
    configuration one judge. JudgeInvalid naming what is wrong."""
    backend = asked.backend
    if backend not in runnable_backend_names():
        raise JudgeInvalid(UNKNOWN_BACKEND.format(backend=backend, known=", ".join(runnable_backend_names())))
    engine = get_backend(backend)
    if engine.is_baseline:
        model, endpoint, temperature, max_tokens = "", "", 0.0, DEFAULT_MAX_TOKENS
    else:
        model, endpoint = operator_model_and_endpoint(engine=engine, model=asked.model, endpoint=asked.endpoint)
        temperature, max_tokens = asked.temperature, asked.max_tokens
    values = (backend, model, endpoint, temperature, max_tokens, asked.seed)
    return dict(zip(CALL_FIELDS, values, strict=True))


def _judge_config(*, kind: str, prompt: str, asked: CallRequest) -> dict[str, Any]:
    call = call_settings(asked)
    chosen = judge_prompt(kind=kind, backend=asked.backend, prompt=prompt)
    return {"kind": kind, "prompt_name": chosen.name, "prompt_version": chosen.version, **call}


def _fingerprint(config: dict[str, Any]) -> str:
    return sha256_json(config)


def _default_name(config: dict[str, Any]) -> str:
    who = "baseline" if backend_class(config["backend"]).is_baseline else config["model"].rsplit("/", 1)[-1]
    seed = "" if config["seed"] is None else f" seed {config['seed']}"
    return f"{who} · {config['prompt_name']}.v{config['prompt_version']}{seed}"[:100]


def judge_get_or_create(
    *,
    project: Project,
    backend: str,
    name: str = "",
    model: str = "",
    endpoint: str = "",
    prompt: str = "",
    temperature: float = 0.0,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int | None = DEFAULT_SEED,
    created_by: Any = None,
) -> tuple[Judge, bool]:
    """The project's judge with this configuration, created if there is none. JudgeInvalid if it cannot work."""
    asked = CallRequest(backend, model, endpoint, temperature, max_tokens, seed)
    config = _judge_config(kind=project.kind, prompt=prompt, asked=asked)
    fingerprint = _fingerprint(config)
    existing = Judge.objects.filter(project=project, fingerprint=fingerprint).first()
    if existing is not None:
        return existing, False
    judge = Judge(
        project=project,
        name=name.strip() or _default_name(config),
        fingerprint=fingerprint,
        created_by=created_by,
        **config,
    )
    try:
        judge.full_clean()
    except ValidationError as exc:
        raise ValidationFailed([FieldError(f, "; ".join(m)) for f, m in exc.message_dict.items()]) from None
    try:
        with transaction.atomic():
            judge.save()
    except IntegrityError:
        # The same configuration was created at the same moment elsewhere: that one is the judge.
        return Judge.objects.get(project=project, fingerprint=fingerprint), False
    return judge, True


def judge_create(**options: Any) -> Judge:
    """A new judge; JudgeExists (naming the existing one) if this configuration already has a judge."""
    judge, created = judge_get_or_create(**options)
    if not created:
        raise JudgeExists(JUDGE_EXISTS.format(name=judge.name), judge=judge)
    return judge


# -- runs -------------------------------------------------------------------------------------------


@transaction.atomic
def judge_run_start(
    *,
    judge: Judge,
    project: Project,
    concurrency: int | None = None,
    chunk_size: int | None = None,
    created_by: Any = None,
) -> JudgeRun:
    """A running run over the project's items, split into chunks. Send it with ``judges.tasks.run_dispatch``."""
    if judge.project_id != project.pk:
        raise JudgeInvalid(JUDGE_OF_ANOTHER_PROJECT.format(judge=judge.name, project=project.slug))
    if not backend_class(judge.backend).runs_items:
        raise JudgeInvalid(NOT_RUNNABLE.format(judge=judge.name, backend=judge.backend))
    # Lock the project row so two simultaneous starts of one judge cannot both pass the check below.
    Project.objects.select_for_update().get(pk=project.pk)
    active = JudgeRun.objects.filter(judge=judge, project=project, status=JudgeRun.Status.RUNNING).first()
    if active is not None:
        raise RunStateError(RUN_ALREADY_ACTIVE.format(run=active.pk))
    size = chunk_size or settings.JUDGE_CHUNK_SIZE or get_backend(judge.backend).chunk_size
    now = timezone.now()
    run = JudgeRun(
        judge=judge,
        project=project,
        concurrency=concurrency or settings.JUDGE_CONCURRENCY,
        chunk_size=size,
        created_by=created_by,
        started_at=now,
        resumed_at=now,
    )
    run_save_new(run)
    ids = Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    chunks = run_chunks_create(
        run=run,
        numbers=ids.iterator(chunk_size=10_000),
        make=lambda n, first, last, count: JudgeChunk(
            run=run, number=n, first_item_id=first, last_item_id=last, size=count
        ),
    )
    run.total = run.pending_count = sum(c.size for c in chunks)
    run.last_item_id = chunks[-1].last_item_id if chunks else 0
    fields = ["total", "pending_count", "last_item_id"]
    if not chunks:
        run.status, run.finished_at = JudgeRun.Status.COMPLETED, now
        fields += ["status", "finished_at"]
    run.save(update_fields=fields)
    return run
