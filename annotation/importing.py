"""Streaming, atomic imports of items and annotations from JSONL or CSV.

Files are read one record at a time, so memory does not grow with the file. Everything a file
brings is written inside one transaction: a single bad record rolls all of it back, and the error
report names each bad line and field (the first ``cap`` of them, then a count).

Items go through a temporary staging table first (COPY on PostgreSQL, batched inserts elsewhere):
duplicate external ids, within the file or against the project, are then found by the database
with their line numbers, instead of by a Python set that would grow with the file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from annotation import csvcells, jsonsafe
from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.models import Annotation, ImportJob, Item, Membership, Project, item_order_key
from annotation.sampling import sample_hold_out_new_items
from annotation.selectors import project_size_key

ProgressCallback = Callable[[int, int], None]  # (bytes read, records read)

ITEM_RESERVED = ("external_id", "gold")
ANNOTATION_FIELDS = ("rater", "external_id", "value", "seconds_on_item", "suggestion_visible")
MAX_EXTERNAL_ID = 255
PROGRESS_EVERY = 2000
BATCH = 2000
#: Payload text held before a batch is written (characters): a batch of large records stays small.
BATCH_TEXT = 8_000_000
SHOWN_LINES = 10  # line numbers listed for one repeated id

UNSUPPORTED_FORMAT = "unsupported file type {suffix!r}: use .jsonl (one JSON object per line) or .csv"
NOT_UTF8 = "the file is not UTF-8 text ({reason})"
RECORD_TOO_LARGE = "the record is larger than {limit:,} bytes (CONCORD_MAX_RECORD_BYTES)"
ID_CHARACTER = (
    "contains {char} ({name}) at position {position}: ids are visible text, without control or format "
    "characters (NUL, bidirectional overrides, zero-width spaces, line separators)"
)
# Unicode categories refused in ids: controls, format characters (bidi overrides, zero-width),
# line and paragraph separators, surrogates.
ID_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


@dataclass(frozen=True)
class ImportResult:
    imported: int
    unchanged: int = 0


@dataclass(frozen=True)
class Record:
    line: int
    data: dict


# -- reading ----------------------------------------------------------------------------------


def file_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise ImportRejected([FieldError("", UNSUPPORTED_FORMAT.format(suffix=suffix or "(none)"))])


class _Source:
    """A UTF-8 text stream (BOM or not) over a binary file that can report how far it has read."""

    def __init__(self, path: str | Path) -> None:
        self.raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        # newline="" keeps CSV's embedded newlines intact; JSONL lines are stripped anyway.
        self.text = io.TextIOWrapper(self.raw, encoding="utf-8-sig", newline="")

    def bytes_read(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        self.text.close()


def _bounded_lines(text: io.TextIOBase, limit: int) -> Iterator[tuple[str, bool]]:
    """Each line with whether it is longer than ``limit`` bytes. A longer line is read in pieces and
    dropped, so one huge line never sits in memory whole."""
    while line := text.readline(limit + 1):
        if len(line) > limit and not line.endswith(("\n", "\r")):
            while (rest := text.readline(limit + 1)) and not rest.endswith(("\n", "\r")):
                pass
            yield line[:limit], True
            continue
        # Characters are at most 4 bytes: only a line that could pass the limit is measured in bytes.
        yield line, len(line) * 4 > limit and len(line.encode("utf-8", "surrogatepass")) > limit


def _jsonl_records(source: _Source, errors: ErrorCollector) -> Iterator[Record]:
    limit = settings.CONCORD_MAX_RECORD_BYTES
    depth = jsonsafe.max_depth()  # read once: a setting costs more to look up than a short line to parse
    for line_no, (line, too_large) in enumerate(_bounded_lines(source.text, limit), start=1):
        if too_large:
            errors.add(FieldError("", RECORD_TOO_LARGE.format(limit=limit), line_no))
            continue
        if not line.strip():
            continue
        try:
            data = jsonsafe.loads(line, depth=depth)
        except jsonsafe.UnsafeJSON as exc:
            errors.add(FieldError(exc.path, exc.message, line_no))
            continue
        if not isinstance(data, dict):
            errors.add(FieldError("", f"each line must be a JSON object, got {type(data).__name__}", line_no))
            continue
        yield Record(line_no, data)


def csv_rows(reader) -> Iterator[tuple[int, list[str]]]:
    """The non-blank rows of a csv.reader with the line each starts on (a quoted cell may span lines)."""
    previous_end = reader.line_num
    for row in reader:
        start, previous_end = previous_end + 1, reader.line_num
        if any(cell.strip() for cell in row):
            yield start, row


def _csv_records(
    source: _Source,
    errors: ErrorCollector,
    decode: Callable[[str, str], Any],
    columns: set[str],
    required: set[str],
) -> Iterator[Record]:
    reader = csv.reader(source.text)
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [name.strip() for name in header]
    unknown = [name for name in header if name not in columns]
    repeated = sorted({name for name in header if header.count(name) > 1})
    problems = [
        f"unknown column(s) {unknown}; allowed: {sorted(columns)}" if unknown else "",
        f"repeated column(s) {repeated}" if repeated else "",
        f"missing column(s) {sorted(required - set(header))}" if required - set(header) else "",
    ]
    for problem in filter(None, problems):
        errors.add(FieldError("", problem, 1))
    if any(problems):
        return
    limit = settings.CONCORD_MAX_RECORD_BYTES
    for start, row in csv_rows(reader):
        if len(row) != len(header):
            errors.add(FieldError("", f"has {len(row)} cells, the header has {len(header)}", start))
            continue
        size = sum(map(len, row))
        if size * 4 > limit and sum(len(cell.encode("utf-8", "surrogatepass")) for cell in row) > limit:
            errors.add(FieldError("", RECORD_TOO_LARGE.format(limit=limit), start))
            continue
        data: dict[str, Any] = {}
        bad = False
        for name, cell in zip(header, row, strict=True):
            if cell == "":
                continue  # an empty cell is an absent field
            try:
                data[name] = decode(name, cell)
            except jsonsafe.UnsafeJSON as exc:  # a JSON cell: the error names the part of it
                errors.add(FieldError(exc.path or name, exc.message, start))
                bad = True
            except ValueError as exc:
                errors.add(FieldError(name, str(exc), start))
                bad = True
        if not bad:
            yield Record(start, data)


def read_records(
    path: str | Path,
    errors: ErrorCollector,
    *,
    decode_csv: Callable[[str, str], Any],
    csv_columns: set[str],
    csv_required: set[str],
    progress: ProgressCallback | None = None,
) -> Iterator[Record]:
    """Yield the file's records; problems go to ``errors`` and the bad records are left out."""
    fmt = file_format(path)
    source = _Source(path)
    count = 0
    try:
        records = (
            _jsonl_records(source, errors)
            if fmt == "jsonl"
            else _csv_records(source, errors, decode_csv, csv_columns, csv_required)
        )
        for record in records:
            count += 1
            if progress and count % PROGRESS_EVERY == 0:
                progress(source.bytes_read(), count)
            yield record
    except UnicodeDecodeError as exc:
        errors.add(FieldError("", NOT_UTF8.format(reason=exc.reason), None))
    except csv.Error as exc:
        errors.add(FieldError("", f"CSV syntax: {exc}", None))
    finally:
        if progress:
            progress(source.bytes_read(), count)
        source.close()


