"""Storing a run's outputs: the items each batch of lines names, the suggestions written as the file
is read, and the imported run's judge with its provenance."""

from __future__ import annotations

import itertools
import threading
from array import array
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Max, Min
from django.utils import timezone

from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import (
    BATCH,
    ProgressCallback,
    Record,
    dumps_json,
    file_format,
    file_sha256,
    read_records,
    record_external_id,
)
from annotation.importing.staging import BATCH_TEXT, SHOWN_LINES, repeated_id_message
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

#: Joins a batch's ids into one parameter: the unit separator, a control character ids never hold.
ID_SEPARATOR = "\x1f"

#: Set on an item's first line once a later line has named the item again.
_REPEATED = 1 << 31


class _FileIds:
    """The line each item of the project was first named on, so that an id the file repeats is
    found as the file is read and named with its lines, without writing the ids anywhere.

    One 4-byte cell per item id between the project's first and last (however long the file is;
    a dictionary where the ids are spread too thin for cells), and the lines of repeated ids, in
    full for the first ``shown`` of them and counted beyond.
    """

    MAX_CELLS = 16_000_000

    def __init__(self, first_pk: int, last_pk: int, *, shown: int) -> None:
        span = max(last_pk - first_pk + 1, 0)
        self.base = first_pk
        cells = array("I")
        cells.frombytes(bytes(cells.itemsize * span))
        self.first: array | defaultdict = cells if span <= self.MAX_CELLS else defaultdict(int)
        self.shown = shown
        self.repeats: dict[int, tuple[str, list[int], list[int]]] = {}
        self.repeated = 0

    def repeat(self, pk: int, external_id: str, line: int) -> bool:
        """Note that ``line`` names item ``pk``: whether an earlier line named it too."""
        offset = pk - self.base
        first = self.first[offset]
        if not first:
            self.first[offset] = line
            return False
        if not first & _REPEATED:
            self.first[offset] = first | _REPEATED
            self.repeated += 1
            if len(self.repeats) < self.shown:
                self.repeats[pk] = (external_id, [first], [1])
        entry = self.repeats.get(pk)
        if entry is not None:
            entry[2][0] += 1
            if len(entry[1]) < SHOWN_LINES:
                entry[1].append(line)
        return True

    def report(self, errors: ErrorCollector) -> None:
        """An error per repeated id, naming its lines, in the order of their first lines."""
        for external_id, lines, (times,) in sorted(self.repeats.values(), key=lambda entry: entry[1][0]):
            errors.add(FieldError("external_id", repeated_id_message(external_id, lines, times), lines[0]))
        errors.count_more(self.repeated - len(self.repeats))


