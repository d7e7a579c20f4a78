"""Inter-rater agreement: pure functions over rating arrays and long-format records.

Every coefficient comes from a maintained library; this module only shapes the data, guards the
degenerate cases and bootstraps:

- Cohen's kappa (unweighted, linear, quadratic): ``statsmodels.stats.inter_rater.cohens_kappa``.
- Fleiss' kappa: ``statsmodels.stats.inter_rater.fleiss_kappa`` on the subjects x categories table
  that ``aggregate_raters`` builds.
- Krippendorff's alpha (nominal, ordinal, interval; missing values allowed): ``krippendorff.alpha``.
- Spearman's rho and Kendall's tau-b: ``scipy.stats.spearmanr`` and ``scipy.stats.kendalltau``.
- Percent agreement: no library offers it for incomplete data; its one-line definition is in
  :func:`percent_agreement`. Likewise the mean rating (:func:`mean_rating`) and the IntentGrasp
  random-guess F1 (:func:`random_guess_f1`), which are averages.

A coefficient that the data cannot define (a single rater, no unit with two ratings, every rating in
one category ...) is ``None`` with a ``reason``: never NaN, never an exception. Bad *arguments*
(an unknown level, a string rating at the interval level, a duplicate rating) raise ``ValueError``.

Conventions
-----------
- A *ratings array* is 2-D, units in rows and raters in columns; ``None`` or NaN is a missing rating.
- A *record* is ``(unit, rater, value)`` (e.g. :class:`Rating`); ``value`` ``None`` or NaN is missing.
- The scale is the set of observed values, or the categories given (a task kind's fixed scale, so
  that weights and matrices keep categories nobody used). ``ordinal`` and ``interval`` need real
  numbers; ``nominal`` takes strings or numbers (not both in one dimension).
- Units with no rating at all and raters who gave none are left out: they carry no information for
  any coefficient, and counting them would only change what "complete data" means.
- A *reference* rater (an LLM judge) is compared with the others: Spearman and Kendall between the
  mean of the others and the reference, Cohen's kappa between the others' majority and the
  reference. Whether it also counts as a rater in the agreement coefficients is an option.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import os
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, NamedTuple, get_args

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.stats import inter_rater

__all__ = [
    "LEVELS",
    "AgreementResult",
    "BootstrapSettings",
    "CohenKappa",
    "ConfidenceInterval",
    "ConfusionMatrix",
    "CorrelationResult",
    "DimensionAgreement",
    "DimensionInput",
    "ExposureComparison",
    "JointAgreement",
    "Level",
    "Rating",
    "ReferenceAgreement",
    "cohen_kappa",
    "confusion_matrix",
    "dimension_agreement",
    "exposure_comparison",
    "fleiss_kappa",
    "joint_agreement",
    "krippendorff_alpha",
    "mean_rating",
    "percent_agreement",
    "percentile_interval",
    "random_guess_f1",
    "rank_correlation",
    "render_csv",
    "render_latex",
    "render_markdown",
]

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[str, ...] = get_args(Level)
Weighting = Literal["unweighted", "linear", "quadratic"]
WEIGHTINGS: tuple[str, ...] = get_args(Weighting)
CorrelationMethod = Literal["spearman", "kendall"]
CORRELATION_METHODS: tuple[str, ...] = get_args(CorrelationMethod)
Value = str | float | int | None

# Reasons a statistic is undefined; tests import them.
NO_PAIRABLE_UNITS = "no unit has ratings from at least two raters"
ONE_CATEGORY = "all ratings fall in one category, so chance agreement is 1 and the coefficient is undefined"
ONE_CATEGORY_ALPHA = "all pairable ratings fall in one category, so expected disagreement is 0 and alpha is undefined"
NEEDS_TWO_RATERS = "needs exactly 2 raters; found {n}"
NEEDS_RATERS = "needs at least 2 raters; found {n}"
INCOMPLETE = "needs complete data: {k} of {n} units lack a rating from at least one of the {m} raters"
NO_SHARED_UNITS = "no unit was rated by both raters"
NOMINAL_WEIGHTS = "weighted kappa needs ordered categories; the level is nominal"
NOMINAL_CORRELATION = "rank correlation needs an ordinal or interval level; the level is nominal"
NO_REFERENCE = "the reference rater {ref!r} has no rating in this dimension"
NO_OTHER_RATER = "there is no rater other than the reference"
TOO_FEW_PAIRS = "needs at least 3 units rated by the reference and by another rater; found {n}"
CONSTANT = "the {which} is constant over the paired units, so the correlation is undefined"
NO_RATINGS = "there are no ratings"
NO_MAJORITY_PAIRS = "no unit has both a reference rating and a majority among the other raters"
NO_EXPOSURE_PAIRS = "no rating made with the suggestion {which} has a reference rating to compare with"
NOT_IN_CATEGORIES = "{where}: {value!r} is not one of the categories {categories}"

PERCENTILE_METHOD = "percentile bootstrap over units (resampled with replacement)"

#: Threads for bootstrapping large data: NumPy and the libraries release the GIL inside their array
#: work, so resamples run side by side. Results do not depend on it (see ``_run``).
BOOTSTRAP_THREADS = min(8, os.cpu_count() or 1)
#: Below this many units a resample is too quick for threads to pay off.
THREADED_FROM_UNITS = 5_000


class Rating(NamedTuple):
    """One rating in long format. ``value`` ``None`` means the rater saw the unit but gave no value."""

    unit: Hashable
    rater: Hashable
    value: Value


class ConfidenceInterval(NamedTuple):
    low: float
    high: float


@dataclass(frozen=True, kw_only=True)
class AgreementResult:
    """One agreement coefficient (or another statistic of the ratings).

    Attributes
    ----------
    statistic : float or None
        The coefficient, or None when the data cannot define it (see ``reason``).
    confidence_interval : ConfidenceInterval or None
        Bootstrap percentile interval, when one was asked for and at least one resample defined it.
    n_units : int
        Units that entered the computation (e.g. units rated by both raters for Cohen's kappa).
    method : str
        What was computed and by which library function.
    reason : str or None
        Why ``statistic`` is None.
    n_resamples : int or None
        Bootstrap resamples behind ``confidence_interval`` (resamples where the coefficient is
        undefined are left out), or None without a bootstrap.
    """

    statistic: float | None
    confidence_interval: ConfidenceInterval | None = None
    n_units: int
    method: str
    reason: str | None = None
    n_resamples: int | None = None


@dataclass(frozen=True, kw_only=True)
class CorrelationResult(AgreementResult):
    """A rank correlation between the mean of the other raters and a reference rater.

    Attributes are those of :class:`AgreementResult` (``n_units`` counts the paired units), plus
    ``pvalue``, two-sided, from SciPy.
    """

    pvalue: float | None


@dataclass(frozen=True, kw_only=True)
class CohenKappa:
    unweighted: AgreementResult
    linear: AgreementResult
    quadratic: AgreementResult


@dataclass(frozen=True, kw_only=True)
class ReferenceAgreement:
    """The other raters' majority against the reference rater, over units where both exist.

    A unit whose other raters tie for the most frequent value has no majority and is left out.
    """

    percent_agreement: AgreementResult
    cohen_kappa: CohenKappa


@dataclass(frozen=True, kw_only=True)
class BootstrapSettings:
    n_resamples: int
    seed: int
    confidence_level: float
    method: str = PERCENTILE_METHOD


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


# -- coding ratings into a matrix ---------------------------------------------------------------


class _Coded:
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
        parent: _Coded | None = None,
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

    def take(self, rows: npt.NDArray[np.intp]) -> _Coded:
        return _Coded(None, self.domain, self.level, parent=self, rows=rows)

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


def _checked_value(value: object, level: Level, where: str) -> Value:
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
        return np.array(sorted(set(present)), dtype=object)
    return np.unique(np.asarray(present, dtype=float))


def _code(values: Sequence[Value], shape: tuple[int, int], level: Level, categories: Sequence[Any] = ()) -> _Coded:
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
    return _Coded(codes.reshape(shape), domain, level)


def _coded_numeric(array: npt.NDArray[Any], level: Level, categories: Sequence[Any]) -> _Coded:
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
    return _Coded(codes, domain, level)


def _coded_from_array(ratings: npt.ArrayLike, level: Level, categories: Sequence[Any] = ()) -> _Coded:
    array = np.asarray(ratings)
    if array.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units x raters); got {array.ndim} dimension(s)")
    if array.dtype.kind == "b":
        raise ValueError("ratings[0, 0]: booleans are not ratings; use 0/1 or strings")
    if array.dtype.kind in "fiu":
        return _coded_numeric(array, level, categories)
    array = array.astype(object)
    n_units, n_raters = array.shape
    values = [_checked_value(array[i, j], level, f"ratings[{i}, {j}]") for i in range(n_units) for j in range(n_raters)]
    return _code(values, (n_units, n_raters), level, categories)


@dataclass(frozen=True)
class _Table:
    coded: _Coded
    units: tuple[Hashable, ...]
    raters: tuple[Hashable, ...]
    n_ratings: int


def _table_from_records(records: Iterable[Rating | tuple[Hashable, Hashable, Value]], level: Level) -> _Table:
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
        value = _checked_value(raw, level, f"record {position} (unit {unit!r}, rater {rater!r})")
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
    return _Table(_code(grid, (len(units), len(raters)), level), units, raters, len(cells))


# -- the measures on coded matrices ---------------------------------------------------------------

_Estimate = tuple[float | None, int, str | None]  # statistic, n_units, reason
_CorrelationEstimate = tuple[float | None, float | None, int, str | None]  # statistic, p, n_units, reason


_BARE = threading.local()


def _quietly(compute: Callable[[], float]) -> tuple[float | None, str | None]:
    """Run a library call with its warnings caught; a non-finite result becomes None with a reason."""
    if getattr(_BARE, "on", False):
        # Inside a bootstrap worker: only the number matters, and catch_warnings is not thread-safe
        # (the caller silences warnings once, around all workers).
        with np.errstate(all="ignore"):
            value = float(compute())
        return (value, None) if math.isfinite(value) else (None, "undefined for these data")
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        value = float(compute())
    if math.isfinite(value):
        return value, None
    detail = "; ".join(sorted({str(w.message) for w in caught})) or "the library returned a non-finite value"
    return None, f"undefined for these data ({detail})"


def _percent_agreement(coded: _Coded) -> _Estimate:
    n_i = coded.rated
    pairable = n_i >= 2
    n_pairable = int(np.count_nonzero(pairable))
    if not n_pairable:
        return None, 0, NO_PAIRABLE_UNITS
    shares = coded.agreeing_pairs[pairable] / (n_i[pairable] * (n_i[pairable] - 1))
    return float(shares.mean()), n_pairable, None


def _fleiss(coded: _Coded) -> _Estimate:
    n_units, n_raters = coded.n_units, coded.n_raters
    if n_raters < 2:
        return None, 0, NEEDS_RATERS.format(n=n_raters)
    incomplete = int(np.count_nonzero(coded.rated < n_raters))
    if incomplete:
        return None, 0, INCOMPLETE.format(k=incomplete, n=n_units, m=n_raters)
    # The units x categories counts are the table aggregate_raters builds from complete data (a test
    # checks it); reusing them spares a recount per bootstrap resample.
    table = coded.counts
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return None, n_units, ONE_CATEGORY
    value, reason = _quietly(lambda: inter_rater.fleiss_kappa(table, method="fleiss"))
    return value, n_units, reason


def _kappa_scores(coded: _Coded) -> npt.NDArray[np.float64]:
    # Category scores: ranks at the ordinal level (as Stata's kap without `absolute` and R's irr::kappa2 do),
    # the values themselves at the interval level. statsmodels turns them into Cicchetti-Allison
    # (|s_i - s_j| / range) or Fleiss-Cohen ((s_i - s_j)^2 / range^2) disagreement weights.
    if coded.level == "ordinal":
        return np.arange(len(coded.domain), dtype=float)
    return coded.domain.astype(float)


def _kappa_from_pairs(
    first: npt.NDArray[np.intp], second: npt.NDArray[np.intp], coded: _Coded, weighting: Weighting
) -> _Estimate:
    """Cohen's kappa on the contingency table of paired category codes."""
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    k = len(coded.domain)
    table = np.bincount(first * k + second, minlength=k * k).reshape(k, k).astype(float)
    return _table_kappa(table, coded, weighting)


def _cohen(coded: _Coded, weighting: Weighting) -> _Estimate:
    n_raters = coded.n_raters
    if n_raters != 2:
        return None, 0, NEEDS_TWO_RATERS.format(n=n_raters)
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    shared = coded.rated == 2
    if not shared.any():
        return None, 0, NO_SHARED_UNITS
    first, second = coded.codes[shared].astype(np.intp).T
    return _kappa_from_pairs(first, second, coded, weighting)


def _alpha(coded: _Coded) -> _Estimate:
    counts = coded.counts
    pairable = coded.rated >= 2
    n_pairable = int(np.count_nonzero(pairable))
    if n_pairable == 0:
        return None, 0, NO_PAIRABLE_UNITS
    if np.count_nonzero(pairable.astype(np.int64) @ counts) < 2:
        return None, n_pairable, ONE_CATEGORY_ALPHA
    # Codes keep the order of the sorted domain, which is all the nominal and ordinal metrics use;
    # the interval metric needs the values. A fixed domain keeps bootstrap resamples on the full
    # data's scale. Units with fewer than two ratings add nothing to the coincidences, so all rows go
    # in as they are (filtering them would only cost a copy).
    domain = coded.domain.astype(float) if coded.level == "interval" else np.arange(len(coded.domain), dtype=float)
    value, reason = _quietly(
        lambda: krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=coded.level)
    )
    return value, n_pairable, reason


