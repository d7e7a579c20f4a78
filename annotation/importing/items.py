"""Item files: each record checked as the project's kind says, staged, then written by the services.

A record has an ``external_id``, the kind's payload fields and, for a qualification item, a ``gold``
value. Items go through a temporary staging table first (COPY on PostgreSQL, batched inserts
elsewhere): duplicate external ids, within the file or against the project, are then found by the
database with their line numbers, instead of by a Python set that would grow with the file.

An id the project already has is refused (the default), skipped, or updated: its payload replaced,
only while nobody has answered the item (``annotation.importing.services``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation import csvcells
from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import services
from annotation.importing.reading import ProgressCallback, Record, dumps_json, read_records, record_external_id
from annotation.importing.services import ImportResult
from annotation.importing.staging import ItemStaging
from annotation.models import ImportJob, Project, item_order_key
from annotation.sampling import sample_hold_out_new_items
from annotation.selectors import project_size_changed

ITEM_RESERVED = ("external_id", "gold")
ALREADY_EXISTS = "{external_id!r} already exists in this project"


def import_items(
    *,
    project: Project,
    path: str | Path,
    job: ImportJob | None = None,
    progress: ProgressCallback | None = None,
    existing: str = ImportJob.Existing.REFUSE,
) -> ImportResult:
    """Import every item of a JSONL or CSV file into ``project``, or none of them.

    ``existing`` says what happens to an id the project already has (``ImportJob.Existing``).
    Raises ImportRejected, listing bad lines and fields, when anything is wrong.
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
    return import_item_records(project=project, records=records, errors=errors, job=job, existing=existing)


def existing_mode_problem(existing: str) -> FieldError | None:
    """Why ``existing`` is not one of the modes, or None."""
    if existing in ImportJob.Existing.values:
        return None
    return FieldError("existing", services.UNKNOWN_EXISTING.format(choices=", ".join(ImportJob.Existing.values)))


def import_item_records(
    *,
    project: Project,
    records: Iterable[Record],
    errors: ErrorCollector | None = None,
    job: ImportJob | None = None,
    existing: str = ImportJob.Existing.REFUSE,
) -> ImportResult:
    """Import items given as records (a line number and the data of one JSONL line), or none of them.

    The same checks as a file's (``import_items``), for items made by the application itself, which
    need not be written to a file and read back. ``errors`` may already hold the reader's problems.
    """
    kind = project.task_kind
    if errors is None:
        errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    problem = existing_mode_problem(existing)
    if problem is not None:
        raise ImportRejected([problem])
    with transaction.atomic():
        staging = ItemStaging()
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
        staging.report_repeated_ids(errors)
        if existing == ImportJob.Existing.REFUSE:
            staging.report_found(
                staging.existing_query(),
                [project.pk],
                errors,
                lambda row: (row[0], ALREADY_EXISTS.format(external_id=row[1])),
            )
        if errors:
            raise ImportRejected(errors.errors, total=errors.total)
        updated = 0
        if existing == ImportJob.Existing.UPDATE:
            updated = services.item_payloads_update(project=project, staging=staging)
        created = services.items_create(project=project, staging=staging, job=job)
        skipped = staging.row_count() - created - updated
        staging.drop()
        if created:
            sample_hold_out_new_items(project=project)  # with a validation sample, only drawn items are served
            project_size_changed(project_id=project.pk)
    return ImportResult(imported=created, skipped=skipped, updated=updated)
