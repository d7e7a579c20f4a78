"""Each rater's latest value per item: the one definition that every reader of answers uses.

Annotations are append-only: an edit is a new version, so what a rater says about an item now is
their newest version of it. :func:`latest_annotations` is that rule as a queryset (the rows no newer
version of the same item by the same rater outranks: an anti-join PostgreSQL and SQLite both run on
the (item, rater, version) unique index), which readers narrow and stream as they need; and
:func:`latest_values` reads it into ``{item id: {rater: value}}`` at export speed. The item
browser, the workspace's history and peers, qualification scores, gold, ratings, reports and
estimates all read answers through these two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet

from annotation.models import Annotation, Project
from annotation.sql import json_column

__all__ = ("latest_annotations", "latest_values")


def latest_annotations(
    *,
    project: Project | int | None = None,
    item_ids: Sequence[int] | None = None,
    item_range: tuple[int, int] | None = None,
    rater: str | None = None,
    exclude_rater: str | None = None,
    sources: Sequence[str] | None = None,
) -> QuerySet[Annotation]:
    """Each rater's newest version of each item, unordered, narrowed by any of the arguments.

    ``item_range`` is (first id, last id) inclusive, for a batch of a project's items in id order: a
    range is far cheaper to send and plan than thousands of ids. ``sources`` keeps only latest
    versions from those sources (``Annotation.Source`` values): an imported label later edited in
    the browser counts as the edit, so it is filtered after the newest version is picked.
    """
    # ``version__gt=1`` says nothing new (versions start at 1), but lets the database build the
    # anti-join from the few edited answers instead of from every row.
    newer = Annotation.objects.filter(
        item_id=OuterRef("item_id"), rater=OuterRef("rater"), version__gt=OuterRef("version")
    ).filter(version__gt=1)
    # Clearing the model's ordering spares the database a sort a caller did not ask for.
    rows = Annotation.objects.filter(~Exists(newer)).order_by()
    if project is not None:
        rows = rows.filter(project=project)
    if item_ids is not None:
        rows = rows.filter(item_id__in=list(item_ids))
    if item_range is not None:
        rows = rows.filter(item_id__gte=item_range[0], item_id__lte=item_range[1])
    if rater is not None:
        rows = rows.filter(rater=rater)
    if exclude_rater is not None:
        rows = rows.exclude(rater=exclude_rater)
    if sources:
        rows = rows.filter(source__in=list(sources))
    return rows


def latest_values(
    item_ids: Sequence[int],
    *,
    project_id: int | None = None,
    rater: str | None = None,
    exclude_rater: str | None = None,
) -> dict[int, dict[str, Any]]:
    """``{item id: {rater: value}}`` of the latest versions on ``item_ids``, raters in name order.

    With ``project_id``, ``item_ids`` must be ascending ids of that project and are read as their
    range (the batches of an export). The bulk of an export: values are read as JSON text and
    decoded here, which skips the ORM's per-row conversion (a third of the time for a million
    annotations).
    """
    if not item_ids:
        return {}
    if project_id is not None:
        narrowed: dict[str, Any] = {"project": project_id, "item_range": (item_ids[0], item_ids[-1])}
    else:
        narrowed = {"item_ids": item_ids}
    rows = latest_annotations(**narrowed, rater=rater, exclude_rater=exclude_rater).order_by("item_id", "rater")
    sql, params = rows.values_list("item_id", "rater", "value").query.sql_with_params()
    found: dict[int, dict[str, Any]] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for item_id, name, value in cursor:
            # drivers hand JSON over as text or decoded
            found.setdefault(item_id, {})[name] = json_column(value)
    return found
