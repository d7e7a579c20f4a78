"""All measures for one dimension, or for several dimensions that share units, with bootstrap
intervals from one resampling of units shared by every measure and dimension."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from validation.agreement import bootstrap as resampling
from validation.agreement.batched import BatchedDimension
from validation.agreement.bootstrap import (
    bootstrap_iv,
    expected_warnings,
    index_batches,
    percentile_interval,
    resamples,
)
from validation.agreement.coding import (
    Coded,
    DimensionInput,
    Rating,
    Value,
    coded_from_array,
    level_iv,
    table_from_records,
)
from validation.agreement.estimators import (
    alpha_coded,
    cohen_coded,
    correlation_coded,
    fleiss_coded,
    majority_agreement_coded,
    majority_kappa_coded,
    percent_agreement_coded,
)
from validation.agreement.measures import (
    CORRELATION_METHODS,
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    MAJORITY_PERCENT_AGREEMENT,
    PERCENT_AGREEMENT,
    WEIGHTINGS,
    Level,
    cohen_key,
    majority_kappa_key,
    measure,
)
from validation.agreement.results import (
    NO_RATINGS,
    AgreementResult,
    BootstrapSettings,
    CohenKappa,
    CorrelationResult,
    DimensionAgreement,
    JointAgreement,
    ReferenceAgreement,
)
from validation.agreement.summaries import (
    ExposureInput,
    exposure_comparisons,
    exposure_statistics,
    exposure_unit_cells,
)

#: Told (resamples done, resamples in all) as a bootstrap advances, e.g. for a progress bar.
Progress = Callable[[int, int], None]
#: From this many units the anchoring comparisons' cells join the dimensions' patterns, so that one
#: count per resample serves both; on fewer, the finer patterns cost more than counting twice.
SHARED_ANCHORING_FROM_UNITS = 5_000


def _dimension_agreement_iv(
    level: object, reference: object, bootstrap: object, seed: object, confidence_level: object
) -> Level:
    level = level_iv(level)
    if reference is not None and not isinstance(reference, Hashable):
        raise ValueError(f"reference must be a rater id; got {reference!r}")
    bootstrap_iv(bootstrap, seed, confidence_level)
    return level


class _Measure(Protocol):
    """One measure on (the coefficients' ratings, every rater's ratings); ``quiet`` inside resamples."""

    def __call__(self, coefficients: Coded, full: Coded, *, quiet: bool) -> tuple[Any, ...]: ...


@dataclass(frozen=True)
class _Prepared:
    """One dimension ready to measure.

    ``coefficients`` holds the ratings behind the agreement coefficients (the reference left out
    when asked), ``full`` every rater's; each keeps only its rated units and raters, and maps a
    shared unit index to its own rows (-1 where the unit has no rating there), so one resample of
    shared units serves every dimension.
    """

    level: Level
    coefficients: Coded
    coefficient_rows: npt.NDArray[np.intp]
    full: Coded
    full_rows: npt.NDArray[np.intp]
    raters: tuple[Hashable, ...]
    reference: int | None
    reference_label: str | None
    reference_in_coefficients: bool
    n_ratings: int

    def measures(self) -> dict[str, _Measure]:
        ref, name = self.reference, self.reference_label
        out: dict[str, _Measure] = {
            PERCENT_AGREEMENT: lambda c, f, quiet: percent_agreement_coded(c),
            FLEISS_KAPPA: lambda c, f, quiet: fleiss_coded(c, quiet=quiet),
            KRIPPENDORFF_ALPHA: lambda c, f, quiet: alpha_coded(c, quiet=quiet),
        }
        if self.coefficients.n_raters == 2:
            for weighting in WEIGHTINGS:
                out[cohen_key(weighting)] = lambda c, f, quiet, w=weighting: cohen_coded(c, w, quiet=quiet)
        if name is not None:
            for method in CORRELATION_METHODS:
                out[method] = lambda c, f, quiet, m=method: correlation_coded(f, ref, m, name, quiet=quiet)
            out[MAJORITY_PERCENT_AGREEMENT] = lambda c, f, quiet: majority_agreement_coded(f, ref, name)
            for weighting in WEIGHTINGS:
                out[majority_kappa_key(weighting)] = lambda c, f, quiet, w=weighting: majority_kappa_coded(
                    f, ref, w, name, quiet=quiet
                )
        return out

    def resample(self, units: npt.NDArray[np.intp]) -> tuple[Coded, Coded]:
        full_rows = self.full_rows[units]
        full = self.full.take(full_rows[full_rows >= 0])
        if self.coefficients is self.full:
            return full, full
        rows = self.coefficient_rows[units]
        return self.coefficients.take(rows[rows >= 0]), full


def _prepare(
    coded: Coded, raters: Sequence[Hashable], reference: Hashable | None, reference_in_coefficients: bool
) -> _Prepared:
    """Keep the rated units and raters of one dimension's shared-units matrix."""
    present = ~np.isnan(coded.codes)
    n_shared = coded.n_units
    unit_rows = np.flatnonzero(present.any(axis=1))
    rater_cols = np.flatnonzero(present.any(axis=0))
    kept = tuple(raters[int(j)] for j in rater_cols)
    full = Coded(coded.codes[np.ix_(unit_rows, rater_cols)], coded.domain, coded.level)
    full_rows = np.full(n_shared, -1, dtype=np.intp)
    full_rows[unit_rows] = np.arange(len(unit_rows))
    ref = kept.index(reference) if reference is not None and reference in kept else None
    coefficients, coefficient_rows = full, full_rows
    if ref is not None and not reference_in_coefficients:
        others = np.delete(full.codes, ref, axis=1)
        rated = np.flatnonzero((~np.isnan(others)).any(axis=1))
        coefficients = Coded(others[rated], coded.domain, coded.level)
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
    for key, compute in measures.items():
        if empty:
            estimate: tuple[Any, ...] = (
                (None, None, 0, NO_RATINGS) if key in CORRELATION_METHODS else (None, 0, NO_RATINGS)
            )
        else:
            estimate = compute(prepared.coefficients, prepared.full, quiet=False)
        method = measure(key).method_for(prepared.level)
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
    cohen = CohenKappa(**{w: results[cohen_key(w)] for w in WEIGHTINGS}) if two else None
    majority = None
    if prepared.reference_label is not None:
        majority = ReferenceAgreement(
            percent_agreement=results[MAJORITY_PERCENT_AGREEMENT],
            cohen_kappa=CohenKappa(**{w: results[majority_kappa_key(w)] for w in WEIGHTINGS}),
        )
    coefficient_raters = tuple(
        str(r) for j, r in enumerate(prepared.raters) if prepared.reference_in_coefficients or j != prepared.reference
    )
    return DimensionAgreement(
        level=prepared.level,
        n_units=prepared.coefficients.n_units,
        n_raters=prepared.coefficients.n_raters,
        n_ratings=prepared.n_ratings,
        percent_agreement=results[PERCENT_AGREEMENT],
        cohen_kappa=cohen,
        fleiss_kappa=results[FLEISS_KAPPA],
        krippendorff_alpha=results[KRIPPENDORFF_ALPHA],
        reference=prepared.reference_label,
        reference_in_coefficients=prepared.reference_in_coefficients,
        # The correlations are stored as CorrelationResult (``_estimate_all``).
        spearman=cast("CorrelationResult | None", results.get("spearman")),
        kendall=cast("CorrelationResult | None", results.get("kendall")),
        majority_vs_reference=majority,
        bootstrap=settings,
        raters=coefficient_raters,
    )