def _correlation(
    coded: _Coded, reference: int | None, method: CorrelationMethod, reference_name: Hashable = None
) -> _CorrelationEstimate:
    if coded.level == "nominal":
        return None, None, 0, NOMINAL_CORRELATION
    if reference is None:
        return None, None, 0, NO_REFERENCE.format(ref=reference_name)
    key = ("correlation-pairs", reference)
    if key not in coded.memo:
        values = coded.values
        others = np.delete(values, reference, axis=1)
        paired = ~np.isnan(values[:, reference]) & ~np.isnan(others).all(axis=1) if others.shape[1] else None
        coded.memo[key] = (
            (others.shape[1], None, None)
            if paired is None
            else (others.shape[1], np.nanmean(others[paired], axis=1), values[paired, reference])
        )
    n_others, mean_others, ref = coded.memo[key]
    if n_others == 0:
        return None, None, 0, NO_OTHER_RATER
    n = len(ref)
    if n < 3:
        return None, None, n, TOO_FEW_PAIRS.format(n=n)
    if np.ptp(mean_others) == 0:
        return None, None, n, CONSTANT.format(which="mean of the other raters")
    if np.ptp(ref) == 0:
        return None, None, n, CONSTANT.format(which="reference rating")
    test = stats.spearmanr if method == "spearman" else stats.kendalltau
    with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
        warnings.simplefilter("always")
        result = test(mean_others, ref)
    statistic, pvalue = float(result.statistic), float(result.pvalue)
    if not math.isfinite(statistic):
        return None, None, n, "undefined for these data (the library returned a non-finite value)"
    return statistic, (pvalue if math.isfinite(pvalue) else None), n, None


def _majority_pairs(
    coded: _Coded, reference: int | None
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], str | None]:
    """(majority code of the other raters, reference code) over units that have both."""
    key = ("majority-pairs", reference)
    if key not in coded.memo:
        coded.memo[key] = _compute_majority_pairs(coded, reference)
    return coded.memo[key]


def _compute_majority_pairs(
    coded: _Coded, reference: int | None
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], str | None]:
    empty = np.zeros(0, dtype=np.intp)
    if reference is None:
        return empty, empty, "no reference"
    if coded.n_raters < 2:
        return empty, empty, NO_OTHER_RATER
    ref = coded.codes[:, reference]
    has_ref = ~np.isnan(ref)
    others = coded.counts.copy()
    rows = np.flatnonzero(has_ref)
    others[rows, ref[rows].astype(np.intp)] -= 1
    top = others.max(axis=1)
    # A tie for the most frequent value is no majority: the unit is left out, not broken at random.
    unique_top = np.count_nonzero(others == top[:, None], axis=1) == 1
    usable = has_ref & (top > 0) & unique_top
    if not usable.any():
        return empty, empty, NO_MAJORITY_PAIRS
    return others[usable].argmax(axis=1).astype(np.intp), ref[usable].astype(np.intp), None


def _majority_agreement(coded: _Coded, reference: int | None, reference_name: Hashable = None) -> _Estimate:
    majority, ref, reason = _majority_pairs(coded, reference)
    if reason is not None:
        return None, 0, NO_REFERENCE.format(ref=reference_name) if reason == "no reference" else reason
    return float(np.mean(majority == ref)), len(ref), None