def record_external_id(data: dict, line: int, errors: ErrorCollector) -> str | None:
    """The record's external id, stripped and NFC-normalised; None (with the error added) when refused."""
    value = data.get("external_id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        errors.add(FieldError("external_id", "missing: every record needs a non-empty external_id", line))
        return None
    if not isinstance(value, str):
        errors.add(FieldError("external_id", f"must be a string or a whole number, got {json.dumps(value)}", line))
        return None
    # Spaces around an id are nearly always a spreadsheet artefact; "a " and "a" are one item.
    # NFC: "é" typed as one character or as "e" plus a combining accent is one id, so one item.
    value = value.strip()
    if not value.isascii():
        value = unicodedata.normalize("NFC", value)
    problem = external_id_problem(value)
    if problem:
        errors.add(FieldError("external_id", problem, line))
        return None
    return value


def external_id_problem(value: str) -> str | None:
    """Why a (stripped, NFC) external id is refused, or None."""
    if len(value) > MAX_EXTERNAL_ID:
        return f"longer than {MAX_EXTERNAL_ID} characters"
    if value.isascii() and value.isprintable():
        return None  # the common case, without a look at each character
    for position, char in enumerate(value, start=1):
        if unicodedata.category(char) in ID_REFUSED_CATEGORIES:
            name = unicodedata.name(char, "a control character")
            return ID_CHARACTER.format(char=f"U+{ord(char):04X}", name=name, position=position)
    return None


def dumps_json(data: Any) -> str:
    """Compact JSON text, as ``json.dumps`` writes it with ``ensure_ascii=False``, several times faster."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, which the standard encoder writes
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read a block at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


# -- items ------------------------------------------------------------------------------------


class StagingTable:
    """A temporary table of a file's valid rows, written a batch at a time.

    Each batch is one COPY on PostgreSQL (several times the speed of INSERTs; bench/import_items.py
    measures both), closed before the next record is read: the records may come from a query on the
    same connection, which a COPY left open would block. The table has a ``line`` and an
    ``external_id`` column besides its own (``columns``: name and SQL type, in row order), so
    repeated ids are found by the database with their lines.
    """

    def __init__(self, table: str, columns: tuple[tuple[str, str], ...]) -> None:
        self.table = table
        self.columns = ("line", "external_id", *(name for name, _ in columns))
        self.cursor = connection.cursor()
        self.postgres = connection.vendor == "postgresql"
        self.cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
        declared = ", ".join(f"{name} {sql_type}" for name, sql_type in columns)
        self.cursor.execute(f"CREATE TEMPORARY TABLE {self.table} (line integer, external_id text, {declared})")
        self._rows: list[tuple] = []
        self._text_size = 0

    def add(self, row: tuple) -> None:
        """One row: line, external id, then the table's own columns in order (text cells as text)."""
        self._rows.append(row)
        self._text_size += sum(len(cell) for cell in row if isinstance(cell, str))
        if len(self._rows) >= BATCH or self._text_size >= BATCH_TEXT:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        if self.postgres:
            with self.cursor.cursor.copy(f"COPY {self.table} ({', '.join(self.columns)}) FROM STDIN") as copy:
                for row in self._rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(self.columns))
            self.cursor.executemany(f"INSERT INTO {self.table} VALUES ({marks})", self._rows)
        self._rows.clear()
        self._text_size = 0

    def finish(self) -> None:
        self._flush()

    def abort(self) -> None:
        self._rows.clear()

    def report_found(self, query: str, params: list[Any], errors: ErrorCollector, describe) -> None:
        """An error per row of ``query`` (its rows with a ``line`` column), in file order: the first
        ``errors.cap`` in full through ``describe(row) -> (line, message)``, the rest counted."""
        self.cursor.execute(f"SELECT count(*) FROM ({query}) found", params)
        found = self.cursor.fetchone()[0]
        if not found:
            return
        self.cursor.execute(f"SELECT * FROM ({query}) found ORDER BY line LIMIT %s", [*params, errors.cap])
        shown = self.cursor.fetchall()
        for row in shown:
            line, message = describe(row)
            errors.add(FieldError("external_id", message, line))
        errors.count_more(found - len(shown))

    def report_repeated_ids(self, errors: ErrorCollector) -> None:
        """An error per id given on more than one line, naming its lines."""
        repeated = (
            f"SELECT external_id, min(line) AS line, count(*) FROM {self.table} "
            "GROUP BY external_id HAVING count(*) > 1"
        )
        self.report_found(repeated, [], errors, self._describe_repeat)

    def _describe_repeat(self, row: tuple) -> tuple[int, str]:
        external_id, first, times = row
        self.cursor.execute(
            f"SELECT line FROM {self.table} WHERE external_id = %s ORDER BY line LIMIT %s", [external_id, SHOWN_LINES]
        )
        lines = ", ".join(str(line) for (line,) in self.cursor.fetchall())
        more = f", … {times - SHOWN_LINES} more" if times > SHOWN_LINES else ""
        return first, f"duplicate {external_id!r} within the file (lines {lines}{more})"

    def drop(self) -> None:
        self.cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.cursor.close()


