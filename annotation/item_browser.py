"""Reads for the item browser: a project's items a page at a time, and one item with every rater's answers.

Pages are keyset-paginated on the item id (``?after=ID`` forward, ``?before=ID`` backward), so the
millionth page costs what the first does: one walk of the primary-key index from the cursor, never an
OFFSET. Filters and search cannot use an index (a status depends on the item's annotations and
assignments; text search reads the payload), so they look at a bounded window of at most
``SCAN_WINDOW`` items past the cursor (``SEARCH_WINDOW`` with a text search). A page that found
fewer than ``PAGE_SIZE`` matches in its window says how far it looked, and its "next" link
continues from there: each page costs about the same, however rare the matches.

The built-in status filters are SQL; filters whose rules live in a higher layer (disagreement,
gold-ready: ``validation``) are registered through ``annotation.panels`` and run in Python on
batches of the window.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Cast, Coalesce

from annotation import panels
from annotation.kinds.base import RatingDimension, TaskKind
from annotation.latest import latest_annotations
from annotation.models import Annotation, Assignment, Item, Project

PAGE_SIZE = 50
#: Items one filtered page looks at, at most (see the module docstring); a text search reads every
#: payload of its window as text, the costliest read here, so its window is smaller.
SCAN_WINDOW = 5000
SEARCH_WINDOW = 2000
#: Items a registered (Python) filter is given at once, at most.
FILTER_BATCH = 1000
SEARCH_MAX_CHARS = 100
#: At most this many numeric kind columns (one per ordinal or interval dimension).
MAX_SCORE_COLUMNS = 6

NOT_STARTED, IN_PROGRESS, COMPLETE, SKIPPED, QUALIFICATION = (
    "not_started",
    "in_progress",
    "complete",
    "skipped",
    "qualification",
)
STATUS_LABELS = {
    NOT_STARTED: "Not started",
    IN_PROGRESS: "In progress",
    COMPLETE: "Complete",
}


def _raters(project: Project) -> Coalesce:
    """Distinct raters of the item (an index walk of annotation_unique_version per item)."""
    counted = (
        Annotation.objects.filter(item_id=OuterRef("pk"))
        .order_by()
        .values("item_id")
        .annotate(n=Count("rater", distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def _has_answers() -> Exists:
    return Exists(Annotation.objects.filter(item_id=OuterRef("pk")))


def _not_started(items: QuerySet, project: Project) -> QuerySet:
    return items.filter(assigned_count=0).exclude(_has_answers())


def _in_progress(items: QuerySet, project: Project) -> QuerySet:
    started = items.filter(Q(assigned_count__gt=0) | _has_answers())
    return started.alias(n_raters=_raters(project)).filter(n_raters__lt=project.overlap)


def _complete(items: QuerySet, project: Project) -> QuerySet:
    return items.filter(_has_answers()).alias(n_raters=_raters(project)).filter(n_raters__gte=project.overlap)


def _skipped(items: QuerySet, project: Project) -> QuerySet:
    return items.filter(Exists(Assignment.objects.filter(item_id=OuterRef("pk"), status=Assignment.Status.SKIPPED)))


def _qualification(items: QuerySet, project: Project) -> QuerySet:
    return items.filter(gold_value__isnull=False)


#: Filters this layer defines, as SQL. Complete: at least k distinct raters; in progress: held or
#: answered, fewer than k raters; not started: neither. Skipped: someone skipped it (or was released
#: from it when paused or removed). Qualification: an item with a known answer.
SQL_FILTERS: dict[str, tuple[str, Callable[[QuerySet, Project], QuerySet]]] = {
    NOT_STARTED: ("Not started", _not_started),
    IN_PROGRESS: ("In progress", _in_progress),
    COMPLETE: ("Complete", _complete),
    SKIPPED: ("Skipped", _skipped),
    QUALIFICATION: ("Qualification", _qualification),
}


def filter_choices() -> list[tuple[str, str]]:
    """Every filter the browser offers: this layer's, then those registered by higher layers."""
    registered = [(f.name, f.label) for f in panels.item_filters().values() if f.name not in SQL_FILTERS]
    return [(name, label) for name, (label, _) in SQL_FILTERS.items()] + registered


