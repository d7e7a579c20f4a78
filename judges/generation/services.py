"""Writes: generation runs and their lifecycle (start, cancel, resume, stop, record, finish, watch).

Keyword-only and atomic. Like the judge services, these never enqueue tasks: callers send what a
service returns through ``judges.tasks.generation_run_dispatch`` on commit.

A run stores its source records when it starts, so workers and a resume never need the file. A
record whose items the project already has (an earlier run made them) is settled at once and not
asked again; so a rerun of a step over the same file asks only for what failed before, and never
duplicates an item. Items are created when every record has an outcome, in one atomic import
(``annotation.importing.import_item_records``), each with the run's provenance in its ``meta``.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from annotation.errors import ErrorCollector, FieldError, ImportRejected, ValidationFailed
from annotation.importing import Record, file_sha256, import_item_records
from annotation.models import Item, Project
from judges.backends import get_backend, runnable_backend_names
from judges.errors import UNKNOWN_BACKEND, JudgeInvalid, RunStateError
from judges.generation.prompts import StepPrompt
from judges.generation.steps import Step, StepInputInvalid, get_step, step_names
from judges.leasing import (
    PENDING,
    cancel_run,
    chunks_to_resend,
    lock_for_resume,
    pending_chunk_ids,
    restart_run,
    stop_run,
)
from judges.models import GenerationChunk, GenerationRecord, GenerationRun, Judge, JudgeRun
from judges.run_files import judge_run_store_outputs
from judges.services import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_SEED,
    Dispatch,
    _chunk_ranges,
    _default_name,
    _fingerprint,
    operator_model_and_endpoint,
)

UNKNOWN_STEP = "unknown step {step!r}; choose one of {known}"
STEP_OF_ANOTHER_KIND = "step {step!r} makes {made} items, but project {project!r} is a {kind} project"
GENERATION_ACTIVE = "generation run {run} of step {step!r} on this project is still running; cancel it or wait for it"
CANNOT_CANCEL = "generation run {run} is {status}; only a running run can be cancelled"
CANNOT_RESUME = "generation run {run} is {status}; only a cancelled or stopped run can be resumed"
BAD_OPTION = "{message}"
BAD_LIMIT = "limit must be at least 1, got {limit}"
IMPORT_FAILED = "the items could not be imported, none was created: {errors}"
CHUNK_GAVE_UP = "chunk {number} failed {attempts} times; last error: {error}"
RECORD_BATCH = 1000
ID_BATCH = 2000


@dataclass(frozen=True)
class RunConfig:
    backend: str
    model: str
    endpoint: str
    temperature: float
    max_tokens: int
    seed: int | None


def _config(
    *, step: Step, backend: str, model: str, endpoint: str, temperature: float | None, max_tokens: int, seed: int | None
) -> RunConfig:
    if backend not in runnable_backend_names():
        raise JudgeInvalid(UNKNOWN_BACKEND.format(backend=backend, known=", ".join(runnable_backend_names())))
    engine = get_backend(backend)
    if engine.is_baseline:
        return RunConfig(backend, "", "", 0.0, DEFAULT_MAX_TOKENS, seed)
    model, endpoint = operator_model_and_endpoint(engine=engine, model=model, endpoint=endpoint)
    chosen = step.default_temperature if temperature is None else temperature
    return RunConfig(backend, model, endpoint, chosen, max_tokens, seed)


def generation_step(*, project: Project, step: str) -> Step:
    """The step called ``step`` if it makes items of the project's kind; JudgeInvalid otherwise."""
    try:
        found = get_step(step)
    except KeyError:
        raise JudgeInvalid(UNKNOWN_STEP.format(step=step, known=", ".join(step_names()))) from None
    if found.kind != project.kind:
        message = STEP_OF_ANOTHER_KIND.format(step=step, made=found.kind, project=project.slug, kind=project.kind)
        raise JudgeInvalid(message)
    return found


def _existing_ids(project: Project, ids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), ID_BATCH):
        batch = ids[start : start + ID_BATCH]
        found.update(Item.objects.filter(project=project, external_id__in=batch).values_list("external_id", flat=True))
    return found


#: The columns a new record is written with; the rest keep their defaults (NULL, empty, 0).
COPIED_FIELDS = ("run", "number", "line", "source_id", "licence", "data", "attribution", "status", "request_sha256",
                 "raw_output", "failure_reason", "attempts", "updated_at")  # fmt: skip


