"""The estimators: each measure on a coded matrix, what the point estimates and the bootstrap's
library path compute (``validation.agreement.batched`` is its fast path, equal to the last bit).

Every coefficient comes from a maintained library (statsmodels, krippendorff, SciPy); this module
shapes the data and guards the degenerate cases, which give None with a reason.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.stats import inter_rater

from validation.agreement.coding import Coded
from validation.agreement.measures import (
    CorrelationMethod,
    Weighting,
)
from validation.agreement.results import (
    CONSTANT,
    INCOMPLETE,
    NEEDS_RATERS,
    NEEDS_TWO_RATERS,
    NO_MAJORITY_PAIRS,
    NO_OTHER_RATER,
    NO_PAIRABLE_UNITS,
    NO_REFERENCE,
    NO_SHARED_UNITS,
    NOMINAL_CORRELATION,
    NOMINAL_WEIGHTS,
    ONE_CATEGORY,
    ONE_CATEGORY_ALPHA,
    TOO_FEW_PAIRS,
)

# -- the measures on coded matrices ---------------------------------------------------------------

_Estimate = tuple[float | None, int, str | None]  # statistic, n_units, reason
_CorrelationEstimate = tuple[float | None, float | None, int, str | None]  # statistic, p, n_units, reason


def _quietly(compute: Callable[[], float], *, quiet: bool = False) -> tuple[float | None, str | None]:
    """Run a library call with its warnings caught; a non-finite result becomes None with a reason.

    ``quiet`` is for bootstrap resamples, where only the number matters: the warnings are not
    recorded (``catch_warnings`` is not thread-safe; the bootstrap silences them once around all its
    workers), so the reason does not quote them.
    """
    if quiet:
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


def percent_agreement_coded(coded: Coded) -> _Estimate:
    n_i = coded.rated
    pairable = n_i >= 2
    n_pairable = int(np.count_nonzero(pairable))
    if not n_pairable:
        return None, 0, NO_PAIRABLE_UNITS
    shares = coded.agreeing_pairs[pairable] / (n_i[pairable] * (n_i[pairable] - 1))
    return float(shares.mean()), n_pairable, None


def fleiss_coded(coded: Coded, *, quiet: bool = False) -> _Estimate:
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
    value, reason = _quietly(lambda: inter_rater.fleiss_kappa(table, method="fleiss"), quiet=quiet)
    return value, n_units, reason


def kappa_scores(coded: Coded) -> npt.NDArray[np.float64]:
    """The category scores statsmodels turns into the weights of a weighted kappa."""
    # Category scores: ranks at the ordinal level (as Stata's kap without `absolute` and R's irr::kappa2 do),
    # the values themselves at the interval level. statsmodels turns them into Cicchetti-Allison
    # (|s_i - s_j| / range) or Fleiss-Cohen ((s_i - s_j)^2 / range^2) disagreement weights.
    if coded.level == "ordinal":
        return np.arange(len(coded.domain), dtype=float)
    return coded.domain.astype(float)


def _kappa_from_pairs(
    first: npt.NDArray[np.intp],
    second: npt.NDArray[np.intp],
    coded: Coded,
    weighting: Weighting,
    *,
    quiet: bool = False,
) -> _Estimate:
    """Cohen's kappa on the contingency table of paired category codes."""
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    k = len(coded.domain)
    table = np.bincount(first * k + second, minlength=k * k).reshape(k, k).astype(float)
    return table_kappa(table, coded, weighting, quiet=quiet)


def cohen_coded(coded: Coded, weighting: Weighting, *, quiet: bool = False) -> _Estimate:
    n_raters = coded.n_raters
    if n_raters != 2:
        return None, 0, NEEDS_TWO_RATERS.format(n=n_raters)
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    shared = coded.rated == 2
    if not shared.any():
        return None, 0, NO_SHARED_UNITS
    first, second = coded.codes[shared].astype(np.intp).T
    return _kappa_from_pairs(first, second, coded, weighting, quiet=quiet)


def alpha_coded(coded: Coded, *, quiet: bool = False) -> _Estimate:
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
        lambda: krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=coded.level),
        quiet=quiet,
    )
    return value, n_pairable, reason


def correlation_coded(
    coded: Coded,
    reference: int | None,
    method: CorrelationMethod,
    reference_name: Hashable = None,
    *,
    quiet: bool = False,
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
    if quiet:  # a bootstrap resample: the caller silences warnings around all its workers
        with np.errstate(all="ignore"):
            result = test(mean_others, ref)
    else:
        with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
            warnings.simplefilter("always")
            result = test(mean_others, ref)
    statistic, pvalue = float(result.statistic), float(result.pvalue)
    if not math.isfinite(statistic):
        return None, None, n, "undefined for these data (the library returned a non-finite value)"
    return statistic, (pvalue if math.isfinite(pvalue) else None), n, None


def majority_pairs(
    coded: Coded, reference: int | None
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], str | None]:
    """(majority code of the other raters, reference code) over units that have both."""
    key = ("majority-pairs", reference)
    if key not in coded.memo:
        coded.memo[key] = _compute_majority_pairs(coded, reference)
    return coded.memo[key]


def _compute_majority_pairs(
    coded: Coded, reference: int | None
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


def majority_agreement_coded(coded: Coded, reference: int | None, reference_name: Hashable = None) -> _Estimate:
    majority, ref, reason = majority_pairs(coded, reference)
    if reason is not None:
        return None, 0, NO_REFERENCE.format(ref=reference_name) if reason == "no reference" else reason
    return float(np.mean(majority == ref)), len(ref), None


def majority_kappa_coded(
    coded: Coded, reference: int | None, weighting: Weighting, reference_name: Hashable = None, *, quiet: bool = False
) -> _Estimate:
    majority, ref, reason = majority_pairs(coded, reference)
    if reason is not None:
        return None, 0, NO_REFERENCE.format(ref=reference_name) if reason == "no reference" else reason
    return _kappa_from_pairs(majority, ref, coded, weighting, quiet=quiet)


def table_kappa(
    table: npt.NDArray[np.float64], coded: Coded, weighting: Weighting, *, quiet: bool = False
) -> _Estimate:
    if weighting != "unweighted" and coded.level == "nominal":
        return None, 0, NOMINAL_WEIGHTS
    if np.count_nonzero(table.sum(axis=0) + table.sum(axis=1)) < 2:
        return None, int(table.sum()), ONE_CATEGORY
    if weighting == "unweighted":
        value, reason = _quietly(lambda: inter_rater.cohens_kappa(table, return_results=False), quiet=quiet)
    else:
        scores = kappa_scores(coded)
        value, reason = _quietly(
            lambda: inter_rater.cohens_kappa(table, weights=scores, wt=weighting, return_results=False), quiet=quiet
        )
    return value, int(table.sum()), reason