@dataclass(frozen=True)
class ScoreColumn:
    """A kind column: the mean rating of one ordinal or interval dimension over raters' latest values."""

    name: str
    title: str


@dataclass
class ItemRow:
    item: Item
    raters: int = 0
    holding: int = 0
    skipped: int = 0
    last_answer_at: datetime | None = None
    scores: list[float | None] = field(default_factory=list)
    tally: str = ""  # the first nominal dimension's categories and counts, e.g. "Pass 2 · Fail 1"
    snippet: str = ""
    status: str = NOT_STARTED

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]

    @property
    def score_texts(self) -> list[str]:
        """The means as shown, two decimals (formatted here: a template filter per cell costs more)."""
        return ["—" if score is None else f"{score:.2f}" for score in self.scores]


@dataclass(frozen=True)
class ItemPage:
    rows: list[ItemRow]
    score_columns: list[ScoreColumn]
    tally_title: str
    #: Cursor for the next page (None: nothing after it), and for the previous one (None: first page).
    next_after: int | None
    prev_before: int | None
    #: With a filter or search: the id up to which this page looked, when its window ran out before
    #: it filled (the "next" link continues from there).
    looked_through: int | None
    filtered: bool
    #: Items a filtered page looks at, at most.
    window: int = SCAN_WINDOW
    #: With a search: the item whose external id is exactly the search text (found by its index).
    exact: Item | None = None


def _search(items: QuerySet, q: str) -> QuerySet:
    """External ids starting with ``q``, or payloads whose JSON text contains it (any case)."""
    return items.alias(payload_text=Cast("payload", TextField())).filter(
        Q(external_id__startswith=q) | Q(payload_text__icontains=q)
    )


def item_page(
    *,
    project: Project,
    q: str = "",
    status: str = "",
    after: int | None = None,
    before: int | None = None,
    last: bool = False,
) -> ItemPage:
    """One page of the project's items in id order: after ``after``, before ``before``, or the last
    page (``last``); the first page when none is given. ``status`` is a name from filter_choices()."""
    q = q.strip()[:SEARCH_MAX_CHARS]
    backward = before is not None or last
    items = Item.objects.filter(project=project)
    cursor = before if backward else after
    if cursor is not None:
        items = items.filter(pk__lt=cursor) if backward else items.filter(pk__gt=cursor)
    ordered = ("-pk",) if backward else ("pk",)
    filtered = bool(q or status)
    looked_through: int | None = None
    if not filtered:
        found = list(items.order_by(*ordered)[: PAGE_SIZE + 1])
        more = len(found) > PAGE_SIZE
        found = found[:PAGE_SIZE]
    else:
        # The window: the SCAN_WINDOW-th item past the cursor bounds every filtered query below.
        size = min(SEARCH_WINDOW, SCAN_WINDOW) if q else SCAN_WINDOW
        edge_rows = items.order_by(*ordered).values_list("pk", flat=True)[size - 1 : size]
        edge = next(iter(edge_rows), None)
        window = items if edge is None else items.filter(pk__gte=edge) if backward else items.filter(pk__lte=edge)
        if q:
            window = _search(window, q)
        found, more = _filtered(project, window.order_by(*ordered), status)
        if not more and edge is not None:
            more, looked_through = True, edge
    if backward:
        found.reverse()
    rows = _decorate(project, found)
    # "Onward" continues the walk in its own direction: past the farthest match when there were more,
    # or past the window's end when it ran out first. "Back" turns round at the nearest row (or at
    # the cursor itself when the page is empty); the first and the last page have nothing behind them.
    if looked_through is not None:
        onward = looked_through
    elif more:
        onward = found[0].pk if backward else found[-1].pk
    else:
        onward = None
    back = None
    if cursor:
        nearest = (found[-1].pk if backward else found[0].pk) if found else cursor + (-1 if backward else 1)
        back = nearest
    next_after, prev_before = (back, onward) if backward else (onward, back)
    kind = project.task_kind
    score_dims, tally_dim = _kind_dimensions(kind)
    return ItemPage(
        rows=rows,
        score_columns=[ScoreColumn(d.name, d.title) for d in score_dims],
        tally_title=tally_dim.title if tally_dim else "",
        next_after=next_after,
        prev_before=prev_before,
        looked_through=looked_through,
        filtered=filtered,
        window=min(SEARCH_WINDOW, SCAN_WINDOW) if q else SCAN_WINDOW,
        exact=Item.objects.filter(project=project, external_id=q).first() if q else None,
    )


