"""The statistics beside agreement: confusion matrices, the mean rating, the random-guess F1 and the
anchoring comparison (agreement with the reference when its suggestion was shown vs hidden)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from validation.agreement.batched import kappa_batch, pattern_counts, patterns_of
from validation.agreement.bootstrap import (
    bootstrap_iv,
    expected_warnings,
    index_batches,
    percentile_interval,
)
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
    prepared = _exposure_prepare(ratings, reference, visible, level, weighting, categories)
    bootstrap_iv(bootstrap, seed, confidence_level)
    return exposure_comparisons({"": prepared}, bootstrap=bootstrap, seed=seed, confidence_level=confidence_level)[""]


@dataclass(frozen=True)
class ExposureInput:
    """One dimension's anchoring comparison, checked and coded (:func:`exposure_input`)."""

    n_units: int
    k: int
    coded: Coded
    weighting: Weighting
    units: npt.NDArray[np.intp]
    cell: npt.NDArray[np.intp]
    n_pairs: tuple[int, int]


def exposure_input(
    ratings: npt.ArrayLike,
    reference: npt.ArrayLike,
    visible: npt.ArrayLike,
    *,
    level: Level,
    weighting: Weighting = "unweighted",
    categories: Sequence[Any] = (),
) -> ExposureInput:
    """The inputs of :func:`exposure_comparison` for one dimension, for :func:`exposure_comparisons`."""
    return _exposure_prepare(ratings, reference, visible, level, weighting, categories)


def _exposure_prepare(
    ratings: npt.ArrayLike,
    reference: npt.ArrayLike,
    visible: npt.ArrayLike,
    level: object,
    weighting: object,
    categories: Sequence[Any],
) -> ExposureInput:
    level = level_iv(level)
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}")
    human = np.asarray(ratings)
    ref = np.asarray(reference).reshape(-1, 1)
    shown = np.asarray(visible)
    if human.ndim != 2 or ref.shape[0] != human.shape[0] or shown.shape != human.shape:
        raise ValueError("ratings (units x raters), reference (units) and visible (units x raters) must align")
    coded = coded_from_array(np.hstack([human, ref]), level, categories)
    codes = coded.codes
    ref_codes = codes[:, -1]
    pair = ~np.isnan(codes[:, :-1]) & ~np.isnan(ref_codes)[:, None]
    groups = (pair & (shown == 1), pair & (shown == 0))
    k = len(coded.domain)
    unit_of, first, second, group_of = [], [], [], []
    for g, cells in enumerate(groups):
        u, r = np.nonzero(cells)
        unit_of.append(u)
        first.append(codes[u, r].astype(np.intp))
        second.append(ref_codes[u].astype(np.intp))
        group_of.append(np.full(len(u), g))
    units = np.concatenate(unit_of)
    cell = np.concatenate(group_of) * k * k + np.concatenate(first) * k + np.concatenate(second)
    n_pairs = (int(np.count_nonzero(groups[0])), int(np.count_nonzero(groups[1])))
    return ExposureInput(
        n_units=human.shape[0],
        k=k,
        coded=coded,
        weighting=cast(Weighting, weighting),  # one of WEIGHTINGS
        units=units,
        cell=cell,
        n_pairs=n_pairs,
    )


def exposure_comparisons(
    inputs: Mapping[str, ExposureInput],
    *,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
    draws: Mapping[str, Mapping[str, npt.NDArray[np.float64]]] | None = None,
) -> dict[str, ExposureComparison]:
    """:func:`exposure_comparison` for several dimensions of the same units, from one set of
    resamples: the draws are made once (and are those each alone would make).

    ``draws``, when given, are every statistic on every resample already (as ``joint_agreement``
    computes them with the agreement's own resamples, from :func:`exposure_unit_cells` and
    :func:`exposure_statistics`), for the dimensions with pairs."""
    bootstrap_iv(bootstrap, seed, confidence_level)
    settings = None
    if bootstrap:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
    points = {name: _exposure_point(prepared) for name, prepared in inputs.items()}
    drawing = {name: prepared for name, prepared in inputs.items() if len(prepared.cell)}
    if draws is None:
        draws = _exposure_draws(drawing, settings) if settings is not None and drawing else {}
    out = {}
    for name, prepared in inputs.items():
        point, reasons = points[name]
        intervals = {}
        if name in draws:
            drawn = {key: v[~np.isnan(v)] for key, v in draws[name].items() if point[key] is not None}
            assert settings is not None  # draws are made only with settings
            intervals = {key: (percentile_interval(v, settings), len(v)) for key, v in drawn.items()}
        out[name] = _exposure_result(prepared, point, reasons, intervals, settings if name in draws else None)
    return out


