"""Model-only, people-only and prediction-powered means, on arrays (no database).

Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi and
Zrnic, arXiv 2311.01453) estimates a population mean from the model's values on every item and
people's values on a random labelled sample: the model's mean, corrected by the mean model error on
the sample, with the correction's weight lambda tuned to the data. Every number here comes from
``ppi_py`` (point estimate, interval, lambda through the same helper ``ppi_mean_ci`` calls, power
analysis) or from statsmodels (the classical interval); nothing is re-derived. The effective sample
size is how many people-only labels would give an interval as narrow:
``n * (people-only half-width / prediction-powered half-width)^2``, the people-only interval being
the one shown beside it (so below n when the prediction-powered interval is wider: the model does
not help). When the model gives one value on every item, lambda is 0/0: undefined, and the
people-only figure stands in for the prediction-powered one.

Weights: for a stratified sample, a labelled item weighs ``1 / pi`` and an unlabelled one
``1 / (1 - pi)`` (``pi`` its stratum's labelled share, ``validation.estimates.entries``), so both
sets stand for the whole population; ``ppi_py`` normalises each to mean 1. Without weights both
sets are uniform. The stratified estimates are ``validation.estimates.stratified``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import ppi_py
from ppi_py.ppi import _calc_lam_glm
from ppi_py.ppi_power_analysis import _get_ppi_corr
from ppi_py.utils import construct_weight_vector, reshape_to_2d
from scipy.stats import norm
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW, _zconfint_generic

__all__ = [
    "MIN_LABELLED",
    "GroupArrays",
    "MeanEstimate",
    "PlanResult",
    "PoweredDifference",
    "PredictionPowered",
    "effective_labels",
    "model_helps",
    "model_only_mean",
    "people_only_difference",
    "people_only_mean",
    "plan_from_sample",
    "plan_labels",
    "ppi_lambda",
    "prediction_powered_difference",
    "prediction_powered_mean",
]

Array = npt.NDArray[np.float64]
#: Labelled items below which no interval is given (a standard deviation needs two).
MIN_LABELLED = 2
FEW_LABELLED = "fewer than {n} labelled items"
NO_MODEL_VALUES = "the model gave no value here"
NO_UNLABELLED = "no unlabelled items: every item has people's values, so the people-only mean is the answer"
NO_SPREAD = "people's values do not vary on the sample: no interval width to compare"
MODEL_CONSTANT = (
    "λ undefined: the model gives one value on every item, so its power tuning is 0/0; the people-only figure is used"
)
#: What a model label costs next to a human one when planning: the model's labels already exist.
MODEL_LABEL_COST = 1e-6


@dataclass(frozen=True, kw_only=True)
class MeanEstimate:
    """A mean with its ``1 - alpha`` interval (None, with ``reason``, when it cannot be computed)."""

    estimate: float | None
    ci: tuple[float, float] | None
    n: int
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class PredictionPowered:
    estimate: float | None
    ci: tuple[float, float] | None
    lam: float | None
    effective_n: int | None
    n_labeled: int
    n_unlabeled: int
    reason: str | None = None
    #: Why lambda is undefined and the people-only figure stands in (a constant model), else None.
    note: str | None = None


def _half_width(ci: tuple[float, float] | None) -> float | None:
    return None if ci is None else (ci[1] - ci[0]) / 2


def effective_labels(n: int, people: tuple[float, float] | None, powered: tuple[float, float] | None) -> int | None:
    """``n * (people-only half-width / prediction-powered half-width)^2``: below ``n`` when the
    prediction-powered interval is the wider one (None without both intervals)."""
    people_half, powered_half = _half_width(people), _half_width(powered)
    if not people_half or not powered_half:
        return None
    return int(round(n * (people_half / powered_half) ** 2))


def model_helps(people: tuple[float, float] | None, powered: tuple[float, float] | None) -> bool | None:
    """Whether the prediction-powered interval is narrower than the people-only one shown."""
    people_half, powered_half = _half_width(people), _half_width(powered)
    if people_half is None or powered_half is None:
        return None
    return powered_half < people_half


def model_only_mean(yhat_all: Array) -> float | None:
    """The mean of the model's values over every item it answered: biased by design, so no interval."""
    return float(np.mean(yhat_all)) if len(yhat_all) else None


def people_only_mean(y: Array, *, alpha: float, w: Array | None = None) -> MeanEstimate:
    """The classical mean of people's values on the labelled sample and its normal ``1 - alpha``
    interval (statsmodels ``DescrStatsW.zconfint_mean``; weighted by ``w`` for a stratified sample)."""
    n = len(y)
    if n < MIN_LABELLED:
        estimate = float(y[0]) if n else None
        return MeanEstimate(estimate=estimate, ci=None, n=n, reason=FEW_LABELLED.format(n=MIN_LABELLED))
    weights = None if w is None else w / w.sum() * n
    stats = DescrStatsW(y, weights=weights, ddof=1)
    low, high = stats.zconfint_mean(alpha=alpha)
    return MeanEstimate(estimate=float(stats.mean), ci=(float(low), float(high)), n=n)


