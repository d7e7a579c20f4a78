"""Coding ratings: a units x raters matrix (or long-format records) checked and turned into category
codes, with the per-unit counts every measure shares."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from validation.agreement.measures import LEVELS, Level
from validation.agreement.results import NOT_IN_CATEGORIES

Value = str | float | int | None


class Rating(NamedTuple):
    """One rating in long format. ``value`` ``None`` means the rater saw the unit but gave no value."""

    unit: Hashable
    rater: Hashable
    value: Value


@dataclass(frozen=True, kw_only=True)
class DimensionInput:
    """One dimension's ratings for :func:`joint_agreement`.

    Attributes
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Every dimension given together has the same units (rows) and raters (columns); None or NaN
        is a missing rating.
    level : {'nominal', 'ordinal', 'interval'}
    categories : sequence, optional
        The fixed scale in order (e.g. 0, 1, 2). Unobserved categories then still count for the
        weighted kappas and the confusion matrices; a rating outside them is an error.
    """

    ratings: npt.ArrayLike
    level: Level
    categories: Sequence[Any] = ()


class Coded:
    """Ratings as category codes: ``codes[i, j]`` indexes ``domain``, NaN when missing.

    The per-unit category counts and agreeing-pair counts are computed once; a resample
    (:meth:`take`) slices them instead of recounting, which is what keeps a 1,000-resample
    bootstrap over 100,000 units within seconds.
    """

    def __init__(
        self,
        codes: npt.NDArray[np.float64] | None,
        domain: npt.NDArray[Any],
        level: Level,
        *,
        parent: Coded | None = None,
        rows: npt.NDArray[np.intp] | None = None,
    ) -> None:
        self.domain = domain
        self.level = level
        self._parent = parent
        self._rows = rows
        # Intermediate results several measures share (the majority pairs, the correlation inputs).
        self.memo: dict[Hashable, Any] = {}
        if codes is not None:
            self.codes = codes

    def take(self, rows: npt.NDArray[np.intp]) -> Coded:
        return Coded(None, self.domain, self.level, parent=self, rows=rows)

    @cached_property
    def codes(self) -> npt.NDArray[np.float64]:
        assert self._parent is not None and self._rows is not None
        return self._parent.codes[self._rows]

    @cached_property
    def n_raters(self) -> int:
        return self._parent.n_raters if self._parent is not None else int(self.codes.shape[1])

    @cached_property
    def n_units(self) -> int:
        return len(self._rows) if self._rows is not None else int(self.codes.shape[0])

    @cached_property
    def counts(self) -> npt.NDArray[np.int64]:
        """Units x categories: how many raters put each unit in each category."""
        if self._parent is not None:
            return self._parent.counts[self._rows]
        # A small integer type: resamples gather these rows, and narrower rows gather faster.
        dtype = np.int16 if self.n_raters < np.iinfo(np.int16).max else np.int64
        k = len(self.domain)
        rows, cols = np.nonzero(~np.isnan(self.codes))
        flat = rows * k + self.codes[rows, cols].astype(np.intp)
        return np.bincount(flat, minlength=self.n_units * k).reshape(self.n_units, k).astype(dtype)

    @cached_property
    def rated(self) -> npt.NDArray[np.int64]:
        """Ratings per unit."""
        if self._parent is not None:
            return self._parent.rated[self._rows]
        return self.counts.sum(axis=1, dtype=np.int64)

    @cached_property
    def agreeing_pairs(self) -> npt.NDArray[np.int64]:
        """Ordered pairs of raters who agree, per unit: sum_j n_ij (n_ij - 1)."""
        if self._parent is not None:
            return self._parent.agreeing_pairs[self._rows]
        counts = self.counts.astype(np.int64)
        return (counts * (counts - 1)).sum(axis=1)

    @property
    def values(self) -> npt.NDArray[np.float64]:
        """The numeric ratings (ordinal and interval levels only), NaN when missing."""
        out = np.full(self.codes.shape, np.nan)
        present = ~np.isnan(self.codes)
        out[present] = self.domain.astype(float)[self.codes[present].astype(np.intp)]
        return out


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float | np.floating) and math.isnan(value))


def checked_value(value: object, level: Level, where: str) -> Value:
    """The value if it is a valid rating at ``level``, None if missing; ValueError otherwise."""
    if _is_missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        # True == 1 would silently merge with the category 1.
        raise ValueError(f"{where}: booleans are not ratings; use 0/1 or strings")
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return number
    if isinstance(value, str):
        if level != "nominal":
            raise ValueError(f"{where}: level {level!r} needs numeric ratings; got {value!r}")
        if value == "":
            raise ValueError(f"{where}: an empty string is not a category; use None for a missing rating")
        return value
    raise ValueError(f"{where}: a rating must be a string or a real number; got {type(value).__name__}")


def _domain(present: Sequence[Value], categories: Sequence[Any]) -> npt.NDArray[Any]:
    kinds = {isinstance(v, str) for v in present} | {isinstance(c, str) for c in categories}
    if len(kinds) > 1:
        raise ValueError("ratings mix strings and numbers; a dimension needs one kind")
    if categories:
        # The given order is the scale's order; strings keep it, numbers are sorted by value.
        if kinds == {True}:
            return np.array(list(dict.fromkeys(categories)), dtype=object)
        return np.unique(np.asarray(categories, dtype=float))
    if kinds == {True}:
        return np.array(sorted(cast("set[str]", set(present))), dtype=object)
    return np.unique(np.asarray(present, dtype=float))


def _code(values: Sequence[Value], shape: tuple[int, int], level: Level, categories: Sequence[Any] = ()) -> Coded:
    present = [v for v in values if v is not None]
    domain = _domain(present, categories)
    index = {v: i for i, v in enumerate(domain.tolist())}
    codes = np.full(len(values), np.nan)
    for position, value in enumerate(values):
        if value is None:
            continue
        code = index.get(value)
        if code is None:
            where = f"ratings[{position // shape[1]}, {position % shape[1]}]"
            raise ValueError(NOT_IN_CATEGORIES.format(where=where, value=value, categories=list(categories)))
        codes[position] = code
    return Coded(codes.reshape(shape), domain, level)


def _coded_numeric(array: npt.NDArray[Any], level: Level, categories: Sequence[Any]) -> Coded:
    """Vectorised coding of a numeric array: the path large projects take."""
    values = array.astype(float)
    present = ~np.isnan(values)
    infinite = present & ~np.isfinite(values)
    if infinite.any():
        i, j = np.argwhere(infinite)[0]
        raise ValueError(f"ratings[{i}, {j}]: {values[i, j]!r} is not a finite number")
    if categories:
        domain = _domain([], categories)
        if domain.dtype == object:
            raise ValueError("ratings mix strings and numbers; a dimension needs one kind")
        found = np.searchsorted(domain, values[present])
        found = np.minimum(found, len(domain) - 1)
        outside = domain[found] != values[present]
        if outside.any():
            i, j = np.argwhere(present)[np.flatnonzero(outside)[0]]
            where = f"ratings[{i}, {j}]"
            raise ValueError(NOT_IN_CATEGORIES.format(where=where, value=values[i, j], categories=list(categories)))
        inverse = found
    else:
        domain, inverse = np.unique(values[present], return_inverse=True)
    codes = np.full(values.shape, np.nan)
    codes[present] = inverse
    return Coded(codes, domain, level)


def coded_from_array(ratings: npt.ArrayLike, level: Level, categories: Sequence[Any] = ()) -> Coded:
    array = np.asarray(ratings)
    if array.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units x raters); got {array.ndim} dimension(s)")
    if array.dtype.kind == "b":
        raise ValueError("ratings[0, 0]: booleans are not ratings; use 0/1 or strings")
    if array.dtype.kind in "fiu":
        return _coded_numeric(array, level, categories)
    array = array.astype(object)
    n_units, n_raters = array.shape
    values = [checked_value(array[i, j], level, f"ratings[{i}, {j}]") for i in range(n_units) for j in range(n_raters)]
    return _code(values, (n_units, n_raters), level, categories)


@dataclass(frozen=True)
class RatingsTable:
    coded: Coded
    units: tuple[Hashable, ...]
    raters: tuple[Hashable, ...]
    n_ratings: int


def table_from_records(records: Iterable[Rating | tuple[Hashable, Hashable, Value]], level: Level) -> RatingsTable:
    cells: dict[tuple[Hashable, Hashable], Value] = {}
    seen: set[tuple[Hashable, Hashable]] = set()
    for position, record in enumerate(records):
        try:
            unit, rater, raw = record
        except (TypeError, ValueError):
            raise ValueError(f"record {position}: expected (unit, rater, value); got {record!r}") from None
        key = (unit, rater)
        if key in seen:
            raise ValueError(f"record {position}: unit {unit!r} already has a rating by rater {rater!r}")
        seen.add(key)
        value = checked_value(raw, level, f"record {position} (unit {unit!r}, rater {rater!r})")
        if value is not None:
            cells[key] = value
    # dict.fromkeys keeps first-appearance order, so output order follows the input.
    units = tuple(dict.fromkeys(u for u, _ in cells))
    raters = tuple(dict.fromkeys(r for _, r in cells))
    row = {u: i for i, u in enumerate(units)}
    col = {r: j for j, r in enumerate(raters)}
    grid: list[Value] = [None] * (len(units) * len(raters))
    for (unit, rater), value in cells.items():
        grid[row[unit] * len(raters) + col[rater]] = value
    return RatingsTable(_code(grid, (len(units), len(raters)), level), units, raters, len(cells))


def level_iv(level: object) -> Level:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return cast(Level, level)  # one of LEVELS
