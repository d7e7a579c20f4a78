"""The estimators: each measure on a coded matrix (what the bootstrap recomputes), the public
per-measure functions on ratings arrays, and the statistics beside agreement (confusion matrices,
means, the random-guess F1, the anchoring comparison).

Every coefficient comes from a maintained library (statsmodels, krippendorff, SciPy); this module
shapes the data and guards the degenerate cases, which give None with a reason.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.stats import inter_rater

from validation.agreement.bootstrap import bootstrap_iv, percentile_interval
from validation.agreement.coding import Coded, coded_from_array, level_iv
from validation.agreement.measures import (
    CORRELATION_METHODS,
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    PERCENT_AGREEMENT,
    WEIGHTINGS,
    CorrelationMethod,
    Level,
    Weighting,
    cohen_key,
    measure,
)
from validation.agreement.results import (
    CONSTANT,
    INCOMPLETE,
    NEEDS_RATERS,
    NEEDS_TWO_RATERS,
    NO_EXPOSURE_PAIRS,
    NO_MAJORITY_PAIRS,
    NO_OTHER_RATER,
    NO_PAIRABLE_UNITS,
    NO_RATINGS,
    NO_REFERENCE,
    NO_SHARED_UNITS,
    NOMINAL_CORRELATION,
    NOMINAL_WEIGHTS,
    ONE_CATEGORY,
    ONE_CATEGORY_ALPHA,
    TOO_FEW_PAIRS,
    AgreementResult,
    BootstrapSettings,
    ConfusionMatrix,
    CorrelationResult,
    ExposureComparison,
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
    return _table_kappa(table, coded, weighting, quiet=quiet)


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


# -- public per-measure functions on ratings arrays ----------------------------------------------


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
    statistic, n_units, reason = percent_agreement_coded(coded_from_array(ratings, "nominal"))
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(PERCENT_AGREEMENT).method, reason=reason
    )


def _cohen_kappa_iv(ratings: npt.ArrayLike, weights: object, level: object) -> tuple[Coded, Weighting]:
    level = level_iv(level)
    if weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}; got {weights!r}")
    if weights != "unweighted" and level == "nominal":
        raise ValueError(f"{weights} weights need level 'ordinal' or 'interval'")
    coded = coded_from_array(ratings, level)
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
    statistic, n_units, reason = cohen_coded(coded, weighting)
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(cohen_key(weighting)).method, reason=reason
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
    statistic, n_units, reason = fleiss_coded(coded_from_array(ratings, "nominal"))
    return AgreementResult(statistic=statistic, n_units=n_units, method=measure(FLEISS_KAPPA).method, reason=reason)


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
    level = level_iv(level)
    statistic, n_units, reason = alpha_coded(coded_from_array(ratings, level))
    return AgreementResult(
        statistic=statistic, n_units=n_units, method=measure(KRIPPENDORFF_ALPHA).method_for(level), reason=reason
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
    coded = coded_from_array(ratings, "interval")
    if not isinstance(reference, int | np.integer) or not 0 <= reference < coded.codes.shape[1]:
        raise ValueError(f"reference must be a column index in [0, {coded.codes.shape[1]}); got {reference!r}")
    has_rating = not np.isnan(coded.codes[:, reference]).all()
    statistic, pvalue, n, reason = correlation_coded(
        coded, int(reference) if has_rating else None, method, reference_name=int(reference)
    )
    return CorrelationResult(
        statistic=statistic, pvalue=pvalue, n_units=n, method=measure(method).method, reason=reason
    )


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
    level = level_iv(level)
    coded = coded_from_array(ratings, level, categories)
    names = list(raters) or [f"rater {j + 1}" for j in range(coded.n_raters)]
    k = len(coded.domain)
    if reference is not None:
        if not 0 <= reference < coded.n_raters:
            raise ValueError(f"reference must be a column index in [0, {coded.n_raters}); got {reference!r}")
        majority, ref, _ = majority_pairs(coded, reference)
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
    bootstrap_iv(bootstrap, seed, confidence_level)
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
    level = level_iv(level)
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}")
    bootstrap_iv(bootstrap, seed, confidence_level)
    human = np.asarray(ratings)
    ref = np.asarray(reference).reshape(-1, 1)
    shown = np.asarray(visible)
    if human.ndim != 2 or ref.shape[0] != human.shape[0] or shown.shape != human.shape:
        raise ValueError("ratings (units x raters), reference (units) and visible (units x raters) must align")
    coded = coded_from_array(np.hstack([human, ref]), level, categories)
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


def _table_kappa(
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


def _table_kappa_reason(
    cell: npt.NDArray[np.intp], group: int, k: int, coded: Coded, weighting: Weighting
) -> str | None:
    table = np.bincount(cell, minlength=2 * k * k).reshape(2, k, k)[group].astype(float)
    statistic, _, reason = _table_kappa(table, coded, weighting)
    return None if statistic is not None else reason or "undefined for these data"
