"""Inter-rater agreement: pure functions over rating arrays and long-format records.

Every coefficient comes from a maintained library; this module only shapes the data, guards the
degenerate cases and bootstraps:

- Cohen's kappa (unweighted, linear, quadratic): ``statsmodels.stats.inter_rater.cohens_kappa``.
- Fleiss' kappa: ``statsmodels.stats.inter_rater.fleiss_kappa`` on ``aggregate_raters``.
- Krippendorff's alpha (nominal, ordinal, interval; missing values allowed): ``krippendorff.alpha``.
- Spearman's rho and Kendall's tau-b: ``scipy.stats.spearmanr`` and ``scipy.stats.kendalltau``.
- Percent agreement: no library offers it for incomplete data; its one-line definition is in
  :func:`percent_agreement`.

A coefficient that the data cannot define (a single rater, no unit with two ratings, every rating in
one category ...) is ``None`` with a ``reason``: never NaN, never an exception. Bad *arguments*
(an unknown level, a string rating at the interval level, a duplicate rating) raise ``ValueError``.

Conventions
-----------
- A *ratings array* is 2-D, units in rows and raters in columns; ``None`` or NaN is a missing rating.
- A *record* is ``(unit, rater, value)`` (e.g. :class:`Rating`); ``value`` ``None`` or NaN is missing.
- The scale is the set of observed values. ``ordinal`` and ``interval`` need real numbers; ``nominal``
  takes strings or numbers (not both in one dimension).
- Units with no rating at all and raters who gave none are left out: they carry no information for
  any coefficient, and counting them would only change what "complete data" means.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
    "CorrelationResult",
    "DimensionAgreement",
    "Level",
    "Rating",
    "cohen_kappa",
    "dimension_agreement",
    "fleiss_kappa",
    "krippendorff_alpha",
    "percent_agreement",
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

PERCENTILE_METHOD = "percentile bootstrap over units (resampled with replacement)"


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
    """One agreement coefficient.

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
class BootstrapSettings:
    n_resamples: int
    seed: int
    confidence_level: float
    method: str = PERCENTILE_METHOD


# -- coding ratings into a matrix ---------------------------------------------------------------


@dataclass(frozen=True)
class _Coded:
    """Ratings as category codes: ``codes[i, j]`` indexes ``domain`` (sorted), NaN when missing."""

    codes: npt.NDArray[np.float64]
    domain: npt.NDArray[Any]
    level: Level

    def take(self, rows: npt.NDArray[np.intp]) -> _Coded:
        return _Coded(self.codes[rows], self.domain, self.level)

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


def _code(values: Sequence[Value], shape: tuple[int, int], level: Level) -> _Coded:
    present = [v for v in values if v is not None]
    kinds = {isinstance(v, str) for v in present}
    if len(kinds) > 1:
        raise ValueError("ratings mix strings and numbers; a dimension needs one kind")
    if kinds == {True}:
        domain: npt.NDArray[Any] = np.array(sorted(set(present)), dtype=object)
    else:
        domain = np.unique(np.asarray(present, dtype=float))
    index = {v: i for i, v in enumerate(domain.tolist())}
    codes = np.array([np.nan if v is None else index[v] for v in values], dtype=float).reshape(shape)
    return _Coded(codes, domain, level)


def _coded_from_array(ratings: npt.ArrayLike, level: Level) -> _Coded:
    array = np.asarray(ratings, dtype=object)
    if array.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units x raters); got {array.ndim} dimension(s)")
    n_units, n_raters = array.shape
    values = [_checked_value(array[i, j], level, f"ratings[{i}, {j}]") for i in range(n_units) for j in range(n_raters)]
    return _code(values, (n_units, n_raters), level)


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


