"""The importer's writes: items from a checked staging table, payload updates, imported labels, and
the job row that records an import's outcome.

Each runs inside the import's transaction (atomic on its own too), so a refusal anywhere stores
nothing. The rule that an answered item keeps its payload is enforced here, whatever the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field
from django.utils import timezone

from annotation import sql
from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing.staging import ItemStaging
from annotation.item_places import open_when_created_sql
from annotation.models import Annotation, ImportJob, Item, Project
from annotation.table_statistics import statistics_refreshed

ANSWERED_ITEM = "{external_id!r} has answers already: its payload can no longer change (skip existing items instead)"
GOLD_NOT_UPDATED = "{external_id!r} exists with another known answer: an update changes payloads only"
ANSWERED_DURING_IMPORT = "an item was answered while the file was imported: nothing imported, try again"
INTERNAL_ERROR = "internal error: {error}"
UNKNOWN_EXISTING = "must be one of {choices}"
EXISTING_FOR_ITEMS = "skipping or updating existing rows is for item files; annotation files add versions"


@dataclass(frozen=True)
class ImportResult:
    """What a file brought: rows stored, and for items, those already there that it skipped or updated."""

    imported: int
    unchanged: int = 0
    skipped: int = 0
    updated: int = 0


def items_create(*, project: Project, staging: ItemStaging, job: ImportJob | None) -> int:
    """Store the staged rows whose ids the project does not have yet, in file order; how many."""
    meta = Item._meta
    column = {f.name: f.column for f in meta.concrete_fields}
    cast = "::jsonb" if staging.postgres else ""
    with transaction.atomic():
        staging.cursor.execute(
            f"INSERT INTO {meta.db_table} ({column['project']}, {column['external_id']}, {column['payload']}, "
            f"{column['gold_value']}, {column['import_job']}, {column['created_at']}, {column['order_key']}, "
            f"{column['assigned_count']}, {column['is_open']}) "
            f"SELECT %s, s.external_id, s.payload{cast}, s.gold{cast}, %s, %s, s.order_key, 0, "
            f"{open_when_created_sql('s.gold')} "
            f"FROM {staging.table} s WHERE NOT EXISTS (SELECT 1 FROM {meta.db_table} i "
            f"WHERE i.{column['project']} = %s AND i.{column['external_id']} = s.external_id) ORDER BY s.line",
            # Adapted like the ORM would, so SQLite stores the same naive-UTC text as rows saved elsewhere.
            [project.pk, job.pk if job else None, connection.ops.adapt_datetimefield_value(timezone.now()), project.pk],
        )
        created = staging.cursor.rowcount
        statistics_refreshed(Item, created)
        return created


def item_payloads_update(*, project: Project, staging: ItemStaging) -> int:
    """Replace the payloads of the project's items that the staged rows change; how many changed.

    Payload only, and only before any answer: an item somebody answered keeps the payload the answer
    was given for, and a known answer (``gold``) is not changed by an import. Either refusal names
    the line and stores nothing (ImportRejected). Rows equal to the stored item change nothing.
    """
    item, answer = Item._meta, Annotation._meta
    pk = item.pk.column
    payload, gold = item.get_field("payload").column, item.get_field("gold_value").column
    answered = f"EXISTS (SELECT 1 FROM {answer.db_table} a WHERE a.{answer.get_field('item').column} = i.{pk})"
    changed = staging.json_differs("s.payload", f"i.{payload}")
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    with transaction.atomic():
        staging.report_found(
            staging.existing_query() + f" WHERE {changed} AND {answered}",
            [project.pk],
            errors,
            lambda row: (row[0], ANSWERED_ITEM.format(external_id=row[1])),
        )
        staging.report_found(
            staging.existing_query() + f" WHERE {staging.json_differs('s.gold', f'i.{gold}')}",
            [project.pk],
            errors,
            lambda row: (row[0], GOLD_NOT_UPDATED.format(external_id=row[1])),
        )
        if errors.total:
            raise ImportRejected(errors.errors, total=errors.total)
        staging.cursor.execute(f"SELECT count(*) FROM ({staging.existing_query()} WHERE {changed}) found", [project.pk])
        expected = staging.cursor.fetchone()[0]
        cast = "::jsonb" if staging.postgres else ""
        table, project_column = item.db_table, item.get_field("project").column
        external_id = item.get_field("external_id").column
        updated_at = item.get_field("payload_updated_at").column
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        # The answer check again in the statement itself: an answer given since the report above
        # keeps its item's payload, and the whole import is refused. The time marks the runs'
        # suggestions stored before it as scored on an earlier version.
        staging.cursor.execute(
            f"UPDATE {table} SET {payload} = s.payload{cast}, {updated_at} = %s FROM {staging.table} s "
            f"WHERE {table}.{project_column} = %s AND {table}.{external_id} = s.external_id "
            f"AND {staging.json_differs('s.payload', f'{table}.{payload}')} "
            f"AND NOT EXISTS (SELECT 1 FROM {answer.db_table} a "
            f"WHERE a.{answer.get_field('item').column} = {table}.{pk})",
            [now, project.pk],
        )
        if staging.cursor.rowcount != expected:
            raise ImportRejected([FieldError("", ANSWERED_DURING_IMPORT)])
        return expected


#: The annotation fields an imported label sets, in the order of ``annotations_store``'s rows: those
#: an answer given here sets, and its import job (``tests/annotation/test_table_statistics.py`` holds
#: them to the model's fields).
IMPORTED_ANNOTATION_FIELDS = (*sql.ANNOTATION_FIELDS, *sql.ANNOTATION_LEFT_NULL)


def annotations_store(*, rows: list[tuple]) -> int:
    """Store checked imported labels (new versions; annotations are append-only); how many.

    ``rows`` hold ``IMPORTED_ANNOTATION_FIELDS`` in order, the value as JSON text and ``created_at``
    as the database takes it. One COPY on PostgreSQL (the import of items and runs writes the same
    way: several times the speed of INSERTs), batched INSERTs elsewhere.
    """
    if not rows:
        return 0
    meta = Annotation._meta
    columns = ", ".join(cast(Field, meta.get_field(name)).column for name in IMPORTED_ANNOTATION_FIELDS)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {meta.db_table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(IMPORTED_ANNOTATION_FIELDS))
            cursor.executemany(f"INSERT INTO {meta.db_table} ({columns}) VALUES ({marks})", rows)
    return len(rows)


def import_job_record(
    *,
    project: Project,
    target: str,
    filename: str,
    stored_path: str = "",
    size_bytes: int = 0,
    existing: str = ImportJob.Existing.REFUSE,
    user: Any = None,
) -> ImportJob:
    """The row of an import about to run: what, from where, how existing items are met, and by whom.

    ``existing`` other than refuse is for item files only (labels are versioned, never replaced).
    """
    problem = None
    if existing not in ImportJob.Existing.values:
        problem = UNKNOWN_EXISTING.format(choices=", ".join(ImportJob.Existing.values))
    elif existing != ImportJob.Existing.REFUSE and target != ImportJob.Target.ITEMS:
        problem = EXISTING_FOR_ITEMS
    if problem:
        raise ImportRejected([FieldError("existing", problem)])
    job = ImportJob(
        project=project,
        target=target,
        filename=filename,
        stored_path=stored_path,
        size_bytes=size_bytes,
        existing=existing,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    job.save()
    return job


def import_job_start(*, job: ImportJob, size_bytes: int) -> ImportJob:
    job.status, job.size_bytes = ImportJob.Status.RUNNING, size_bytes
    job.save(update_fields=["status", "size_bytes"])
    return job


def import_job_finish(
    *,
    job: ImportJob,
    result: ImportResult | None = None,
    rejected: ImportRejected | None = None,
    error: Exception | None = None,
) -> ImportJob:
    """Record how an import ended: its counts, its refusal (each bad line), or an internal error."""
    if result is not None:
        job.status = ImportJob.Status.DONE
        job.rows_imported, job.rows_unchanged = result.imported, result.unchanged
        job.rows_skipped, job.rows_updated = result.skipped, result.updated
    elif rejected is not None:
        job.status, job.error_count = ImportJob.Status.REJECTED, rejected.total
        # A message may quote the file (an unknown field's name); PostgreSQL stores no NUL character.
        job.errors = [str(e).replace("\x00", "\\x00") for e in rejected.errors]
    else:
        job.status, job.error_count, job.errors = ImportJob.Status.FAILED, 1, [INTERNAL_ERROR.format(error=error)]
    job.finished_at = timezone.now()
    job.save(
        update_fields=[
            "status",
            "rows_imported",
            "rows_unchanged",
            "rows_skipped",
            "rows_updated",
            "error_count",
            "errors",
            "finished_at",
        ]
    )
    return job