def _majority_kappa(
    coded: _Coded, reference: int | None, weighting: Weighting, reference_name: Hashable = None
) -> _Estimate:
    majority, ref, reason = _majority_pairs(coded, reference)
    if reason is not None:
        return None, 0, NO_REFERENCE.format(ref=reference_name) if reason == "no reference" else reason
    return _kappa_from_pairs(majority, ref, coded, weighting)


# -- public per-measure functions on ratings arrays ----------------------------------------------


def _level_iv(level: object) -> Level:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return level  # type: ignore[return-value]


def percent_agreement(ratings: npt.ArrayLike) -> AgreementResult:
    """Mean pairwise percent agreement over units with at least two ratings.

    For unit *i* with :math:`n_i \\ge 2` ratings, of which :math:`n_{ij}` are in category *j*, the
    share of agreeing rater pairs is :math:`P_i = \\sum_j n_{ij}(n_{ij}-1) / (n_i(n_i-1))`; the result
    is the unweighted mean of :math:`P_i` over those units. Agreement means identical values, at
    every level. With complete data this is Fleiss' (1971) :math:`\\bar P`, and with
    two raters the share of units on which they agree.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings (strings or numbers); None or NaN for a missing rating.

    Returns
    -------
    AgreementResult
        ``statistic`` in [0, 1], or None when no unit has two ratings.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin*, 76(5), 378-382.
    """
    statistic, n_units, reason = _percent_agreement(_coded_from_array(ratings, "nominal"))
    return AgreementResult(statistic=statistic, n_units=n_units, method=_METHODS["percent_agreement"], reason=reason)


def _cohen_kappa_iv(ratings: npt.ArrayLike, weights: object, level: object) -> tuple[_Coded, Weighting]:
    level = _level_iv(level)
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}; got {weights!r}")
    if weights != "unweighted" and level == "nominal":
        raise ValueError(f"{weights} weights need level 'ordinal' or 'interval'")
    coded = _coded_from_array(ratings, level)
    if coded.codes.shape[1] != 2:
        raise ValueError(f"Cohen's kappa needs exactly 2 raters (columns); got {coded.codes.shape[1]}")
    return coded, weights  # type: ignore[return-value]


def cohen_kappa(
    ratings: npt.ArrayLike, *, weights: Weighting = "unweighted", level: Level = "nominal"
) -> AgreementResult:
    """Cohen's kappa for two raters, unweighted or with linear or quadratic weights.

    Computed by ``statsmodels.stats.inter_rater.cohens_kappa`` on the two raters' contingency table
    over the units both rated: :math:`\\kappa_w = 1 - \\sum w_{ij} p_{ij} / \\sum w_{ij} e_{ij}` with
    disagreement weights :math:`w_{ij} = |s_i - s_j| / (s_{max} - s_{min})` (linear,
    Cicchetti-Allison) or its square (quadratic, Fleiss-Cohen). The category scores :math:`s` are the
    ranks of the observed values at the ordinal level and the values themselves at the interval level.

    Parameters
    ----------
    ratings : array_like, shape (n_units, 2)
        Ratings of the two raters; None or NaN for a missing rating.
    weights : {'unweighted', 'linear', 'quadratic'}
    level : {'nominal', 'ordinal', 'interval'}
        Weighted kappa needs ``'ordinal'`` or ``'interval'``.

    Returns
    -------
    AgreementResult
        None with a reason when no unit has both ratings or both raters used one and the same
        category throughout.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
    Measurement*, 20(1), 37-46.
    Cohen, J. (1968). Weighted kappa. *Psychological Bulletin*, 70(4), 213-220.
    Fleiss, J. L., & Cohen, J. (1973). The equivalence of weighted kappa and the intraclass
    correlation coefficient as measures of reliability. *Educational and Psychological Measurement*,
    33(3), 613-619.
    """
    coded, weighting = _cohen_kappa_iv(ratings, weights, level)
    statistic, n_units, reason = _cohen(coded, weighting)
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=_METHODS[f"cohen_kappa.{weighting}"], reason=reason
    )


def fleiss_kappa(ratings: npt.ArrayLike) -> AgreementResult:
    """Fleiss' kappa for two or more raters, on complete data.

    Computed by ``statsmodels.stats.inter_rater.fleiss_kappa`` (``method='fleiss'``) on the
    units x categories counts from ``aggregate_raters``: :math:`\\kappa = (\\bar P - \\bar P_e) /
    (1 - \\bar P_e)` with :math:`\\bar P_e = \\sum_j p_j^2` (Fleiss 1971).

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings; None or NaN for a missing rating.

    Returns
    -------
    AgreementResult
        None with a reason when fewer than two raters, when any unit lacks a rating from some rater
        (Fleiss' formula assumes the same number of ratings per unit), or when every rating is in
        one category.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin*, 76(5), 378-382.
    """
    statistic, n_units, reason = _fleiss(_coded_from_array(ratings, "nominal"))
    return AgreementResult(statistic=statistic, n_units=n_units, method=_METHODS["fleiss_kappa"], reason=reason)


def krippendorff_alpha(ratings: npt.ArrayLike, *, level: Level) -> AgreementResult:
    """Krippendorff's alpha at the nominal, ordinal or interval level; missing ratings allowed.

    Computed by ``krippendorff.alpha`` from the raters x units reliability data:
    :math:`\\alpha = 1 - D_o / D_e` over the coincidence matrix of pairable values (Krippendorff 2011).
    Strings are coded as categories (nominal only); the ordinal metric uses the
    ranks of the sorted observed values and their frequencies, the interval metric the values.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Ratings; None or NaN for a missing rating.
    level : {'nominal', 'ordinal', 'interval'}

    Returns
    -------
    AgreementResult
        ``n_units`` counts pairable units (two or more ratings). None with a reason when no unit is
        pairable or every pairable rating is in one category.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication Departmental Papers 43, University of Pennsylvania.
    """
    level = _level_iv(level)
    statistic, n_units, reason = _alpha(_coded_from_array(ratings, level))
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=_METHODS["krippendorff_alpha"].format(level=level), reason=reason
    )


def rank_correlation(
    ratings: npt.ArrayLike, *, reference: int, method: CorrelationMethod = "spearman"
) -> CorrelationResult:
    """Rank correlation between the mean of the other raters and a reference rater.

    Over units rated by the reference and by at least one other rater, correlates the mean of the
    other raters' values with the reference's value: Spearman's rho (``scipy.stats.spearmanr``;
    p-value from the t distribution with n - 2 df) or Kendall's tau-b (``scipy.stats.kendalltau``,
    which corrects for ties; exact p-value for small samples without ties, else the normal
    approximation).

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Numeric ratings; None or NaN for a missing rating.
    reference : int
        Column of the reference rater (e.g. an LLM judge).
    method : {'spearman', 'kendall'}

    Returns
    -------
    CorrelationResult
        None with a reason for fewer than 3 paired units or a constant side.

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association between two things. *American
    Journal of Psychology*, 15(1), 72-101.
    Kendall, M. G. (1945). The treatment of ties in ranking problems. *Biometrika*, 33(3), 239-251.
    """
    if method not in CORRELATION_METHODS:
        raise ValueError(f"method must be one of {', '.join(CORRELATION_METHODS)}; got {method!r}")
    coded = _coded_from_array(ratings, "interval")
    if not isinstance(reference, int | np.integer) or not 0 <= reference < coded.codes.shape[1]:
        raise ValueError(f"reference must be a column index in [0, {coded.codes.shape[1]}); got {reference!r}")
    has_rating = not np.isnan(coded.codes[:, reference]).all()
    statistic, pvalue, n, reason = _correlation(
        coded, int(reference) if has_rating else None, method, reference_name=int(reference)
    )
    return CorrelationResult(statistic=statistic, pvalue=pvalue, n_units=n, method=_METHODS[method], reason=reason)


@dataclass(frozen=True, kw_only=True)
class ConfusionMatrix:
    """Counts of rating pairs: ``counts[i][j]`` pairs with the row value ``categories[i]`` and the
    column value ``categories[j]``.

    ``rows`` and ``columns`` say whose ratings they are: two raters; the majority of the other raters
    and the reference; or, with more than two raters, every ordered pair of different raters on a
    unit (so the matrix is symmetric and each unordered pair counts twice).
    """

    categories: tuple[Any, ...]
    counts: tuple[tuple[int, ...], ...]
    rows: str
    columns: str
    n_pairs: int