def _quietly(compute: Callable[[], float]) -> tuple[float | None, str | None]:
    """Run a library call with its warnings caught; a non-finite result becomes None with a reason."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        value = float(compute())
    if math.isfinite(value):
        return value, None
    detail = "; ".join(sorted({str(w.message) for w in caught})) or "the library returned a non-finite value"
    return None, f"undefined for these data ({detail})"


def _category_counts(coded: _Coded) -> npt.NDArray[np.int_]:
    """Units x categories: how many raters put each unit in each category."""
    counts = np.zeros((coded.codes.shape[0], len(coded.domain)), dtype=int)
    rows, cols = np.nonzero(~np.isnan(coded.codes))
    np.add.at(counts, (rows, coded.codes[rows, cols].astype(np.intp)), 1)
    return counts


def _percent_agreement(coded: _Coded) -> _Estimate:
    counts = _category_counts(coded)
    n_i = counts.sum(axis=1)
    pairable = n_i >= 2
    if not pairable.any():
        return None, 0, NO_PAIRABLE_UNITS
    agreeing_pairs = (counts[pairable] * (counts[pairable] - 1)).sum(axis=1)
    all_pairs = n_i[pairable] * (n_i[pairable] - 1)
    return float(np.mean(agreeing_pairs / all_pairs)), int(pairable.sum()), None


def _fleiss(coded: _Coded) -> _Estimate:
    n_units, n_raters = coded.codes.shape
    if n_raters < 2:
        return None, 0, NEEDS_RATERS.format(n=n_raters)
    incomplete = int(np.isnan(coded.codes).any(axis=1).sum())
    if incomplete:
        return None, 0, INCOMPLETE.format(k=incomplete, n=n_units, m=n_raters)
    table, _ = inter_rater.aggregate_raters(coded.codes.astype(np.intp), n_cat=len(coded.domain))
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return None, n_units, ONE_CATEGORY
    value, reason = _quietly(lambda: inter_rater.fleiss_kappa(table, method="fleiss"))
    return value, n_units, reason


def _cohen(coded: _Coded, weighting: Weighting) -> _Estimate:
    n_raters = coded.codes.shape[1]
    if n_raters != 2:
        return None, 0, NEEDS_TWO_RATERS.format(n=n_raters)
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    shared = ~np.isnan(coded.codes).any(axis=1)
    n_shared = int(shared.sum())
    if n_shared == 0:
        return None, 0, NO_SHARED_UNITS
    first, second = coded.codes[shared].astype(np.intp).T
    k = len(coded.domain)
    table = np.zeros((k, k))
    np.add.at(table, (first, second), 1)
    if np.count_nonzero(table.sum(axis=0) + table.sum(axis=1)) < 2:
        return None, n_shared, ONE_CATEGORY
    if weighting == "unweighted":
        value, reason = _quietly(lambda: inter_rater.cohens_kappa(table, return_results=False))
    else:
        # Category scores: ranks at the ordinal level (as Stata's kap without `absolute` and R's irr::kappa2 do), the
        # values themselves at the interval level. statsmodels turns them into Cicchetti-Allison
        # (|s_i - s_j| / range) or Fleiss-Cohen ((s_i - s_j)^2 / range^2) disagreement weights.
        scores = np.arange(k, dtype=float) if coded.level == "ordinal" else coded.domain.astype(float)
        value, reason = _quietly(
            lambda: inter_rater.cohens_kappa(table, weights=scores, wt=weighting, return_results=False)
        )
    return value, n_shared, reason


def _alpha(coded: _Coded) -> _Estimate:
    present = ~np.isnan(coded.codes)
    pairable = present.sum(axis=1) >= 2
    n_pairable = int(pairable.sum())
    if n_pairable == 0:
        return None, 0, NO_PAIRABLE_UNITS
    if np.unique(coded.codes[pairable][present[pairable]]).size < 2:
        return None, n_pairable, ONE_CATEGORY_ALPHA
    if coded.level == "interval":
        data, domain = coded.values.T, coded.domain.astype(float)
    else:
        # Codes keep the order of the sorted domain, which is all the nominal and ordinal metrics use;
        # a fixed domain also keeps bootstrap resamples on the full data's scale.
        data, domain = coded.codes.T, np.arange(len(coded.domain), dtype=float)
    value, reason = _quietly(
        lambda: krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=coded.level)
    )
    return value, n_pairable, reason


def _correlation(
    coded: _Coded, reference: int | None, method: CorrelationMethod, reference_name: Hashable = None
) -> tuple[float | None, float | None, int, str | None]:
    if coded.level == "nominal":
        return None, None, 0, NOMINAL_CORRELATION
    if reference is None:
        return None, None, 0, NO_REFERENCE.format(ref=reference_name)
    values = coded.values
    ref = values[:, reference]
    others = np.delete(values, reference, axis=1)
    if others.shape[1] == 0:
        return None, None, 0, NO_OTHER_RATER
    paired = ~np.isnan(ref) & ~np.isnan(others).all(axis=1)
    n = int(paired.sum())
    if n < 3:
        return None, None, n, TOO_FEW_PAIRS.format(n=n)
    mean_others = np.nanmean(others[paired], axis=1)
    ref = ref[paired]
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


_METHODS = {
    "percent_agreement": "mean pairwise percent agreement over units with >= 2 ratings",
    "cohen_kappa.unweighted": "Cohen's kappa (statsmodels.stats.inter_rater.cohens_kappa)",
    "cohen_kappa.linear": "Cohen's weighted kappa, linear weights (statsmodels.stats.inter_rater.cohens_kappa)",
    "cohen_kappa.quadratic": "Cohen's weighted kappa, quadratic weights (statsmodels.stats.inter_rater.cohens_kappa)",
    "fleiss_kappa": "Fleiss' kappa (statsmodels.stats.inter_rater.fleiss_kappa on aggregate_raters)",
    "krippendorff_alpha": "Krippendorff's alpha, {level} metric (krippendorff.alpha)",
    "spearman": "Spearman's rho, mean of the other raters vs the reference (scipy.stats.spearmanr)",
    "kendall": "Kendall's tau-b, mean of the other raters vs the reference (scipy.stats.kendalltau)",
}


# -- one dimension from long-format records -------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DimensionAgreement:
    """Every agreement measure for one dimension (one factor, label or verdict).

    ``cohen_kappa`` is None unless there are exactly two raters; ``spearman`` and ``kendall`` are
    None unless a reference rater was given. :meth:`to_json_dict` gives the ``agreement_stats`` shape.
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
    spearman: CorrelationResult | None = None
    kendall: CorrelationResult | None = None
    bootstrap: BootstrapSettings | None = None

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
        return out

    def notes(self) -> dict[str, str]:
        """Why each null value is null, keyed by its JSON path."""
        notes: dict[str, str] = {}
        if self.cohen_kappa is None:
            notes["cohen_kappa"] = NEEDS_TWO_RATERS.format(n=self.n_raters)
        else:
            reasons = {getattr(self.cohen_kappa, w).reason for w in WEIGHTINGS}
            if len(reasons) == 1 and None not in reasons:
                # One data problem behind all three: say it once.
                notes["cohen_kappa"] = reasons.pop()  # type: ignore[assignment]
        for key, result in self.measures().items():
            if result is None:
                continue
            if result.statistic is None:
                if not (key.startswith("cohen_kappa.") and "cohen_kappa" in notes):
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
            "cohen_kappa": (
                {w: getattr(self.cohen_kappa, w).statistic for w in WEIGHTINGS} if self.cohen_kappa else None
            ),
            "fleiss_kappa": self.fleiss_kappa.statistic,
            "krippendorff_alpha": self.krippendorff_alpha.statistic,
        }
        if self.reference is not None:
            out["reference"] = self.reference
            out["spearman"] = _correlation_json(self.spearman, "rho")
            out["kendall"] = _correlation_json(self.kendall, "tau")
        if self.bootstrap is not None:
            ci: dict[str, Any] = {}
            for key, result in self.measures().items():
                interval = (
                    None if result is None or result.confidence_interval is None else list(result.confidence_interval)
                )
                if key.startswith("cohen_kappa."):
                    if self.cohen_kappa is not None:
                        ci.setdefault("cohen_kappa", {})[key.split(".", 1)[1]] = interval
                    else:
                        ci["cohen_kappa"] = None
                else:
                    ci[key] = interval
            out["ci"] = ci
            out["bootstrap"] = {
                "n_resamples": self.bootstrap.n_resamples,
                "seed": self.bootstrap.seed,
                "confidence_level": self.bootstrap.confidence_level,
                "method": self.bootstrap.method,
            }
        out["notes"] = self.notes()
        return out


