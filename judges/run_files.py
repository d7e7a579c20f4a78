"""Run files: a model's outputs made elsewhere come in as an *imported run*, and any run goes out in
the same format (docs/formats.md, "Judge runs").

A file is JSONL or CSV, one line per item: ``external_id`` and either the model's ``value`` (in the
kind's annotation schema, checked exactly as a person's answer is) or an ``error`` saying why its
output could not be used; optionally ``raw_output``, ``latency_ms``, ``prompt_tokens``,
``completion_tokens``, ``score`` (0-1) and ``option_order``. A JSONL file may open with a
``{"provenance": {...}}`` line naming the producer's model, prompt, sampling parameters and run id.

Reading reuses the item importer's machinery (``annotation.importing``): the same streaming reader
with its line numbers and caps, the same id rules, and a staging table of lines and ids written by
COPY on PostgreSQL, so repeated ids are found by the database and memory stays flat. The
suggestions go straight into their table, a batch at a time, as the file is read. An import is
atomic: one bad line and nothing is stored, the judge and run rows included.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from annotation import csvcells
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
from judges.kinds import kind_module
from judges.models import Judge, JudgeRun, Suggestion
from judges.prompting import sha256_json

IMPORTED_BACKEND = "imported"
RUN_FIELDS = (
    "external_id",
    "value",
    "error",
    "raw_output",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "score",
    "option_order",
)
#: The run file formats (a download's ``?format=``) and their content types.
RUN_FILE_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "csv": "text/csv; charset=utf-8"}
HEADER_KEY = "provenance"
PROVENANCE_KEYS = ("model", "prompt", "sampling", "producer_run_id")
#: Caps on what a file's provenance (or the options) may say.
MAX_MODEL = 200
MAX_PROMPT = 100
MAX_PRODUCER_RUN_ID = 200
MAX_SAMPLING_KEYS = 20
MAX_TOKENS_COUNT = 2**31 - 1
DEFAULT_PROMPT = "unspecified"
PROMPT_KEY = re.compile(r"^(?P<name>.+)\.v(?P<version>[1-9][0-9]{0,8})$")

UNKNOWN_FIELDS = "unknown field(s) {fields}; allowed: {allowed}"
BOTH_VALUE_AND_ERROR = "a line has either a value or an error, not both"
NEITHER_VALUE_NOR_ERROR = "missing: give the model's value, or an error saying why its output could not be used"
ERROR_NOT_TEXT = "must be a non-empty text saying why the output could not be used"
NOT_TEXT = "must be a text"
NOT_MILLISECONDS = "must be a number of milliseconds >= 0"
NOT_TOKEN_COUNT = f"must be a whole number of tokens, 0-{MAX_TOKENS_COUNT}"
NOT_SCORE = "must be a number from 0 to 1 (the model's confidence)"
NO_SUCH_ITEM = "no item {external_id!r} in this project"
NO_OPTIONS = "{kind} items have no options to order: leave option_order out"
HEADER_NOT_FIRST = "a provenance line may only be the file's first line"
HEADER_NOT_OBJECT = "must be an object with model, prompt, sampling and producer_run_id"
HEADER_UNKNOWN = "unknown provenance field(s) {fields}; allowed: {allowed}"
MODEL_MISSING = "no model named: give it as an option (--model) or in the file's provenance line"
TEXT_TOO_LONG = "must be a text of at most {limit} characters"
SAMPLING_NOT_FLAT = (
    f"must be an object of at most {MAX_SAMPLING_KEYS} parameters, each a number, text, true/false or null"
)
IMPORTED_BEFORE = "this file was imported already, as run {run} (same model, prompt and parameters)"

#: CSV cells are read by these types, as an annotation file's columns are (``annotation.csvcells``).
RUN_CELL_SCHEMAS = {
    "latency_ms": {"type": "number"},
    "prompt_tokens": {"type": "integer"},
    "completion_tokens": {"type": "integer"},
    "score": {"type": "number"},
    "option_order": {"type": "array"},
}


@dataclass(frozen=True, kw_only=True)
class RunProvenance:
    """Where a run's outputs came from: what the file's provenance line and the options say."""

    model: str
    prompt: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)
    producer_run_id: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt": self.prompt,
            "sampling": dict(self.sampling),
            "producer_run_id": self.producer_run_id,
        }


@dataclass(frozen=True)
class RunImportResult:
    run: JudgeRun
    ok: int
    failed: int

    def as_dict(self) -> dict[str, int]:
        return {"run": self.run.pk, "ok": self.ok, "failed": self.failed}


# -- option orders (multiple choice) ---------------------------------------------------------------


def _option_orders(kind: TaskKind) -> Any:
    """The kind's ``judges.kinds.<kind>.option_order`` module, or None when its items have no options."""
    return kind_module(kind.name, "option_order")


# -- checking one line -----------------------------------------------------------------------------