def _insert_records(records: list[GenerationRecord]) -> None:
    """Write new records: COPY on PostgreSQL, where encoding each record's JSON through a bulk INSERT
    was most of the time a run took to start; a bulk INSERT elsewhere."""
    if connection.vendor != "postgresql":
        GenerationRecord.objects.bulk_create(records, batch_size=RECORD_BATCH)
        return
    meta = GenerationRecord._meta
    columns = ", ".join(meta.get_field(name).column for name in COPIED_FIELDS)
    now = timezone.now()
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {meta.db_table} ({columns}) FROM STDIN") as copy:
        for r in records:
            copy.write_row(
                (r.run_id, r.number, r.line, r.source_id, r.licence, orjson.dumps(r.data).decode(),
                 orjson.dumps(r.attribution).decode(), r.status, "", "", "", 0, now)
            )  # fmt: skip


def _store_records(run: GenerationRun, step: Step, path: Path, options: dict, limit: int | None) -> tuple[int, int]:
    """Read the source file into the run's records; (records, already made). ImportRejected on any bad line."""
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    reader = step.reader()
    batch: list[tuple[GenerationRecord, list[str]]] = []
    counts = [0, 0]

    def flush() -> None:
        existing = _existing_ids(run.project, [i for _, ids in batch for i in ids])
        for record, ids in batch:
            if all(i in existing for i in ids):
                record.status = GenerationRecord.Status.EXISTING
                counts[1] += 1
        _insert_records([record for record, _ in batch])
        batch.clear()

    for source in reader.read(path, errors):
        if limit is not None and counts[0] >= limit:
            break
        try:
            data = step.input(source, options)
        except StepInputInvalid as exc:
            errors.extend(exc.errors, line=source.line)
            continue
        if errors:
            continue  # nothing will be stored: only keep validating
        record = GenerationRecord(
            run=run,
            number=counts[0],
            line=source.line,
            source_id=source.source_id[:255],
            licence=source.licence[:200],
            data=data,
            attribution=source.attribution,
        )
        batch.append((record, step.external_ids(source.source_id, options)))
        counts[0] += 1
        if len(batch) >= RECORD_BATCH:
            flush()
    if errors:
        raise ImportRejected(errors.errors, total=errors.total)
    if batch:
        flush()
    return counts[0], counts[1]


@transaction.atomic
def generation_run_start(
    *,
    project: Project,
    step: str,
    path: str | Path,
    backend: str,
    model: str = "",
    endpoint: str = "",
    temperature: float | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int | None = DEFAULT_SEED,
    options: dict[str, Any] | None = None,
    limit: int | None = None,
    source_name: str = "",
    concurrency: int | None = None,
    chunk_size: int | None = None,
    is_demo: bool = False,
    created_by: Any = None,
) -> GenerationRun:
    """A running generation run over the records of the source file at ``path``.

    Raises JudgeInvalid (step, backend, model, endpoint, options), RunStateError (a run of the step is
    still running) or ImportRejected (bad lines of the file, each with its line and field); nothing is
    stored then. Send the run with ``judges.tasks.generation_run_dispatch`` on commit.
    """
    chosen = generation_step(project=project, step=step)
    try:
        cleaned = chosen.clean_options(options)
    except ValueError as exc:
        raise JudgeInvalid(BAD_OPTION.format(message=exc)) from None
    if limit is not None and limit < 1:
        raise JudgeInvalid(BAD_LIMIT.format(limit=limit))
    config = _config(
        step=chosen,
        backend=backend,
        model=model,
        endpoint=endpoint,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
    )
    prompt = StepPrompt(chosen, options=cleaned, baseline=get_backend(config.backend).is_baseline)
    # Lock the project row so two simultaneous starts of one step cannot both pass the check below.
    Project.objects.select_for_update().get(pk=project.pk)
    active = GenerationRun.objects.filter(project=project, step=chosen.name, status=GenerationRun.Status.RUNNING)
    if (found := active.first()) is not None:
        raise RunStateError(GENERATION_ACTIVE.format(run=found.pk, step=chosen.name))
    path = Path(path)
    now = timezone.now()
    run = GenerationRun(
        project=project,
        step=chosen.name,
        options=cleaned,
        backend=config.backend,
        model=config.model,
        endpoint=config.endpoint,
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_sha256=prompt.sha256,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        seed=config.seed,
        source_name=(source_name or path.name)[:255],
        source_sha256=file_sha256(path),
        is_demo=is_demo,
        concurrency=concurrency or settings.JUDGE_CONCURRENCY,
        chunk_size=chunk_size or settings.JUDGE_CHUNK_SIZE or get_backend(config.backend).chunk_size,
        created_by=created_by,
        started_at=now,
        resumed_at=now,
    )
    try:
        run.full_clean()
    except ValidationError as exc:
        raise ValidationFailed([FieldError(f, "; ".join(m)) for f, m in exc.message_dict.items()]) from None
    run.save()
    total, existing = _store_records(run, chosen, path, cleaned, limit)
    numbers = (
        GenerationRecord.objects.filter(run=run, status=GenerationRecord.Status.PENDING)
        .order_by("number")
        .values_list("number", flat=True)
    )
    chunks = [
        GenerationChunk(run=run, number=n, first_number=first, last_number=last, size=count)
        for n, (first, last, count) in enumerate(_chunk_ranges(numbers.iterator(chunk_size=10_000), run.chunk_size))
    ]
    GenerationChunk.objects.bulk_create(chunks, batch_size=1000)
    run.total, run.existing_count = total, existing
    run.pending_count = total - existing
    run.save(update_fields=["total", "existing_count", "pending_count"])
    if not chunks:
        _finish(run)
    return run


