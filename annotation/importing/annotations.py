"""Annotation files: people's existing labels (rater, item external_id, value), checked like an
answer given here and stored as new versions, all or nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from annotation import csvcells
from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import services
from annotation.importing.reading import ProgressCallback, Record, read_records, record_external_id
from annotation.importing.services import ImportResult
from annotation.importing.staging import BATCH
from annotation.models import Annotation, ImportJob, Item, Membership, Project

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
        services.annotations_store(annotations=new)
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