class _Staging(StagingTable):
    """The item file's valid rows: payload, known answer and order key of each."""

    def __init__(self) -> None:
        super().__init__("concord_item_staging", (("payload", "text"), ("gold", "text"), ("order_key", "bigint")))

    def report_duplicates(self, project_id: int, errors: ErrorCollector) -> None:
        """Add an error per repeated or already-stored id: the first ``errors.cap`` in full, the rest counted."""
        self.report_repeated_ids(errors)
        clashes = (
            f"SELECT s.line AS line, s.external_id FROM {self.table} s JOIN {Item._meta.db_table} i "
            "ON i.project_id = %s AND i.external_id = s.external_id"
        )
        self.report_found(
            clashes, [project_id], errors, lambda row: (row[0], f"{row[1]!r} already exists in this project")
        )

    def insert_items(self, project_id: int, job_id: int | None) -> int:
        cast = "::jsonb" if self.postgres else ""
        self.cursor.execute(
            f"INSERT INTO {Item._meta.db_table} (project_id, external_id, payload, gold_value, import_job_id, "
            "created_at, order_key, assigned_count, is_open) "
            f"SELECT %s, external_id, payload{cast}, gold{cast}, %s, %s, order_key, 0, gold IS NULL "
            f"FROM {self.table} ORDER BY line",
            # Adapted like the ORM would, so SQLite stores the same naive-UTC text as rows saved elsewhere.
            [project_id, job_id, connection.ops.adapt_datetimefield_value(timezone.now())],
        )
        return self.cursor.rowcount