@transaction.atomic
def generation_run_cancel(*, run: GenerationRun) -> GenerationRun:
    """Stop a running run. Workers finish the request in hand, keep what is done, and hand chunks back."""
    return cancel_run(run, cannot_cancel=CANNOT_CANCEL, error=RunStateError)


@transaction.atomic
def generation_run_resume(*, run: GenerationRun) -> GenerationRun:
    """Run a cancelled or stopped run again from where it was; records with an outcome keep it."""
    run = lock_for_resume(run, cannot_resume=CANNOT_RESUME, error=RunStateError)
    other = GenerationRun.objects.filter(project=run.project, step=run.step, status=GenerationRun.Status.RUNNING)
    if (found := other.first()) is not None:
        raise RunStateError(GENERATION_ACTIVE.format(run=found.pk, step=run.step))
    restart_run(run)
    if not run.chunks.exclude(status=GenerationChunk.Status.DONE).exists():
        _finish(run)  # stopped after its last chunk (the import failed): try the import again
    return run


def generation_run_stop(*, run_id: int, reason: str) -> None:
    """Stop a run on an error every record would hit (bad key, unknown model, a chunk failing over and over)."""
    stop_run(GenerationRun, run_id=run_id, reason=reason)


def generation_run_refresh(*, run_id: int) -> GenerationRun:
    """Recount the run from its chunks. Call inside a transaction holding the run row."""
    run = GenerationRun.objects.get(pk=run_id)
    sums = GenerationChunk.objects.filter(run_id=run_id).aggregate(ok=Sum("ok_count"), failed=Sum("failed_count"))
    run.ok_count, run.failed_count = sums["ok"] or 0, sums["failed"] or 0
    run.pending_count = max(0, run.total - run.done_count)
    run.save(update_fields=["ok_count", "failed_count", "pending_count"])
    return run


@dataclass(frozen=True)
class RecordOutcome:
    """What became of one record, as the worker hands it over."""

    record_id: int
    ok: bool
    items: list[dict] | None
    request_sha256: str
    raw_output: str
    reason: str
    attempts: int
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: float | None


RECORD_FIELDS = [
    "status",
    "items",
    "request_sha256",
    "raw_output",
    "failure_reason",
    "attempts",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "updated_at",
]