def ppi_lambda(
    y: Array, yhat: Array, yhat_unlabeled: Array, *, w: Array | None = None, w_unlabeled: Array | None = None
) -> float:
    """The power-tuning lambda ``ppi_py.ppi_mean_ci`` chooses with ``lam=None``, through the same
    helper and inputs (it does not return it): gradients at the lambda = 1 estimate, clipped to [0, 1]."""
    n, big_n = len(y), len(yhat_unlabeled)
    y2, yhat2, unlabeled2 = reshape_to_2d(y), reshape_to_2d(yhat), reshape_to_2d(yhat_unlabeled)
    w2 = construct_weight_vector(n, w, vectorized=True)
    wu2 = construct_weight_vector(big_n, w_unlabeled, vectorized=True)
    start = ppi_py.ppi_mean_pointestimate(y2, yhat2, unlabeled2, lam=1, w=w2, w_unlabeled=wu2)
    lam = _calc_lam_glm(
        w2 * (y2 - start), w2 * (yhat2 - start), wu2 * (unlabeled2 - start), np.eye(1), coord=None, clip=True
    )
    return float(np.asarray(lam).reshape(-1)[0])


def prediction_powered_mean(
    y: Array,
    yhat: Array,
    yhat_unlabeled: Array,
    *,
    alpha: float,
    w: Array | None = None,
    w_unlabeled: Array | None = None,
    people: MeanEstimate | None = None,
) -> PredictionPowered:
    """PPI++ mean: ``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``lam=None``, the
    lambda they tune, and the effective sample size against ``people`` (the people-only interval
    shown; by default ``people_only_mean`` of ``y`` with ``w``)."""
    n, big_n = len(y), len(yhat_unlabeled)
    if n < MIN_LABELLED:
        reason = FEW_LABELLED.format(n=MIN_LABELLED)
        return PredictionPowered(
            estimate=None, ci=None, lam=None, effective_n=None, n_labeled=n, n_unlabeled=big_n, reason=reason
        )
    if big_n == 0:
        return PredictionPowered(
            estimate=None, ci=None, lam=None, effective_n=None, n_labeled=n, n_unlabeled=0, reason=NO_UNLABELLED
        )
    if people is None:
        people = people_only_mean(y, alpha=alpha, w=w)
    if np.ptp(np.concatenate([yhat, yhat_unlabeled])) == 0:
        # lambda = cov(y, yhat) / var(yhat) is 0/0: what ppi_py prints is rounding noise.
        return PredictionPowered(
            estimate=people.estimate,
            ci=people.ci,
            lam=None,
            effective_n=n if people.ci else None,
            n_labeled=n,
            n_unlabeled=big_n,
            reason=people.reason,
            note=MODEL_CONSTANT,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant labels: ppi_py divides 0 by 0 for lambda
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=alpha, lam=None, w=w, w_unlabeled=w_unlabeled)
        lam = ppi_lambda(y, yhat, yhat_unlabeled, w=w, w_unlabeled=w_unlabeled)
        # With lam=None the point estimate tunes this same lambda again (the same helper on the same
        # inputs); passing it spares a covariance of every item (tests check both agree).
        estimate = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=lam, w=w, w_unlabeled=w_unlabeled)
    ci = (float(np.ravel(low)[0]), float(np.ravel(high)[0]))
    if not all(map(math.isfinite, (*ci, float(np.ravel(estimate)[0]), lam))):
        return PredictionPowered(
            estimate=None, ci=None, lam=None, effective_n=None, n_labeled=n, n_unlabeled=big_n, reason=NO_SPREAD
        )
    effective = effective_labels(n, people.ci, ci)
    return PredictionPowered(
        estimate=float(np.ravel(estimate)[0]),
        ci=ci,
        lam=lam,
        effective_n=effective,
        n_labeled=n,
        n_unlabeled=big_n,
        reason=None if effective is not None else NO_SPREAD,
    )


