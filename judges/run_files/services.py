"""Storing a run's outputs: the items each batch of lines names, the suggestions written as the file
is read, and the imported run's judge with its provenance."""

from __future__ import annotations

import itertools
from array import array
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Max, Min
from django.utils import timezone

from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.gcpause import collection_paused
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
from annotation.table_statistics import statistics_refreshed
from judges.models import Judge, JudgeRun, Suggestion
from judges.prompting import sha256_json
from judges.run_files.duplicates import same_outputs_error
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
    RUN_FIELDS,
    SAMPLING_NOT_FLAT,
    TEXT_TOO_LONG,
    RunImportResult,
    RunProvenance,
    checked_value,
    decode_run_cell,
    option_orders,
    prompt_parts,
    sampled_setting,
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
    compilation were a third of an import's time (``bench/import_run.py``). On PostgreSQL it runs
    on the import's statement thread (``_InOrder``), through the driver's own cursor, and reads
    only the payload fields named in ``payload_keys`` when given (decoding whole multiple-choice
    payloads was a quarter of such an import's work).
    """

    def __init__(self, project: Project, *, with_payload: bool, payload_keys: tuple[str, ...] = ()) -> None:
        meta = Item._meta
        column = {
            name: cast(Field, meta.get_field(name)).column for name in ("id", "project", "external_id", "payload")
        }
        self.project_id = project.pk
        self.with_payload = with_payload
        self.postgres = connection.vendor == "postgresql"
        payload, self.key_params = "", []
        if with_payload and self.postgres and payload_keys:
            pairs = ", ".join(f"%s::text, {column['payload']} -> %s" for _ in payload_keys)
            payload = f", jsonb_build_object({pairs})::text"
            self.key_params = [part for key in payload_keys for part in (key, key)]
        elif with_payload:
            payload = f", {column['payload']}" + ("::text" if self.postgres else "")
        # The ids travel as one text parameter the database splits: on PostgreSQL at a character no
        # id may hold (a control character), which is cheaper to send than an array of 2,000 texts;
        # SQLite takes a JSON array.
        ids = "= ANY(string_to_array(%s, %s))" if self.postgres else "IN (SELECT value FROM json_each(%s))"
        self.sql = (
            f"SELECT {column['external_id']}, {column['id']}{payload} FROM {meta.db_table} "
            f"WHERE {column['project']} = %s AND {column['external_id']} {ids}"
        )
        self.cursor = connection.cursor()

    def rows(self, external_ids: list[str]) -> list[tuple]:
        """The rows found, as the database gives them (on the statement thread: no decoding there,
        so that its next statement starts at once)."""
        if self.postgres:
            cursor = self.cursor.cursor  # the driver's: this runs on the statement thread
            cursor.execute(self.sql, [*self.key_params, self.project_id, ID_SEPARATOR.join(external_ids), ID_SEPARATOR])
        else:
            cursor = self.cursor
            cursor.execute(self.sql, [self.project_id, orjson.dumps(external_ids).decode()])
        return cursor.fetchall()

    def items(self, rows: list[tuple]) -> dict[str, tuple[int, dict | None]]:
        """Id and payload (None where not read) per external id, from ``rows``."""
        if self.with_payload:
            return {external_id: (pk, orjson.loads(text)) for external_id, pk, text in rows}
        return {external_id: (pk, None) for external_id, pk in rows}

    def close(self) -> None:
        self.cursor.close()


class _InOrder:
    """The import's statements (each batch's lookup, each batch's COPY), run one after another on
    a thread of their own on PostgreSQL, so that the database works while the next lines are read
    and checked; run at once elsewhere.

    The caller gives the lookup of batch N before the COPY of batch N-1: the database then always
    has the next statement waiting, and the lookup is done by the time its lines are checked.
    Asking for a result first takes those of the statements given before it, so that a failed
    COPY is raised as itself (not as the aborted transaction the next lookup meets), as Django's
    database errors.
    """

    def __init__(self, *, threaded: bool) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="concord-run-import") if threaded else None
        self.pending: deque[Future] = deque()

    def submit(self, function: Callable[..., Any], *args: Any) -> Future:
        if self.pool is not None:
            future = self.pool.submit(function, *args)
        else:
            future = Future()
            try:
                future.set_result(function(*args))
            except BaseException as exc:
                future.set_exception(exc)
        self.pending.append(future)
        return future

    def result(self, future: Future) -> Any:
        with connection.wrap_database_errors:
            while self.pending:
                earlier = self.pending.popleft()
                value = earlier.result()
                if earlier is future:
                    return value
        raise LookupError("a statement's result was asked for twice")

    def drain(self) -> None:
        """Until every statement given has run; the first failure raised."""
        if self.pending:
            self.result(self.pending[-1])

    def close(self) -> None:
        """Wait for the statement running (one cannot stop a COPY halfway) and drop the rest."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.pending.clear()


#: The suggestion fields an imported line sets, in the order of ``_SuggestionWriter``'s rows: those
#: every line of one import shares first.
SUGGESTION_COLUMNS = (
    "judge",
    "run",
    "prompt_sha256",
    "attempts",
    "created_at",
    "updated_at",
    "item",
    "status",
    "value",
    "raw_output",
    "failure_reason",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "score",
    "option_order",
)

_COPY_NULL = "\\N"


def _copy_text(text: str) -> str:
    """A text as a cell of COPY's text format: backslash, newline, carriage return and tab escaped."""
    if "\\" in text or "\n" in text or "\r" in text or "\t" in text:
        return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return text


def _copy_cell(value: int | float | None) -> str:
    return _COPY_NULL if value is None else str(value)


class _SuggestionWriter:
    """The run's suggestions, written a batch at a time straight into their table while the file is
    read (COPY on PostgreSQL, batched inserts elsewhere), in file order.

    A staging table and an ``INSERT ... SELECT`` from it wrote every line twice. The caller adds no
    line whose item an earlier line named (``_FileIds``), so the table's uniqueness (judge, item,
    prompt hash) never refuses a row mid-transaction.

    On PostgreSQL each line becomes its line of COPY text as it is added (the columns every line
    shares written once: half the time of the driver's ``write_row``), and each batch's COPY runs
    on the statement thread with the foreign keys checked as it ends (``SET CONSTRAINTS ...
    IMMEDIATE``) rather than all at commit, so that the checks too overlap the reading.
    """

    def __init__(self, run: JudgeRun, prompt_sha256: str, statements: _InOrder) -> None:
        meta = Suggestion._meta
        self.postgres = connection.vendor == "postgresql"
        columns = ", ".join(cast(Field, meta.get_field(name)).column for name in SUGGESTION_COLUMNS)
        self.copy_sql = f"COPY {meta.db_table} ({columns}) FROM STDIN"
        marks = ", ".join(["%s"] * len(SUGGESTION_COLUMNS))
        self.insert_sql = f"INSERT INTO {meta.db_table} ({columns}) VALUES ({marks})"
        now = timezone.now()
        if self.postgres:
            shared = (run.judge_id, run.pk, prompt_sha256, 1, now.isoformat(), now.isoformat())
            self.shared_text = "\t".join(map(str, shared)) + "\t"
        else:
            stamp = connection.ops.adapt_datetimefield_value(now)
            self.shared = (run.judge_id, run.pk, prompt_sha256, 1, stamp, stamp)
        self.statements = statements
        self.cursor = connection.cursor()
        self._rows: list = []
        self._text_size = 0
        if self.postgres:
            self.cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    def add(self, item_id: int, status: str, value: str | None, raw: str, reason: str, data: dict) -> None:
        order = data.get("option_order")
        if self.postgres:
            self._rows.append(
                f"{self.shared_text}{item_id}\t{status}\t"
                f"{_COPY_NULL if value is None else _copy_text(value)}\t{_copy_text(raw)}\t{_copy_text(reason)}\t"
                f"{_copy_cell(data.get('prompt_tokens'))}\t{_copy_cell(data.get('completion_tokens'))}\t"
                f"{_copy_cell(data.get('latency_ms'))}\t{_copy_cell(data.get('score'))}\t"
                f"{_COPY_NULL if order is None else dumps_json(order)}\n"
            )
        else:
            self._rows.append(
                (
                    *self.shared,
                    item_id,
                    status,
                    value,
                    raw,
                    reason,
                    data.get("prompt_tokens"),
                    data.get("completion_tokens"),
                    data.get("latency_ms"),
                    data.get("score"),
                    None if order is None else dumps_json(order),
                )
            )
        self._text_size += len(raw) + (len(value) if value else 0)
        if self._text_size >= BATCH_TEXT:  # a batch of large outputs does not wait for send()
            self.send()

    def send(self) -> None:
        """Write the lines added since the last call (after those sent before them)."""
        rows, self._rows, self._text_size = self._rows, [], 0
        if not rows:
            return
        if self.postgres:
            self.statements.submit(self._copy, "".join(rows).encode())
        else:
            self.cursor.executemany(self.insert_sql, rows)

    def _copy(self, text: bytes) -> None:
        with self.cursor.cursor.copy(self.copy_sql) as copy:
            copy.write(text)

    def finish(self) -> None:
        self.send()
        self.statements.drain()
        if self.postgres:
            self.cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's deferred checks again

    def close(self) -> None:
        self.cursor.close()


def _payload_keys(kind: TaskKind, orders: Any) -> tuple[str, ...]:
    """The payload fields a line's checks read, where the kind's rules and option orders name
    them; empty (the whole payload) where the rules read the payload and do not say what."""
    if kind.value_rules_need_payload and not kind.value_rules_payload_keys:
        return ()
    keys = kind.value_rules_payload_keys if kind.value_rules_need_payload else ()
    return tuple(dict.fromkeys((*keys, *(orders.PAYLOAD_KEYS if orders is not None else ()))))


def _staged_lines(chunk: list[Record], errors: ErrorCollector) -> list[tuple[Record, str]]:
    """A chunk's lines with their external ids, those whose fields are well formed (the rest go to
    ``errors``): what can be checked without the database."""
    batch = []
    for record in chunk:
        external_id = record_external_id(record.data, record.line, errors)
        problems = shape_problems(record.data)
        if problems:
            errors.extend(problems, line=record.line)
        elif external_id is not None:
            batch.append((record, external_id))
    return batch


def _store_batch(
    kind: TaskKind,
    orders: Any,
    items: dict[str, tuple[int, dict | None]],
    batch: list[tuple[Record, str]],
    file_ids: _FileIds,
    writer: _SuggestionWriter,
    errors: ErrorCollector,
) -> int:
    """Check one batch of lines against their items and add the good ones to ``writer`` (while no
    error was found); the number of lines added with a value."""
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
    statements = _InOrder(threaded=connection.vendor == "postgresql")
    lookup = _ItemLookup(
        project,
        with_payload=kind.value_rules_need_payload or orders is not None,
        payload_keys=_payload_keys(kind, orders),
    )
    file_ids = _FileIds(span["first"] or 0, last_item, shown=errors.cap)
    writer = _SuggestionWriter(run, prompt_sha256, statements)
    ok = written = 0
    # A batch waits for its items while the next is read: (its lines, the lookup under way).
    waiting: tuple[list[tuple[Record, str]], Future] | None = None
    try:
        with collection_paused():
            rows = iter(records)
            while True:
                chunk = list(itertools.islice(rows, BATCH))
                batch = _staged_lines(chunk, errors)
                looked_up = statements.submit(lookup.rows, [external_id for _, external_id in batch]) if batch else None
                if waiting is not None:
                    ok += _store_batch(
                        kind, orders, lookup.items(statements.result(waiting[1])), waiting[0], file_ids, writer, errors
                    )
                    writer.send()
                    written += len(waiting[0])
                waiting = (batch, looked_up) if looked_up is not None else None
                if not chunk:
                    break
        if not errors:
            file_ids.report(errors)
        if not errors:
            writer.finish()
    finally:
        statements.close()
        lookup.close()
        writer.close()
    if errors:
        raise ImportRejected(errors.errors, total=errors.total)
    failed = written - ok
    statistics_refreshed(Suggestion, written)
    run.total, run.ok_count, run.failed_count = ok + failed, ok, failed
    run.save(update_fields=["total", "ok_count", "failed_count"])
    return RunImportResult(run=run, ok=ok, failed=failed)


def _imported_judge(*, project: Project, name: str, source: RunProvenance, file_sha: str, created_by: Any) -> Judge:
    """A new judge for one imported file; ImportRejected when this very import was made before."""
    prompt_name, prompt_version = prompt_parts(source.prompt or DEFAULT_PROMPT)
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
    temperature = sampled_setting(sampling, "temperature", 0.0, 2.0)
    max_tokens = sampled_setting(sampling, "max_tokens", 1, MAX_TOKENS_COUNT, whole=True)
    seed = sampled_setting(sampling, "seed", -(2**63), 2**63 - 1, whole=True)
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
    allow_same_outputs: bool = False,
) -> RunImportResult:
    """Import a model's outputs from a JSONL or CSV file as a new run of the project, or nothing.

    The provenance comes from the options, else from the file's provenance line: a model is needed
    from one of them. Raises ImportRejected naming each bad line and field, or the run whose outputs
    these repeat (a run exported and imported again) unless ``allow_same_outputs``.
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
        result = judge_run_store_outputs(
            project=project,
            judge=judge,
            records=itertools.chain([first] if first else [], records),
            errors=errors,
            provenance=provenance,
            prompt_sha256=file_sha,
            created_by=created_by,
        )
        if not allow_same_outputs and (same := same_outputs_error(result.run)):
            raise ImportRejected([same])  # in the transaction: the run and its outputs are not kept
        return result