def _number_problem(value: Any, *, low: float, high: float | None) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return True
    return value < low or (high is not None and value > high)


RUN_FIELD_SET = frozenset(RUN_FIELDS)
_NUMBERS = (int, float)


def _shape_problems(data: dict) -> list[FieldError]:
    """What is wrong with a line's fields, before its item is looked at."""
    if _plain_line(data):
        return []
    problems = []
    unknown = sorted(data.keys() - RUN_FIELD_SET)
    if unknown:
        problems.append(FieldError("", UNKNOWN_FIELDS.format(fields=unknown, allowed=list(RUN_FIELDS))))
    has_value, has_error = data.get("value") is not None, "error" in data
    if has_value and has_error:
        problems.append(FieldError("error", BOTH_VALUE_AND_ERROR))
    elif not has_value and not has_error:
        problems.append(FieldError("value", NEITHER_VALUE_NOR_ERROR))
    if has_error and (not isinstance(data["error"], str) or not data["error"].strip()):
        problems.append(FieldError("error", ERROR_NOT_TEXT))
    if "raw_output" in data and not isinstance(data["raw_output"], str):
        problems.append(FieldError("raw_output", NOT_TEXT))
    if "latency_ms" in data and _number_problem(data["latency_ms"], low=0, high=None):
        problems.append(FieldError("latency_ms", NOT_MILLISECONDS))
    for name in ("prompt_tokens", "completion_tokens"):
        count = data.get(name)
        if name in data and (
            isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_TOKENS_COUNT
        ):
            problems.append(FieldError(name, NOT_TOKEN_COUNT))
    if "score" in data and _number_problem(data["score"], low=0, high=1):
        problems.append(FieldError("score", NOT_SCORE))
    return problems


def _plain_line(data: dict) -> bool:
    """Whether a line is certainly well formed, by one cheap look at each field (most lines are):
    a False sends it through every check of ``_shape_problems``, which names what is wrong."""
    if not data.keys() <= RUN_FIELD_SET:
        return False
    if "error" in data:
        error = data["error"]
        if data.get("value") is not None or type(error) is not str or not error.strip():
            return False
    elif data.get("value") is None:
        return False
    raw = data.get("raw_output", "")
    latency = data.get("latency_ms", 0)
    tokens_in = data.get("prompt_tokens", 0)
    tokens_out = data.get("completion_tokens", 0)
    score = data.get("score", 0)
    return (
        type(raw) is str
        and type(latency) in _NUMBERS
        and 0 <= latency < math.inf
        and type(tokens_in) is int
        and 0 <= tokens_in <= MAX_TOKENS_COUNT
        and type(tokens_out) is int
        and 0 <= tokens_out <= MAX_TOKENS_COUNT
        and type(score) in _NUMBERS
        and 0 <= score <= 1
    )


def _checked_value(kind: TaskKind, orders: Any, data: dict, payload: dict | None) -> tuple[Any, list[FieldError]]:
    """The line's value in the item's own terms, and its problems (checked as a person's answer is).

    ``orders`` is the kind's option-order module (None when its items have no options); ``payload``
    is None only for a kind whose value rules do not read it and whose items have no options."""
    if "option_order" in data:
        if orders is None:
            return None, [FieldError("option_order", NO_OPTIONS.format(kind=kind.name))]
        problems = orders.order_problems(data["option_order"], payload)
        if problems:
            return None, problems
    value = data.get("value")
    if value is None:
        return None, []
    problems = kind.check_value(value, payload=payload if payload is not None else {})
    if problems or "option_order" not in data:
        return value, problems
    # A valid answer among the options as shown; stored in the item's numbering, so it scores alike.
    return orders.to_item_order(value, data["option_order"]), []


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
        value, problems = _checked_value(kind, orders, data, found[1])
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
    orders = _option_orders(kind)
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
                problems = _shape_problems(record.data)
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


# -- importing a file ------------------------------------------------------------------------------


def _decode_run_cell(name: str, cell: str) -> Any:
    if name == "value":
        return csvcells.json_cell(cell, field="value", what="the model's value")
    return csvcells.schema_cell(cell, field=name, schema=RUN_CELL_SCHEMAS.get(name, {}))


def _text_problem(value: Any, limit: int) -> bool:
    return not isinstance(value, str) or len(value) > limit


