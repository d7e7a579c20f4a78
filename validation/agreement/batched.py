"""The bootstrap's fast path: every measure over a batch of resamples at once, bit for bit the
library's value on each resample.

A resample changes only how often each unit counts, so a measure is computed from counts over the
distinct *patterns* of ratings a unit can have (its codes across the raters, at most a few hundred
on a Likert scale): a batch of resamples is a (resamples x patterns) count matrix, and contingency
tables, category margins and coincidences are that matrix times each pattern's contribution.

Those sums are integers (or multiples of 1/2, 1/4 ...), exact in floating point whatever the
order, so the tables are the very ones the library would receive; the library's own arithmetic on
them is then repeated elementwise over the batch (NumPy reduces each row of a C-ordered batch
exactly as it reduces one array alone). The results equal, to the last bit, what
``statsmodels.stats.inter_rater.cohens_kappa`` and ``fleiss_kappa``, ``krippendorff.alpha``,
``scipy.stats.spearmanr`` and ``kendalltau`` return on each resample; the tests compare the two
paths on every resample of varied data. Where exactness cannot be shown (Krippendorff's alpha with a
unit of 4, 6, 7 ... ratings, whose coincidences are thirds or fifths; a rank correlation over more
than :data:`EXACT_RANK_UNITS` units) a measure is left out here and the bootstrap computes it with the
library on each resample, as before.

The means the library takes over units (percent agreement, Fleiss' mean observed agreement) are
taken over the resampled units themselves, in their order, as the library does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from validation.agreement.coding import Coded
from validation.agreement.estimators import kappa_scores
from validation.agreement.measures import (
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    MAJORITY_PERCENT_AGREEMENT,
    PERCENT_AGREEMENT,
    WEIGHTINGS,
    Level,
    Weighting,
    cohen_key,
    majority_kappa_key,
)

__all__ = ["EXACT_RANK_UNITS", "BatchedDimension", "kappa_batch", "pattern_counts", "patterns_of"]

Floats = npt.NDArray[np.float64]
#: Largest number of paired units for which the rank sums behind Spearman's rho stay exact in
#: float64 (their squares sum to about n^3/12, in quarters, below 2^53).
EXACT_RANK_UNITS = 200_000


def patterns_of(rows: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
    """The distinct rows and, per row, the index of its pattern."""
    if rows.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(len(rows), dtype=np.intp)
    low = rows.min(axis=0)
    spans = rows.max(axis=0) - low + 1
    if np.prod(spans.astype(float)) < 2**62:
        # One integer per row (mixed radix): unique on a vector is much quicker than on rows.
        radix = np.concatenate([np.cumprod(spans[::-1])[::-1][1:], [1]])
        keys, first, inverse = np.unique((rows - low) @ radix, return_index=True, return_inverse=True)
        return rows[first], inverse.reshape(-1).astype(np.intp)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1).astype(np.intp)


#: From this many units a batch's draws are gathered and counted one resample at a time (in the
#: processor's cache); below it, the whole batch at once. Both give the same numbers.
ROW_BY_ROW_FROM_UNITS = 5_000


def _pattern_dtype(n_patterns: int) -> type[np.integer]:
    return np.int16 if n_patterns <= np.iinfo(np.int16).max else np.intp


def pattern_counts(
    inverse: npt.NDArray[np.intp],
    n_patterns: int,
    indices: npt.NDArray[np.intp],
    *,
    drawn: npt.NDArray[np.integer] | None = None,
) -> Floats:
    """(resamples, patterns): how many of each resample's drawn units have each pattern.

    ``drawn``, when given (the shape of ``indices``), receives each draw's pattern."""
    # One resample at a time, through one reused buffer of the narrowest integer type: the gather and
    # the count stay in the processor's cache, which is several times quicker than one
    # (resamples x units) gather and count on 100,000 units.
    narrow = _pattern_dtype(n_patterns) if drawn is None else drawn.dtype
    compact = inverse.astype(narrow, copy=False)
    if indices.shape[1] < ROW_BY_ROW_FROM_UNITS:
        # Few units: the whole batch at once costs fewer calls, and the counts are the same.
        patterns = compact[indices]
        if drawn is not None:
            drawn[...] = patterns
        offsets = (np.arange(len(indices)) * n_patterns)[:, None]
        flat = np.bincount((patterns + offsets).ravel(), minlength=len(indices) * n_patterns)
        return flat.reshape(len(indices), n_patterns).astype(float)
    buffer = np.empty(indices.shape[1], dtype=narrow)
    counts = np.empty((len(indices), n_patterns))
    for row, units in enumerate(indices):
        out = buffer if drawn is None else drawn[row]
        # Draws are in range by construction; "clip" spares take() the copy "raise" makes with out=.
        np.take(compact, units, out=out, mode="clip")
        counts[row] = np.bincount(out, minlength=n_patterns)
    return counts


