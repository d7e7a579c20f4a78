"""Ratings of a project, for agreement: (unit, rater, dimension, value), in columns.

Sources:

- Annotations, people's and imported alike: each rater's latest version of each item, picked in SQL
  (no newer version of the same item by the same rater exists), streamed with ``values_list`` and
  turned into ratings by the project's task kind (``ratings_columns``), a batch at a time. A kind
  that declares ``rating_paths`` has the database read each rating as a number at its path instead,
  so no value is decoded in Python (what makes 100,000-item reports quick).
- A judge run: its OK suggestions (``judges.selectors.suggestion_values``) as one more rater. Failed
  items are absent there, so they are missing ratings here, never zeros.

A unit is an item, or an item plus a suffix when one value rates several things (IPQA rates each
candidate intent). Units are ordered by (external id, suffix), raters by name, so the same data
always gives the same arrays and the same input digest, whatever the database ids.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pandas as pd
from django.db import connections
from django.db.models import BooleanField, Case, F, FloatField, QuerySet, TextField, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotation.gcpause import collection_paused
from annotation.kinds.base import DimensionColumn, RatingDimension, TaskKind
from annotation.latest import latest_annotations
from annotation.models import Item, Project
from judges.selectors import ok_suggestions, suggestion_existed, suggestion_values

__all__ = [
    "HIDDEN",
    "SHOWN",
    "UNRECORDED",
    "DimensionRatings",
    "RatingSet",
    "annotation_ratings",
    "judge_rater_name",
    "judge_run_ratings",
    "project_ratings",
]

#: ``visible`` codes: whether the rater saw an LLM suggestion when rating.
SHOWN, HIDDEN, UNRECORDED = 1, 0, -1
#: Annotations turned into ratings per batch: bounds memory while keeping per-batch overhead small.
BATCH = 20_000
#: Ids per IN list: SQLite builds may cap a statement's parameters at 999.
PARAMETERS = 900

DUPLICATE_RATING = "{kind}: item {item!r}{part} has two ratings by {rater!r} in dimension {dimension!r}"
BOOLEAN_RATING = "{kind}: dimension {dimension!r} produced booleans; ratings must be numbers or strings"
MIXED_RATINGS = "{kind}: dimension {dimension!r} produced both strings and numbers"


@dataclass(frozen=True)
class DimensionRatings:
    """One dimension's ratings as parallel arrays (one entry per rating)."""

    dimension: RatingDimension
    unit: npt.NDArray[np.intp]
    rater: npt.NDArray[np.intp]
    value: npt.NDArray[Any]  # float64, or object holding strings
    visible: npt.NDArray[np.int8]

    @property
    def numeric(self) -> bool:
        return self.value.dtype != object

    def __len__(self) -> int:
        return len(self.unit)


