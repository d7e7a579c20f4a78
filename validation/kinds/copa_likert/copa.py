"""CoPA's evaluator comparison: does an evaluator prefer the answer the user accepted?

Pure functions over score arrays (CoPA, paper 001, §5.2 "Effectiveness of Factors", Tables 3, 4
and A4). A pair is one question's accepted answer and its top-voted answer, each scored by the same
evaluator. With six factor scores s_k in {0, 1, 2} the normalised score is S = Σ_k s_k / 12 (§4.1:
"the final scores are normalized to the range [0, 1]"); then over the pairs

- Accuracy: the share of pairs with S_acc > S_top,
- Tie rate: the share with S_acc = S_top,
- Margin: the mean of S_acc − S_top.

A pair where either side has no score (the evaluator failed on it) is left out and counted. The
lexical heuristics (Jaccard, Inclusion coefficient) are not normalised, so the paper reports their
Accuracy only (§5.2, method (3)); ``preference(..., normalised=False)`` does the same. The factor
ablation (Table 4) recomputes the three with one factor left out, S = Σ_{k≠j} s_k / 10.

Beyond the pairs (§5.4, §5.6): :func:`group_score_means` gives Table 6 (the mean normalised score
S per response source or method and category, with the row mean over the categories the paper prints
as Avg.) and Tables A6–A9 (the mean normalised factor score s_k / 2, the same per factor), and
:func:`factor_correlations` Figure 5 (Spearman's rho between every two factors' scores over the
scored responses, ``scipy.stats.spearmanr``).

Intervals are percentile bootstraps over pairs, one seeded draw of pairs shared by the three
statistics; the percentile rule is the agreement reports' (``validation.agreement.percentile_interval``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import spearmanr

from validation.agreement import AgreementResult, BootstrapSettings, ConfidenceInterval, percentile_interval
from validation.agreement.bootstrap import index_batches

__all__ = [
    "NOT_NORMALISED",
    "NO_PAIRS",
    "FactorCorrelations",
    "GroupMeans",
    "PreferenceResult",
    "factor_ablation",
    "factor_correlations",
    "group_score_means",
    "normalised_score",
    "preference",
]

NO_PAIRS = "no pair has a score for both the accepted and the top-voted answer"
NO_SCORES = "no response of this group has a score"
TOO_FEW_RESPONSES = "a correlation needs at least three scored responses; got {n}"
CONSTANT_FACTOR = "every scored response has the same {factor} score"
NOT_NORMALISED = "not normalised: CoPA §5.2 reports Accuracy only for the lexical heuristics"
#: Resampled pair indices held at once (resamples x pairs); larger bootstraps run in slices.
_DRAW_CELLS = 2_000_000
#: The top score of the 3-point Likert scale (CoPA §4.1: 0 Mismatch, 1 Partial, 2 Full).
MAX_SCORE = 2

ACCURACY_METHOD = "share of pairs with S_acc > S_top (CoPA §5.2)"
TIE_METHOD = "share of pairs with S_acc = S_top (CoPA §5.2)"
MARGIN_METHOD = "mean of S_acc - S_top over pairs (CoPA §5.2)"


@dataclass(frozen=True, kw_only=True)
class PreferenceResult:
    """One evaluator's preference for the accepted answer over its pairs.

    Attributes
    ----------
    accuracy, tie_rate, margin : AgreementResult
        ``statistic`` with its bootstrap interval; ``n_units`` counts the pairs used. Tie rate and
        margin are None-valued with ``NOT_NORMALISED`` as the reason for an unnormalised score.
    n_pairs : int
        Pairs where both answers have a score.
    excluded_pairs : int
        Pairs left out because either answer has none (the evaluator failed on it).
    bootstrap : BootstrapSettings or None
    """

    accuracy: AgreementResult
    tie_rate: AgreementResult
    margin: AgreementResult
    n_pairs: int
    excluded_pairs: int
    bootstrap: BootstrapSettings | None = None


def normalised_score(scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """S = Σ_k s_k / (2K) per row of a (units x K factors) score array; NaN where any score is missing.

    With CoPA's six factors this is Σ s_k / 12 (paper 001, §4.1 and §5.2).
    """
    array = np.asarray(scores, dtype=float)
    if array.ndim != 2 or array.shape[1] == 0:
        raise ValueError(f"scores must be 2-D (units x factors) with at least one factor; got shape {array.shape}")
    return array.sum(axis=1) / (MAX_SCORE * array.shape[1])


def _preference_iv(
    accepted: npt.ArrayLike, top: npt.ArrayLike, bootstrap: object, seed: object, confidence_level: object
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    acc, tp = np.asarray(accepted, dtype=float), np.asarray(top, dtype=float)
    if acc.ndim != 1 or acc.shape != tp.shape:
        raise ValueError(f"accepted and top must be 1-D and of one length; got shapes {acc.shape} and {tp.shape}")
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a non-negative integer (number of resamples); got {bootstrap!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, float | int):
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")
    return acc, tp


def _intervals(
    columns: Mapping[str, npt.NDArray[np.float64]], settings: BootstrapSettings
) -> dict[str, ConfidenceInterval | None]:
    """Percentile intervals of each column's mean, all from one seeded draw of rows per resample."""
    n = len(next(iter(columns.values())))
    draws: dict[str, list[float]] = {key: [] for key in columns}
    for rows in index_batches(n, settings.n_resamples, settings.seed, batch_cells=_DRAW_CELLS):
        for key, column in columns.items():
            draws[key].extend(column[rows].mean(axis=1).tolist())
    return {key: percentile_interval(values, settings) for key, values in draws.items()}