def confusion_matrix(
    ratings: npt.ArrayLike,
    *,
    level: Level = "nominal",
    reference: int | None = None,
    categories: Sequence[Any] = (),
    raters: Sequence[str] = (),
) -> ConfusionMatrix:
    """The matrix of paired ratings behind a kappa.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        None or NaN for a missing rating.
    level : {'nominal', 'ordinal', 'interval'}
    reference : int, optional
        Column of a reference rater: rows are then the other raters' majority (units where they tie
        are left out) and columns the reference.
    categories : sequence, optional
        Rows and columns in this order, unobserved ones included; default the observed values.
    raters : sequence of str, optional
        Rater names for the ``rows`` and ``columns`` labels.

    Returns
    -------
    ConfusionMatrix
    """
    level = _level_iv(level)
    coded = _coded_from_array(ratings, level, categories)
    names = list(raters) or [f"rater {j + 1}" for j in range(coded.n_raters)]
    k = len(coded.domain)
    if reference is not None:
        if not 0 <= reference < coded.n_raters:
            raise ValueError(f"reference must be a column index in [0, {coded.n_raters}); got {reference!r}")
        majority, ref, _ = _majority_pairs(coded, reference)
        table = np.bincount(majority * k + ref, minlength=k * k).reshape(k, k)
        rows, columns = "majority of the other raters", names[reference]
    elif coded.n_raters == 2:
        shared = coded.rated == 2
        first, second = coded.codes[shared].astype(np.intp).T
        table = np.bincount(first * k + second, minlength=k * k).reshape(k, k)
        rows, columns = names[0], names[1]
    else:
        counts = coded.counts
        table = counts.T @ counts - np.diag(counts.sum(axis=0))
        rows = columns = "every ordered pair of raters on a unit"
    domain = tuple(v if isinstance(v, str) else _plain_number(v) for v in coded.domain.tolist())
    return ConfusionMatrix(
        categories=domain,
        counts=tuple(tuple(int(c) for c in row) for row in table),
        rows=rows,
        columns=columns,
        n_pairs=int(table.sum()),
    )


def _plain_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def mean_rating(
    ratings: npt.ArrayLike,
    *,
    mask: npt.ArrayLike | None = None,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
    method: str = "mean of the ratings",
) -> AgreementResult:
    """The mean of all ratings (e.g. a pass rate, or human F1), with a bootstrap CI over units.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Numeric ratings; None or NaN for a missing rating.
    mask : array_like of bool, same shape, optional
        Only these cells count (e.g. the failure category among Fail verdicts only).
    bootstrap, seed, confidence_level
        As for :func:`dimension_agreement`; units are resampled with their raters' ratings.
    method : str
        What the mean is, for the result's ``method``.

    Returns
    -------
    AgreementResult
        ``n_units`` counts units with at least one counted rating.
    """
    _bootstrap_iv(bootstrap, seed, confidence_level)
    values = np.asarray(ratings, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units x raters); got {values.ndim} dimension(s)")
    present = ~np.isnan(values)
    if mask is not None:
        present &= np.asarray(mask, dtype=bool)
    sums = np.where(present, values, 0.0).sum(axis=1)
    counted = present.sum(axis=1)
    units = counted > 0
    n_units = int(units.sum())
    if not n_units:
        return AgreementResult(statistic=None, n_units=0, method=method, reason=NO_RATINGS)
    sums, counted = sums[units], counted[units]
    statistic = float(sums.sum() / counted.sum())
    interval, n_used, settings = None, None, None
    if bootstrap:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        rng = np.random.default_rng(seed)
        draws = np.empty(bootstrap)
        for b in range(bootstrap):
            rows = rng.integers(0, n_units, size=n_units)
            draws[b] = sums[rows].sum() / counted[rows].sum()
        interval, n_used = percentile_interval(list(draws), settings), bootstrap
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=method, confidence_interval=interval, n_resamples=n_used
    )


def random_guess_f1(correct: npt.ArrayLike, options: npt.ArrayLike) -> AgreementResult:
    """Expected F1 of guessing one option at random, averaged over instances (IntentGrasp, App. A.3).

    A random single guess on an instance with ``v`` correct answers among ``u`` options is right
    with probability v/u, and then has precision 1 and recall 1/v, so F1 2/(1+v); otherwise F1 is 0.
    The baseline is :math:`\\frac{1}{N}\\sum_i (v_i/u_i) \\cdot 2/(1+v_i)`.

    Parameters
    ----------
    correct : array_like of int
        Correct answers per instance (v >= 1).
    options : array_like of int
        Options per instance (u >= v).

    Returns
    -------
    AgreementResult
        ``n_units`` is N, the number of instances.

    References
    ----------
    IntentGrasp (paper 002), Appendix A.3, "Estimated Random-Guess Performance": 15.2% on All Set.
    """
    v = np.asarray(correct, dtype=float)
    u = np.asarray(options, dtype=float)
    if v.shape != u.shape or v.ndim != 1:
        raise ValueError("correct and options must be 1-D and of one length")
    if np.any(v < 1) or np.any(u < v):
        raise ValueError("each instance needs 1 <= correct answers <= options")
    method = "random single-option guess: mean of (v/u) * 2/(1+v) over instances (IntentGrasp App. A.3)"
    if not len(v):
        return AgreementResult(statistic=None, n_units=0, method=method, reason=NO_RATINGS)
    return AgreementResult(statistic=float(np.mean(v / u * 2 / (1 + v))), n_units=len(v), method=method)


@dataclass(frozen=True, kw_only=True)
class ExposureComparison:
    """Agreement of raters with a reference (an LLM suggestion) when they could see it and when not.

    For each group, Cohen's kappa and percent agreement over the pooled (rating, reference) pairs;
    the differences are shown minus hidden, so anchoring shows as a positive difference.
    """

    kappa_shown: AgreementResult
    kappa_hidden: AgreementResult
    kappa_difference: AgreementResult
    agreement_shown: AgreementResult
    agreement_hidden: AgreementResult
    agreement_difference: AgreementResult
    n_pairs_shown: int
    n_pairs_hidden: int
    weighting: str
    bootstrap: BootstrapSettings | None = None