@dataclass(frozen=True)
class RatingSet:
    """A project's ratings: shared units and raters, and each dimension's ratings on them."""

    kind: str
    dimensions: dict[str, DimensionRatings]
    unit_items: npt.NDArray[np.int64]
    unit_external_ids: npt.NDArray[Any]
    unit_suffixes: npt.NDArray[Any]
    raters: tuple[str, ...]

    @property
    def n_units(self) -> int:
        return len(self.unit_items)

    def rater_index(self, name: str) -> int | None:
        return self.raters.index(name) if name in self.raters else None

    def matrix(self, name: str, raters: Sequence[str] | None = None) -> npt.NDArray[Any]:
        """Units x raters: float with NaN for missing, or object with None for string ratings.

        A rater named in ``raters`` who gave no rating at all (a judge run whose every item failed)
        gets a column of missing ratings.
        """
        ratings = self.dimensions[name]
        # One spare column, always empty, stands in for raters without ratings.
        shape = (self.n_units, len(self.raters) + 1)
        out = np.full(shape, np.nan) if ratings.numeric else np.full(shape, None, dtype=object)
        out[ratings.unit, ratings.rater] = ratings.value
        return out[:, self._columns(raters)]

    def visibility(self, name: str, raters: Sequence[str] | None = None) -> npt.NDArray[np.int8]:
        """Units x raters: SHOWN, HIDDEN, or UNRECORDED (also where there is no rating)."""
        ratings = self.dimensions[name]
        out = np.full((self.n_units, len(self.raters) + 1), UNRECORDED, dtype=np.int8)
        out[ratings.unit, ratings.rater] = ratings.visible
        return out[:, self._columns(raters)]

    def _columns(self, raters: Sequence[str] | None) -> list[int]:
        if raters is None:
            return list(range(len(self.raters)))
        spare = len(self.raters)
        return [self.raters.index(r) if r in self.raters else spare for r in raters]

    def unit_labels(self) -> list[str]:
        """``external_id`` or ``external_id · suffix`` per unit, for tables and downloads."""
        return [
            f"{external_id} · {suffix}" if suffix else str(external_id)
            for external_id, suffix in zip(self.unit_external_ids, self.unit_suffixes, strict=True)
        ]

    def digest(self) -> str:
        """SHA-256 of the ratings in a canonical form: the inputs of every number computed from them.

        Covers the kind, each dimension's name and level, the units (external id and suffix, in
        order), the raters' names, and each rating's unit, rater, value and visibility, sorted by
        unit then rater. Database ids do not enter, so a restored copy of the data digests the same.
        """
        sha = hashlib.sha256()

        def block(tag: str, data: bytes) -> None:
            # Length-prefixed blocks: no two different inputs can concatenate to the same bytes.
            sha.update(f"{tag}:{len(data)}:".encode())
            sha.update(data)

        block("kind", self.kind.encode())
        block(
            "units",
            json.dumps(
                [[str(e), str(s)] for e, s in zip(self.unit_external_ids, self.unit_suffixes, strict=True)]
            ).encode(),
        )
        block("raters", json.dumps(list(self.raters)).encode())
        for name, ratings in self.dimensions.items():
            block("dimension", json.dumps([name, ratings.dimension.level]).encode())
            order = np.lexsort((ratings.rater, ratings.unit))
            block("unit", ratings.unit[order].astype("<i8").tobytes())
            block("rater", ratings.rater[order].astype("<i4").tobytes())
            if ratings.numeric:
                block("value", ratings.value[order].astype("<f8").tobytes())
            else:
                block("value", json.dumps(ratings.value[order].tolist()).encode())
            block("visible", ratings.visible[order].astype("i1").tobytes())
        return sha.hexdigest()


# -- building ---------------------------------------------------------------------------------------