def import_items(
    *, project: Project, path: str | Path, job: ImportJob | None = None, progress: ProgressCallback | None = None
) -> ImportResult:
    """Import every item of a JSONL or CSV file into ``project``, or none of them.

    Each record has an ``external_id``, the kind's payload fields and, for a qualification item, a
    ``gold`` value. Raises ImportRejected, listing bad lines and fields, when anything is wrong.
    """
    kind = project.task_kind
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    columns = set(kind.payload_fields) | set(ITEM_RESERVED)

    def decode(name: str, cell: str) -> Any:
        if name == "external_id":
            return cell
        if name == "gold":
            return csvcells.json_cell(cell, field="gold", what="the known answer")
        return kind.decode_csv_cell(name, cell)

    records = read_records(
        path, errors, decode_csv=decode, csv_columns=columns, csv_required={"external_id"}, progress=progress
    )
    return import_item_records(project=project, records=records, errors=errors, job=job)


def import_item_records(
    *,
    project: Project,
    records: Iterable[Record],
    errors: ErrorCollector | None = None,
    job: ImportJob | None = None,
) -> ImportResult:
    """Import items given as records (a line number and the data of one JSONL line), or none of them.

    The same checks as a file's (``import_items``), for items made by the application itself, which
    need not be written to a file and read back. ``errors`` may already hold the reader's problems.
    """
    kind = project.task_kind
    if errors is None:
        errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    with transaction.atomic():
        staging = _Staging()
        try:
            for record in records:
                data = record.data
                external_id = record_external_id(data, record.line, errors)
                gold = data.pop("gold", None)
                payload = {k: v for k, v in data.items() if k != "external_id"}
                problems = kind.check_payload(payload)
                if gold is not None and not problems:
                    problems = kind.check_value(gold, payload=payload, prefix="gold")
                if problems:
                    errors.extend(problems, line=record.line)
                    continue
                if external_id is not None and not errors:
                    # After the first error nothing will be stored: only keep validating.
                    gold_text = None if gold is None else dumps_json(gold)
                    order_key = item_order_key(project.seed, external_id)
                    staging.add((record.line, external_id, dumps_json(payload), gold_text, order_key))
        except BaseException:
            staging.abort()
            raise
        if errors:
            staging.abort()
            raise ImportRejected(errors.errors, total=errors.total)
        staging.finish()
        staging.report_duplicates(project.pk, errors)
        if errors:
            raise ImportRejected(errors.errors, total=errors.total)
        imported = staging.insert_items(project.pk, job.pk if job else None)
        staging.drop()
        sample_hold_out_new_items(project=project)  # with a validation sample, only drawn items are served
        transaction.on_commit(lambda: cache.delete(project_size_key(project.pk)))
    return ImportResult(imported=imported)