def _correlation_json(result: CorrelationResult | None, name: str) -> dict[str, Any] | None:
    if result is None or result.statistic is None:
        return None
    return {name: result.statistic, "p": result.pvalue, "n": result.n_units}


def _dimension_agreement_iv(
    level: object, reference: object, bootstrap: object, seed: object, confidence_level: object
) -> Level:
    level = _level_iv(level)
    if reference is not None and not isinstance(reference, Hashable):
        raise ValueError(f"reference must be a rater id; got {reference!r}")
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
    return level


def dimension_agreement(
    records: Iterable[Rating | tuple[Hashable, Hashable, Value]],
    *,
    level: Level,
    reference: Hashable | None = None,
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
        Kendall). It still counts as a rater in the agreement coefficients.
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
    coded = table.coded
    n_units, n_raters = coded.codes.shape
    ref_index = table.raters.index(reference) if reference in table.raters else None
    ref_label = None if reference is None else str(reference)

    measures: dict[str, Callable[[_Coded], _Estimate | tuple[float | None, float | None, int, str | None]]] = {
        "percent_agreement": _percent_agreement,
        "fleiss_kappa": _fleiss,
        "krippendorff_alpha": _alpha,
    }
    if n_raters == 2:
        for weighting in WEIGHTINGS:
            measures[f"cohen_kappa.{weighting}"] = lambda c, w=weighting: _cohen(c, w)
    if reference is not None:
        for method in CORRELATION_METHODS:
            measures[method] = lambda c, m=method: _correlation(c, ref_index, m, reference)

    results: dict[str, AgreementResult | CorrelationResult] = {}
    for key, measure in measures.items():
        if n_units == 0:
            estimate: tuple[Any, ...] = (
                (None, None, 0, NO_RATINGS) if key in CORRELATION_METHODS else (None, 0, NO_RATINGS)
            )
        else:
            estimate = measure(coded)
        method = _METHODS[key].format(level=level)
        if key in CORRELATION_METHODS:
            statistic, pvalue, n, reason = estimate
            results[key] = CorrelationResult(
                statistic=statistic, pvalue=pvalue, n_units=n, method=method, reason=reason
            )
        else:
            statistic, n, reason = estimate
            results[key] = AgreementResult(statistic=statistic, n_units=n, method=method, reason=reason)

    settings = None
    if bootstrap > 0 and n_units > 0:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        defined = {k: m for k, m in measures.items() if results[k].statistic is not None}
        for key, (interval, n_used) in _bootstrap(coded, defined, settings).items():
            results[key] = replace(results[key], confidence_interval=interval, n_resamples=n_used)

    cohen = (
        CohenKappa(**{w: results[f"cohen_kappa.{w}"] for w in WEIGHTINGS})  # type: ignore[arg-type]
        if n_raters == 2
        else None
    )
    return DimensionAgreement(
        level=level,
        n_units=n_units,
        n_raters=n_raters,
        n_ratings=table.n_ratings,
        percent_agreement=results["percent_agreement"],  # type: ignore[arg-type]
        cohen_kappa=cohen,
        fleiss_kappa=results["fleiss_kappa"],  # type: ignore[arg-type]
        krippendorff_alpha=results["krippendorff_alpha"],  # type: ignore[arg-type]
        reference=ref_label,
        spearman=results.get("spearman"),  # type: ignore[arg-type]
        kendall=results.get("kendall"),  # type: ignore[arg-type]
        bootstrap=settings,
    )