class _Collector:
    """Accumulates one kind's ratings batch by batch, then orders units and raters."""

    def __init__(self, kind: TaskKind) -> None:
        self.kind = kind
        self.raters: dict[str, int] = {}
        self.parts: dict[str, list[tuple[Any, ...]]] = {d.name: [] for d in kind.rating_dimensions}

    def add(
        self,
        items: Sequence[int],
        raters: Sequence[str],
        values: Sequence[dict],
        visible: Sequence[bool | None],
        payloads: Sequence[dict | None],
    ) -> None:
        if not items:
            return
        self.add_columns(items, raters, visible, self.kind.ratings_columns(values, payloads))

    def add_columns(
        self,
        items: Sequence[int] | np.ndarray,
        raters: Sequence[str],
        visible: Sequence[bool | int | None],
        columns: dict[str, DimensionColumn],
    ) -> None:
        """A batch's ratings, already per dimension (``ratings_columns``, or read at ``rating_paths``)."""
        if not len(items):
            return
        item_array = np.asarray(items, dtype=np.int64)
        # Each distinct name once, then its code per row: a dictionary look-up per row costs more.
        codes, names = pd.factorize(np.asarray(raters, dtype=object))
        lookup = np.asarray([self.raters.setdefault(r, len(self.raters)) for r in names], dtype=np.intp)
        rater_array = lookup[codes]
        shown = np.asarray(visible, dtype=object)
        # SQLite gives 1 and 0 for a boolean column, PostgreSQL True and False.
        visible_array = np.where(shown == None, UNRECORDED, np.where(shown.astype(bool), SHOWN, HIDDEN))  # noqa: E711
        visible_array = visible_array.astype(np.int8)
        for name, column in columns.items():
            rows = np.asarray(column.rows, dtype=np.intp)
            if not len(rows):
                continue
            suffixes = None if column.suffixes is None else list(column.suffixes)
            ratings = column.values if isinstance(column.values, np.ndarray) else list(column.values)
            self.parts[name].append((item_array[rows], rater_array[rows], ratings, suffixes, visible_array[rows]))

    def finish(self, project: Project) -> RatingSet:
        kind_name = self.kind.name
        with_suffix = any(part[3] is not None for parts in self.parts.values() for part in parts)
        per_dimension: dict[str, dict[str, Any]] = {}
        for dimension in self.kind.rating_dimensions:
            parts = self.parts[dimension.name]
            suffixes: npt.NDArray[Any] | None = None
            if with_suffix:
                flat: list[str] = []
                for part in parts:
                    flat.extend(part[3] if part[3] is not None else [""] * len(part[0]))
                suffixes = np.asarray(flat, dtype=object)
            per_dimension[dimension.name] = {
                "items": np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64),
                "suffixes": suffixes,
                "raters": np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.intp),
                "values": _value_array(
                    [p[2] for p in parts], kind_name, dimension.name, categories=dimension.categories
                ),
                "visible": np.concatenate([p[4] for p in parts]) if parts else np.zeros(0, dtype=np.int8),
            }

        # Units: every (item, suffix) rated in any dimension, ordered by (external id, suffix).
        all_items = np.concatenate([d["items"] for d in per_dimension.values()])
        if with_suffix:
            all_suffixes = np.concatenate([d["suffixes"] for d in per_dimension.values()])
            keys = pd.DataFrame({"item": all_items, "suffix": all_suffixes}).drop_duplicates()
        else:
            # pandas' hash table, then a sort of the few distinct ids: np.unique's is far slower on
            # the millions of (rating, item) entries of a large project.
            keys = pd.DataFrame({"item": np.sort(pd.unique(all_items)), "suffix": ""})
        # Every item of the project in one streamed query: an IN list of 100,000 ids would exceed
        # SQLite's parameter limit.
        external = {
            pk: external_id
            for batch in _fetched(Item.objects.filter(project=project).values_list("pk", "external_id"), BATCH)
            for pk, external_id in batch
        }
        keys["external_id"] = keys["item"].map(external)
        keys = keys.sort_values(["external_id", "suffix"], kind="stable").reset_index(drop=True)
        if with_suffix:
            index = pd.MultiIndex.from_frame(keys[["item", "suffix"]])

            def locate(d: dict[str, Any]) -> npt.NDArray[np.intp]:
                return index.get_indexer(pd.MultiIndex.from_arrays([d["items"], d["suffixes"]]))
        else:
            items_index = pd.Index(keys["item"])

            def locate(d: dict[str, Any]) -> npt.NDArray[np.intp]:
                return items_index.get_indexer(d["items"])

        # Raters by name (people first, then judge runs), so the order does not depend on which
        # annotation the database returned first.
        names = sorted(self.raters, key=lambda r: (r.startswith(JUDGE_PREFIX), r))
        remap = np.empty(len(self.raters), dtype=np.intp)
        for new, name in enumerate(names):
            remap[self.raters[name]] = new

        dimensions: dict[str, DimensionRatings] = {}
        for dimension in self.kind.rating_dimensions:
            d = per_dimension[dimension.name]
            unit = locate(d).astype(np.intp)
            rater = remap[d["raters"]] if len(d["raters"]) else d["raters"]
            _refuse_duplicates(unit, rater, len(names), keys, names, kind_name, dimension.name)
            dimensions[dimension.name] = DimensionRatings(
                dimension=dimension, unit=unit, rater=rater, value=d["values"], visible=d["visible"]
            )
        return RatingSet(
            kind=kind_name,
            dimensions=dimensions,
            unit_items=keys["item"].to_numpy(dtype=np.int64),
            unit_external_ids=keys["external_id"].to_numpy(dtype=object),
            unit_suffixes=keys["suffix"].to_numpy(dtype=object),
            raters=tuple(names),
        )


JUDGE_PREFIX = "judge:"


def judge_rater_name(run_id: int) -> str:
    """The rater name a judge run takes among the raters (people's names never contain ':')."""
    return f"{JUDGE_PREFIX}{run_id}"


