"""The result objects: frozen dataclasses carrying a statistic with its interval, n and method, and
the reasons a statistic can be undefined. ``DimensionAgreement.to_json_dict`` is the
``agreement_stats`` JSON shape (DESIGN section 5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from validation.agreement.measures import (
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    MAJORITY,
    MAJORITY_PERCENT_AGREEMENT,
    PERCENT_AGREEMENT,
    WEIGHTINGS,
    Level,
    cohen_key,
    majority_kappa_key,
)

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
NO_MAJORITY_PAIRS = "no unit has both a reference rating and a majority among the other raters"
NO_EXPOSURE_PAIRS = "no rating made with the suggestion {which} has a reference rating to compare with"
NOT_IN_CATEGORIES = "{where}: {value!r} is not one of the categories {categories}"

PERCENTILE_METHOD = "percentile bootstrap over units (resampled with replacement)"


class ConfidenceInterval(NamedTuple):
    low: float
    high: float


@dataclass(frozen=True, kw_only=True)
class AgreementResult:
    """One agreement coefficient (or another statistic of the ratings).

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
class ReferenceAgreement:
    """The other raters' majority against the reference rater, over units where both exist.

    A unit whose other raters tie for the most frequent value has no majority and is left out.
    """

    percent_agreement: AgreementResult
    cohen_kappa: CohenKappa


@dataclass(frozen=True, kw_only=True)
class BootstrapSettings:
    n_resamples: int
    seed: int
    confidence_level: float
    method: str = PERCENTILE_METHOD


@dataclass(frozen=True, kw_only=True)
class ConfusionMatrix:
    """Counts of rating pairs: ``counts[i][j]`` pairs with the row value ``categories[i]`` and the
    column value ``categories[j]``.

    ``rows`` and ``columns`` say whose ratings they are: two raters; the majority of the other raters
    and the reference; or, with more than two raters, every ordered pair of different raters on a
    unit (so the matrix is symmetric and each unordered pair counts twice).
    """

    categories: tuple[Any, ...]
    counts: tuple[tuple[int, ...], ...]
    rows: str
    columns: str
    n_pairs: int


@dataclass(frozen=True, kw_only=True)
class ExposureComparison:
    """Agreement of raters with a reference (an LLM suggestion) when they could see it and when not.

    For each group, Cohen's kappa and percent agreement over the pooled (rating, reference) pairs;
    the differences are shown minus hidden, so anchoring shows as a positive difference.
    """

    kappa_shown: AgreementResult
    kappa_hidden: AgreementResult
    kappa_difference: AgreementResult
    agreement_shown: AgreementResult
    agreement_hidden: AgreementResult
    agreement_difference: AgreementResult
    n_pairs_shown: int
    n_pairs_hidden: int
    weighting: str
    bootstrap: BootstrapSettings | None = None