def generation_chunk_record(
    *, chunk: GenerationChunk, token: str, outcomes: list[RecordOutcome], error: str = ""
) -> tuple[int, int, int] | None:
    """Store the outcomes and the chunk's counts if the claim is still ours; (ok, failed, waiting), or
    None when it was not. The chunk is done when none of its records waits."""
    now = timezone.now()
    with transaction.atomic():
        # Holding the run row orders concurrent chunk results, so the recount below sees them all.
        GenerationRun.objects.select_for_update().filter(pk=chunk.run_id).first()
        held = GenerationChunk.objects.select_for_update().filter(pk=chunk.pk, claim_token=token).first()
        if held is None:
            return None
        ids = [o.record_id for o in outcomes]
        rows = {r.pk: r for r in GenerationRecord.objects.filter(pk__in=ids, status=GenerationRecord.Status.PENDING)}
        changed = []
        for outcome in outcomes:
            row = rows.get(outcome.record_id)
            if row is None:
                continue
            row.status = GenerationRecord.Status.OK if outcome.ok else GenerationRecord.Status.FAILED
            row.items = outcome.items if outcome.ok else None
            row.request_sha256 = outcome.request_sha256
            row.raw_output = outcome.raw_output
            row.failure_reason = "" if outcome.ok else (outcome.reason or "failed without a reason")
            row.attempts = min(max(outcome.attempts, 1), 32767)
            row.tokens_in, row.tokens_out, row.latency_ms = outcome.tokens_in, outcome.tokens_out, outcome.latency_ms
            row.updated_at = now
            changed.append(row)
        # An upsert of the loaded rows: one statement per batch, where bulk_update builds a CASE per field.
        GenerationRecord.objects.bulk_create(
            changed,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["run", "number"],
            update_fields=RECORD_FIELDS,
        )
        counts = dict.fromkeys(GenerationRecord.Status.values, 0)
        in_range = GenerationRecord.objects.filter(
            run_id=chunk.run_id, number__gte=chunk.first_number, number__lte=chunk.last_number
        ).exclude(status=GenerationRecord.Status.EXISTING)
        for status in in_range.values_list("status", flat=True):
            counts[status] += 1
        waiting = counts[PENDING]
        GenerationChunk.objects.filter(pk=chunk.pk).update(
            status=GenerationChunk.Status.PENDING if waiting else GenerationChunk.Status.DONE,
            claim_token="",
            lease_expires_at=None,
            ok_count=counts["ok"],
            failed_count=counts["failed"],
            last_error=error[:2000],
            finished_at=None if waiting else now,
        )
        generation_run_refresh(run_id=chunk.run_id)
    return counts["ok"], counts["failed"], waiting


# -- finishing: the one atomic import --------------------------------------------------------------


def item_meta(run: GenerationRun, record: GenerationRecord, step_meta: dict | None) -> dict:
    """The provenance every generated item carries in its payload's ``meta`` (and so in exports)."""
    generation = {
        "run": run.pk,
        "step": run.step,
        "options": run.options,
        "prompt": run.prompt_key,
        "prompt_sha256": run.prompt_sha256,
        "request_sha256": record.request_sha256,
        "backend": run.backend,
        "baseline": run.is_baseline,
        "model": run.model,
        "endpoint": run.endpoint,
        "temperature": run.temperature,
        "max_tokens": run.max_tokens,
        "seed": run.seed,
        "source_file": run.source_name,
        "source_sha256": run.source_sha256,
    }
    if run.is_demo:
        generation["demo"] = True
    source = {**record.attribution, "record_id": record.source_id, "licence": record.licence, "line": record.line}
    return {**(step_meta or {}), "generation": generation, "source": source}


#: What the import reads of a finished record: not its source data, the largest column by far.
ITEM_RECORD_FIELDS = ("number", "line", "source_id", "licence", "attribution", "items", "request_sha256")


def _item_records(run: GenerationRun) -> Iterator[Record]:
    """The run's new items as import records, numbered in run order; items the project already has
    are left out."""
    step = get_step(run.step)
    records = (
        GenerationRecord.objects.filter(run=run, status=GenerationRecord.Status.OK)
        .only(*ITEM_RECORD_FIELDS)
        .order_by("number")
    )
    position = 0
    rows = records.iterator(chunk_size=RECORD_BATCH)
    while batch := list(itertools.islice(rows, RECORD_BATCH)):
        pairs = [
            (eid, payload, record)
            for record in batch
            for eid, payload in zip(step.external_ids(record.source_id, run.options), record.items, strict=True)
        ]
        existing = _existing_ids(run.project, [eid for eid, _, _ in pairs])
        for eid, payload, record in pairs:
            if eid in existing:
                continue
            position += 1
            yield Record(position, {"external_id": eid, **payload, "meta": item_meta(run, record, payload.get("meta"))})


def _drafts_judge(run: GenerationRun) -> Judge:
    """The judge the run's drafts belong to: its model, prompt and sampling, as a judge configured
    alike would be (one configuration, one judge, so its suggestions are never split)."""
    config = {
        "kind": run.project.kind,
        "backend": run.backend,
        "model": run.model,
        "endpoint": run.endpoint,
        "prompt_name": run.prompt_name,
        "prompt_version": run.prompt_version,
        "temperature": run.temperature,
        "max_tokens": run.max_tokens,
        "seed": run.seed,
    }
    fingerprint = _fingerprint(config)
    judge = Judge.objects.filter(project=run.project, fingerprint=fingerprint).first()
    if judge is None:
        judge = Judge.objects.create(
            project=run.project,
            name=_default_name(config),
            fingerprint=fingerprint,
            created_by=run.created_by,
            **config,
        )
    return judge


