"""One row of the estimates (a dimension, overall or in a group) and one group difference, as JSON.

The sample's strata are weighted by the share of their items that people *labelled* (not drawn):
a stratum half done counts its labelled items for its whole size, which assumes the missing labels
are missing at random within the stratum; each output says so and warns per stratum. A stratum
with no label cannot be estimated and is left out (said). People only: the stratified mean and
variance (``stratified``); prediction-powered: ``ppi_py`` on pooled inverse-share weights, and
stratified PPI beside it when the sample is stratified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from validation.estimates import inference
from validation.estimates.stratified import (
    StratifiedPowered,
    StratumArrays,
    difference_of_means,
    stratified_people_mean,
    stratified_prediction_powered_mean,
)

__all__ = ["DimensionArrays", "group_difference", "one_estimate", "pooled_arrays"]

Array = npt.NDArray[np.float64]
PARTLY_LABELLED = (
    "stratum {name!r}: {labelled} of {sampled} sampled items labelled; weighted by the labelled share "
    "(the missing labels assumed missing at random within the stratum)"
)
FEW_LABELS = "stratum {name!r}: {labelled} labelled item(s), fewer than 2: no spread within it"
NO_LABELS = "stratum {name!r}: no labelled item; its {size} item(s) are left out of the people-only and " \
    "prediction-powered estimates"  # fmt: skip
MODEL_DOES_NOT_HELP = (
    "The model does not help here: the {which} interval is not narrower than the people-only one; "
    "report the people-only figure."
)
VARIANTS = {
    "prediction_powered": "prediction-powered",
    "prediction_powered_stratified": "stratified prediction-powered",
}


@dataclass(frozen=True)
class DimensionArrays:
    """One dimension's values over the items the run answered, with the sample's design."""

    model: Array  # NaN: no number from the run
    human: Array  # NaN: no people's value (or outside the sample)
    strata: npt.NDArray[np.intp] | None  # each item's stratum as a position in stratum_names; stratified only
    in_sample: npt.NDArray[np.bool_] | None  # None without a validation sample
    stratum_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Parts:
    strata: list[StratumArrays]
    pooled: inference.GroupArrays
    warnings: list[str]
    stratified: bool


def _parts(arrays: DimensionArrays, members: np.ndarray) -> _Parts:
    """The members' strata (those with a label) and the pooled arrays with their weights."""
    has_model = members & ~np.isnan(arrays.model)
    labelled = has_model & ~np.isnan(arrays.human)
    unlabelled = has_model & np.isnan(arrays.human)
    strata: list[StratumArrays] = []
    warnings: list[str] = []
    kept = np.zeros(len(arrays.model), dtype=bool)
    w_labelled = np.ones(len(arrays.model))
    w_unlabelled = np.ones(len(arrays.model))
    if arrays.strata is None:
        members_of: list[tuple[str, np.ndarray]] = [("", has_model)]
    else:
        # Integer codes: a mask per stratum present, no comparison of names item by item.
        present = np.flatnonzero(np.bincount(arrays.strata[has_model], minlength=len(arrays.stratum_names)))
        members_of = [(arrays.stratum_names[code], has_model & (arrays.strata == code)) for code in present]
    for name, mine in members_of:
        n_h, size = int((mine & labelled).sum()), int(mine.sum())
        shown = name if arrays.strata is not None else "(all items)"
        if n_h == 0:
            if arrays.strata is not None:
                warnings.append(NO_LABELS.format(name=shown, size=size))
            continue
        if arrays.in_sample is not None:
            sampled = int((mine & arrays.in_sample).sum())
            if n_h < sampled:
                warnings.append(PARTLY_LABELLED.format(name=shown, labelled=n_h, sampled=sampled))
        if n_h < inference.MIN_LABELLED and arrays.strata is not None:
            warnings.append(FEW_LABELS.format(name=shown, labelled=n_h))
        kept |= mine
        w_labelled[mine] = size / n_h
        w_unlabelled[mine] = size / (size - n_h) if size > n_h else 1.0
        strata.append(
            StratumArrays(
                name=name,
                y=arrays.human[mine & labelled],
                yhat=arrays.model[mine & labelled],
                yhat_unlabeled=arrays.model[mine & unlabelled],
            )
        )
    stratified = arrays.strata is not None
    lab, unlab = kept & labelled, kept & unlabelled
    pooled = inference.GroupArrays(
        y=arrays.human[lab],
        yhat=arrays.model[lab],
        yhat_unlabeled=arrays.model[unlab],
        w=w_labelled[lab] if stratified else None,
        w_unlabeled=w_unlabelled[unlab] if stratified else None,
    )
    return _Parts(strata=strata, pooled=pooled, warnings=warnings, stratified=stratified)


def pooled_arrays(arrays: DimensionArrays) -> inference.GroupArrays:
    """Every item's labelled and unlabelled arrays with the labelled-share weights (the planner's)."""
    return _parts(arrays, np.ones(len(arrays.model), dtype=bool)).pooled