def _one_hot(cells: npt.NDArray[np.intp], size: int) -> Floats:
    """Patterns x cells: 1 where the pattern falls in the cell; a cell of -1 is none."""
    out = np.zeros((len(cells), size))
    hit = cells >= 0
    out[np.flatnonzero(hit), cells[hit]] = 1.0
    return out


def kappa_batch(tables: Floats, weighting: Weighting, scores: Floats | None) -> Floats:
    """Cohen's kappa of each (k x k) table, as ``statsmodels...cohens_kappa(return_results=False)``
    computes it; NaN where ``estimators.table_kappa`` gives None (fewer than two categories used) or the
    value is not finite."""
    k = tables.shape[1]
    diagonal = np.arange(k)
    used = np.count_nonzero(tables.sum(axis=1) + tables.sum(axis=2), axis=1)
    with np.errstate(all="ignore"):
        nobs = tables.sum(axis=(1, 2))
        freq_row = tables.sum(axis=2) / nobs[:, None]
        freq_col = tables.sum(axis=1) / nobs[:, None]
        prob_exp = freq_col[:, None, :] * freq_row[:, :, None]
        agree_exp = prob_exp[:, diagonal, diagonal].sum(axis=1)
        if weighting == "unweighted":
            agree = tables[:, diagonal, diagonal].sum(axis=1)
            kappa = (agree / nobs - agree_exp) / (1 - agree_exp)
        else:
            weights = np.asarray(scores, float)
            if weighting == "linear":
                matrix = np.abs(weights[:, None] - weights) / (weights[-1] - weights[0])
            else:
                matrix = (weights[:, None] - weights) ** 2 / (weights[-1] - weights[0]) ** 2
            kappa = 1 - (matrix * tables).sum(axis=(1, 2)) / nobs / (matrix * prob_exp).sum(axis=(1, 2))
    return np.where((used >= 2) & np.isfinite(kappa), kappa, np.nan)


def _scores(coded: Coded, weighting: Weighting) -> Floats | None:
    return None if weighting == "unweighted" else kappa_scores(coded)


def _gathered_means(values: Floats, included: npt.NDArray[np.bool_], drawn: npt.NDArray[np.integer]) -> Floats:
    """Each resample's mean of ``values`` (per pattern) over its drawn units whose pattern is
    ``included``, in draw order; ``drawn`` holds each draw's pattern."""
    # One resample at a time, from the small per-pattern table: a contiguous row's mean is the very
    # sum NumPy makes of that row in a (resamples x units) array of the units' values.
    everyone = bool(included.all())
    if everyone and drawn.shape[1] < ROW_BY_ROW_FROM_UNITS:
        with np.errstate(all="ignore"):
            return values[drawn].mean(axis=1)
    out = np.full(len(drawn), np.nan)
    for b, patterns in enumerate(drawn):
        row = values.take(patterns)
        if not everyone:
            row = row[included.take(patterns)]
        if len(row):
            out[b] = row.mean()
    return out


def _counted_mean(ones: Floats, total: Floats) -> Floats:
    """count / n per resample: the mean of that many 0/1 values, exact before the one division."""
    with np.errstate(all="ignore"):
        return np.where(total > 0, ones / total, np.nan)