def exposure_comparison(
    ratings: npt.ArrayLike,
    reference: npt.ArrayLike,
    visible: npt.ArrayLike,
    *,
    level: Level,
    weighting: Weighting = "unweighted",
    categories: Sequence[Any] = (),
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> ExposureComparison:
    """Human-vs-reference agreement with the reference's suggestion shown vs hidden (anchoring).

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        The raters' ratings; None or NaN for missing.
    reference : array_like, shape (n_units,)
        The reference rating per unit (the LLM suggestion); None or NaN for none.
    visible : array_like, shape (n_units, n_raters)
        1 where the rater saw the suggestion, 0 where it was hidden, anything else for not recorded
        (those ratings are left out).
    level : {'nominal', 'ordinal', 'interval'}
    weighting : {'unweighted', 'linear', 'quadratic'}
        Kappa weights; weighted kappa needs an ordinal or interval level.
    categories : sequence, optional
        The fixed scale (see :class:`DimensionInput`).
    bootstrap, seed, confidence_level
        Units are resampled with all their pairs, so the two groups and their difference come from
        the same resamples; each pair's weight is its unit's multiplicity in the resample.

    Returns
    -------
    ExposureComparison

    Notes
    -----
    When exposure is randomised per (item, annotator), the difference estimates the suggestion's
    effect on agreement with it. Kappa here pools all raters' pairs into one rater-vs-reference
    table (Cohen 1960, 1968) computed by ``statsmodels.stats.inter_rater.cohens_kappa``.
    """
    level = _level_iv(level)
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}")
    _bootstrap_iv(bootstrap, seed, confidence_level)
    human = np.asarray(ratings)
    ref = np.asarray(reference).reshape(-1, 1)
    shown = np.asarray(visible)
    if human.ndim != 2 or ref.shape[0] != human.shape[0] or shown.shape != human.shape:
        raise ValueError("ratings (units x raters), reference (units) and visible (units x raters) must align")
    coded = _coded_from_array(np.hstack([human, ref]), level, categories)
    codes = coded.codes
    ref_codes = codes[:, -1]
    pair = ~np.isnan(codes[:, :-1]) & ~np.isnan(ref_codes)[:, None]
    groups = {"shown": pair & (shown == 1), "hidden": pair & (shown == 0)}
    k = len(coded.domain)
    unit_of, first, second, group_of = [], [], [], []
    for g, cells in enumerate(groups.values()):
        u, r = np.nonzero(cells)
        unit_of.append(u)
        first.append(codes[u, r].astype(np.intp))
        second.append(ref_codes[u].astype(np.intp))
        group_of.append(np.full(len(u), g))
    units = np.concatenate(unit_of)
    cell = np.concatenate(group_of) * k * k + np.concatenate(first) * k + np.concatenate(second)
    n_pairs = [int(np.count_nonzero(cells)) for cells in groups.values()]

    def estimate(weights: npt.NDArray[np.float64]) -> dict[str, float | None]:
        tables = np.bincount(cell, weights=weights, minlength=2 * k * k).reshape(2, k, k)
        out: dict[str, float | None] = {}
        for g, name in enumerate(groups):
            table = tables[g]
            total = table.sum()
            out[f"agreement_{name}"] = float(np.trace(table) / total) if total else None
            out[f"kappa_{name}"] = _table_kappa(table, coded, weighting)[0] if total else None
        for what in ("kappa", "agreement"):
            a, b = out[f"{what}_shown"], out[f"{what}_hidden"]
            out[f"{what}_difference"] = None if a is None or b is None else a - b
        return out

    point = estimate(np.ones(len(cell)))
    reasons = {
        "agreement_shown": None if n_pairs[0] else NO_EXPOSURE_PAIRS.format(which="shown"),
        "agreement_hidden": None if n_pairs[1] else NO_EXPOSURE_PAIRS.format(which="hidden"),
    }
    reasons["kappa_shown"] = reasons["agreement_shown"] or _table_kappa_reason(cell, 0, k, coded, weighting)
    reasons["kappa_hidden"] = reasons["agreement_hidden"] or _table_kappa_reason(cell, 1, k, coded, weighting)
    for what in ("kappa", "agreement"):
        reasons[f"{what}_difference"] = reasons[f"{what}_shown"] or reasons[f"{what}_hidden"]

    settings, intervals = None, {}
    if bootstrap and len(cell):
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        rng = np.random.default_rng(seed)
        n_units = human.shape[0]
        draws: dict[str, list[float]] = {key: [] for key, value in point.items() if value is not None}
        for _ in range(bootstrap):
            multiplicity = np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units)
            resample = estimate(multiplicity[units].astype(float))
            for key in draws:
                if resample[key] is not None:
                    draws[key].append(resample[key])  # type: ignore[arg-type]
        intervals = {key: (percentile_interval(values, settings), len(values)) for key, values in draws.items()}

    weight_name = "unweighted" if weighting == "unweighted" else f"{weighting} weights"

    def result(key: str) -> AgreementResult:
        n = n_pairs[0] if key.endswith("shown") else n_pairs[1] if key.endswith("hidden") else min(n_pairs)
        measure = "Cohen's kappa, " + weight_name if key.startswith("kappa") else "percent agreement"
        interval, used = intervals.get(key, (None, None))
        return AgreementResult(
            statistic=point[key],
            n_units=n,
            method=f"{measure} of ratings with the reference, suggestion {key.split('_')[1]}",
            reason=None if point[key] is not None else reasons[key] or "undefined for these data",
            confidence_interval=interval,
            n_resamples=used,
        )

    return ExposureComparison(
        **{key: result(key) for key in point},
        n_pairs_shown=n_pairs[0],
        n_pairs_hidden=n_pairs[1],
        weighting=weighting,
        bootstrap=settings,
    )


def _table_kappa(table: npt.NDArray[np.float64], coded: _Coded, weighting: Weighting) -> _Estimate:
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    if np.count_nonzero(table.sum(axis=0) + table.sum(axis=1)) < 2:
        return None, int(table.sum()), ONE_CATEGORY
    if weighting == "unweighted":
        value, reason = _quietly(lambda: inter_rater.cohens_kappa(table, return_results=False))
    else:
        scores = _kappa_scores(coded)
        value, reason = _quietly(
            lambda: inter_rater.cohens_kappa(table, weights=scores, wt=weighting, return_results=False)
        )
    return value, int(table.sum()), reason


def _table_kappa_reason(
    cell: npt.NDArray[np.intp], group: int, k: int, coded: _Coded, weighting: Weighting
) -> str | None:
    table = np.bincount(cell, minlength=2 * k * k).reshape(2, k, k)[group].astype(float)
    statistic, _, reason = _table_kappa(table, coded, weighting)
    return None if statistic is not None else reason or "undefined for these data"


def percentile_interval(values: Sequence[float], settings: BootstrapSettings) -> ConfidenceInterval | None:
    """The percentile interval of bootstrap draws (``numpy.quantile``, linear), None without draws."""
    if not len(values):
        return None
    tail = (1 - settings.confidence_level) / 2
    low, high = np.quantile(np.asarray(values, dtype=float), [tail, 1 - tail])
    return ConfidenceInterval(float(low), float(high))


_METHODS = {
    "percent_agreement": "mean pairwise percent agreement over units with >= 2 ratings",
    "cohen_kappa.unweighted": "Cohen's kappa (statsmodels.stats.inter_rater.cohens_kappa)",
    "cohen_kappa.linear": "Cohen's weighted kappa, linear weights (statsmodels.stats.inter_rater.cohens_kappa)",
    "cohen_kappa.quadratic": "Cohen's weighted kappa, quadratic weights (statsmodels.stats.inter_rater.cohens_kappa)",
    "fleiss_kappa": "Fleiss' kappa (statsmodels.stats.inter_rater.fleiss_kappa on aggregate_raters)",
    "krippendorff_alpha": "Krippendorff's alpha, {level} metric (krippendorff.alpha)",
    "spearman": "Spearman's rho, mean of the other raters vs the reference (scipy.stats.spearmanr)",
    "kendall": "Kendall's tau-b, mean of the other raters vs the reference (scipy.stats.kendalltau)",
    "majority_vs_reference.percent_agreement": (
        "percent agreement, majority of the other raters vs the reference (units where they tie left out)"
    ),
    "majority_vs_reference.cohen_kappa.unweighted": (
        "Cohen's kappa, majority of the other raters vs the reference (statsmodels cohens_kappa)"
    ),
    "majority_vs_reference.cohen_kappa.linear": (
        "Cohen's weighted kappa, linear weights, majority of the other raters vs the reference"
    ),
    "majority_vs_reference.cohen_kappa.quadratic": (
        "Cohen's weighted kappa, quadratic weights, majority of the other raters vs the reference"
    ),
}
MAJORITY_KEYS = (
    "majority_vs_reference.percent_agreement",
    *(f"majority_vs_reference.cohen_kappa.{w}" for w in WEIGHTINGS),
)


