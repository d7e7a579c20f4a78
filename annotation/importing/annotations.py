"""Annotation files: people's existing labels (rater, item external_id, value), checked like an
answer given here and stored as new versions, all or nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from annotation import csvcells
from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import services
from annotation.importing.reading import ProgressCallback, Record, dumps_json, read_records, record_external_id
from annotation.importing.services import ImportResult
from annotation.importing.staging import BATCH
from annotation.models import Annotation, ImportJob, Item, Membership, Project
from annotation.sql import Names, fetch_all, json_column
from annotation.table_statistics import statistics_refreshed

ANNOTATION_FIELDS = ("rater", "external_id", "value", "seconds_on_item", "suggestion_visible")


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


def _one_of(column: str) -> str:
    """SQL true when ``column`` is one of the values of a list parameter (``_listed``): an array on
    PostgreSQL, a JSON array on SQLite. Either is one parameter, where the ORM's ``__in`` sends and
    converts each of a batch's 2,000 values one by one (a quarter of an import's time)."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)"
    return f"{column} IN (SELECT value FROM json_each(%s))"


def _listed(values: Iterable[Any]) -> Any:
    """A list parameter for ``_one_of``."""
    listed = list(values)
    return listed if connection.vendor == "postgresql" else orjson.dumps(listed).decode()


_I, _N = Names(Item), Names(Annotation)


@cache
def _lookups() -> tuple[str, str, str]:
    """A batch's three look-ups, each by an index: its items (project, external id), the keys its
    raters already have (project, rater, key), the latest version of each pair (item, rater, version)."""
    return (
        f"SELECT {_I.id}, {_I.external_id}, {_I.payload} FROM {_I.table} "
        f"WHERE {_I.project} = %s AND {_one_of(_I.external_id)}",
        f"SELECT {_N.idempotency_key} FROM {_N.table} "
        f"WHERE {_N.project} = %s AND {_one_of(_N.rater)} AND {_one_of(_N.idempotency_key)}",
        f"SELECT {_N.item}, {_N.rater}, max({_N.version}) FROM {_N.table} "
        f"WHERE {_one_of(_N.item)} AND {_one_of(_N.rater)} GROUP BY {_N.item}, {_N.rater}",
    )


class _Batches:
    """What one import keeps between its batches: the accounts of the raters met so far, the time
    its rows are stamped with, and how many it stored (its statistics are taken as they grow)."""

    def __init__(self, project: Project, job: ImportJob | None) -> None:
        self.project, self.job = project, job
        self.accounts: dict[str, int | None] = {}
        self.created_at = connection.ops.adapt_datetimefield_value(timezone.now())
        self.stored = 0
        self.analyzed = 0  # rows stored when the statistics were last taken

    def statistics_taken(self, *, final: bool) -> None:
        """The table's statistics again each time the rows stored have doubled, and once at the end.

        Each batch's look-ups read the rows of earlier batches: planned on statistics that say this
        project has no annotations (a fresh database, or a new project in a used one), each batch
        scans every row stored so far (120,000 answers: 8 minutes instead of one). ANALYZE at
        10,000, 20,000, 40,000 ... rows costs a handful of 0.3 s samples on any file.
        """
        grown = self.stored >= 2 * self.analyzed if not final else self.stored > self.analyzed
        if grown and statistics_refreshed(Annotation, self.stored):
            self.analyzed = self.stored

    def link_accounts(self, raters: set[str]) -> None:
        """Learn the account of each rater not met before.

        A rater name is linked to an account only when that account is a member of this project: any
        other name stays an external rater, so an import cannot attach labels to a stranger's account.
        """
        unknown = raters - self.accounts.keys()
        if not unknown:
            return
        members = Membership.objects.filter(project=self.project, user__username__in=unknown)
        found = dict(members.values_list("user__username", "user_id"))
        self.accounts.update({name: found.get(name) for name in unknown})

    def store(self, batch: list[Record], errors: ErrorCollector) -> tuple[int, int]:
        """Validate one batch against its items and store its new versions; (stored, unchanged).

        Three look-ups a batch, each by an index (``_lookups``); earlier batches of the same file are
        in the table by then.
        """
        project, kind = self.project, self.project.task_kind
        items = {
            external_id: (pk, json_column(payload))
            for pk, external_id, payload in fetch_all(
                _lookups()[0], [project.pk, _listed({r.data["external_id"] for r in batch})]
            )
        }
        raters = {r.data["rater"] for r in batch}
        self.link_accounts(raters)
        keyed = [(_import_key(r.data["rater"], r.data["external_id"], r.data["value"]), r) for r in batch]
        seen = {key for (key,) in fetch_all(_lookups()[1], [project.pk, _listed(raters), _listed(k for k, _ in keyed)])}
        latest = {
            (item_id, rater): top
            for item_id, rater, top in fetch_all(
                _lookups()[2], [_listed(pk for pk, _ in items.values()), _listed(raters)]
            )
        }
        rows: list[tuple] = []
        unchanged = 0
        job_id = self.job.pk if self.job else None
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
            rater = data["rater"]
            pair = (found[0], rater)
            latest[pair] = latest.get(pair, 0) + 1
            if errors:
                continue  # nothing will be stored: only keep validating
            # In IMPORTED_ANNOTATION_FIELDS order.
            rows.append(
                (project.pk, found[0], self.accounts[rater], rater, latest[pair], dumps_json(data["value"]),
                 Annotation.Source.IMPORT.value, key, data.get("suggestion_visible"), data.get("seconds_on_item"),
                 self.created_at, job_id)
            )  # fmt: skip
        if not errors:
            self.stored += services.annotations_store(rows=rows)
            self.statistics_taken(final=False)
        return len(rows), unchanged


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
        batches = _Batches(project, job)
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
                counts = batches.store(batch, errors)
                stored, unchanged, batch = stored + counts[0], unchanged + counts[1], []
        if batch:
            counts = batches.store(batch, errors)
            stored, unchanged = stored + counts[0], unchanged + counts[1]
        if errors:
            raise ImportRejected(errors.errors, total=errors.total)
        batches.statistics_taken(final=True)
    return ImportResult(imported=stored, unchanged=unchanged)
