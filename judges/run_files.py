"""Run files: a model's outputs made elsewhere come in as an *imported run*, and any run goes out in
the same format (docs/formats.md, "Judge runs").

A file is JSONL or CSV, one line per item: ``external_id`` and either the model's ``value`` (in the
kind's annotation schema, checked exactly as a person's answer is) or an ``error`` saying why its
output could not be used; optionally ``raw_output``, ``latency_ms``, ``prompt_tokens``,
``completion_tokens``, ``score`` (0-1) and ``option_order``. A JSONL file may open with a
``{"provenance": {...}}`` line naming the producer's model, prompt, sampling parameters and run id.

Reading reuses the item importer's machinery (``annotation.importing``): the same streaming reader
with its line numbers and caps, the same id rules, and a staging table written by COPY on
PostgreSQL, so repeated ids are found by the database and memory stays flat. An import is atomic:
one bad line and nothing is stored, the judge and run rows included.
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
from django.db.models import Max, TextField
from django.db.models.functions import Cast
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


def _shape_problems(data: dict) -> list[FieldError]:
    """What is wrong with a line's fields, before its item is looked at."""
    problems = []
    unknown = sorted(set(data) - set(RUN_FIELDS))
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


def _checked_value(kind: TaskKind, data: dict, payload: dict) -> tuple[Any, list[FieldError]]:
    """The line's value in the item's own terms, and its problems (checked as a person's answer is)."""
    order = data.get("option_order")
    orders = _option_orders(kind) if "option_order" in data else None
    if "option_order" in data and orders is None:
        return None, [FieldError("option_order", NO_OPTIONS.format(kind=kind.name))]
    if orders is not None:
        problems = orders.order_problems(order, payload)
        if problems:
            return None, problems
    if "value" not in data or data["value"] is None:
        return None, []
    value = data["value"]
    problems = kind.check_value(value, payload=payload)
    if problems or orders is None:
        return value, problems
    # A valid answer among the options as shown; stored in the item's numbering, so it scores alike.
    return orders.to_item_order(value, order), []


# -- storing a run's outputs -----------------------------------------------------------------------


class _OutputStaging(StagingTable):
    """The run file's valid lines, one row each, ready to become suggestions."""

    def __init__(self) -> None:
        super().__init__(
            "concord_run_staging",
            (
                ("item_id", "bigint"),
                ("status", "text"),
                ("value", "text"),
                ("raw_output", "text"),
                ("failure_reason", "text"),
                ("tokens_in", "integer"),
                ("tokens_out", "integer"),
                ("latency_ms", "double precision"),
                ("score", "double precision"),
                ("option_order", "text"),
            ),
        )

    def counts(self) -> tuple[int, int]:
        self.cursor.execute(
            f"SELECT sum(CASE WHEN status = %s THEN 1 ELSE 0 END), count(*) FROM {self.table}",
            [Suggestion.Status.OK],
        )
        ok, total = self.cursor.fetchone()
        return int(ok or 0), int(total) - int(ok or 0)

    def insert_suggestions(self, run: JudgeRun, prompt_sha256: str) -> None:
        meta = Suggestion._meta
        columns = [meta.get_field(name).column for name in SUGGESTION_COLUMNS]
        cast = "::jsonb" if self.postgres else ""
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        self.cursor.execute(
            f"INSERT INTO {meta.db_table} ({', '.join(columns)}) "
            f"SELECT %s, %s, item_id, %s, status, value{cast}, raw_output, failure_reason, 1, tokens_in, "
            f"tokens_out, latency_ms, score, option_order{cast}, %s, %s FROM {self.table} ORDER BY line",
            [run.judge_id, run.pk, prompt_sha256, now, now],
        )


#: The suggestion fields an imported line sets, in the order of ``insert_suggestions``' SELECT.
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


def _stage_batch(
    kind: TaskKind, project: Project, batch: list[tuple[Record, str]], staging: _OutputStaging, errors: ErrorCollector
) -> None:
    """Check one batch of lines against their items and stage the good ones (while no error was found)."""
    # The payloads come as JSON text, parsed by orjson: the ORM's JSON decoding was a tenth of the import.
    rows = (
        Item.objects.filter(project=project, external_id__in={external_id for _, external_id in batch})
        .annotate(payload_text=Cast("payload", output_field=TextField()))
        .values_list("pk", "external_id", "payload_text")
    )
    items = {external_id: (pk, orjson.loads(text)) for pk, external_id, text in rows}
    for record, external_id in batch:
        found = items.get(external_id)
        if found is None:
            errors.add(FieldError("external_id", NO_SUCH_ITEM.format(external_id=external_id), record.line))
            continue
        data = record.data
        value, problems = _checked_value(kind, data, found[1])
        if problems:
            errors.extend(problems, line=record.line)
            continue
        if errors:
            continue  # nothing will be stored: only keep checking
        failed = value is None
        order = data.get("option_order")
        staging.add(
            (
                record.line,
                external_id,
                found[0],
                Suggestion.Status.FAILED if failed else Suggestion.Status.OK,
                None if failed else dumps_json(value),
                data.get("raw_output", ""),
                data["error"].strip() if failed else "",
                data.get("prompt_tokens"),
                data.get("completion_tokens"),
                data.get("latency_ms"),
                data.get("score"),
                None if order is None else dumps_json(order),
            )
        )


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
    staging = _OutputStaging()
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
            _stage_batch(kind, project, batch, staging, errors)
        if not errors:
            staging.finish()
            staging.report_repeated_ids(errors)
    except BaseException:
        staging.abort()
        raise
    if errors:
        staging.abort()
        raise ImportRejected(errors.errors, total=errors.total)
    staging.insert_suggestions(run, prompt_sha256)
    ok, failed = staging.counts()
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