def _exposure_point(prepared: ExposureInput) -> tuple[dict[str, float | None], dict[str, str | None]]:
    k, coded, weighting, cell, n_pairs = prepared.k, prepared.coded, prepared.weighting, prepared.cell, prepared.n_pairs
    tables = np.bincount(cell, weights=np.ones(len(cell)), minlength=2 * k * k).reshape(2, k, k)
    point: dict[str, float | None] = {}
    for g, name in enumerate(("shown", "hidden")):
        table = tables[g]
        total = table.sum()
        point[f"agreement_{name}"] = float(np.trace(table) / total) if total else None
        point[f"kappa_{name}"] = table_kappa(table, coded, weighting)[0] if total else None
    for what in ("kappa", "agreement"):
        a, b = point[f"{what}_shown"], point[f"{what}_hidden"]
        point[f"{what}_difference"] = None if a is None or b is None else a - b
    reasons = {
        "agreement_shown": None if n_pairs[0] else NO_EXPOSURE_PAIRS.format(which="shown"),
        "agreement_hidden": None if n_pairs[1] else NO_EXPOSURE_PAIRS.format(which="hidden"),
    }
    reasons["kappa_shown"] = reasons["agreement_shown"] or _table_kappa_reason(cell, 0, k, coded, weighting)
    reasons["kappa_hidden"] = reasons["agreement_hidden"] or _table_kappa_reason(cell, 1, k, coded, weighting)
    for what in ("kappa", "agreement"):
        reasons[f"{what}_difference"] = reasons[f"{what}_shown"] or reasons[f"{what}_hidden"]
    return point, reasons


def _exposure_result(
    prepared: ExposureInput,
    point: dict[str, float | None],
    reasons: dict[str, str | None],
    intervals: dict[str, tuple[Any, int]],
    settings: BootstrapSettings | None,
) -> ExposureComparison:
    n_pairs, weighting = prepared.n_pairs, prepared.weighting
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
    inputs: Mapping[str, ExposureInput], settings: BootstrapSettings
) -> dict[str, dict[str, npt.NDArray[np.float64]]]:
    """Every statistic of each comparison on every resample (NaN where undefined), a batch at a time.

    A unit's pairs fall in a few (group, rating, reference) cells; a resample's two tables are its
    units' counts of those cells, exact integers, and each kappa is the library's on its table
    (``batched.kappa_batch``). One draw of units serves every dimension.
    """
    n_units = next(iter(inputs.values())).n_units
    if any(prepared.n_units != n_units for prepared in inputs.values()):
        raise ValueError("the dimensions compared together must have the same units")
    shapes = {}
    for name, prepared in inputs.items():
        patterns, inverse = patterns_of(exposure_unit_cells(prepared))
        shapes[name] = (patterns.astype(float), inverse)
    parts: dict[str, dict[str, list[npt.NDArray[np.float64]]]] = {name: {} for name in inputs}
    with expected_warnings():
        for indices in index_batches(n_units, settings.n_resamples, settings.seed):
            for name, prepared in inputs.items():
                contributions, inverse = shapes[name]
                counts = pattern_counts(inverse, len(contributions), indices)
                for key, values in exposure_statistics(prepared, counts @ contributions).items():
                    parts[name].setdefault(key, []).append(values)
    return {name: {key: np.concatenate(v) for key, v in found.items()} for name, found in parts.items()}


def exposure_unit_cells(prepared: ExposureInput) -> npt.NDArray[np.int64]:
    """Units x (group, rating, reference) cells: how many of each unit's pairs fall in each cell."""
    k = prepared.k
    per_unit = np.zeros((prepared.n_units, 2 * k * k), dtype=np.int64)
    np.add.at(per_unit, (prepared.units, prepared.cell), 1)
    return per_unit


def exposure_statistics(prepared: ExposureInput, cells: npt.NDArray[np.float64]) -> dict[str, npt.NDArray[np.float64]]:
    """Every statistic of the comparison on each of a batch of resamples, from the resamples'
    (resamples x cells) counts of :func:`exposure_unit_cells`' cells: exact integers, so each kappa is
    the library's on its table (``batched.kappa_batch``); NaN where undefined."""
    k = prepared.k
    diagonal = np.arange(k)
    scores = None if prepared.weighting == "unweighted" else kappa_scores(prepared.coded)
    tables = cells.reshape(-1, 2, k, k)
    batch: dict[str, npt.NDArray[np.float64]] = {}
    for g, group in enumerate(("shown", "hidden")):
        table = np.ascontiguousarray(tables[:, g])
        total = table.sum(axis=(1, 2))
        with np.errstate(all="ignore"):
            agreement = table[:, diagonal, diagonal].sum(axis=1) / total
        batch[f"agreement_{group}"] = np.where(total > 0, agreement, np.nan)
        batch[f"kappa_{group}"] = np.where(total > 0, kappa_batch(table, prepared.weighting, scores), np.nan)
    for what in ("kappa", "agreement"):
        batch[f"{what}_difference"] = batch[f"{what}_shown"] - batch[f"{what}_hidden"]
    return batch


def _table_kappa_reason(
    cell: npt.NDArray[np.intp], group: int, k: int, coded: Coded, weighting: Weighting
) -> str | None:
    table = np.bincount(cell, minlength=2 * k * k).reshape(2, k, k)[group].astype(float)
    statistic, _, reason = table_kappa(table, coded, weighting)
    return None if statistic is not None else reason or "undefined for these data"