def preference(
    accepted: npt.ArrayLike,
    top: npt.ArrayLike,
    *,
    normalised: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> PreferenceResult:
    """Accuracy, tie rate and margin of S_acc against S_top over pairs (CoPA §5.2).

    Parameters
    ----------
    accepted, top : array_like, shape (n_pairs,)
        Each pair's score of the accepted and of the top-voted answer (e.g. ``normalised_score``);
        NaN where the evaluator gave none. Such pairs are left out and counted.
    normalised : bool
        False for a score on no fixed scale (the lexical heuristics): Accuracy only.
    bootstrap, seed, confidence_level
        Percentile bootstrap over pairs (0 resamples: no intervals).

    Returns
    -------
    PreferenceResult

    References
    ----------
    CoPA (paper 001), §5.2: "Accuracy: The proportion of instances where S_acc > S_top. Tie Rate:
    The proportion of instances where S_acc = S_top. Score Margin: ... S_acc − S_top."
    """
    acc, tp = _preference_iv(accepted, top, bootstrap, seed, confidence_level)
    scored = ~(np.isnan(acc) | np.isnan(tp))
    acc, tp = acc[scored], tp[scored]
    n_pairs, excluded = int(scored.sum()), int((~scored).sum())
    columns = {
        "accuracy": (acc > tp).astype(float),
        "tie_rate": (acc == tp).astype(float),
        "margin": acc - tp,
    }
    methods = {"accuracy": ACCURACY_METHOD, "tie_rate": TIE_METHOD, "margin": MARGIN_METHOD}
    if not normalised:
        del columns["tie_rate"], columns["margin"]
    settings = None
    intervals: dict[str, ConfidenceInterval | None] = {}
    if bootstrap and n_pairs:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        intervals = _intervals(columns, settings)
    results = {}
    for key, method in methods.items():
        if key not in columns:
            results[key] = AgreementResult(statistic=None, n_units=n_pairs, method=method, reason=NOT_NORMALISED)
        elif not n_pairs:
            results[key] = AgreementResult(statistic=None, n_units=0, method=method, reason=NO_PAIRS)
        else:
            results[key] = AgreementResult(
                statistic=float(columns[key].mean()),
                confidence_interval=intervals.get(key),
                n_units=n_pairs,
                method=method,
                n_resamples=bootstrap if settings else None,
            )
    return PreferenceResult(**results, n_pairs=n_pairs, excluded_pairs=excluded, bootstrap=settings)


def factor_ablation(
    accepted: npt.ArrayLike,
    top: npt.ArrayLike,
    *,
    factors: Sequence[str],
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> dict[str, PreferenceResult]:
    """:func:`preference` with each factor left out in turn (CoPA §5.2, Table 4), keyed by that factor.

    Parameters
    ----------
    accepted, top : array_like, shape (n_pairs, K)
        Per-factor scores of each side, columns in the order of ``factors``; NaN where missing.
    factors : sequence of str
        The factor codes (CT, SA, SC, CLM, MS, AMR).

    Notes
    -----
    Without factor j the score is renormalised over the remaining K − 1 factors, Σ_{k≠j} s_k / (2(K − 1)),
    so the margin stays on the [0, 1] scale of the full score. Each ablation uses the same seed, hence
    the same resampled pairs as the full score.
    """
    acc, tp = np.asarray(accepted, dtype=float), np.asarray(top, dtype=float)
    if acc.ndim != 2 or acc.shape != tp.shape or acc.shape[1] != len(factors):
        raise ValueError(f"accepted and top must be (pairs x {len(factors)}) arrays; got {acc.shape} and {tp.shape}")
    if len(factors) < 2:
        raise ValueError("leaving a factor out needs at least two factors")
    results = {}
    for j, factor in enumerate(factors):
        keep = [k for k in range(len(factors)) if k != j]
        results[factor] = preference(
            normalised_score(acc[:, keep]),
            normalised_score(tp[:, keep]),
            bootstrap=bootstrap,
            seed=seed,
            confidence_level=confidence_level,
        )
    return results


@dataclass(frozen=True, kw_only=True)
class GroupMeans:
    """Mean scores of one group of responses (a response source in a category).

    ``score`` is the mean normalised score S = Σ s_k / 12 (CoPA Table 6), ``factors`` the mean of
    s_k / 2 per factor (Tables A6–A9), so the mean over ``factors`` is ``score``; ``n_units`` counts
    the scored responses. None with a reason when the group has none.
    """

    score: AgreementResult
    factors: dict[str, AgreementResult]


def group_score_means(scores: npt.ArrayLike, *, factors: Sequence[str]) -> GroupMeans:
    """Table 6's and Tables A6–A9's numbers for one group: ``scores`` is (responses x K factors) of
    0/1/2 scores, NaN rows (no score) left out.

    References
    ----------
    CoPA (paper 001), §5.4, Table 6 ("Avg." is the mean over the four category columns: the Accepted
    row's 0.8009, 0.7984, 0.7393, 0.7946 give 0.7833) and Appendix G.1, Tables A6–A9 (each Table 6
    cell is the mean of the six factor columns of its category's table: GPT-4o-mini without
    personalisation, Engineering & Tools, 0.5972 ... 0.6997 give 0.6307).
    """
    array = np.asarray(scores, dtype=float).reshape(-1, len(factors))
    scored = array[~np.isnan(array).any(axis=1)]
    n = len(scored)
    method = "mean normalised score S = sum of s_k / 12 over responses (CoPA Table 6)"
    if not n:
        empty = AgreementResult(statistic=None, n_units=0, method=method, reason=NO_SCORES)
        return GroupMeans(
            score=empty,
            factors={f: AgreementResult(statistic=None, n_units=0, method=f, reason=NO_SCORES) for f in factors},
        )
    per_factor = scored.mean(axis=0) / MAX_SCORE
    return GroupMeans(
        score=AgreementResult(statistic=float(normalised_score(scored).mean()), n_units=n, method=method),
        factors={
            f: AgreementResult(
                statistic=float(v), n_units=n, method=f"mean of {f} / 2 over responses (CoPA Tables A6-A9)"
            )
            for f, v in zip(factors, per_factor, strict=True)
        },
    )


@dataclass(frozen=True, kw_only=True)
class FactorCorrelations:
    """Spearman's rho between every two factors (CoPA Figure 5); ``rho[i][j]`` None with ``reason``
    where undefined (a factor every response scored alike)."""

    factors: tuple[str, ...]
    rho: list[list[float | None]]
    n_units: int
    reason: str | None = None


def factor_correlations(scores: npt.ArrayLike, *, factors: Sequence[str]) -> FactorCorrelations:
    """Spearman's rank correlation between the factors' scores over the scored responses.

    ``scipy.stats.spearmanr`` on the (responses x K) matrix, rows with a missing score left out
    (CoPA §5.6, Figure 5: "inter-factor relationships using the Spearman correlation coefficient").
    """
    array = np.asarray(scores, dtype=float).reshape(-1, len(factors))
    scored = array[~np.isnan(array).any(axis=1)]
    n, k = len(scored), len(factors)
    blank: list[list[float | None]] = [[None] * k for _ in range(k)]
    if n < 3:
        return FactorCorrelations(factors=tuple(factors), rho=blank, n_units=n, reason=TOO_FEW_RESPONSES.format(n=n))
    varying = [j for j in range(k) if not np.all(scored[:, j] == scored[0, j])]
    constant = [factors[j] for j in range(k) if j not in varying]
    rho = [row[:] for row in blank]
    if len(varying) >= 2:
        statistic = spearmanr(scored[:, varying]).statistic
        # Two columns give one coefficient, more give the matrix.
        matrix = np.array([[1.0, statistic], [statistic, 1.0]]) if len(varying) == 2 else np.asarray(statistic)
        for a, i in enumerate(varying):
            for b, j in enumerate(varying):
                rho[i][j] = float(matrix[a, b])
    elif len(varying) == 1:
        rho[varying[0]][varying[0]] = 1.0
    reason = CONSTANT_FACTOR.format(factor=", ".join(constant)) if constant else None
    return FactorCorrelations(factors=tuple(factors), rho=rho, n_units=n, reason=reason)