def people_only_difference(
    y_a: Array, y_b: Array, *, alpha: float, w_a: Array | None = None, w_b: Array | None = None
) -> MeanEstimate:
    """Mean of group A minus group B on the labelled items, with the normal interval for two
    independent samples of unequal variance (statsmodels ``CompareMeans.zconfint_diff``)."""
    n = len(y_a) + len(y_b)
    if min(len(y_a), len(y_b)) < MIN_LABELLED:
        return MeanEstimate(estimate=None, ci=None, n=n, reason=FEW_LABELLED.format(n=MIN_LABELLED) + " in a group")
    first = DescrStatsW(y_a, weights=None if w_a is None else w_a / w_a.sum() * len(y_a), ddof=1)
    second = DescrStatsW(y_b, weights=None if w_b is None else w_b / w_b.sum() * len(y_b), ddof=1)
    low, high = CompareMeans(first, second).zconfint_diff(alpha=alpha, usevar="unequal")
    return MeanEstimate(estimate=float(first.mean - second.mean), ci=(float(low), float(high)), n=n)


@dataclass(frozen=True)
class GroupArrays:
    """One group's arrays for a difference: people's and the model's values on its labelled items,
    the model's on its unlabelled ones, and their weights (None: uniform)."""

    y: Array
    yhat: Array
    yhat_unlabeled: Array
    w: Array | None = None
    w_unlabeled: Array | None = None


@dataclass(frozen=True, kw_only=True)
class PoweredDifference:
    estimate: float | None
    ci: tuple[float, float] | None
    lam: tuple[float, float] | None  # each group's own lambda
    effective_n: int | None
    n_labeled: int
    n_unlabeled: int
    reason: str | None = None
    note: str | None = None


def _ci_and_se(low: Any, high: Any, z: float) -> tuple[float, float]:
    low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
    return (low + high) / 2, (high - low) / (2 * z)


def prediction_powered_difference(
    a: GroupArrays, b: GroupArrays, *, alpha: float, people: MeanEstimate | None = None
) -> PoweredDifference:
    """Group A minus group B by PPI++: each group's ``prediction_powered_mean`` (``ppi_py.ppi_mean_ci``,
    ``lam=None``, its own lambda) on its own items, and the normal interval of the difference of two
    independent estimates (statsmodels' ``_zconfint_generic``, which ppi_py's intervals are built with).
    The groups are disjoint sets of items, so their estimates are independent. Effective n compares
    with ``people``, the people-only difference shown (by default ``people_only_difference``)."""
    n = len(a.y) + len(b.y)
    big_n = len(a.yhat_unlabeled) + len(b.yhat_unlabeled)
    first = prediction_powered_mean(a.y, a.yhat, a.yhat_unlabeled, alpha=alpha, w=a.w, w_unlabeled=a.w_unlabeled)
    second = prediction_powered_mean(b.y, b.yhat, b.yhat_unlabeled, alpha=alpha, w=b.w, w_unlabeled=b.w_unlabeled)
    if first.ci is None or second.ci is None:
        reason = first.reason or second.reason
        return PoweredDifference(
            estimate=None, ci=None, lam=None, effective_n=None, n_labeled=n, n_unlabeled=big_n, reason=reason
        )
    z = float(norm.ppf(1 - alpha / 2))
    (_, se_a), (_, se_b) = _ci_and_se(*first.ci, z), _ci_and_se(*second.ci, z)
    # A mean with an interval has its estimate.
    assert first.estimate is not None and second.estimate is not None
    estimate = first.estimate - second.estimate
    low, high = _zconfint_generic(estimate, math.hypot(se_a, se_b), alpha, "two-sided")
    if people is None:
        people = people_only_difference(a.y, b.y, alpha=alpha, w_a=a.w, w_b=b.w)
    ci = (float(low), float(high))
    effective = effective_labels(n, people.ci, ci)
    lam = None if first.lam is None or second.lam is None else (first.lam, second.lam)
    return PoweredDifference(
        estimate=float(estimate),
        ci=ci,
        lam=lam,
        effective_n=effective,
        n_labeled=n,
        n_unlabeled=big_n,
        reason=None if effective is not None else NO_SPREAD,
        note=first.note or second.note,
    )


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    """Human labels needed for a target half-width, people-only and prediction-powered (None, with
    ``prediction_powered_reason``, when no number of the project's items reaches it)."""

    half_width: float
    alpha: float
    people_only_n: int | None
    prediction_powered_n: int | None
    sd: float
    correlation: float
    population: int
    reason: str | None = None
    prediction_powered_reason: str | None = None


NO_PLAN_SPREAD = "no spread to plan with: people's values do not vary"
NOT_REACHABLE = (
    "not reachable within the {population} items the run answered: with every one labelled, the interval "
    "would still be wider than ±{half_width:g}"
)


def _powered_effective_n(n: int, big_n: int, rho: float) -> float:
    """ppi_py's effective sample size of ``n`` labelled and ``big_n`` unlabelled items (its
    ``_optimal_pair``): ``n (n + N) / (n + (1 - rho^2) N)``."""
    return n * (n + big_n) / (n + (1 - rho**2) * big_n)