# -- annotations ------------------------------------------------------------------------------


def _import_key(rater: str, external_id: str, value: Any) -> str:
    """The same label imported twice is stored once: the key is a digest of what it says (key order aside)."""
    canonical = json.dumps([rater, external_id, value], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:40]
    return f"import:{digest}"


#: The types of an annotation file's columns, read as a kind's payload columns are (annotation.csvcells).
ANNOTATION_CELL_SCHEMAS = {"seconds_on_item": {"type": "number"}, "suggestion_visible": {"type": "boolean"}}


def _decode_annotation_cell(name: str, cell: str) -> Any:
    if name == "value":
        return csvcells.json_cell(cell, field="value", what="the annotation value")
    return csvcells.schema_cell(cell, field=name, schema=ANNOTATION_CELL_SCHEMAS.get(name, {}))


def _annotation_shape_problems(data: dict) -> list[FieldError]:
    problems = []
    unknown = sorted(set(data) - set(ANNOTATION_FIELDS))
    if unknown:
        problems.append(FieldError("", f"unknown field(s) {unknown}; allowed: {list(ANNOTATION_FIELDS)}"))
    if not isinstance(data.get("rater"), str) or not data["rater"].strip():
        problems.append(FieldError("rater", "missing: every record names its rater"))
    elif len(data["rater"]) > 150:
        problems.append(FieldError("rater", "longer than 150 characters"))
    if "value" not in data:
        problems.append(FieldError("value", "missing: every record carries the rater's value"))
    seconds = data.get("seconds_on_item")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds < 0
    ):
        problems.append(FieldError("seconds_on_item", "must be a number of seconds ≥ 0"))
    if "suggestion_visible" in data and not isinstance(data["suggestion_visible"], bool):
        problems.append(FieldError("suggestion_visible", "must be true or false"))
    return problems