def _header_provenance(data: Any, line: int, errors: ErrorCollector) -> dict[str, Any]:
    """The provenance a file's first line gives (problems go to ``errors``, naming the field)."""
    if not isinstance(data, dict):
        errors.add(FieldError(HEADER_KEY, HEADER_NOT_OBJECT, line))
        return {}
    unknown = sorted(set(data) - set(PROVENANCE_KEYS))
    if unknown:
        errors.add(FieldError(HEADER_KEY, HEADER_UNKNOWN.format(fields=unknown, allowed=list(PROVENANCE_KEYS)), line))
    limits = {"model": MAX_MODEL, "prompt": MAX_PROMPT, "producer_run_id": MAX_PRODUCER_RUN_ID}
    for name, limit in limits.items():
        if name in data and _text_problem(data[name], limit):
            errors.add(FieldError(f"{HEADER_KEY}.{name}", TEXT_TOO_LONG.format(limit=limit), line))
    if "sampling" in data and sampling_problem(data["sampling"]):
        errors.add(FieldError(f"{HEADER_KEY}.sampling", SAMPLING_NOT_FLAT, line))
    return {k: v for k, v in data.items() if k in PROVENANCE_KEYS}


def sampling_problem(sampling: Any) -> bool:
    """Whether sampling parameters are not a small flat object of scalars."""
    if not isinstance(sampling, dict) or len(sampling) > MAX_SAMPLING_KEYS:
        return True
    return any(
        len(str(k)) > 100
        or not (v is None or isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v)))
        for k, v in sampling.items()
    )


def _with_header(records: Iterator[Record], errors: ErrorCollector, header: dict[str, Any]) -> Iterator[Record]:
    """The file's records after its provenance line (read into ``header``); a later one is an error."""
    for number, record in enumerate(records):
        if HEADER_KEY in record.data and "external_id" not in record.data:
            if number:
                errors.add(FieldError(HEADER_KEY, HEADER_NOT_FIRST, record.line))
            else:
                header.update(_header_provenance(record.data[HEADER_KEY], record.line, errors))
            continue
        yield record


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
    records = _with_header(
        read_records(
            path,
            errors,
            decode_csv=_decode_run_cell,
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


# -- exporting a run -------------------------------------------------------------------------------


def run_provenance(run: JudgeRun) -> dict[str, Any]:
    """What a run's file says of where its outputs came from: an imported run keeps its producer's
    provenance; a run made here names its judge's model, prompt and sampling and itself."""
    if run.provenance.get("model"):
        return {k: run.provenance[k] for k in PROVENANCE_KEYS if run.provenance.get(k) not in (None, "", {})}
    judge = run.judge
    sampling: dict[str, Any] = {"temperature": judge.temperature, "max_tokens": judge.max_tokens}
    if judge.seed is not None:
        sampling["seed"] = judge.seed
    return {
        "model": judge.model or judge.backend_label,
        "prompt": judge.prompt_key,
        "sampling": {} if judge.is_baseline else sampling,
        "producer_run_id": f"concord run {run.pk}",
    }


def run_lines(run: JudgeRun) -> Iterator[dict[str, Any]]:
    """The run's file lines, in item order: one per item, its newest suggestion of the run's judge."""
    orders = _option_orders(run.project.task_kind)
    rows = (
        Suggestion.objects.filter(judge_id=run.judge_id, item__project_id=run.project_id)
        .order_by("item_id", "-updated_at", "-id")
        .values_list(
            "item_id",
            "item__external_id",
            "status",
            "value",
            "failure_reason",
            "raw_output",
            "latency_ms",
            "tokens_in",
            "tokens_out",
            "score",
            "option_order",
        )  # fmt: skip
    )
    previous = None
    for item_id, external_id, status, value, reason, raw, latency, tokens_in, tokens_out, score, order in rows.iterator(
        chunk_size=2000
    ):
        if item_id == previous:
            continue  # an item judged under two prompt hashes: its newest answer, as reports read it
        previous = item_id
        line: dict[str, Any] = {"external_id": external_id}
        if status == Suggestion.Status.OK:
            line["value"] = value if order is None or orders is None else orders.to_shown_order(value, order)
        else:
            line["error"] = reason
        optional = {
            "raw_output": raw or None,
            "latency_ms": latency,
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "score": score,
            "option_order": order,
        }
        line.update({k: v for k, v in optional.items() if v is not None})
        yield line


def run_file_lines(run: JudgeRun, fmt: str) -> Iterator[str]:
    """The run in the import format, a line of text at a time: ``jsonl`` (its provenance line first)
    or ``csv`` (a header row; CSV carries no provenance, which the import's options then give)."""
    if fmt == "jsonl":
        yield json.dumps({HEADER_KEY: run_provenance(run)}, ensure_ascii=False) + "\n"
        for line in run_lines(run):
            yield dumps_json(line) + "\n"
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in itertools.chain([RUN_FIELDS], ([_csv_cell(line.get(n)) for n in RUN_FIELDS] for line in run_lines(run))):
        writer.writerow(row)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def judge_run_export(*, run: JudgeRun, out: TextIO, fmt: str) -> int:
    """Write the run to ``out`` in the import format; the number of item lines written."""
    count = -1  # the provenance line or the CSV header is not an item
    for text in run_file_lines(run, fmt):
        out.write(text)
        count += 1
    return count


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps_json(value)