def _draft_records(run: GenerationRun, step: Step) -> Iterator[Record]:
    """A run-file line per new item whose payload drafts an answer: the value, or why it is not one."""
    kind = run.project.task_kind
    items = Item.objects.filter(project=run.project, payload__meta__generation__run=run.pk).order_by("pk")
    rows = items.values_list("external_id", "payload").iterator(chunk_size=RECORD_BATCH)
    for line, (external_id, payload) in enumerate(rows, start=1):
        value = step.suggestion(payload)
        if value is None:
            continue
        problems = kind.check_value(value, payload=payload)
        outcome = {"error": "; ".join(map(str, problems))} if problems else {"value": value}
        yield Record(line, {"external_id": external_id, **outcome})


def _record_drafts(run: GenerationRun, step: Step) -> JudgeRun | None:
    """The drafts of the run's new items as a completed run of their judge, or None if the step drafts
    nothing: annotators see a draft only as the kind's suggestion (hidden, shown or randomised as
    the project says), and draft acceptance counts it."""
    records = _draft_records(run, step)
    first = next(records, None)
    if first is None:
        return None
    return judge_run_store_outputs(
        project=run.project,
        judge=_drafts_judge(run),
        records=itertools.chain([first], records),
        errors=ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP),
        provenance={"generation_run": run.pk},
        prompt_sha256=run.prompt_sha256,
        created_by=run.created_by,
    ).run


def _finish(run: GenerationRun) -> GenerationRun:
    """Import the run's items and complete it; on a refused import, stop it with the reason (no item made)."""
    now = timezone.now()
    try:
        created = import_item_records(project=run.project, records=_item_records(run)).imported
    except ImportRejected as exc:
        shown = "; ".join(map(str, exc.errors[:3]))
        run.status, run.finished_at, run.watch_token = GenerationRun.Status.FAILED, now, ""
        run.last_error = IMPORT_FAILED.format(errors=shown)
        run.save(update_fields=["status", "last_error", "finished_at", "watch_token"])
        return run
    if created:
        _record_drafts(run, get_step(run.step))
    run.status, run.items_created, run.finished_at, run.watch_token = GenerationRun.Status.COMPLETED, created, now, ""
    run.pending_count = 0
    run.save(update_fields=["status", "items_created", "finished_at", "watch_token", "pending_count"])
    return run


@transaction.atomic
def generation_run_finish(*, run_id: int) -> GenerationRun | None:
    """Create the items of a run whose records all have an outcome, once; None if it is not time yet."""
    run = GenerationRun.objects.select_for_update().select_related("project").filter(pk=run_id).first()
    if run is None or run.status != GenerationRun.Status.RUNNING:
        return None
    if run.chunks.exclude(status=GenerationChunk.Status.DONE).exists():
        return None
    return _finish(run)


# -- sending chunks and watching runs -----------------------------------------------------------------


def generation_run_chunks_mark_sent(*, run_id: int) -> Dispatch:
    """Mark every waiting chunk of a running run as sent now, and return them to send."""
    run = GenerationRun.objects.get(pk=run_id)
    ids = pending_chunk_ids(GenerationChunk, run_id=run.pk) if run.is_active else []
    return Dispatch(run_id=run.pk, chunk_ids=ids, gpu=get_backend(run.backend).gpu)


def generation_run_new_watch(*, run_id: int) -> str | None:
    """A new watch token for a running run (older watchers then stop), or None if it is not running."""
    token = uuid.uuid4().hex
    updated = GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.RUNNING).update(watch_token=token)
    return token if updated else None


@transaction.atomic
def generation_run_watch(*, run_id: int, token: str) -> Dispatch | None:
    """One look at a running run: hand out again the chunks whose worker vanished, and finish a run whose
    last chunk was recorded by a worker that died before importing. None when this watcher should stop."""
    run = GenerationRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None or run.status != GenerationRun.Status.RUNNING or run.watch_token != token:
        return None
    ids, gave_up = chunks_to_resend(GenerationChunk, run_id=run.pk)
    if gave_up is not None:
        error = gave_up.last_error or "its worker stopped renewing the lease"
        generation_run_stop(
            run_id=run.pk, reason=CHUNK_GAVE_UP.format(number=gave_up.number, attempts=gave_up.attempts, error=error)
        )
        return None
    generation_run_refresh(run_id=run.pk)
    if not run.chunks.exclude(status=GenerationChunk.Status.DONE).exists():
        _finish(GenerationRun.objects.select_related("project").get(pk=run.pk))
        return None
    return Dispatch(run_id=run.pk, chunk_ids=ids, gpu=get_backend(run.backend).gpu)