# -- one dimension, or several sharing units ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DimensionAgreement:
    """Every agreement measure for one dimension (one factor, label or verdict).

    ``cohen_kappa`` is None unless there are exactly two raters; ``spearman``, ``kendall`` and
    ``majority_vs_reference`` are None unless a reference rater was given. ``n_units``, ``n_raters``
    and ``n_ratings`` describe the ratings behind the agreement coefficients (without the reference
    when it is kept out of them). :meth:`to_json_dict` gives the ``agreement_stats`` shape.
    """

    level: Level
    n_units: int
    n_raters: int
    n_ratings: int
    percent_agreement: AgreementResult
    cohen_kappa: CohenKappa | None
    fleiss_kappa: AgreementResult
    krippendorff_alpha: AgreementResult
    reference: str | None = None
    reference_in_coefficients: bool = True
    spearman: CorrelationResult | None = None
    kendall: CorrelationResult | None = None
    majority_vs_reference: ReferenceAgreement | None = None
    bootstrap: BootstrapSettings | None = None
    raters: tuple[str, ...] = field(default=(), compare=False)

    def measures(self) -> dict[str, AgreementResult | CorrelationResult | None]:
        """Each measure under its JSON path (``cohen_kappa.linear`` ...), None where not computed."""
        out: dict[str, AgreementResult | CorrelationResult | None] = {"percent_agreement": self.percent_agreement}
        for weighting in WEIGHTINGS:
            out[f"cohen_kappa.{weighting}"] = getattr(self.cohen_kappa, weighting) if self.cohen_kappa else None
        out["fleiss_kappa"] = self.fleiss_kappa
        out["krippendorff_alpha"] = self.krippendorff_alpha
        if self.reference is not None:
            out["spearman"] = self.spearman
            out["kendall"] = self.kendall
            majority = self.majority_vs_reference
            out["majority_vs_reference.percent_agreement"] = majority.percent_agreement if majority else None
            for weighting in WEIGHTINGS:
                out[f"majority_vs_reference.cohen_kappa.{weighting}"] = (
                    getattr(majority.cohen_kappa, weighting) if majority else None
                )
        return out

    def notes(self) -> dict[str, str]:
        """Why each null value is null, keyed by its JSON path."""
        notes: dict[str, str] = {}
        if self.cohen_kappa is None:
            notes["cohen_kappa"] = NEEDS_TWO_RATERS.format(n=self.n_raters)
        else:
            _one_note(notes, "cohen_kappa", self.cohen_kappa)
        if self.majority_vs_reference is not None:
            _one_note(notes, "majority_vs_reference.cohen_kappa", self.majority_vs_reference.cohen_kappa)
        for key, result in self.measures().items():
            if result is None:
                continue
            if result.statistic is None:
                group = key.rsplit(".", 1)[0]
                if not (key.split(".")[-1] in WEIGHTINGS and group in notes):
                    notes[key] = result.reason or "undefined"
            elif self.bootstrap is not None:
                total = self.bootstrap.n_resamples
                if result.confidence_interval is None:
                    notes[f"ci.{key}"] = f"undefined in all {total} bootstrap resamples"
                elif result.n_resamples is not None and result.n_resamples < total:
                    notes[f"ci.{key}"] = f"from the {result.n_resamples} of {total} resamples where it is defined"
        return notes

    def to_json_dict(self) -> dict[str, Any]:
        """The ``agreement_stats`` JSON object for this dimension (DESIGN section 5), null for undefined."""
        out: dict[str, Any] = {
            "level": self.level,
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_ratings": self.n_ratings,
            "percent_agreement": self.percent_agreement.statistic,
            "cohen_kappa": _kappa_json(self.cohen_kappa, lambda r: r.statistic),
            "fleiss_kappa": self.fleiss_kappa.statistic,
            "krippendorff_alpha": self.krippendorff_alpha.statistic,
        }
        if self.reference is not None:
            majority = self.majority_vs_reference
            out["reference"] = self.reference
            out["reference_in_coefficients"] = self.reference_in_coefficients
            out["spearman"] = _correlation_json(self.spearman, "rho")
            out["kendall"] = _correlation_json(self.kendall, "tau")
            out["majority_vs_reference"] = (
                None
                if majority is None
                else {
                    "percent_agreement": majority.percent_agreement.statistic,
                    "cohen_kappa": _kappa_json(majority.cohen_kappa, lambda r: r.statistic),
                    "n": majority.percent_agreement.n_units,
                }
            )
        if self.bootstrap is not None:
            ci: dict[str, Any] = {
                "percent_agreement": _interval_json(self.percent_agreement),
                "cohen_kappa": _kappa_json(self.cohen_kappa, _interval_json),
                "fleiss_kappa": _interval_json(self.fleiss_kappa),
                "krippendorff_alpha": _interval_json(self.krippendorff_alpha),
            }
            if self.reference is not None:
                majority = self.majority_vs_reference
                ci["spearman"] = _interval_json(self.spearman)
                ci["kendall"] = _interval_json(self.kendall)
                ci["majority_vs_reference"] = (
                    None
                    if majority is None
                    else {
                        "percent_agreement": _interval_json(majority.percent_agreement),
                        "cohen_kappa": _kappa_json(majority.cohen_kappa, _interval_json),
                    }
                )
            out["ci"] = ci
            out["bootstrap"] = {
                "n_resamples": self.bootstrap.n_resamples,
                "seed": self.bootstrap.seed,
                "confidence_level": self.bootstrap.confidence_level,
                "method": self.bootstrap.method,
            }
        out["notes"] = self.notes()
        return out


def _one_note(notes: dict[str, str], key: str, kappa: CohenKappa) -> None:
    reasons = {getattr(kappa, w).reason for w in WEIGHTINGS}
    if len(reasons) == 1 and None not in reasons:
        # One data problem behind all three: say it once.
        notes[key] = reasons.pop()  # type: ignore[assignment]


def _kappa_json(kappa: CohenKappa | None, value: Callable[[AgreementResult], Any]) -> dict[str, Any] | None:
    return None if kappa is None else {w: value(getattr(kappa, w)) for w in WEIGHTINGS}


def _interval_json(result: AgreementResult | None) -> list[float] | None:
    return None if result is None or result.confidence_interval is None else list(result.confidence_interval)


def _correlation_json(result: CorrelationResult | None, name: str) -> dict[str, Any] | None:
    if result is None or result.statistic is None:
        return None
    return {name: result.statistic, "p": result.pvalue, "n": result.n_units}


@dataclass(frozen=True, kw_only=True)
class JointAgreement:
    """Agreement on several dimensions that share units (the six CoPA factors of one response).

    ``overall`` holds, for each measure defined on every dimension, the unweighted mean over the
    dimensions (CoPA's Table 7 "Overall" row is this mean); its interval comes from the same unit
    resamples as the dimensions' intervals, so it reflects their dependence.
    """

    dimensions: dict[str, DimensionAgreement]
    overall: dict[str, AgreementResult]
    bootstrap: BootstrapSettings | None = None