def _resampled_values(
    prepared: Mapping[str, _Prepared],
    defined: Mapping[str, Mapping[str, _Measure]],
    n_shared: int,
    settings: BootstrapSettings,
    progress: Progress | None,
    exposures: Mapping[str, ExposureInput],
) -> tuple[dict[tuple[str, str], npt.NDArray[np.float64]], dict[str, dict[str, npt.NDArray[np.float64]]]]:
    """Every defined measure's value on every resample (NaN where the resample leaves it undefined),
    and every anchoring statistic of ``exposures`` (those with pairs) on the same resamples.

    Measures the batched path computes exactly come from it (``validation.agreement.batched``);
    the rest are computed by the library on each resample, from the same draws. The anchoring
    table's cells join the dimension's patterns, so one count per resample serves both.
    """
    n_resamples = settings.n_resamples
    values = {(name, key): np.full(n_resamples, np.nan) for name, keys in defined.items() for key in keys}
    drawing = {name: exposure for name, exposure in exposures.items() if len(exposure.cell)}
    batched = {
        name: BatchedDimension(
            level=p.level,
            coefficients=p.coefficients,
            coefficient_rows=p.coefficient_rows,
            full=p.full,
            full_rows=p.full_rows,
            reference=p.reference,
            extra=exposure_unit_cells(drawing[name]) if name in drawing else None,
        )
        for name, p in prepared.items()
    }
    fast = {name: batched[name].measures(set(defined[name])) for name in prepared}
    slow = {name: {k: m for k, m in defined[name].items() if k not in fast[name]} for name in prepared}
    fast_work = any(fast.values()) or bool(drawing)
    slow_work = any(slow.values())
    anchoring: dict[str, dict[str, list[npt.NDArray[np.float64]]]] = {name: {} for name in drawing}
    done = 0

    def dimension_batch(name: str, indices: npt.NDArray[np.intp]) -> dict[str, npt.NDArray[np.float64]]:
        counts = batched[name].counts(indices)
        if name in drawing:
            cells = counts @ batched[name].extra_patterns.astype(float)
            for key, column in exposure_statistics(drawing[name], cells).items():
                anchoring[name].setdefault(key, []).append(column)
        return {key: compute(counts, indices) for key, compute in fast[name].items()}

    if fast_work:
        working = [name for name in prepared if fast[name] or name in drawing]
        # NumPy releases the GIL in its gathers and reductions, so large data's dimensions run side by side.
        threads = min(resampling.BOOTSTRAP_THREADS, len(working)) if n_shared >= resampling.THREADED_FROM_UNITS else 1
        with expected_warnings(), ThreadPoolExecutor(max_workers=max(threads, 1)) as pool:
            for indices in index_batches(n_shared, n_resamples, settings.seed):
                batch = [indices] * len(working)
                found = (
                    pool.map(dimension_batch, working, batch) if threads > 1 else map(dimension_batch, working, batch)
                )
                for name, results in zip(working, found, strict=True):
                    for key, column in results.items():
                        values[(name, key)][done : done + len(indices)] = column
                done += len(indices)
                if progress is not None:
                    progress(done // 2 if slow_work else done, n_resamples)
    if slow_work:

        def one(units: npt.NDArray[np.intp]) -> dict[str, dict[str, float | None]]:
            resampled: dict[str, dict[str, float | None]] = {}
            for name, p in prepared.items():
                if slow[name]:
                    coefficients, full = p.resample(units)
                    resampled[name] = {
                        key: compute(coefficients, full, quiet=True)[0] for key, compute in slow[name].items()
                    }
            return resampled

        for b, resampled in enumerate(resamples(one, n_shared, n_resamples, settings.seed)):
            for name, by_key in resampled.items():
                for key, statistic in by_key.items():
                    if statistic is not None:
                        values[(name, key)][b] = statistic
            if progress is not None and (b + 1) % 50 == 0:
                progress((n_resamples + b + 1) // 2 if fast_work else b + 1, n_resamples)
    if progress is not None:
        progress(n_resamples, n_resamples)
    draws = {name: {key: np.concatenate(parts) for key, parts in found.items()} for name, found in anchoring.items()}
    return values, draws


def _run(
    prepared: Mapping[str, _Prepared],
    n_shared: int,
    *,
    bootstrap: int,
    seed: int,
    confidence_level: float,
    progress: Progress | None = None,
    exposures: Mapping[str, ExposureInput] | None = None,
) -> JointAgreement:
    exposures = exposures or {}
    if any(exposure.n_units != n_shared for exposure in exposures.values()):
        raise ValueError("the anchoring comparisons must be of the dimensions' units")
    measures = {name: p.measures() for name, p in prepared.items()}
    points = {name: _estimate_all(p, measures[name]) for name, p in prepared.items()}
    common = [key for key in next(iter(measures.values()), {}) if all(key in m for m in measures.values())]
    overall = {key: _mean_over(points, key) for key in common}

    settings = None
    anchoring_draws = None
    if bootstrap > 0 and n_shared > 0:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        defined = {
            name: {k: m for k, m in measures[name].items() if points[name][k].statistic is not None}
            for name in prepared
        }
        overall_keys = [key for key in common if overall[key].statistic is not None]
        # Large data with every comparison on a dimension here: the anchoring cells counted with it.
        shared = n_shared >= SHARED_ANCHORING_FROM_UNITS and set(exposures) <= set(prepared)
        values, draws = _resampled_values(prepared, defined, n_shared, settings, progress, exposures if shared else {})
        anchoring_draws = draws if shared else None
        for (name, key), column in values.items():
            target = points[name]
            drawn = column[~np.isnan(column)]
            target[key] = replace(
                target[key], confidence_interval=percentile_interval(drawn, settings), n_resamples=len(drawn)
            )
        for key in overall_keys:
            # The overall mean of a resample, where every dimension defines the measure.
            stacked = np.column_stack([values[(name, key)] for name in prepared])
            complete = stacked[~np.isnan(stacked).any(axis=1)]
            means = complete.mean(axis=1) if len(complete) else np.zeros(0)
            overall[key] = replace(
                overall[key], confidence_interval=percentile_interval(means, settings), n_resamples=len(means)
            )

    anchoring = {}
    if exposures:
        # Without shared draws (none, or small data) exposure_comparisons draws the same resamples itself.
        anchoring = exposure_comparisons(
            exposures,
            bootstrap=bootstrap if n_shared else 0,
            seed=seed,
            confidence_level=confidence_level,
            draws=anchoring_draws,
        )
    return JointAgreement(
        dimensions={name: _assemble(p, points[name], settings) for name, p in prepared.items()},
        overall=overall,
        bootstrap=settings,
        exposures=anchoring,
    )


def _mean_over(points: Mapping[str, Mapping[str, AgreementResult]], key: str) -> AgreementResult:
    results = [p[key] for p in points.values()]
    method = f"unweighted mean over {len(results)} dimensions of: " + (
        results[0].method if results else measure(key).method
    )
    missing = [name for name, p in points.items() if p[key].statistic is None]
    if not results or missing:
        reason = NO_RATINGS if not results else f"undefined for {', '.join(map(str, missing))}"
        return AgreementResult(statistic=None, n_units=0, method=method, reason=reason)
    return AgreementResult(
        statistic=float(np.mean([r.statistic for r in results])),
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
    progress: Progress | None = None,
    exposures: Mapping[str, ExposureInput] | None = None,
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
    progress : callable, optional
        Called with (resamples done, resamples in all) as the bootstrap advances.
    exposures : mapping of str to ExposureInput, optional
        Anchoring comparisons (``summaries.exposure_input``) of some of the dimensions, on the same
        units: computed from the same resamples and counts as the dimensions' measures (what
        ``exposure_comparisons`` gives alone, with less work), in ``JointAgreement.exposures``.

    Returns
    -------
    JointAgreement
    """
    bootstrap_iv(bootstrap, seed, confidence_level)
    raters = list(raters)
    if len(set(raters)) != len(raters):
        raise ValueError("raters must be distinct")
    prepared: dict[str, _Prepared] = {}
    shape: tuple[int, ...] | None = None
    for name, spec in dimensions.items():
        level = level_iv(spec.level)
        coded = coded_from_array(spec.ratings, level, spec.categories)
        if shape is None:
            shape = coded.codes.shape
        if coded.codes.shape != shape:
            raise ValueError(f"dimension {name!r}: shape {coded.codes.shape} differs from {shape}")
        if coded.n_raters != len(raters):
            raise ValueError(f"dimension {name!r}: {coded.n_raters} columns but {len(raters)} raters")
        prepared[name] = _prepare(coded, raters, reference, reference_in_coefficients)
    n_shared = shape[0] if shape else 0
    return _run(
        prepared,
        n_shared,
        bootstrap=bootstrap,
        seed=seed,
        confidence_level=confidence_level,
        progress=progress,
        exposures=exposures,
    )


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
    table = table_from_records(records, level)
    prepared = _prepare(table.coded, table.raters, reference, reference_in_coefficients)
    joint = _run(
        {"value": prepared},
        table.coded.n_units,
        bootstrap=bootstrap,
        seed=seed,
        confidence_level=confidence_level,
    )
    return joint.dimensions["value"]
