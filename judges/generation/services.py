"""Writes: generation runs (start, and the one atomic import that completes them).

Keyword-only and atomic. Their lifecycle (cancel, resume, watch, record) is the run engine's
(judges.runs); like every service, these never enqueue tasks: callers send a started run through
``judges.tasks.run_dispatch`` on commit.

A run stores its source records when it starts, so workers and a resume never need the file. A
record whose items the project already has (an earlier run made them) is settled at once and not
asked again; so a rerun of a step over the same file asks only for what failed before, and never
duplicates an item. Items are created when every record has an outcome, in one atomic import
(``annotation.importing.import_item_records``), each with the run's provenance in its ``meta``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from annotation.errors import ErrorCollector, ImportRejected
from annotation.importing import Record, file_sha256, import_item_records
from annotation.models import Item, Project
from annotation.table_statistics import statistics_refreshed
from judges.backends import get_backend
from judges.errors import JudgeInvalid, RunStateError
from judges.generation.prompts import StepPrompt
from judges.generation.steps import Step, StepInputInvalid, get_step, step_names
from judges.models import GenerationChunk, GenerationRecord, GenerationRun, Judge, JudgeRun
from judges.run_files import judge_run_store_outputs
from judges.runs.services import run_chunks_create, run_save_new
from judges.services import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_SEED,
    CallRequest,
    _default_name,
    _fingerprint,
    call_settings,
)

UNKNOWN_STEP = "unknown step {step!r}; choose one of {known}"
STEP_OF_ANOTHER_KIND = "step {step!r} makes {made} items, but project {project!r} is a {kind} project"
GENERATION_ACTIVE = "generation run {run} of step {step!r} on this project is still running; cancel it or wait for it"
BAD_OPTION = "{message}"
BAD_LIMIT = "limit must be at least 1, got {limit}"
IMPORT_FAILED = "the items could not be imported, none was created: {errors}"
RECORD_BATCH = 1000
ID_BATCH = 2000


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
    columns = ", ".join(cast(Field, meta.get_field(name)).column for name in COPIED_FIELDS)
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
    statistics_refreshed(GenerationRecord, counts[0])
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
    stored then. Send the run with ``judges.tasks.run_dispatch`` on commit.
    """
    chosen = generation_step(project=project, step=step)
    try:
        cleaned = chosen.clean_options(options)
    except ValueError as exc:
        raise JudgeInvalid(BAD_OPTION.format(message=exc)) from None
    if limit is not None and limit < 1:
        raise JudgeInvalid(BAD_LIMIT.format(limit=limit))
    chosen_temperature = chosen.default_temperature if temperature is None else temperature
    call = call_settings(CallRequest(backend, model, endpoint, chosen_temperature, max_tokens, seed))
    prompt = StepPrompt(chosen, options=cleaned, baseline=get_backend(backend).is_baseline)
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
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_sha256=prompt.sha256,
        **call,
        source_name=(source_name or path.name)[:255],
        source_sha256=file_sha256(path),
        is_demo=is_demo,
        concurrency=concurrency or settings.JUDGE_CONCURRENCY,
        chunk_size=chunk_size or settings.JUDGE_CHUNK_SIZE or get_backend(backend).chunk_size,
        created_by=created_by,
        started_at=now,
        resumed_at=now,
    )
    run_save_new(run)
    total, existing = _store_records(run, chosen, path, cleaned, limit)
    numbers = (
        GenerationRecord.objects.filter(run=run, status=GenerationRecord.Status.PENDING)
        .order_by("number")
        .values_list("number", flat=True)
    )
    chunks = run_chunks_create(
        run=run,
        numbers=numbers.iterator(chunk_size=10_000),
        make=lambda n, first, last, count: GenerationChunk(
            run=run, number=n, first_number=first, last_number=last, size=count
        ),
    )
    run.total, run.existing_count = total, existing
    run.pending_count = total - existing
    run.save(update_fields=["total", "existing_count", "pending_count"])
    if not chunks:
        generation_run_complete(run=run)
    return run


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
            # An OK record carries its items.
            for eid, payload in zip(
                step.external_ids(record.source_id, run.options), cast(list, record.items), strict=True
            )
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
    config = run.call_config()
    config.pop("project_id")
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
        outcome: dict[str, Any] = {"error": "; ".join(map(str, problems))} if problems else {"value": value}
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


def generation_run_complete(*, run: GenerationRun) -> GenerationRun:
    """Import the items of a run (locked) whose every record has an outcome, and complete it; on a
    refused import, stop it with the reason (no item made). The engine calls it once per run."""
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
