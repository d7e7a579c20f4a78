"""Means over a stratified sample: people only and prediction-powered, stratum by stratum.

People only: the stratified mean ``sum_h W_h ybar_h`` with variance ``sum_h W_h^2 s_h^2 / n_h``
(``W_h = N_h / N`` the stratum's share of the items, ``s_h`` people's standard deviation in it,
statsmodels ``DescrStatsW``), times the finite-population correction ``1 - n_h / N_h`` when the
estimand is the project's own items (the default; Cochran, *Sampling Techniques*, 5.3). A simple
random sample is the one-stratum case.

Prediction-powered: stratified PPI (Fisch et al., "Stratified Prediction-Powered Inference for
Hybrid Language Model Evaluation", NeurIPS 2024): in each stratum, ``ppi_py``'s PPI++ mean with its
own power-tuned ``lambda_h`` (``inference.prediction_powered_mean``), combined with the same shares,
``sum_h W_h theta_h`` and ``sum_h W_h^2 se_h^2``. ppi_py's per-stratum variance treats the stratum's
items as drawn from a larger population (no finite-population correction), so the interval errs on
the wide side when a stratum is mostly labelled; a stratum labelled in full is known exactly and
enters with its people-only piece.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import norm
from statsmodels.stats.weightstats import DescrStatsW, _zconfint_generic

from validation.estimates import inference

__all__ = [
    "StratifiedPowered",
    "StratumArrays",
    "difference_of_means",
    "stratified_people_mean",
    "stratified_prediction_powered_mean",
]

Array = npt.NDArray[np.float64]
FEW_IN_STRATUM = "stratum {name!r} has fewer than 2 labelled items: no spread within it, so no interval"


@dataclass(frozen=True)
class StratumArrays:
    """One stratum's people's and model values on its labelled items and the model's on the rest."""

    name: str
    y: Array
    yhat: Array
    yhat_unlabeled: Array

    @property
    def size(self) -> int:
        return len(self.y) + len(self.yhat_unlabeled)


@dataclass(frozen=True, kw_only=True)
class StratifiedPowered:
    """A stratified prediction-powered mean: each stratum's lambda (None: undefined, see ``notes``)."""

    estimate: float | None
    ci: tuple[float, float] | None
    lam: dict[str, float | None]
    n_labeled: int
    n_unlabeled: int
    notes: tuple[str, ...] = ()
    reason: str | None = None


def _z(alpha: float) -> float:
    return float(norm.ppf(1 - alpha / 2))


def _combine(pieces: Sequence[tuple[int, float, float]], alpha: float) -> tuple[float, tuple[float, float]]:
    """``sum W_h mean_h`` and its normal interval from ``sum W_h^2 var_h`` (pieces: N_h, mean, var)."""
    total = sum(size for size, _, _ in pieces)
    estimate = sum(size / total * mean for size, mean, _ in pieces)
    se = math.sqrt(sum((size / total) ** 2 * var for size, _, var in pieces))
    low, high = _zconfint_generic(estimate, se, alpha, "two-sided")
    return float(estimate), (float(low), float(high))


def _people_piece(stratum: StratumArrays, *, fpc: bool) -> tuple[int, float, float]:
    stats = DescrStatsW(stratum.y, ddof=1)
    n = len(stratum.y)
    var = float(stats.var) / n if n >= inference.MIN_LABELLED else math.nan
    if fpc:
        var *= 1 - n / stratum.size
    return stratum.size, float(stats.mean), var


def stratified_people_mean(strata: Sequence[StratumArrays], *, alpha: float, fpc: bool) -> inference.MeanEstimate:
    """People's stratified mean and its normal ``1 - alpha`` interval (strata without labels: none
    given; the caller leaves them out and says so)."""
    n = sum(len(s.y) for s in strata)
    if n < inference.MIN_LABELLED or not strata:
        estimate = float(strata[0].y[0]) if n == 1 and len(strata) == 1 else None
        return inference.MeanEstimate(
            estimate=estimate, ci=None, n=n, reason=inference.FEW_LABELLED.format(n=inference.MIN_LABELLED)
        )
    pieces = [_people_piece(s, fpc=fpc) for s in strata]
    estimate, ci = _combine([(size, mean, 0.0) for size, mean, _ in pieces], alpha)
    short = [s.name for s in strata if len(s.y) < inference.MIN_LABELLED]
    if short:
        return inference.MeanEstimate(estimate=estimate, ci=None, n=n, reason=FEW_IN_STRATUM.format(name=short[0]))
    estimate, ci = _combine(pieces, alpha)
    return inference.MeanEstimate(estimate=estimate, ci=ci, n=n)


def stratified_prediction_powered_mean(
    strata: Sequence[StratumArrays], *, alpha: float, fpc: bool
) -> StratifiedPowered:
    """Stratified PPI: each stratum's PPI++ mean (its own lambda), combined with the strata's shares."""
    n = sum(len(s.y) for s in strata)
    big_n = sum(len(s.yhat_unlabeled) for s in strata)
    short = [s.name for s in strata if len(s.y) < inference.MIN_LABELLED]
    if n < inference.MIN_LABELLED or short or not strata:
        reason = FEW_IN_STRATUM.format(name=short[0]) if short else inference.FEW_LABELLED.format(n=2)
        return StratifiedPowered(estimate=None, ci=None, lam={}, n_labeled=n, n_unlabeled=big_n, reason=reason)
    z = _z(alpha)
    pieces: list[tuple[int, float, float]] = []
    lam: dict[str, float | None] = {}
    notes: list[str] = []
    for stratum in strata:
        if not len(stratum.yhat_unlabeled):
            # Labelled in full: people's mean is the stratum's (exactly so with the correction).
            pieces.append(_people_piece(stratum, fpc=fpc))
            lam[stratum.name] = None
            continue
        powered = inference.prediction_powered_mean(stratum.y, stratum.yhat, stratum.yhat_unlabeled, alpha=alpha)
        if powered.ci is None or powered.estimate is None:
            return StratifiedPowered(
                estimate=None, ci=None, lam={}, n_labeled=n, n_unlabeled=big_n, reason=powered.reason
            )
        lam[stratum.name] = powered.lam
        if powered.note:
            # A constant model here: lambda is undefined and the stratum's people-only piece stands in.
            notes.append(f"stratum {stratum.name!r}: {powered.note}")
            pieces.append(_people_piece(stratum, fpc=fpc))
            continue
        se = (powered.ci[1] - powered.ci[0]) / (2 * z)
        pieces.append((stratum.size, powered.estimate, se**2))
    estimate, ci = _combine(pieces, alpha)
    return StratifiedPowered(
        estimate=estimate, ci=ci, lam=lam, n_labeled=n, n_unlabeled=big_n, notes=tuple(dict.fromkeys(notes))
    )


def difference_of_means(
    first: tuple[float | None, tuple[float, float] | None],
    second: tuple[float | None, tuple[float, float] | None],
    *,
    alpha: float,
) -> tuple[float | None, tuple[float, float] | None]:
    """A minus B for two independent normal estimates (disjoint items): the standard errors add in
    quadrature (statsmodels' ``_zconfint_generic``)."""
    (a, ci_a), (b, ci_b) = first, second
    if a is None or b is None:
        return None, None
    if ci_a is None or ci_b is None:
        return a - b, None
    z = _z(alpha)
    se = math.hypot((ci_a[1] - ci_a[0]) / (2 * z), (ci_b[1] - ci_b[0]) / (2 * z))
    low, high = _zconfint_generic(a - b, se, alpha, "two-sided")
    return a - b, (float(low), float(high))
