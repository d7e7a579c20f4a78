"""Storing a run's outputs: the items each batch of lines names, the suggestions written as the file
is read, and the imported run's judge with its provenance."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import (
    BATCH,
    ProgressCallback,
    Record,
    StagingTable,
    dumps_json,
    file_format,
    file_sha256,
    read_records,
    record_external_id,
)
from annotation.importing.staging import BATCH_TEXT
from annotation.kinds import TaskKind
from annotation.models import Item, Project
from judges.models import Judge, JudgeRun, Suggestion
from judges.prompting import sha256_json
from judges.run_files.lines import (
    DEFAULT_PROMPT,
    IMPORTED_BACKEND,
    IMPORTED_BEFORE,
    MAX_MODEL,
    MAX_PRODUCER_RUN_ID,
    MAX_PROMPT,
    MAX_TOKENS_COUNT,
    MODEL_MISSING,
    NO_SUCH_ITEM,
    PROMPT_KEY,
    RUN_FIELDS,
    SAMPLING_NOT_FLAT,
    TEXT_TOO_LONG,
    RunImportResult,
    RunProvenance,
    checked_value,
    decode_run_cell,
    option_orders,
    sampling_problem,
    shape_problems,
    with_header,
)


class _ItemLookup:
    """The project's items named by a batch of lines: id (and payload, only where the value check
    reads it) per external id, in one statement built from ``Item._meta``.

    Through the ORM, the ``external_id__in`` query of 2,000 ids, its JSON decoding and its
    compilation were a third of an import's time (``bench/import_run.py``).
    """

    def __init__(self, project: Project, *, with_payload: bool) -> None:
        meta = Item._meta
        column = {name: meta.get_field(name).column for name in ("id", "project", "external_id", "payload")}
        self.project_id = project.pk
        self.with_payload = with_payload
        self.postgres = connection.vendor == "postgresql"
        payload = f", {column['payload']}" + ("::text" if self.postgres else "") if with_payload else ""
        # PostgreSQL takes the ids as one array parameter; SQLite as a JSON array it unpacks itself.
        ids = "= ANY(%s)" if self.postgres else "IN (SELECT value FROM json_each(%s))"
        self.sql = (
            f"SELECT {column['external_id']}, {column['id']}{payload} FROM {meta.db_table} "
            f"WHERE {column['project']} = %s AND {column['external_id']} {ids}"
        )
        # With the server binding parameters (the default: DATABASE_PREPARED_STATEMENTS), the ids
        # travel as one array and the statement is prepared from its second batch on.
        self.cursor = connection.cursor()

    def items(self, external_ids: list[str]) -> dict[str, tuple[int, dict | None]]:
        ids = external_ids if self.postgres else orjson.dumps(external_ids).decode()
        self.cursor.execute(self.sql, [self.project_id, ids])
        if self.with_payload:
            return {external_id: (pk, orjson.loads(text)) for external_id, pk, text in self.cursor.fetchall()}
        return {external_id: (pk, None) for external_id, pk in self.cursor.fetchall()}

    def close(self) -> None:
        self.cursor.close()


# -- storing a run's outputs -----------------------------------------------------------------------


#: The suggestion fields an imported line sets, in the order of ``_SuggestionWriter``'s rows.
SUGGESTION_COLUMNS = (
    "judge",
    "run",
    "item",
    "prompt_sha256",
    "status",
    "value",
    "raw_output",
    "failure_reason",
    "attempts",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "score",
    "option_order",
    "created_at",
    "updated_at",
)


class _SuggestionWriter:
    """The run's suggestions, written a batch at a time straight into their table while the file is
    read (COPY on PostgreSQL, batched inserts elsewhere), in file order.

    A staging table and an ``INSERT ... SELECT`` from it wrote every line twice. Before a batch is
    written, its items are looked up among the suggestions already written (one indexed query): an
    id repeated in the file stops the writing, and the staging table of lines and ids (which the
    caller keeps) names the repeated lines. Nothing is written twice, so the table's uniqueness
    (judge, item, prompt hash) never refuses a row mid-transaction.
    """

    def __init__(self, run: JudgeRun, prompt_sha256: str) -> None:
        meta = Suggestion._meta
        self.postgres = connection.vendor == "postgresql"
        columns = ", ".join(meta.get_field(name).column for name in SUGGESTION_COLUMNS)
        self.copy_sql = f"COPY {meta.db_table} ({columns}) FROM STDIN"
        marks = ", ".join(["%s"] * len(SUGGESTION_COLUMNS))
        self.insert_sql = f"INSERT INTO {meta.db_table} ({columns}) VALUES ({marks})"
        now = timezone.now()
        stamp = now if self.postgres else connection.ops.adapt_datetimefield_value(now)
        self.head, self.tail = (run.judge_id, run.pk), (stamp, stamp)
        self.prompt_sha256 = prompt_sha256
        self.cursor = connection.cursor()
        judge, item, prompt = (meta.get_field(name).column for name in ("judge", "item", "prompt_sha256"))
        items = "= ANY(%s)" if self.postgres else "IN (SELECT value FROM json_each(%s))"
        self.written_sql = (
            f"SELECT 1 FROM {meta.db_table} WHERE {judge} = %s AND {prompt} = %s AND {item} {items} LIMIT 1"
        )
        self.check = connection.cursor()
        self.repeated = False
        self._rows: list[tuple] = []
        self._text_size = 0

    def add(self, item_id: int, status: str, value: str | None, raw: str, reason: str, data: dict) -> None:
        order = data.get("option_order")
        self._rows.append(
            (
                *self.head,
                item_id,
                self.prompt_sha256,
                status,
                value,
                raw,
                reason,
                1,
                data.get("prompt_tokens"),
                data.get("completion_tokens"),
                data.get("latency_ms"),
                data.get("score"),
                None if order is None else dumps_json(order),
                *self.tail,
            )
        )
        self._text_size += len(raw) + (len(value) if value else 0)
        if len(self._rows) >= BATCH or self._text_size >= BATCH_TEXT:
            self._flush()

    def _flush(self) -> None:
        rows, self._rows, self._text_size = self._rows, [], 0
        if not rows or self.repeated:
            return
        item_ids = [row[2] for row in rows]
        ids = item_ids if self.postgres else orjson.dumps(item_ids).decode()
        self.check.execute(self.written_sql, [self.head[0], self.prompt_sha256, ids])
        if len(set(item_ids)) < len(item_ids) or self.check.fetchone() is not None:
            self.repeated = True
            return
        if self.postgres:
            with self.cursor.cursor.copy(self.copy_sql) as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            self.cursor.executemany(self.insert_sql, rows)

    def finish(self) -> None:
        self._flush()

    def abort(self) -> None:
        self._rows.clear()

    def close(self) -> None:
        self.check.close()
        self.cursor.close()


def _stage_batch(
    kind: TaskKind,
    orders: Any,
    lookup: _ItemLookup,
    batch: list[tuple[Record, str]],
    staging: StagingTable,
    writer: _SuggestionWriter,
    errors: ErrorCollector,
) -> int:
    """Check one batch of lines against their items and write the good ones (while no error was
    found); the number of lines written with a value."""
    items = lookup.items([external_id for _, external_id in batch])
    ok = 0
    failed_status, ok_status = Suggestion.Status.FAILED, Suggestion.Status.OK
    for record, external_id in batch:
        found = items.get(external_id)
        if found is None:
            errors.add(FieldError("external_id", NO_SUCH_ITEM.format(external_id=external_id), record.line))
            continue
        data = record.data
        value, problems = checked_value(kind, orders, data, found[1])
        if problems:
            errors.extend(problems, line=record.line)
            continue
        if errors:
            continue  # nothing will be stored: only keep checking
        if value is None:
            writer.add(found[0], failed_status, None, data.get("raw_output", ""), data["error"].strip(), data)
        else:
            writer.add(found[0], ok_status, dumps_json(value), data.get("raw_output", ""), "", data)
            ok += 1
        staging.add((record.line, external_id))
    return ok


def judge_run_store_outputs(
    *, project: Project, judge: Judge, records: Iterable[Record], errors: ErrorCollector, provenance: dict[str, Any],
    prompt_sha256: str, created_by: Any = None,
) -> RunImportResult:  # fmt: skip
    """A completed run of ``judge`` holding one suggestion per record (a value, or a failure with its
    reason), or ImportRejected naming each bad line and field, with nothing stored.

    Call inside a transaction: the judge, the run and the suggestions are one write. ``errors`` may
    already hold the reader's problems.
    """
    kind = project.task_kind
    now = timezone.now()
    last_item = Item.objects.filter(project=project).aggregate(last=Max("pk"))["last"] or 0
    run = JudgeRun.objects.create(
        judge=judge,
        project=project,
        status=JudgeRun.Status.COMPLETED,
        created_by=created_by,
        started_at=now,
        resumed_at=now,
        finished_at=now,
        last_item_id=last_item,
        provenance=provenance,
    )
    orders = option_orders(kind)
    lookup = _ItemLookup(project, with_payload=kind.value_rules_need_payload or orders is not None)
    # Lines and ids only, so the database names the lines of a repeated id.
    staging = StagingTable("concord_run_staging", ())
    writer = _SuggestionWriter(run, prompt_sha256)
    ok = written = 0
    try:
        rows = iter(records)
        while chunk := list(itertools.islice(rows, BATCH)):
            batch = []
            for record in chunk:
                external_id = record_external_id(record.data, record.line, errors)
                problems = shape_problems(record.data)
                if problems:
                    errors.extend(problems, line=record.line)
                elif external_id is not None:
                    batch.append((record, external_id))
            ok += _stage_batch(kind, orders, lookup, batch, staging, writer, errors)
            written += len(batch)
        if not errors:
            staging.finish()
            writer.finish()
            staging.report_repeated_ids(errors)
            if writer.repeated and not errors:  # an item of the file already has this judge's suggestion
                raise RuntimeError("an item has a suggestion of this judge and prompt already")
    except BaseException:
        staging.abort()
        writer.abort()
        raise
    finally:
        lookup.close()
        writer.close()
    if errors:
        staging.abort()
        raise ImportRejected(errors.errors, total=errors.total)
    failed = written - ok
    staging.drop()
    run.total, run.ok_count, run.failed_count = ok + failed, ok, failed
    run.save(update_fields=["total", "ok_count", "failed_count"])
    return RunImportResult(run=run, ok=ok, failed=failed)


def _prompt_parts(label: str) -> tuple[str, int]:
    """``name.vN`` is a prompt and its version; any other label is kept whole, without a version (0)."""
    match = PROMPT_KEY.match(label)
    if match:
        return match["name"], int(match["version"])
    return label, 0


def _sampled(sampling: dict[str, Any], name: str, low: float, high: float, whole: bool = False) -> Any:
    value = sampling.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        return None
    return value if low <= value <= high else None


def _imported_judge(*, project: Project, name: str, source: RunProvenance, file_sha: str, created_by: Any) -> Judge:
    """A new judge for one imported file; ImportRejected when this very import was made before."""
    prompt_name, prompt_version = _prompt_parts(source.prompt or DEFAULT_PROMPT)
    config = {
        "kind": project.kind,
        "backend": IMPORTED_BACKEND,
        "model": source.model,
        "prompt_name": prompt_name,
        "prompt_version": prompt_version,
        "sampling": source.sampling,
        "producer_run_id": source.producer_run_id,
        "file_sha256": file_sha,
    }
    fingerprint = sha256_json(config)
    existing = JudgeRun.objects.filter(judge__project=project, judge__fingerprint=fingerprint).first()
    if existing is not None:
        raise ImportRejected([FieldError("", IMPORTED_BEFORE.format(run=existing.pk))])
    sampling = source.sampling
    temperature = _sampled(sampling, "temperature", 0.0, 2.0)
    max_tokens = _sampled(sampling, "max_tokens", 1, MAX_TOKENS_COUNT, whole=True)
    seed = _sampled(sampling, "seed", -(2**63), 2**63 - 1, whole=True)
    prompt_key = prompt_name if prompt_version == 0 else f"{prompt_name}.v{prompt_version}"
    default_name = f"{source.model.rsplit('/', 1)[-1]} · {prompt_key} (imported)"
    judge = Judge(
        project=project,
        name=(name.strip() or default_name)[:100],
        kind=project.kind,
        backend=IMPORTED_BACKEND,
        model=source.model,
        prompt_name=prompt_name,
        prompt_version=prompt_version,
        temperature=0.0 if temperature is None else float(temperature),
        max_tokens=2048 if max_tokens is None else max_tokens,
        seed=seed,
        fingerprint=fingerprint,
        created_by=created_by,
    )
    judge.full_clean()
    judge.save()
    return judge


def judge_run_import(
    *,
    project: Project,
    path: str | Path,
    model: str = "",
    prompt: str = "",
    name: str = "",
    sampling: dict[str, Any] | None = None,
    producer_run_id: str = "",
    file_name: str = "",
    created_by: Any = None,
    progress: ProgressCallback | None = None,
) -> RunImportResult:
    """Import a model's outputs from a JSONL or CSV file as a new run of the project, or nothing.

    The provenance comes from the options, else from the file's provenance line: a model is needed
    from one of them. Raises ImportRejected naming each bad line and field.
    """
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    file_format(path)  # refuses an unsupported file name before anything is read
    options = {"model": model.strip(), "prompt": prompt.strip(), "producer_run_id": producer_run_id.strip()}
    for key, limit in (("model", MAX_MODEL), ("prompt", MAX_PROMPT), ("producer_run_id", MAX_PRODUCER_RUN_ID)):
        if len(options[key]) > limit:
            errors.add(FieldError(key, TEXT_TOO_LONG.format(limit=limit)))
    if sampling is not None and sampling_problem(sampling):
        errors.add(FieldError("sampling", SAMPLING_NOT_FLAT))
    if errors:
        raise ImportRejected(errors.errors, total=errors.total)
    file_sha = file_sha256(Path(path))
    header: dict[str, Any] = {}
    records = with_header(
        read_records(
            path,
            errors,
            decode_csv=decode_run_cell,
            csv_columns=set(RUN_FIELDS),
            csv_required={"external_id"},
            progress=progress,
        ),
        errors,
        header,
    )
    with transaction.atomic():
        # The provenance line is the file's first record: read it before the judge is made.
        first = next(records, None)
        source = RunProvenance(
            model=options["model"] or header.get("model", "").strip(),
            prompt=options["prompt"] or header.get("prompt", "").strip(),
            sampling=sampling if sampling is not None else header.get("sampling", {}),
            producer_run_id=options["producer_run_id"] or header.get("producer_run_id", "").strip(),
        )
        if not source.model:
            errors.add(FieldError("model", MODEL_MISSING))
        if errors and not source.model:
            raise ImportRejected(errors.errors, total=errors.total)
        judge = _imported_judge(project=project, name=name, source=source, file_sha=file_sha, created_by=created_by)
        provenance = {**source.as_dict(), "file_name": file_name or Path(path).name, "file_sha256": file_sha}
        return judge_run_store_outputs(
            project=project,
            judge=judge,
            records=itertools.chain([first] if first else [], records),
            errors=errors,
            provenance=provenance,
            prompt_sha256=file_sha,
            created_by=created_by,
        )
