"""The statistics beside agreement: confusion matrices, the mean rating, the random-guess F1 and the
anchoring comparison (agreement with the reference when its suggestion was shown vs hidden)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from validation.agreement.batched import kappa_batch, pattern_counts, patterns_of
from validation.agreement.bootstrap import bootstrap_iv, expected_warnings, index_batches, percentile_interval
from validation.agreement.coding import Coded, coded_from_array, level_iv
from validation.agreement.estimators import (
    kappa_scores,
    majority_pairs,
    table_kappa,
)
from validation.agreement.measures import (
    WEIGHTINGS,
    Level,
    Weighting,
)
from validation.agreement.results import (
    NO_EXPOSURE_PAIRS,
    NO_RATINGS,
    AgreementResult,
    BootstrapSettings,
    ConfusionMatrix,
    ExposureComparison,
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
        # Each row of a batch is summed as the resample alone would be: the same draws, bit for bit.
        draws = np.concatenate(
            [sums[rows].sum(axis=1) / counted[rows].sum(axis=1) for rows in index_batches(n_units, bootstrap, seed)]
        )
        interval, n_used = percentile_interval(draws, settings), bootstrap
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
            out[f"kappa_{name}"] = table_kappa(table, coded, weighting)[0] if total else None
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
        draws = _exposure_draws(units, cell, human.shape[0], k, coded, weighting, settings)
        drawn = {key: values[~np.isnan(values)] for key, values in draws.items() if point[key] is not None}
        intervals = {key: (percentile_interval(values, settings), len(values)) for key, values in drawn.items()}

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


def _exposure_draws(
    units: npt.NDArray[np.intp],
    cell: npt.NDArray[np.intp],
    n_units: int,
    k: int,
    coded: Coded,
    weighting: Weighting,
    settings: BootstrapSettings,
) -> dict[str, npt.NDArray[np.float64]]:
    """Every statistic of the comparison on every resample (NaN where undefined), a batch at a time.

    A unit's pairs fall in a few (group, rating, reference) cells; a resample's two tables are its
    units' counts of those cells, exact integers, and each kappa is the library's on its table
    (``batched.kappa_batch``).
    """
    per_unit = np.zeros((n_units, 2 * k * k), dtype=np.int64)
    np.add.at(per_unit, (units, cell), 1)
    patterns, inverse = patterns_of(per_unit)
    contributions = patterns.astype(float)
    scores = None if weighting == "unweighted" else kappa_scores(coded)
    diagonal = np.arange(k)
    parts: dict[str, list[npt.NDArray[np.float64]]] = {}
    with expected_warnings():
        for indices in index_batches(n_units, settings.n_resamples, settings.seed):
            tables = (pattern_counts(inverse, len(patterns), indices) @ contributions).reshape(-1, 2, k, k)
            batch: dict[str, npt.NDArray[np.float64]] = {}
            for g, name in enumerate(("shown", "hidden")):
                table = np.ascontiguousarray(tables[:, g])
                total = table.sum(axis=(1, 2))
                batch[f"agreement_{name}"] = np.where(
                    total > 0, table[:, diagonal, diagonal].sum(axis=1) / total, np.nan
                )
                batch[f"kappa_{name}"] = np.where(total > 0, kappa_batch(table, weighting, scores), np.nan)
            for what in ("kappa", "agreement"):
                batch[f"{what}_difference"] = batch[f"{what}_shown"] - batch[f"{what}_hidden"]
            for key, values in batch.items():
                parts.setdefault(key, []).append(values)
    return {key: np.concatenate(values) for key, values in parts.items()}


def _table_kappa_reason(
    cell: npt.NDArray[np.intp], group: int, k: int, coded: Coded, weighting: Weighting
) -> str | None:
    table = np.bincount(cell, minlength=2 * k * k).reshape(2, k, k)[group].astype(float)
    statistic, _, reason = table_kappa(table, coded, weighting)
    return None if statistic is not None else reason or "undefined for these data"