class _ItemLookup:
    """The project's items named by a batch of lines: id (and payload, only where the value check
    reads it) per external id, in one statement built from ``Item._meta``.

    Through the ORM, the ``external_id__in`` query of 2,000 ids, its JSON decoding and its
    compilation were a third of an import's time (``bench/import_run.py``).
    """

    def __init__(self, project: Project, *, with_payload: bool) -> None:
        meta = Item._meta
        column = {
            name: cast(Field, meta.get_field(name)).column for name in ("id", "project", "external_id", "payload")
        }
        self.project_id = project.pk
        self.with_payload = with_payload
        self.postgres = connection.vendor == "postgresql"
        payload = f", {column['payload']}" + ("::text" if self.postgres else "") if with_payload else ""
        # The ids travel as one text parameter the database splits: on PostgreSQL at a character no
        # id may hold (a control character), which is cheaper to send than an array of 2,000 texts;
        # SQLite takes a JSON array.
        ids = "= ANY(string_to_array(%s, %s))" if self.postgres else "IN (SELECT value FROM json_each(%s))"
        self.sql = (
            f"SELECT {column['external_id']}, {column['id']}{payload} FROM {meta.db_table} "
            f"WHERE {column['project']} = %s AND {column['external_id']} {ids}"
        )
        # With the server binding parameters (the default: DATABASE_PREPARED_STATEMENTS), the ids
        # travel as one array and the statement is prepared from its second batch on.
        self.cursor = connection.cursor()

    def items(self, external_ids: list[str]) -> dict[str, tuple[int, dict | None]]:
        if self.postgres:
            self.cursor.execute(self.sql, [self.project_id, ID_SEPARATOR.join(external_ids), ID_SEPARATOR])
        else:
            self.cursor.execute(self.sql, [self.project_id, orjson.dumps(external_ids).decode()])
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

    A staging table and an ``INSERT ... SELECT`` from it wrote every line twice. The caller adds no
    line whose item an earlier line named (``_FileIds``), so the table's uniqueness (judge, item,
    prompt hash) never refuses a row mid-transaction.

    On PostgreSQL a batch's COPY runs on a thread of its own while the next batch is read and
    checked: the connection's lock orders it with the lookups, one batch is in flight at a time,
    and the foreign keys are checked as each COPY ends (``SET CONSTRAINTS ... IMMEDIATE``) rather
    than all at commit, so the database's half of the work overlaps the reading instead of
    following it. The caller sends a batch once the next batch's items are looked up, so that the
    lookup does not wait for the COPY. A COPY's failure is raised by the next ``send`` or ``finish``.
    """

    def __init__(self, run: JudgeRun, prompt_sha256: str) -> None:
        meta = Suggestion._meta
        self.postgres = connection.vendor == "postgresql"
        columns = ", ".join(cast(Field, meta.get_field(name)).column for name in SUGGESTION_COLUMNS)
        self.copy_sql = f"COPY {meta.db_table} ({columns}) FROM STDIN"
        marks = ", ".join(["%s"] * len(SUGGESTION_COLUMNS))
        self.insert_sql = f"INSERT INTO {meta.db_table} ({columns}) VALUES ({marks})"
        now = timezone.now()
        stamp = now if self.postgres else connection.ops.adapt_datetimefield_value(now)
        self.head, self.tail = (run.judge_id, run.pk), (stamp, stamp)
        self.prompt_sha256 = prompt_sha256
        self.cursor = connection.cursor()
        self._rows: list[tuple] = []
        self._text_size = 0
        self._in_flight: threading.Thread | None = None
        self._failure: BaseException | None = None
        if self.postgres:
            self.cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

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
        if self._text_size >= BATCH_TEXT:  # a batch of large outputs does not wait for send()
            self.send()

    def send(self) -> None:
        """Write the lines added since the last call (after the batch in flight is written)."""
        rows, self._rows, self._text_size = self._rows, [], 0
        self._wait()
        if not rows:
            return
        if self.postgres:
            self._in_flight = threading.Thread(target=self._copy, args=(rows,), name="concord-run-copy", daemon=True)
            self._in_flight.start()
        else:
            self.cursor.executemany(self.insert_sql, rows)

    def _copy(self, rows: list[tuple]) -> None:
        try:
            with self.cursor.cursor.copy(self.copy_sql) as copy:
                for row in rows:
                    copy.write_row(row)
        except BaseException as exc:  # raised in the importing thread by _wait
            self._failure = exc

    def _wait(self) -> None:
        """Until the batch in flight is written; its failure, if any, raised here."""
        if self._in_flight is not None:
            self._in_flight.join()
            self._in_flight = None
        if self._failure is not None:
            failure, self._failure = self._failure, None
            with connection.wrap_database_errors:  # as Django's own errors, as a COPY here would be
                raise failure

    def finish(self) -> None:
        self.send()
        self._wait()
        if self.postgres:
            self.cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's deferred checks again

    def abort(self) -> None:
        self._rows.clear()
        if self._in_flight is not None:
            self._in_flight.join()
            self._in_flight = None
        self._failure = None

    def close(self) -> None:
        self.cursor.close()


def _stage_batch(
    kind: TaskKind,
    orders: Any,
    lookup: _ItemLookup,
    batch: list[tuple[Record, str]],
    file_ids: _FileIds,
    writer: _SuggestionWriter,
    errors: ErrorCollector,
) -> int:
    """Check one batch of lines against their items and write the good ones (while no error was
    found); the number of lines written with a value."""
    items = lookup.items([external_id for _, external_id in batch])
    writer.send()  # the previous batch's lines, written while this one is checked
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
        if file_ids.repeat(found[0], external_id, record.line) or file_ids.repeated:
            continue  # a repeated id, named once the file is read: nothing will be stored
        if value is None:
            writer.add(found[0], failed_status, None, data.get("raw_output", ""), data["error"].strip(), data)
        else:
            writer.add(found[0], ok_status, dumps_json(value), data.get("raw_output", ""), "", data)
            ok += 1
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
    span = Item.objects.filter(project=project).aggregate(first=Min("pk"), last=Max("pk"))
    last_item = span["last"] or 0
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
    file_ids = _FileIds(span["first"] or 0, last_item, shown=errors.cap)
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
            ok += _stage_batch(kind, orders, lookup, batch, file_ids, writer, errors)
            written += len(batch)
        if not errors:
            file_ids.report(errors)
        if not errors:
            writer.finish()
    except BaseException:
        writer.abort()
        raise
    finally:
        lookup.close()
        writer.close()
    if errors:
        raise ImportRejected(errors.errors, total=errors.total)
    failed = written - ok
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