def _people_json(result: inference.MeanEstimate) -> dict[str, Any]:
    data: dict[str, Any] = {"estimate": result.estimate, "ci": list(result.ci) if result.ci else None, "n": result.n}
    if result.reason:
        data["reason"] = result.reason
    return data


def _ppi_json(
    result: inference.PredictionPowered | inference.PoweredDifference, people: inference.MeanEstimate
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "estimate": result.estimate,
        "ci": list(result.ci) if result.ci else None,
        # A difference has each group's own lambda.
        "lambda": list(result.lam) if isinstance(result.lam, tuple) else result.lam,
        "effective_n": result.effective_n,
        "model_helps": inference.model_helps(people.ci, result.ci) if result.note is None else False,
    }
    if result.reason:
        data["reason"] = result.reason
    if result.note:
        data["lambda_reason"] = result.note
    return data


def _stratified_json(
    estimate: float | None,
    ci: tuple[float, float] | None,
    powered: StratifiedPowered | None,
    people: inference.MeanEstimate,
    reason: str | None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "estimate": estimate,
        "ci": list(ci) if ci else None,
        "lambda": dict(powered.lam) if powered is not None else None,
        "effective_n": inference.effective_labels(people.n, people.ci, ci),
        "model_helps": inference.model_helps(people.ci, ci),
    }
    if powered is not None and powered.notes:
        data["lambda_reason"] = "; ".join(powered.notes)
    if estimate is None and reason:
        data["reason"] = reason
    return data


def _model_json(estimate: float | None) -> dict[str, Any]:
    return {"estimate": estimate} if estimate is not None else {"estimate": None, "reason": inference.NO_MODEL_VALUES}


def _advice(entry: dict[str, Any]) -> list[str]:
    """What to report where a prediction-powered interval is no narrower than the people-only one."""
    return [
        MODEL_DOES_NOT_HELP.format(which=which)
        for key, which in VARIANTS.items()
        if key in entry and entry[key].get("model_helps") is False
    ]


def one_estimate(arrays: DimensionArrays, members: np.ndarray, *, alpha: float, fpc: bool) -> dict[str, Any]:
    """Model only, people only and prediction-powered (and stratified PPI) for ``members``."""
    parts = _parts(arrays, members)
    has_model = members & ~np.isnan(arrays.model)
    people = stratified_people_mean(parts.strata, alpha=alpha, fpc=fpc)
    pooled = parts.pooled
    powered = inference.prediction_powered_mean(
        pooled.y, pooled.yhat, pooled.yhat_unlabeled, alpha=alpha, w=pooled.w, w_unlabeled=pooled.w_unlabeled,
        people=people,
    )  # fmt: skip
    entry: dict[str, Any] = {
        "model_only": _model_json(inference.model_only_mean(arrays.model[has_model])),
        "people_only": _people_json(people),
        "prediction_powered": _ppi_json(powered, people),
    }
    if parts.stratified:
        strat = stratified_prediction_powered_mean(parts.strata, alpha=alpha, fpc=fpc)
        entry["prediction_powered_stratified"] = _stratified_json(strat.estimate, strat.ci, strat, people, strat.reason)
    entry["warnings"] = parts.warnings + _advice(entry)
    return entry


def group_difference(
    arrays: DimensionArrays, in_a: np.ndarray, in_b: np.ndarray, *, alpha: float, fpc: bool
) -> dict[str, Any]:
    """Group A minus group B, the same ways: independent estimates of disjoint items."""
    first, second = _parts(arrays, in_a), _parts(arrays, in_b)
    model_a, model_b = arrays.model[in_a & ~np.isnan(arrays.model)], arrays.model[in_b & ~np.isnan(arrays.model)]
    model_only = float(model_a.mean() - model_b.mean()) if len(model_a) and len(model_b) else None
    people_a = stratified_people_mean(first.strata, alpha=alpha, fpc=fpc)
    people_b = stratified_people_mean(second.strata, alpha=alpha, fpc=fpc)
    estimate, ci = difference_of_means((people_a.estimate, people_a.ci), (people_b.estimate, people_b.ci), alpha=alpha)
    reason = people_a.reason or people_b.reason
    people = inference.MeanEstimate(
        estimate=estimate, ci=ci, n=people_a.n + people_b.n, reason=None if ci else (reason or inference.NO_SPREAD)
    )
    powered = inference.prediction_powered_difference(first.pooled, second.pooled, alpha=alpha, people=people)
    entry: dict[str, Any] = {
        "model_only": _model_json(model_only),
        "people_only": _people_json(people),
        "prediction_powered": _ppi_json(powered, people),
    }
    if first.stratified:
        strat_a = stratified_prediction_powered_mean(first.strata, alpha=alpha, fpc=fpc)
        strat_b = stratified_prediction_powered_mean(second.strata, alpha=alpha, fpc=fpc)
        estimate, ci = difference_of_means((strat_a.estimate, strat_a.ci), (strat_b.estimate, strat_b.ci), alpha=alpha)
        entry["prediction_powered_stratified"] = _stratified_json(
            estimate, ci, None, people, strat_a.reason or strat_b.reason
        )
    entry["warnings"] = first.warnings + second.warnings + _advice(entry)
    return entry