def _bootstrap(
    coded: _Coded, measures: Mapping[str, Callable[[_Coded], tuple[Any, ...]]], settings: BootstrapSettings
) -> dict[str, tuple[ConfidenceInterval | None, int]]:
    rng = np.random.default_rng(settings.seed)
    n_units = coded.codes.shape[0]
    draws: dict[str, list[float]] = {key: [] for key in measures}
    for _ in range(settings.n_resamples):
        # One draw of units per resample, shared by every measure, so the intervals are comparable.
        resample = coded.take(rng.integers(0, n_units, size=n_units))
        for key, measure in measures.items():
            statistic = measure(resample)[0]
            if statistic is not None:
                draws[key].append(statistic)
    tail = (1 - settings.confidence_level) / 2
    out: dict[str, tuple[ConfidenceInterval | None, int]] = {}
    for key, values in draws.items():
        if values:
            low, high = np.quantile(np.asarray(values), [tail, 1 - tail])
            out[key] = (ConfidenceInterval(float(low), float(high)), len(values))
        else:
            out[key] = (None, 0)
    return out


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
]


def _columns(results: Mapping[str, DimensionAgreement]) -> list[tuple[str, str, str]]:
    with_reference = any(d.reference is not None for d in results.values())
    return [c for c in _COLUMNS if with_reference or c[0] not in CORRELATION_METHODS]


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
        name = _CSV_NAMES.get(key, key.replace(".", "_"))
        header += [name, f"{name}_ci_low", f"{name}_ci_high"]
        if key in CORRELATION_METHODS:
            header += [f"{key}_p", f"{key}_n"]
    header += ["n_resamples", "seed", "notes"]

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
        row += [
            number(None if d.bootstrap is None else d.bootstrap.n_resamples),
            number(None if d.bootstrap is None else d.bootstrap.seed),
            "; ".join(f"{key}: {why}" for key, why in d.notes().items()),
        ]
        writer.writerow(row)
    return buffer.getvalue()