def _filtered(project: Project, window: QuerySet, status: str) -> tuple[list[Item], bool]:
    """Up to PAGE_SIZE matches in the window and whether there were more."""
    if status in SQL_FILTERS:
        window = SQL_FILTERS[status][1](window, project)
    elif status and status not in panels.item_filters():
        raise ValueError(f"unknown filter {status!r}")
    if not status or status in SQL_FILTERS:
        found = list(window[: PAGE_SIZE + 1])
        return found[:PAGE_SIZE], len(found) > PAGE_SIZE
    # A registered filter: hand it the window a batch at a time until the page is full. Batches start
    # at two pages' worth (a common filter fills the page at once) and double while matches are rare.
    found = []
    offset, size = 0, 2 * PAGE_SIZE
    while True:
        batch = list(window[offset : offset + size])
        if not batch:
            return found, False
        keep = panels.matching_ids(status, project=project, items=batch)
        for item in batch:
            if item.pk in keep:
                if len(found) == PAGE_SIZE:
                    return found, True
                found.append(item)
        if len(batch) < size:
            return found, False
        offset, size = offset + size, min(2 * size, FILTER_BATCH)


def _kind_dimensions(kind: TaskKind) -> tuple[list[RatingDimension], RatingDimension | None]:
    scores = [d for d in kind.rating_dimensions if d.level in ("ordinal", "interval")][:MAX_SCORE_COLUMNS]
    nominal = next((d for d in kind.rating_dimensions if d.level == "nominal"), None)
    return scores, nominal


def _latest_answers(item_ids: list[int]) -> dict[int, dict[str, Annotation]]:
    """Each rater's latest annotation per item, with its time: one query, raters in name order."""
    latest: dict[int, dict[str, Annotation]] = {}
    rows = latest_annotations(item_ids=item_ids).order_by("item_id", "rater")
    for annotation in rows.only("item_id", "rater", "version", "value", "created_at"):
        latest.setdefault(annotation.item_id, {})[annotation.rater] = annotation
    return latest