@dataclass
class BatchedDimension:
    """One dimension's measures over batches of resamples of the shared units.

    ``coefficients`` / ``full`` are the dimension's two coded matrices and ``*_rows`` map a shared
    unit to their rows (-1: no row), as in ``dimensions._Prepared``; ``reference`` is the reference
    column of ``full``. ``extra``, when given, is more integer columns per shared unit that another
    statistic counts on the same resamples (the anchoring table's cells): they enter the patterns,
    and :attr:`extra_patterns` gives their values per pattern. Every sum over patterns being exact,
    finer patterns leave the measures' values unchanged.
    """

    level: Level
    coefficients: Coded
    coefficient_rows: npt.NDArray[np.intp]
    full: Coded
    full_rows: npt.NDArray[np.intp]
    reference: int | None
    extra: npt.NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        full = self.full
        codes = np.where(np.isnan(full.codes), -1, full.codes).astype(np.int64)
        shared = np.full((len(self.full_rows), full.n_raters), -1, dtype=np.int64)
        present = self.full_rows >= 0
        shared[present] = codes[self.full_rows[present]]
        # Whether the unit has a row among the coefficients' ratings is part of its pattern too.
        in_coefficients = (self.coefficient_rows >= 0).astype(np.int64)[:, None]
        extra = np.zeros((len(shared), 0), dtype=np.int64) if self.extra is None else self.extra
        self._patterns, self._inverse = patterns_of(np.hstack([shared, in_coefficients, extra]))
        self._codes = self._patterns[:, : full.n_raters]
        self._in_coefficients = self._patterns[:, full.n_raters] == 1
        self.extra_patterns = self._patterns[:, full.n_raters + 1 :]
        self._k = len(full.domain)
        self._columns = [j for j in range(full.n_raters) if self.coefficients is full or j != self.reference]
        self._means: list[tuple[Floats, npt.NDArray[np.bool_], Callable[[Floats, npt.NDArray[np.intp]], Floats]]] = []
        self._drawn: tuple[npt.NDArray[np.intp], npt.NDArray[np.integer]] | None = None

    # -- the measures this path computes, by key ----------------------------------------------------
    def measures(self, keys: set[str]) -> dict[str, Callable[[Floats, npt.NDArray[np.intp]], Floats]]:
        """The batched computations for those of ``keys`` this path computes exactly."""
        out: dict[str, Callable[[Floats, npt.NDArray[np.intp]], Floats]] = {}
        if PERCENT_AGREEMENT in keys:
            out[PERCENT_AGREEMENT] = self._percent_agreement()
        if FLEISS_KAPPA in keys:
            out[FLEISS_KAPPA] = self._fleiss()
        if KRIPPENDORFF_ALPHA in keys and self._alpha_is_exact():
            out[KRIPPENDORFF_ALPHA] = self._alpha()
        for weighting in cast("tuple[Weighting, ...]", WEIGHTINGS):
            if weighting != "unweighted" and self.level == "nominal":
                continue  # undefined on the full data, so never asked for
            if cohen_key(weighting) in keys:
                out[cohen_key(weighting)] = self._cohen(weighting)
            if majority_kappa_key(weighting) in keys:
                out[majority_kappa_key(weighting)] = self._majority_kappa(weighting)
        if MAJORITY_PERCENT_AGREEMENT in keys:
            out[MAJORITY_PERCENT_AGREEMENT] = self._majority_agreement()
        if {"spearman", "kendall"} & keys:
            pairs = self._correlation_pairs()
            if "spearman" in keys and len(self.full_rows) <= EXACT_RANK_UNITS:
                out["spearman"] = self._spearman(pairs)
            if "kendall" in keys:
                out["kendall"] = self._kendall(pairs)
        return out

    def counts(self, indices: npt.NDArray[np.intp]) -> Floats:
        """(resamples, patterns) for a batch of draws (keeping each draw's pattern when a mean over the
        draws needs it)."""
        if not self._means:
            return pattern_counts(self._inverse, len(self._patterns), indices)
        drawn = np.empty(indices.shape, dtype=_pattern_dtype(len(self._patterns)))
        self._drawn = (indices, drawn)
        return pattern_counts(self._inverse, len(self._patterns), indices, drawn=drawn)

    def _drawn_patterns(self, indices: npt.NDArray[np.intp]) -> npt.NDArray[np.integer]:
        """Each draw's pattern: kept by :meth:`counts` for these draws, else looked up."""
        if self._drawn is not None and self._drawn[0] is indices:
            return self._drawn[1]
        return self._inverse[indices]

    # -- helpers over the coefficients' ratings ------------------------------------------------------
    def _category_counts(self) -> npt.NDArray[np.int64]:
        """Patterns x categories among the coefficients' raters (zero rows for patterns outside them)."""
        codes = self._codes[:, self._columns]
        counts = np.zeros((len(codes), self._k), dtype=np.int64)
        for j in range(codes.shape[1]):
            rated = codes[:, j] >= 0
            np.add.at(counts, (np.flatnonzero(rated), codes[rated, j]), 1)
        counts[~self._in_coefficients] = 0
        return counts

    def _mean_of(
        self, values: Floats, included: npt.NDArray[np.bool_]
    ) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        """Each resample's mean of ``values`` (per pattern) over its units whose pattern is
        ``included``, computed once per batch for equal inputs: with complete data Fleiss' per-unit
        agreement and the percent agreement's shares are the same numbers (both
        sum_j n_ij(n_ij - 1) / (n(n - 1))), so one pass serves both."""
        for known_values, known_included, known_compute in self._means:
            if np.array_equal(known_included, included) and np.array_equal(known_values, values, equal_nan=True):
                return known_compute
        last: list[tuple[npt.NDArray[np.intp], Floats]] = []

        def compute(c: Floats, indices: npt.NDArray[np.intp]) -> Floats:
            if last and last[0][0] is indices:
                return last[0][1]
            means = _gathered_means(values, included, self._drawn_patterns(indices))
            last[:] = [(indices, means)]
            return means

        self._means.append((values, included, compute))
        return compute

    def _percent_agreement(self) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        counts = self._category_counts()
        rated = counts.sum(axis=1)
        pairable = rated >= 2
        with np.errstate(all="ignore"):
            shares = (counts * (counts - 1)).sum(axis=1) / (rated * (rated - 1))
        if np.all(np.isin(shares[pairable], (0.0, 1.0))):
            ones, pairable_f = (pairable & (shares == 1)).astype(float), pairable.astype(float)
            return lambda c, indices: _counted_mean(c @ ones, c @ pairable_f)
        return self._mean_of(np.where(pairable, shares, np.nan), pairable)

    def _fleiss(self) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        counts = self._category_counts().astype(float)
        m = float(self.coefficients.n_raters)
        p_rat = ((counts * counts).sum(axis=1) - m) / (m * (m - 1.0))
        inside = self._in_coefficients
        # Fleiss needs complete data: a resample drawing an incomplete unit leaves it undefined.
        incomplete = (inside & (counts.sum(axis=1) < m)).astype(float)
        if np.all(np.isin(p_rat[inside], (0.0, 1.0))):
            ones, units = (inside & (p_rat == 1)).astype(float), inside.astype(float)

            def p_mean(c: Floats, indices: npt.NDArray[np.intp], /) -> Floats:
                return _counted_mean(c @ ones, c @ units)
        else:
            p_mean = self._mean_of(np.where(inside, p_rat, np.nan), inside)

        def fleiss(c: Floats, indices: npt.NDArray[np.intp]) -> Floats:
            columns = c @ counts
            with np.errstate(all="ignore"):
                n_total = columns.sum(axis=1)
                p_cat = columns / n_total[:, None]
                p_mean_exp = (p_cat * p_cat).sum(axis=1)
                kappa = (p_mean(c, indices) - p_mean_exp) / (1 - p_mean_exp)
            complete = (c @ incomplete) == 0
            return np.where(complete & (np.count_nonzero(columns, axis=1) >= 2) & np.isfinite(kappa), kappa, np.nan)

        return fleiss

    def _alpha_is_exact(self) -> bool:
        rated = self._category_counts().sum(axis=1)
        pairable = np.maximum(rated[rated >= 2], 2) - 1
        return bool(np.all(pairable & (pairable - 1) == 0))  # powers of two: exact coincidences

    def _alpha(self) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        counts = self._category_counts()
        k = self._k
        pairable = np.maximum(counts.sum(axis=1), 2)
        outer = counts[:, :, None] * counts[:, None, :] - counts[:, None, :] * np.eye(k)[None]
        coincidences = (outer / (pairable - 1).reshape(-1, 1, 1)).reshape(len(counts), k * k)
        pairable_counts = (counts.sum(axis=1) >= 2)[:, None] * counts
        # The values at the interval level, the codes otherwise (as ``estimators.alpha_coded``).
        domain = self.coefficients.domain.astype(float) if self.level == "interval" else np.arange(k, dtype=float)
        first, second = domain[:, None], domain[None, :]
        i1, i2 = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        low, high = np.minimum(i1, i2), np.maximum(i1, i2)

        def alpha(c: Floats, indices: npt.NDArray[np.intp]) -> Floats:
            o = (c @ coincidences).reshape(len(c), k, k)
            n_v = o.sum(axis=1)
            with np.errstate(all="ignore"):
                e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, None, :] * np.eye(k)[None]) / (n_v.sum(axis=1) - 1)[
                    :, None, None
                ]
                if self.level == "nominal":
                    d = np.broadcast_to((first != second).astype(float), o.shape)
                elif self.level == "interval":
                    d = np.broadcast_to((first - second).astype(float) ** 2, o.shape)
                else:
                    cumulative = np.concatenate([np.zeros((len(c), 1)), np.cumsum(n_v, axis=1)], axis=1)
                    between = cumulative[:, high + 1] - cumulative[:, low]
                    d = (between - (n_v[:, low] + n_v[:, high]) / 2) ** 2
                value = 1 - (o * d).sum(axis=(1, 2)) / (e * d).sum(axis=(1, 2))
            usable = (c @ (pairable_counts.sum(axis=1) > 0).astype(float) > 0) & (
                np.count_nonzero(c @ pairable_counts, axis=1) >= 2
            )
            return np.where(usable & np.isfinite(value), value, np.nan)

        return alpha

    def _cohen(self, weighting: Weighting) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        k = self._k
        codes = self._codes[:, self._columns]
        both = (codes[:, 0] >= 0) & (codes[:, 1] >= 0) & self._in_coefficients
        cells = np.where(both, codes[:, 0] * k + codes[:, 1], -1)
        hot, scores = _one_hot(cells, k * k), _scores(self.coefficients, weighting)
        return lambda c, indices: kappa_batch((c @ hot).reshape(len(c), k, k), weighting, scores)

    # -- comparisons with the reference ---------------------------------------------------------------
    def _majority_cells(self) -> npt.NDArray[np.intp]:
        """Per pattern, majority code of the other raters x k + reference code, or -1 (as
        ``estimators.majority_pairs``: a tie for the most frequent value is no majority)."""
        k, ref = self._k, self.reference
        if ref is None or self.full.n_raters < 2:
            return np.full(len(self._codes), -1, dtype=np.intp)
        counts = np.zeros((len(self._codes), k), dtype=np.int64)
        for j in range(self._codes.shape[1]):
            if j == ref:
                continue
            rated = self._codes[:, j] >= 0
            np.add.at(counts, (np.flatnonzero(rated), self._codes[rated, j]), 1)
        reference = self._codes[:, ref]
        top = counts.max(axis=1)
        unique_top = np.count_nonzero(counts == top[:, None], axis=1) == 1
        usable = (reference >= 0) & (top > 0) & unique_top
        return np.where(usable, counts.argmax(axis=1) * k + reference, -1).astype(np.intp)

    def _majority_agreement(self) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        cells = self._majority_cells()
        k = self._k
        usable = (cells >= 0).astype(float)
        agree = ((cells >= 0) & (cells // k == cells % k)).astype(float)
        return lambda c, indices: _counted_mean(c @ agree, c @ usable)

    def _majority_kappa(self, weighting: Weighting) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        k = self._k
        hot, scores = _one_hot(self._majority_cells(), k * k), _scores(self.full, weighting)
        return lambda c, indices: kappa_batch((c @ hot).reshape(len(c), k, k), weighting, scores)

    def _correlation_pairs(self) -> tuple[Floats, int, int]:
        """Per pattern, a one-hot over (mean of the others' values x reference value) cells, and the
        numbers of distinct values on each side (``estimators.correlation_coded``'s pairs)."""
        ref = self.reference
        assert ref is not None  # asked for only with a reference rater
        values = np.full(self._codes.shape, np.nan)
        present = self._codes >= 0
        values[present] = self.full.domain.astype(float)[self._codes[present]]
        others = np.delete(values, ref, axis=1)
        paired = ~np.isnan(values[:, ref]) & ~np.isnan(others).all(axis=1)
        with np.errstate(all="ignore"):
            mean_others = np.full(len(values), np.nan)
            mean_others[paired] = np.nanmean(others[paired], axis=1)
        x_values, x_codes = np.unique(mean_others[paired], return_inverse=True)
        y_values, y_codes = np.unique(values[paired, ref], return_inverse=True)
        cells = np.full(len(values), -1, dtype=np.intp)
        cells[paired] = x_codes.reshape(-1) * len(y_values) + y_codes.reshape(-1)
        return _one_hot(cells, len(x_values) * len(y_values)), len(x_values), len(y_values)

    @staticmethod
    def _pair_tables(c: Floats, pairs: tuple[Floats, int, int]) -> Floats:
        hot, nx, ny = pairs
        return (c @ hot).reshape(len(c), nx, ny)

    @staticmethod
    def _defined(tables: Floats) -> tuple[Floats, Floats, Floats, npt.NDArray[np.bool_]]:
        """Per resample: n, the x and y margins, and whether the correlation is defined (at least 3
        pairs and neither side constant)."""
        x_counts, y_counts = tables.sum(axis=2), tables.sum(axis=1)
        n = x_counts.sum(axis=1)
        defined = (n >= 3) & (np.count_nonzero(x_counts, axis=1) >= 2) & (np.count_nonzero(y_counts, axis=1) >= 2)
        return n, x_counts, y_counts, defined

    def _spearman(self, pairs: tuple[Floats, int, int]) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        def spearman(c: Floats, indices: npt.NDArray[np.intp]) -> Floats:
            tables = self._pair_tables(c, pairs)
            n, x_counts, y_counts, defined = self._defined(tables)
            # Midranks (rankdata's "average") centred on their mean (n + 1) / 2: halves, exact.
            centre = ((n + 1) / 2)[:, None]
            x_ranks = np.cumsum(x_counts, axis=1) - x_counts + (x_counts + 1) / 2 - centre
            y_ranks = np.cumsum(y_counts, axis=1) - y_counts + (y_counts + 1) / 2 - centre
            sxy = (tables * (x_ranks[:, :, None] * y_ranks[:, None, :])).sum(axis=(1, 2))
            sxx = (x_counts * x_ranks * x_ranks).sum(axis=1)
            syy = (y_counts * y_ranks * y_ranks).sum(axis=1)
            with np.errstate(all="ignore"):
                # numpy.cov scales by 1 / (n - 1); numpy.corrcoef divides row 1, then column 0.
                scale = np.true_divide(1, n - 1)
                rho = ((sxy * scale) / np.sqrt(syy * scale)) / np.sqrt(sxx * scale)
            rho = np.clip(rho, -1, 1)
            return np.where(defined & np.isfinite(rho), rho, np.nan)

        return spearman

    def _kendall(self, pairs: tuple[Floats, int, int]) -> Callable[[Floats, npt.NDArray[np.intp]], Floats]:
        def kendall(c: Floats, indices: npt.NDArray[np.intp]) -> Floats:
            tables = self._pair_tables(c, pairs)
            n, x_counts, y_counts, defined = self._defined(tables)
            counts = tables.astype(np.int64)
            size = n.astype(np.int64)
            tot = size * (size - 1) // 2
            x_tie = (x_counts.astype(np.int64) * (x_counts.astype(np.int64) - 1) // 2).sum(axis=1)
            y_tie = (y_counts.astype(np.int64) * (y_counts.astype(np.int64) - 1) // 2).sum(axis=1)
            n_tie = (counts * (counts - 1) // 2).sum(axis=(1, 2))
            # Discordant pairs: a larger x with a smaller y. below[b, i, j] = pairs at x > i, y < j.
            larger_x = np.cumsum(counts[:, ::-1, :], axis=1)[:, ::-1, :] - counts
            below = np.cumsum(larger_x, axis=2) - larger_x
            discordant = (counts * below).sum(axis=(1, 2))
            con_minus_dis = tot - x_tie - y_tie + n_tie - 2 * discordant
            with np.errstate(all="ignore"):
                tau = con_minus_dis.astype(float) / np.sqrt((tot - x_tie).astype(float))
                tau = tau / np.sqrt((tot - y_tie).astype(float))
            tau = np.minimum(1.0, np.maximum(-1.0, tau))
            return np.where(defined & (x_tie != tot) & (y_tie != tot) & np.isfinite(tau), tau, np.nan)

        return kendall