# -- one dimension, or several sharing units ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DimensionAgreement:
    """Every agreement measure for one dimension (one factor, label or verdict).

    ``cohen_kappa`` is None unless there are exactly two raters; ``spearman``, ``kendall`` and
    ``majority_vs_reference`` are None unless a reference rater was given. ``n_units``, ``n_raters``
    and ``n_ratings`` describe the ratings behind the agreement coefficients (without the reference
    when it is kept out of them). :meth:`to_json_dict` gives the ``agreement_stats`` shape.
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
    reference_in_coefficients: bool = True
    spearman: CorrelationResult | None = None
    kendall: CorrelationResult | None = None
    majority_vs_reference: ReferenceAgreement | None = None
    bootstrap: BootstrapSettings | None = None
    raters: tuple[str, ...] = field(default=(), compare=False)

    def measures(self) -> dict[str, AgreementResult | CorrelationResult | None]:
        """Each measure under its JSON path (``cohen_kappa.linear`` ...), None where not computed."""
        out: dict[str, AgreementResult | CorrelationResult | None] = {PERCENT_AGREEMENT: self.percent_agreement}
        for weighting in WEIGHTINGS:
            out[cohen_key(weighting)] = getattr(self.cohen_kappa, weighting) if self.cohen_kappa else None
        out[FLEISS_KAPPA] = self.fleiss_kappa
        out[KRIPPENDORFF_ALPHA] = self.krippendorff_alpha
        if self.reference is not None:
            out["spearman"] = self.spearman
            out["kendall"] = self.kendall
            majority = self.majority_vs_reference
            out[MAJORITY_PERCENT_AGREEMENT] = majority.percent_agreement if majority else None
            for weighting in WEIGHTINGS:
                out[majority_kappa_key(weighting)] = getattr(majority.cohen_kappa, weighting) if majority else None
        return out

    def notes(self) -> dict[str, str]:
        """Why each null value is null, keyed by its JSON path."""
        notes: dict[str, str] = {}
        if self.cohen_kappa is None:
            notes["cohen_kappa"] = NEEDS_TWO_RATERS.format(n=self.n_raters)
        else:
            _one_note(notes, "cohen_kappa", self.cohen_kappa)
        if self.majority_vs_reference is not None:
            _one_note(notes, f"{MAJORITY}.cohen_kappa", self.majority_vs_reference.cohen_kappa)
        for key, result in self.measures().items():
            if result is None:
                continue
            if result.statistic is None:
                group = key.rsplit(".", 1)[0]
                if not (key.split(".")[-1] in WEIGHTINGS and group in notes):
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
            "cohen_kappa": _kappa_json(self.cohen_kappa, lambda r: r.statistic),
            "fleiss_kappa": self.fleiss_kappa.statistic,
            "krippendorff_alpha": self.krippendorff_alpha.statistic,
        }
        if self.reference is not None:
            majority = self.majority_vs_reference
            out["reference"] = self.reference
            out["reference_in_coefficients"] = self.reference_in_coefficients
            out["spearman"] = _correlation_json(self.spearman, "rho")
            out["kendall"] = _correlation_json(self.kendall, "tau")
            out["majority_vs_reference"] = (
                None
                if majority is None
                else {
                    "percent_agreement": majority.percent_agreement.statistic,
                    "cohen_kappa": _kappa_json(majority.cohen_kappa, lambda r: r.statistic),
                    "n": majority.percent_agreement.n_units,
                }
            )
        # Each coefficient's own n: the units it was computed on (Cohen's kappa: units both raters
        # rated), which ``n_units`` (units anyone rated) is not.
        out["n"] = {key: _n_json(result) for key, result in self.measures().items()}
        if self.bootstrap is not None:
            ci: dict[str, Any] = {
                "percent_agreement": _interval_json(self.percent_agreement),
                "cohen_kappa": _kappa_json(self.cohen_kappa, _interval_json),
                "fleiss_kappa": _interval_json(self.fleiss_kappa),
                "krippendorff_alpha": _interval_json(self.krippendorff_alpha),
            }
            if self.reference is not None:
                majority = self.majority_vs_reference
                ci["spearman"] = _interval_json(self.spearman)
                ci["kendall"] = _interval_json(self.kendall)
                ci["majority_vs_reference"] = (
                    None
                    if majority is None
                    else {
                        "percent_agreement": _interval_json(majority.percent_agreement),
                        "cohen_kappa": _kappa_json(majority.cohen_kappa, _interval_json),
                    }
                )
            out["ci"] = ci
            out["bootstrap"] = {
                "n_resamples": self.bootstrap.n_resamples,
                "seed": self.bootstrap.seed,
                "confidence_level": self.bootstrap.confidence_level,
                "method": self.bootstrap.method,
            }
        out["notes"] = self.notes()
        return out


def _one_note(notes: dict[str, str], key: str, kappa: CohenKappa) -> None:
    reasons = {getattr(kappa, w).reason for w in WEIGHTINGS}
    if len(reasons) == 1 and None not in reasons:
        # One data problem behind all three: say it once.
        notes[key] = reasons.pop()


def _n_json(result: AgreementResult | None) -> int | None:
    return None if result is None or result.statistic is None else result.n_units


def _kappa_json(kappa: CohenKappa | None, value: Callable[[AgreementResult], Any]) -> dict[str, Any] | None:
    return None if kappa is None else {w: value(getattr(kappa, w)) for w in WEIGHTINGS}


def _interval_json(result: AgreementResult | None) -> list[float] | None:
    return None if result is None or result.confidence_interval is None else list(result.confidence_interval)


def _correlation_json(result: CorrelationResult | None, name: str) -> dict[str, Any] | None:
    if result is None or result.statistic is None:
        return None
    return {name: result.statistic, "p": result.pvalue, "n": result.n_units}


@dataclass(frozen=True, kw_only=True)
class JointAgreement:
    """Agreement on several dimensions that share units (the six CoPA factors of one response).

    ``overall`` holds, for each measure defined on every dimension, the unweighted mean over the
    dimensions (CoPA's Table 7 "Overall" row is this mean); its interval comes from the same unit
    resamples as the dimensions' intervals, so it reflects their dependence.
    """

    dimensions: dict[str, DimensionAgreement]
    overall: dict[str, AgreementResult]
    bootstrap: BootstrapSettings | None = None
    #: Anchoring comparisons asked for with the dimensions (``joint_agreement(exposures=...)``), by dimension.
    exposures: dict[str, ExposureComparison] = field(default_factory=dict)