def _store_annotation_batch(
    project: Project, batch: list[Record], errors: ErrorCollector, job: ImportJob | None
) -> tuple[int, int]:
    """Validate one batch against its items and store its new versions; returns (stored, unchanged)."""
    kind = project.task_kind
    items = {
        external_id: (pk, payload)
        for pk, external_id, payload in Item.objects.filter(
            project=project, external_id__in={r.data["external_id"] for r in batch}
        ).values_list("pk", "external_id", "payload")
    }
    raters = {r.data["rater"] for r in batch}
    # A rater name is linked to an account only when that account is a member of this project: any
    # other name stays an external rater, so an import cannot attach labels to a stranger's account.
    accounts = dict(
        Membership.objects.filter(project=project, user__username__in=raters).values_list("user__username", "user_id")
    )
    keyed = [(_import_key(r.data["rater"], r.data["external_id"], r.data["value"]), r) for r in batch]
    seen = set(
        Annotation.objects.filter(project=project, idempotency_key__in=[key for key, _ in keyed]).values_list(
            "idempotency_key", flat=True
        )
    )
    latest = {
        (row["item_id"], row["rater"]): row["top"]
        for row in Annotation.objects.filter(item_id__in=[pk for pk, _ in items.values()], rater__in=raters)
        .values("item_id", "rater")
        .annotate(top=Max("version"))
    }
    new: list[Annotation] = []
    unchanged = 0
    for key, record in keyed:
        data = record.data
        found = items.get(data["external_id"])
        if found is None:
            errors.add(FieldError("external_id", f"no item {data['external_id']!r} in this project", record.line))
            continue
        problems = kind.check_value(data["value"], payload=found[1])
        if problems:
            errors.extend(problems, line=record.line)
            continue
        if key in seen:
            unchanged += 1
            continue
        seen.add(key)
        pair = (found[0], data["rater"])
        latest[pair] = latest.get(pair, 0) + 1
        new.append(
            Annotation(
                project=project,
                item_id=found[0],
                annotator_id=accounts.get(data["rater"]),
                rater=data["rater"],
                version=latest[pair],
                value=data["value"],
                source=Annotation.Source.IMPORT,
                idempotency_key=key,
                seconds_on_item=data.get("seconds_on_item"),
                suggestion_visible=data.get("suggestion_visible"),
                import_job=job,
            )
        )
    if not errors:
        Annotation.objects.bulk_create(new, batch_size=BATCH)
    return len(new), unchanged


def import_annotations(
    *, project: Project, path: str | Path, job: ImportJob | None = None, progress: ProgressCallback | None = None
) -> ImportResult:
    """Import existing human labels (rater, item external_id, value), all or nothing.

    A rater whose name is the username of a project member is linked to that account; others are
    kept by name. A label already stored
    (same rater, item and value) is counted as unchanged; a different value for the same rater and
    item becomes that rater's next version.
    """
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    stored = unchanged = 0
    with transaction.atomic():
        batch: list[Record] = []
        records = read_records(
            path,
            errors,
            decode_csv=_decode_annotation_cell,
            csv_columns=set(ANNOTATION_FIELDS),
            csv_required={"rater", "external_id", "value"},
            progress=progress,
        )
        for record in records:
            external_id = record_external_id(record.data, record.line, errors)
            problems = _annotation_shape_problems(record.data)
            if problems:
                errors.extend(problems, line=record.line)
            if problems or external_id is None:
                continue
            record.data["external_id"] = external_id
            batch.append(record)
            if len(batch) >= BATCH:
                counts = _store_annotation_batch(project, batch, errors, job)
                stored, unchanged, batch = stored + counts[0], unchanged + counts[1], []
        if batch:
            counts = _store_annotation_batch(project, batch, errors, job)
            stored, unchanged = stored + counts[0], unchanged + counts[1]
        if errors:
            raise ImportRejected(errors.errors, total=errors.total)
    return ImportResult(imported=stored, unchanged=unchanged)


# -- jobs -------------------------------------------------------------------------------------

IMPORTERS = {ImportJob.Target.ITEMS: import_items, ImportJob.Target.ANNOTATIONS: import_annotations}


def import_job_run(*, job: ImportJob, progress: ProgressCallback | None = None) -> ImportJob:
    """Run a recorded import and store its outcome on the job row (outside the import's transaction)."""
    job.status = ImportJob.Status.RUNNING
    job.size_bytes = os.path.getsize(job.stored_path)
    job.save(update_fields=["status", "size_bytes"])
    try:
        result = IMPORTERS[job.target](project=job.project, path=job.stored_path, job=job, progress=progress)
    except ImportRejected as exc:
        job.status, job.error_count = ImportJob.Status.REJECTED, exc.total
        job.errors = [str(e) for e in exc.errors]
    except Exception as exc:
        job.status, job.error_count, job.errors = ImportJob.Status.FAILED, 1, [f"internal error: {exc}"]
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error_count", "errors", "finished_at"])
        raise
    else:
        job.status, job.rows_imported, job.rows_unchanged = ImportJob.Status.DONE, result.imported, result.unchanged
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "rows_imported", "rows_unchanged", "error_count", "errors", "finished_at"])
    return job