def _decorate(project: Project, items: list[Item]) -> list[ItemRow]:
    """Progress, last answer and the kind's columns for a page of items: two queries for the page."""
    rows = {item.pk: ItemRow(item=item) for item in items}
    if not rows:
        return []
    ids = list(rows)
    for item_id, status, n in (
        Assignment.objects.filter(item_id__in=ids)
        .order_by()
        .values("item_id", "status")
        .annotate(n=Count("pk"))
        .values_list("item_id", "status", "n")
    ):
        if status == Assignment.Status.ASSIGNED:
            rows[item_id].holding = n
        elif status == Assignment.Status.SKIPPED:
            rows[item_id].skipped = n
    latest = _latest_answers(ids)
    kind = project.task_kind
    score_dims, tally_dim = _kind_dimensions(kind)
    values, owners, payloads = [], [], []
    for item_id, by_rater in latest.items():
        row = rows[item_id]
        row.raters = len(by_rater)
        row.last_answer_at = max(a.created_at for a in by_rater.values())
        for annotation in by_rater.values():
            values.append(annotation.value)
            owners.append(item_id)
            payloads.append(row.item.payload if kind.ratings_need_payload else None)
    sums: dict[tuple[int, str], list[float]] = {}
    tallies: dict[int, Counter] = {}
    if values and (score_dims or tally_dim):
        columns = kind.ratings_columns(values, payloads)
        for dim in score_dims:
            column = columns.get(dim.name)
            for row_index, rating in zip(column.rows, column.values, strict=True) if column else ():
                if rating is not None:
                    sums.setdefault((owners[row_index], dim.name), []).append(float(rating))
        if tally_dim and tally_dim.name in columns:
            column = columns[tally_dim.name]
            for row_index, rating in zip(column.rows, column.values, strict=True):
                tallies.setdefault(owners[row_index], Counter())[tally_dim.category_label(rating)] += 1
    fields = kind.payload_fields
    for item_id, row in rows.items():
        found = [sums.get((item_id, d.name)) for d in score_dims]
        row.scores = [sum(v) / len(v) if v else None for v in found]
        row.tally = " · ".join(f"{label} {n}" for label, n in tallies.get(item_id, Counter()).most_common())
        row.snippet = _snippet(row.item.payload, fields)
        row.status = _status(row, project)
    return [rows[item.pk] for item in items]


def _status(row: ItemRow, project: Project) -> str:
    """The same rule as the SQL filters, from the numbers already read for the page."""
    if row.raters >= project.overlap:
        return COMPLETE
    if row.raters or row.item.assigned_count:
        return IN_PROGRESS
    return NOT_STARTED


def _snippet(payload: Any, fields: list[str], limit: int = 120) -> str:
    """The first text field of the payload in the kind's field order, shortened: what the item is about."""
    if not isinstance(payload, dict):
        return ""
    for name in fields:
        text = payload.get(name)
        if isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


# -- one item ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    version: int
    created_at: datetime
    seconds_on_item: float | None
    suggestion_visible: bool | None
    source: str


@dataclass
class RaterAnswer:
    """One rater's latest answer on the item, with every version and their assignment."""

    rater: str
    value: dict
    versions: list[Version]
    assignment: Assignment | None = None

    @property
    def latest(self) -> Version:
        return self.versions[-1]


@dataclass(frozen=True)
class ItemDetail:
    item: Item
    answers: list[RaterAnswer]
    #: Assignments without an answer: people holding the item now, or who skipped it.
    open_or_skipped: list[Assignment]
    status: str

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]


def item_detail(*, project: Project, item: Item) -> ItemDetail:
    """Everything the item page shows from this layer: three queries, however many raters."""
    by_rater: dict[str, RaterAnswer] = {}
    for annotation in Annotation.objects.filter(item=item).order_by("rater", "version"):
        version = Version(
            annotation.version,
            annotation.created_at,
            annotation.seconds_on_item,
            annotation.suggestion_visible,
            annotation.get_source_display(),
        )
        answer = by_rater.get(annotation.rater)
        if answer is None:
            by_rater[annotation.rater] = RaterAnswer(annotation.rater, annotation.value, [version])
        else:
            answer.value = annotation.value
            answer.versions.append(version)
    others = []
    for assignment in Assignment.objects.filter(item=item).select_related("annotator").order_by("created_at", "pk"):
        answer = by_rater.get(assignment.annotator.username)
        if answer is not None and assignment.status == Assignment.Status.SUBMITTED:
            answer.assignment = assignment
        else:
            others.append(assignment)
    row = ItemRow(item=item, raters=len(by_rater))
    return ItemDetail(item=item, answers=list(by_rater.values()), open_or_skipped=others, status=_status(row, project))


def project_item(*, project: Project, item_id: int) -> Item | None:
    if not 0 < item_id < 2**63:
        return None
    return Item.objects.filter(project=project, pk=item_id).first()