def _bootstrap_iv(bootstrap: object, seed: object, confidence_level: object) -> None:
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a non-negative integer (number of resamples); got {bootstrap!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    if (
        not isinstance(confidence_level, float | int)
        or isinstance(confidence_level, bool)
        or not 0 < confidence_level < 1
    ):
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")


def _dimension_agreement_iv(
    level: object, reference: object, bootstrap: object, seed: object, confidence_level: object
) -> Level:
    level = _level_iv(level)
    if reference is not None and not isinstance(reference, Hashable):
        raise ValueError(f"reference must be a rater id; got {reference!r}")
    _bootstrap_iv(bootstrap, seed, confidence_level)
    return level


_Measure = Callable[["_Coded", "_Coded"], tuple[Any, ...]]


@dataclass(frozen=True)
class _Prepared:
    """One dimension ready to measure.

    ``coefficients`` holds the ratings behind the agreement coefficients (the reference left out
    when asked), ``full`` every rater's; each keeps only its rated units and raters, and maps a
    shared unit index to its own rows (-1 where the unit has no rating there), so one resample of
    shared units serves every dimension.
    """

    level: Level
    coefficients: _Coded
    coefficient_rows: npt.NDArray[np.intp]
    full: _Coded
    full_rows: npt.NDArray[np.intp]
    raters: tuple[Hashable, ...]
    reference: int | None
    reference_label: str | None
    reference_in_coefficients: bool
    n_ratings: int

    def measures(self) -> dict[str, _Measure]:
        ref, name = self.reference, self.reference_label
        out: dict[str, _Measure] = {
            "percent_agreement": lambda c, f: _percent_agreement(c),
            "fleiss_kappa": lambda c, f: _fleiss(c),
            "krippendorff_alpha": lambda c, f: _alpha(c),
        }
        if self.coefficients.n_raters == 2:
            for weighting in WEIGHTINGS:
                out[f"cohen_kappa.{weighting}"] = lambda c, f, w=weighting: _cohen(c, w)
        if name is not None:
            for method in CORRELATION_METHODS:
                out[method] = lambda c, f, m=method: _correlation(f, ref, m, name)
            out["majority_vs_reference.percent_agreement"] = lambda c, f: _majority_agreement(f, ref, name)
            for weighting in WEIGHTINGS:
                out[f"majority_vs_reference.cohen_kappa.{weighting}"] = lambda c, f, w=weighting: _majority_kappa(
                    f, ref, w, name
                )
        return out

    def resample(self, units: npt.NDArray[np.intp]) -> tuple[_Coded, _Coded]:
        full_rows = self.full_rows[units]
        full = self.full.take(full_rows[full_rows >= 0])
        if self.coefficients is self.full:
            return full, full
        rows = self.coefficient_rows[units]
        return self.coefficients.take(rows[rows >= 0]), full


def _prepare(
    coded: _Coded, raters: Sequence[Hashable], reference: Hashable | None, reference_in_coefficients: bool
) -> _Prepared:
    """Keep the rated units and raters of one dimension's shared-units matrix."""
    present = ~np.isnan(coded.codes)
    n_shared = coded.n_units
    unit_rows = np.flatnonzero(present.any(axis=1))
    rater_cols = np.flatnonzero(present.any(axis=0))
    kept = tuple(raters[j] for j in rater_cols)
    full = _Coded(coded.codes[np.ix_(unit_rows, rater_cols)], coded.domain, coded.level)
    full_rows = np.full(n_shared, -1, dtype=np.intp)
    full_rows[unit_rows] = np.arange(len(unit_rows))
    ref = kept.index(reference) if reference is not None and reference in kept else None
    coefficients, coefficient_rows = full, full_rows
    if ref is not None and not reference_in_coefficients:
        others = np.delete(full.codes, ref, axis=1)
        rated = np.flatnonzero((~np.isnan(others)).any(axis=1))
        coefficients = _Coded(others[rated], coded.domain, coded.level)
        coefficient_rows = np.full(n_shared, -1, dtype=np.intp)
        coefficient_rows[unit_rows[rated]] = np.arange(len(rated))
    return _Prepared(
        level=coded.level,
        coefficients=coefficients,
        coefficient_rows=coefficient_rows,
        full=full,
        full_rows=full_rows,
        raters=kept,
        reference=ref,
        reference_label=None if reference is None else str(reference),
        reference_in_coefficients=reference_in_coefficients,
        n_ratings=int(np.count_nonzero(~np.isnan(coefficients.codes))),
    )


def _estimate_all(prepared: _Prepared, measures: Mapping[str, _Measure]) -> dict[str, AgreementResult]:
    results: dict[str, AgreementResult] = {}
    empty = prepared.coefficients.n_units == 0
    for key, measure in measures.items():
        if empty:
            estimate: tuple[Any, ...] = (
                (None, None, 0, NO_RATINGS) if key in CORRELATION_METHODS else (None, 0, NO_RATINGS)
            )
        else:
            estimate = measure(prepared.coefficients, prepared.full)
        method = _METHODS[key].format(level=prepared.level)
        if key in CORRELATION_METHODS:
            statistic, pvalue, n, reason = estimate
            results[key] = CorrelationResult(
                statistic=statistic, pvalue=pvalue, n_units=n, method=method, reason=reason
            )
        else:
            statistic, n, reason = estimate
            results[key] = AgreementResult(statistic=statistic, n_units=n, method=method, reason=reason)
    return results


def _assemble(prepared: _Prepared, results: Mapping[str, AgreementResult], settings: BootstrapSettings | None):
    two = prepared.coefficients.n_raters == 2
    cohen = CohenKappa(**{w: results[f"cohen_kappa.{w}"] for w in WEIGHTINGS}) if two else None
    majority = None
    if prepared.reference_label is not None:
        majority = ReferenceAgreement(
            percent_agreement=results["majority_vs_reference.percent_agreement"],
            cohen_kappa=CohenKappa(**{w: results[f"majority_vs_reference.cohen_kappa.{w}"] for w in WEIGHTINGS}),
        )
    coefficient_raters = tuple(
        str(r) for j, r in enumerate(prepared.raters) if prepared.reference_in_coefficients or j != prepared.reference
    )
    return DimensionAgreement(
        level=prepared.level,
        n_units=prepared.coefficients.n_units,
        n_raters=prepared.coefficients.n_raters,
        n_ratings=prepared.n_ratings,
        percent_agreement=results["percent_agreement"],
        cohen_kappa=cohen,
        fleiss_kappa=results["fleiss_kappa"],
        krippendorff_alpha=results["krippendorff_alpha"],
        reference=prepared.reference_label,
        reference_in_coefficients=prepared.reference_in_coefficients,
        spearman=results.get("spearman"),  # type: ignore[arg-type]
        kendall=results.get("kendall"),  # type: ignore[arg-type]
        majority_vs_reference=majority,
        bootstrap=settings,
        raters=coefficient_raters,
    )


def _run(
    prepared: Mapping[str, _Prepared],
    n_shared: int,
    *,
    bootstrap: int,
    seed: int,
    confidence_level: float,
) -> JointAgreement:
    measures = {name: p.measures() for name, p in prepared.items()}
    points = {name: _estimate_all(p, measures[name]) for name, p in prepared.items()}
    common = [key for key in next(iter(measures.values()), {}) if all(key in m for m in measures.values())]
    overall = {key: _mean_over(points, key) for key in common}

    settings = None
    if bootstrap > 0 and n_shared > 0:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        defined = {
            name: {k: m for k, m in measures[name].items() if points[name][k].statistic is not None}
            for name in prepared
        }
        overall_keys = [key for key in common if overall[key].statistic is not None]
        draws: dict[tuple[str | None, str], list[float]] = {
            (name, key): [] for name, keys in defined.items() for key in keys
        } | {(None, key): [] for key in overall_keys}

        def one(units: npt.NDArray[np.intp]) -> dict[str, dict[str, float | None]]:
            _BARE.on = True
            try:
                resampled: dict[str, dict[str, float | None]] = {}
                for name, p in prepared.items():
                    coefficients, full = p.resample(units)
                    resampled[name] = {key: measure(coefficients, full)[0] for key, measure in defined[name].items()}
                return resampled
            finally:
                _BARE.on = False

        for resampled in _resamples(one, n_shared, bootstrap, seed):
            for name, values in resampled.items():
                for key, statistic in values.items():
                    if statistic is not None:
                        draws[(name, key)].append(statistic)
            for key in overall_keys:
                values = [resampled[name].get(key) for name in prepared]
                if all(v is not None for v in values):
                    draws[(None, key)].append(float(np.mean(values)))  # type: ignore[arg-type]
        for (name, key), values in draws.items():
            target = points[name] if name is not None else overall
            target[key] = replace(
                target[key], confidence_interval=percentile_interval(values, settings), n_resamples=len(values)
            )

    return JointAgreement(
        dimensions={name: _assemble(p, points[name], settings) for name, p in prepared.items()},
        overall=overall,
        bootstrap=settings,
    )


def _resamples(
    compute: Callable[[npt.NDArray[np.intp]], dict[str, dict[str, float | None]]],
    n_units: int,
    n_resamples: int,
    seed: int,
) -> Iterable[dict[str, dict[str, float | None]]]:
    """``compute`` on each resample, in order.

    One draw of units per resample, shared by every measure and dimension, so the intervals are
    comparable and the overall mean's interval reflects the dimensions' dependence. The draws come
    from one generator in order and results are consumed in order, so the intervals are the same
    with or without threads.
    """
    rng = np.random.default_rng(seed)
    threads = BOOTSTRAP_THREADS if n_units >= THREADED_FROM_UNITS else 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if threads <= 1:
            for _ in range(n_resamples):
                yield compute(rng.integers(0, n_units, size=n_units))
            return
        batch = 4 * threads  # bounded: 1,000 index arrays of 100,000 units would not fit comfortably
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bootstrap") as pool:
            done = 0
            while done < n_resamples:
                size = min(batch, n_resamples - done)
                yield from pool.map(compute, [rng.integers(0, n_units, size=n_units) for _ in range(size)])
                done += size


def _mean_over(points: Mapping[str, Mapping[str, AgreementResult]], key: str) -> AgreementResult:
    results = [p[key] for p in points.values()]
    method = f"unweighted mean over {len(results)} dimensions of: " + (results[0].method if results else _METHODS[key])
    missing = [name for name, p in points.items() if p[key].statistic is None]
    if not results or missing:
        reason = NO_RATINGS if not results else f"undefined for {', '.join(map(str, missing))}"
        return AgreementResult(statistic=None, n_units=0, method=method, reason=reason)
    return AgreementResult(
        statistic=float(np.mean([r.statistic for r in results])),  # type: ignore[misc]
        n_units=max(r.n_units for r in results),
        method=method,
    )


def joint_agreement(
    dimensions: Mapping[str, DimensionInput],
    *,
    raters: Sequence[Hashable],
    reference: Hashable | None = None,
    reference_in_coefficients: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> JointAgreement:
    """All agreement measures for several dimensions rated on the same units by the same raters.

    Parameters
    ----------
    dimensions : mapping of str to DimensionInput
        Ratings arrays of one shape (shared units x shared raters), each with its level.
    raters : sequence of hashable
        The raters, one per column.
    reference : hashable, optional
        A rater (an LLM judge) to compare with the others: Spearman and Kendall against the mean of
        the others, percent agreement and Cohen's kappa against their majority.
    reference_in_coefficients : bool, default True
        Whether the reference also counts as a rater in percent agreement, Cohen's, Fleiss' kappa
        and alpha. False gives human-human coefficients beside human-reference comparisons.
    bootstrap, seed, confidence_level
        As for :func:`dimension_agreement`. Units (rows) are resampled once per resample for every
        dimension.

    Returns
    -------
    JointAgreement
    """
    _bootstrap_iv(bootstrap, seed, confidence_level)
    raters = list(raters)
    if len(set(raters)) != len(raters):
        raise ValueError("raters must be distinct")
    prepared: dict[str, _Prepared] = {}
    shape: tuple[int, ...] | None = None
    for name, spec in dimensions.items():
        level = _level_iv(spec.level)
        coded = _coded_from_array(spec.ratings, level, spec.categories)
        if shape is None:
            shape = coded.codes.shape
        if coded.codes.shape != shape:
            raise ValueError(f"dimension {name!r}: shape {coded.codes.shape} differs from {shape}")
        if coded.n_raters != len(raters):
            raise ValueError(f"dimension {name!r}: {coded.n_raters} columns but {len(raters)} raters")
        prepared[name] = _prepare(coded, raters, reference, reference_in_coefficients)
    n_shared = shape[0] if shape else 0
    return _run(prepared, n_shared, bootstrap=bootstrap, seed=seed, confidence_level=confidence_level)


def dimension_agreement(
    records: Iterable[Rating | tuple[Hashable, Hashable, Value]],
    *,
    level: Level,
    reference: Hashable | None = None,
    reference_in_coefficients: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> DimensionAgreement:
    """All agreement measures for one dimension of long-format ratings.

    Parameters
    ----------
    records : iterable of (unit, rater, value)
        One rating per (unit, rater); a value of None or NaN is a missing rating. Strings are allowed
        at the nominal level only.
    level : {'nominal', 'ordinal', 'interval'}
        Level of measurement: sets Krippendorff's metric and the Cohen weights (none at nominal).
    reference : hashable, optional
        A rater (e.g. an LLM judge) to correlate with the mean of the other raters (Spearman and
        Kendall) and to compare with their majority (percent agreement, Cohen's kappa).
    reference_in_coefficients : bool, default True
        Whether the reference also counts as a rater in the agreement coefficients.
    bootstrap : int, default 0
        Number of bootstrap resamples; 0 for no confidence intervals.
    seed : int, default 0
        Seed of the ``numpy.random.Generator`` drawing the resamples.
    confidence_level : float, default 0.95

    Returns
    -------
    DimensionAgreement

    Notes
    -----
    The bootstrap resamples units with replacement (all units with a rating, the raters' ratings of
    a unit staying together), recomputes every coefficient on each resample over the full data's
    scale, and reports the percentile interval (Efron & Tibshirani 1993, ch. 13) with
    ``numpy.quantile``'s default linear interpolation. Resamples where a coefficient is undefined
    are left out of its interval, and ``n_resamples`` says how many remained.

    References
    ----------
    Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
    """
    level = _dimension_agreement_iv(level, reference, bootstrap, seed, confidence_level)
    table = _table_from_records(records, level)
    prepared = _prepare(table.coded, table.raters, reference, reference_in_coefficients)
    joint = _run(
        {"value": prepared},
        table.coded.n_units,
        bootstrap=bootstrap,
        seed=seed,
        confidence_level=confidence_level,
    )
    return joint.dimensions["value"]


# -- renderers -------------------------------------------------------------------------------------

_COLUMNS = [
    ("percent_agreement", "% agr.", r"\% agr."),
    ("cohen_kappa.unweighted", "κ", r"$\kappa$"),
    ("cohen_kappa.linear", "κ lin.", r"$\kappa_{\mathrm{lin}}$"),
    ("cohen_kappa.quadratic", "κ quad.", r"$\kappa_{\mathrm{quad}}$"),
    ("fleiss_kappa", "Fleiss κ", r"Fleiss $\kappa$"),
    ("krippendorff_alpha", "α", r"$\alpha$"),
    ("spearman", "ρ", r"$\rho$"),
    ("kendall", "τ", r"$\tau$"),
    ("majority_vs_reference.percent_agreement", "% agr. maj.–ref.", r"\% agr.\ maj.--ref."),
    ("majority_vs_reference.cohen_kappa.unweighted", "κ maj.–ref.", r"$\kappa$ maj.--ref."),
    ("majority_vs_reference.cohen_kappa.linear", "κ lin. maj.–ref.", r"$\kappa_{\mathrm{lin}}$ maj.--ref."),
    ("majority_vs_reference.cohen_kappa.quadratic", "κ quad. maj.–ref.", r"$\kappa_{\mathrm{quad}}$ maj.--ref."),
]
_REFERENCE_KEYS = (*CORRELATION_METHODS, *MAJORITY_KEYS)


def _columns(results: Mapping[str, DimensionAgreement]) -> list[tuple[str, str, str]]:
    with_reference = any(d.reference is not None for d in results.values())
    return [c for c in _COLUMNS if with_reference or c[0] not in _REFERENCE_KEYS]


def _cell(result: AgreementResult | CorrelationResult | None, digits: int, dash: str) -> str:
    if result is None or result.statistic is None:
        return dash
    text = f"{result.statistic:.{digits}f}"
    if result.confidence_interval is not None:
        low, high = result.confidence_interval
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def render_markdown(results: Mapping[str, DimensionAgreement], *, digits: int = 3) -> str:
    """A Markdown table, one row per dimension; bracketed bootstrap CIs; notes below the table."""
    columns = _columns(results)
    header = ["Dimension", "Level", "Units", "Raters", "Ratings", *(md for _, md, _ in columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|"]
    for name, d in results.items():
        measures = d.measures()
        cells = [_md_escape(name), d.level, str(d.n_units), str(d.n_raters), str(d.n_ratings)]
        cells += [_cell(measures.get(key), digits, "—") for key, _, _ in columns]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {_md_escape(name)}, {key}: {why}" for name, d in results.items() for key, why in d.notes().items()]
    if notes:
        lines += ["", "Notes:", *notes]
    return "\n".join(lines) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", r"\|")


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def render_latex(results: Mapping[str, DimensionAgreement], *, digits: int = 3) -> str:
    """A booktabs ``tabular``, one row per dimension; reasons for empty cells as LaTeX comments."""
    columns = _columns(results)
    lines = [f"% {name}, {key}: {why}" for name, d in results.items() for key, why in d.notes().items()]
    lines += [
        r"\begin{tabular}{ll" + "r" * (3 + len(columns)) + "}",
        r"\toprule",
        " & ".join(["Dimension", "Level", "Units", "Raters", "Ratings", *(tex for _, _, tex in columns)]) + r" \\",
        r"\midrule",
    ]
    for name, d in results.items():
        measures = d.measures()
        cells = [_latex_escape(name), d.level, str(d.n_units), str(d.n_raters), str(d.n_ratings)]
        cells += [_cell(measures.get(key), digits, "--") for key, _, _ in columns]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


_CSV_NAMES = {"spearman": "spearman_rho", "kendall": "kendall_tau"}


def render_csv(results: Mapping[str, DimensionAgreement]) -> str:
    """CSV, one row per dimension and a fixed set of columns; full precision, empty cell for null."""
    keys = [key for key, _, _ in _COLUMNS]
    header = ["dimension", "level", "n_units", "n_raters", "n_ratings", "reference"]
    for key in keys:
        name = _CSV_NAMES.get(key, key.replace("majority_vs_reference.", "majority_").replace(".", "_"))
        header += [name, f"{name}_ci_low", f"{name}_ci_high"]
        if key in CORRELATION_METHODS:
            header += [f"{key}_p", f"{key}_n"]
    header += ["majority_n", "n_resamples", "seed", "notes"]

    def number(value: float | int | None) -> str:
        return "" if value is None else repr(value)

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for name, d in results.items():
        measures = d.measures()
        row = [name, d.level, d.n_units, d.n_raters, d.n_ratings, d.reference or ""]
        for key in keys:
            result = measures.get(key)
            interval = None if result is None else result.confidence_interval
            row += [
                number(None if result is None else result.statistic),
                number(None if interval is None else interval.low),
                number(None if interval is None else interval.high),
            ]
            if key in CORRELATION_METHODS:
                correlation = result if isinstance(result, CorrelationResult) else None
                row += [
                    number(None if correlation is None else correlation.pvalue),
                    number(None if correlation is None or correlation.statistic is None else correlation.n_units),
                ]
        majority = d.majority_vs_reference
        row += [
            number(
                None
                if majority is None or majority.percent_agreement.statistic is None
                else majority.percent_agreement.n_units
            ),
            number(None if d.bootstrap is None else d.bootstrap.n_resamples),
            number(None if d.bootstrap is None else d.bootstrap.seed),
            "; ".join(f"{key}: {why}" for key, why in d.notes().items()),
        ]
        writer.writerow(row)
    return buffer.getvalue()