def _value_array(
    parts: list[Sequence[Any]], kind: str, dimension: str, *, categories: Sequence[Any] = ()
) -> npt.NDArray[Any]:
    """One dimension's ratings from its batches: numbers (float) or strings (object)."""
    if parts and all(isinstance(part, np.ndarray) and part.dtype == float for part in parts):
        return np.concatenate(parts)  # read as numbers by the database (``rating_paths``)
    values = [v for part in parts for v in part]
    if not values:
        # No ratings yet (e.g. statements written, none reviewed): an empty column of the kind the
        # categories are, so that coding it against them finds no mix of strings and numbers.
        textual = any(isinstance(category, str) for category in categories)
        return np.asarray([], dtype=object if textual else float)
    types = set(map(type, values))
    if bool in types or np.bool_ in types:
        raise ValueError(BOOLEAN_RATING.format(kind=kind, dimension=dimension))
    if str in types:
        if len(types) > 1:
            raise ValueError(MIXED_RATINGS.format(kind=kind, dimension=dimension))
        return np.asarray(values, dtype=object)
    return np.asarray(values, dtype=float)


def _refuse_duplicates(
    unit: npt.NDArray[np.intp],
    rater: npt.NDArray[np.intp],
    n_raters: int,
    keys: pd.DataFrame,
    names: Sequence[str],
    kind: str,
    dimension: str,
) -> None:
    # One rating per (unit, rater) is what every coefficient assumes; a kind that emits two is a bug.
    cells = unit.astype(np.int64) * max(n_raters, 1) + rater
    unique, counts = np.unique(cells, return_counts=True)
    if len(unique) == len(cells):
        return
    first = int(unique[np.argmax(counts > 1)])
    row = keys.iloc[first // max(n_raters, 1)]
    part = f" ({row['suffix']})" if row["suffix"] else ""
    raise ValueError(
        DUPLICATE_RATING.format(
            kind=kind, item=row["external_id"], part=part, rater=names[first % max(n_raters, 1)], dimension=dimension
        )
    )


def _batched(rows: Iterable[tuple[Any, ...]], size: int) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _decoded(texts: Sequence[str]) -> list[Any]:
    """Many JSON documents at once: one ``orjson.loads`` of their concatenation costs a fraction of
    one ``json.loads`` per row (which is what Django's JSONField does when it converts each value)."""
    return orjson.loads("[" + ",".join(texts) + "]")


def _fetched(queryset: QuerySet[Any], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """A ``values_list`` queryset's rows, a batch at a time, through a plain cursor: on 100,000s of
    rows Django's iterator costs more than the query. Only for fields without a converter (numbers,
    text, booleans; SQLite gives booleans as 1 and 0)."""
    sql, params = queryset.query.get_compiler(using=queryset.db).as_sql()
    with connections[queryset.db].cursor() as cursor, collection_paused():
        cursor.execute(sql, params)
        while batch := cursor.fetchmany(size):
            yield batch


def _path_fields(kind: TaskKind) -> list[Any]:
    """The kind's ratings as numbers read by the database at ``rating_paths``, one field per dimension."""
    return [Cast(KT("__".join(("value", *kind.rating_paths[d.name]))), FloatField()) for d in kind.rating_dimensions]


def _path_columns(batch: Sequence[tuple[Any, ...]], first: int, kind: TaskKind) -> dict[str, DimensionColumn]:
    """Per dimension, the batch's ratings from the path fields starting at column ``first`` (a value
    without the path has no rating there)."""
    numbers = np.asarray([row[first:] for row in batch], dtype=float).reshape(len(batch), -1)
    columns = {}
    for j, dimension in enumerate(kind.rating_dimensions):
        rated = np.flatnonzero(~np.isnan(numbers[:, j]))
        columns[dimension.name] = DimensionColumn(rows=rated, values=numbers[rated, j])
    return columns


def _visibility(judge_run_id: int | None) -> Any:
    """The column saying whether a rating's suggestion was visible: beside a judge run, unrecorded
    (None) for a rating made before the run's suggestion for its item existed, which could not have
    been shown, so the anchoring comparison leaves it out instead of counting it as hidden."""
    if judge_run_id is None:
        return F("suggestion_visible")
    return Case(
        When(suggestion_existed(run_id=judge_run_id), then=F("suggestion_visible")),
        default=Value(None),
        output_field=BooleanField(null=True),
    )


def _collect_annotations(
    collector: _Collector, project: Project, sources: Sequence[str] | None, judge_run_id: int | None = None
) -> None:
    kind = collector.kind
    latest = latest_annotations(project=project, sources=sources)
    visible = _visibility(judge_run_id)
    if kind.rating_paths:
        rows = latest.values_list("item_id", "rater", visible, *_path_fields(kind))
        for batch in _fetched(rows, BATCH):
            items, raters, visible = (list(column) for column in list(zip(*batch, strict=True))[:3])
            collector.add_columns(items, raters, visible, _path_columns(batch, 3, kind))
        return
    # The JSON comes as text and is decoded a batch at a time, not row by row.
    fields: list[Any] = ["item_id", "rater", Cast("value", TextField()), visible]
    if collector.kind.ratings_need_payload:
        fields.append(Cast("item__payload", TextField()))
    texts = latest.values_list(*fields).iterator(chunk_size=BATCH)
    for batch in _batched(texts, BATCH):
        columns = list(zip(*batch, strict=True))
        payloads = _decoded(columns[4]) if len(columns) > 4 else [None] * len(batch)
        collector.add(columns[0], columns[1], _decoded(columns[2]), columns[3], payloads)


def _collect_judge_run(collector: _Collector, project: Project, run_id: int) -> None:
    rater = judge_rater_name(run_id)
    kind = collector.kind
    if kind.rating_paths:
        rows = ok_suggestions(run_id=run_id).values_list("item_id", *_path_fields(kind))
        previous = None
        for batch in _fetched(rows, BATCH):
            items = np.asarray([row[0] for row in batch], dtype=np.int64)
            # Rows come by item, newest first: an item's first row is its answer (as suggestion_values).
            first = np.flatnonzero(np.concatenate([[items[0] != previous], items[1:] != items[:-1]]))
            previous = items[-1]
            columns = _path_columns([batch[i] for i in first], 1, kind)
            collector.add_columns(items[first], [rater] * len(first), [None] * len(first), columns)
        return
    needs_payload = collector.kind.ratings_need_payload
    for batch in _batched(suggestion_values(run_id=run_id, as_text=True), BATCH):
        item_ids = [item_id for item_id, _ in batch]
        payloads: Sequence[dict | None]
        if needs_payload:
            found: dict[int, dict] = {}
            for start in range(0, len(item_ids), PARAMETERS):
                chunk = item_ids[start : start + PARAMETERS]
                found.update(Item.objects.filter(pk__in=chunk).values_list("pk", "payload"))
            payloads = [found[i] for i in item_ids]
        else:
            payloads = [None] * len(batch)
        values = _decoded([value for _, value in batch])
        collector.add(item_ids, [rater] * len(batch), values, [None] * len(batch), payloads)


def annotation_ratings(*, project: Project, sources: Sequence[str] | None = None) -> RatingSet:
    """Ratings from each rater's latest annotation of each item (web, API and imported alike).

    ``sources`` keeps only latest versions from those sources (``Annotation.Source`` values); an
    imported label later edited in the browser counts as the edit.
    """
    collector = _Collector(project.task_kind)
    _collect_annotations(collector, project, sources)
    return collector.finish(project)


def judge_run_ratings(*, project: Project, run_id: int) -> RatingSet:
    """Ratings from a judge run alone, the run being one rater (``judge_rater_name``)."""
    collector = _Collector(project.task_kind)
    _collect_judge_run(collector, project, run_id)
    return collector.finish(project)


def project_ratings(
    *,
    project: Project,
    judge_run_id: int | None = None,
    sources: Sequence[str] | None = None,
    judge_run_ids: Sequence[int] = (),
) -> RatingSet:
    """People's ratings and, when asked, a judge run's (or several runs') as more raters, on shared units."""
    collector = _Collector(project.task_kind)
    _collect_annotations(collector, project, sources, judge_run_id)
    for run_id in (*(() if judge_run_id is None else (judge_run_id,)), *judge_run_ids):
        _collect_judge_run(collector, project, run_id)
    return collector.finish(project)