def _reaching(pair_n: float, *, people: int, rho: float, population: int) -> int:
    """ppi_py's answer, checked against the target: its rounding may fall short by a label, so the
    fewest labels from there whose effective n (every other item unlabelled) reaches ``people``."""
    n = int(min(max(pair_n, 1), people, population))
    while n < min(people, population) and _powered_effective_n(n, population - n, rho) < people:
        n += 1
    return n


def _ppi_pair_n(rho: float, people: int, population: int) -> float:
    """``ppi_py.ppi_power``'s labelled n for the effective n ``people`` within ``population`` items,
    model labels costing nearly nothing (they exist)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "effective_n too large": _plan says so in words
        try:
            pair = ppi_py.ppi_power(
                rho, cost_X=0, cost_Y=1, cost_Yhat=MODEL_LABEL_COST, effective_n=people, n_max=max(population, 1)
            )
        except ValueError:
            # A model nearly matching people rounds ppi_py's n to 0 (then 0/0): start from one label.
            return 1
    return pair["n"]


def _plan(
    *, half_width: float, alpha: float, sd: float, rho: float, population: int
) -> tuple[int, int | None, str | None]:
    z = float(norm.ppf(1 - alpha / 2))
    people = max(1, math.ceil((z * sd / half_width) ** 2))
    if people > population:
        # ppi_py answers n_max then; but no split of the project's items gets the effective n asked.
        return people, None, NOT_REACHABLE.format(population=population, half_width=half_width)
    return people, _reaching(_ppi_pair_n(rho, people, population), people=people, rho=rho, population=population), None


def plan_labels(*, half_width: float, alpha: float, sd: float, correlation: float, population: int) -> PlanResult:
    """How many labels give a ``1 - alpha`` interval of ``half_width``.

    People only: the normal interval's ``n = (z sd / half_width)^2``. Prediction-powered:
    ``ppi_py.ppi_power`` (Broska, Howes and van Loon 2024), the cheapest (labelled, unlabelled) pair
    with that people-only n as its effective sample size, when at most ``population`` items have
    model values and model labels cost nearly nothing next to people's (they already exist); not
    reachable (None, said) when even every item labelled falls short."""
    if not sd > 0:
        return PlanResult(half_width=half_width, alpha=alpha, people_only_n=None, prediction_powered_n=None,
                          sd=sd, correlation=correlation, population=population, reason=NO_PLAN_SPREAD)  # fmt: skip
    rho = float(np.clip(correlation, -1 + 1e-9, 1 - 1e-9))

    people, powered, why = _plan(half_width=half_width, alpha=alpha, sd=sd, rho=rho, population=population)
    return PlanResult(
        half_width=half_width,
        alpha=alpha,
        people_only_n=people,
        prediction_powered_n=powered,
        sd=sd,
        correlation=correlation,
        population=population,
        prediction_powered_reason=why,
    )


def plan_from_sample(
    y: Array, yhat: Array, *, half_width: float, alpha: float, population: int, w: Array | None = None
) -> PlanResult:
    """``plan_labels`` from a labelled sample: people's standard deviation there (statsmodels), and
    ``ppi_py.ppi_mean_power`` on the sample's (human, model) pairs for the prediction-powered n."""
    if len(y) < MIN_LABELLED:
        raise ValueError(FEW_LABELLED.format(n=MIN_LABELLED))
    weights = None if w is None else w / w.sum() * len(y)
    sd = float(DescrStatsW(y, weights=weights, ddof=1).std)
    if not sd > 0:
        return PlanResult(half_width=half_width, alpha=alpha, people_only_n=None, prediction_powered_n=None,
                          sd=sd, correlation=float("nan"), population=population, reason=NO_PLAN_SPREAD)  # fmt: skip
    rho = 0.0
    if np.std(yhat) > 0:  # a model that gives one value everywhere carries no information: people only
        # The correlation ppi_py.ppi_mean_power plans with, by the same helper on the same gradients
        # (it cannot plan with a model that matches people exactly: rho = 1 divides by zero there).
        y2, yhat2 = reshape_to_2d(y), reshape_to_2d(yhat)
        w2 = construct_weight_vector(len(y), w, vectorized=True)
        start = np.sum(w2 * y2) / np.sum(w2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            found = float(np.ravel(_get_ppi_corr(w2 * (y2 - start), w2 * (yhat2 - start), np.eye(1)))[0])
        rho = found if math.isfinite(found) else 0.0
    rho = float(np.clip(rho, -1 + 1e-9, 1 - 1e-9))

    people, powered, why = _plan(half_width=half_width, alpha=alpha, sd=sd, rho=rho, population=population)
    return PlanResult(
        half_width=half_width,
        alpha=alpha,
        people_only_n=people,
        prediction_powered_n=powered,
        sd=sd,
        correlation=rho,
        population=population,
        prediction_powered_reason=why,
    )
