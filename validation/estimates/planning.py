"""``plan_sample``: how many human labels a target half-width costs, people only and prediction-powered.

From the project's labelled sample and a judge run (``validation.estimates.build``): for each
estimated dimension, people's spread and the model-human relation on the sample, then
``validation.estimates.inference.plan_from_sample`` (``ppi_py.ppi_mean_power``). Every dimension
asked (all, unless one is named) is planned, and each way's answer is the largest over them, naming
the dimension it comes from ("±0.05 on every factor" needs the most of any factor, people only and
prediction-powered alike; the two may come from different factors). Without
labelled items yet, stated values (people's standard deviation or share, the model-human
correlation) plan instead (``plan_labels``, ``ppi_py.ppi_power``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from annotation.models import Project
from validation.estimates.build import EstimateParameters, estimate_inputs
from validation.estimates.entries import pooled_arrays
from validation.estimates.inference import MIN_LABELLED, PlanResult, plan_from_sample, plan_labels

__all__ = ["StatedValues", "half_width_problem", "plan_json", "project_plan", "stated_problem"]

BAD_HALF_WIDTH = "half-width must be a finite number above 0"
UNKNOWN_DIMENSION = "no dimension {name!r}; dimensions: {names}"
NEEDS_STATED = (
    "fewer than 2 labelled items: state people's standard deviation (or share) and the model-human correlation"
)
BAD_SD = "sd must be a finite number above 0"
BAD_SHARE = "share must be a number above 0 and below 1"
BAD_CORRELATION = "correlation must be a number from -1 to 1"
#: Half-widths the page's plot shows, as multiples of the target.
CURVE_STEPS = tuple(np.round(np.geomspace(0.5, 4, 15), 3))


@dataclass(frozen=True, kw_only=True)
class StatedValues:
    """What to plan with before any item is labelled."""

    sd: float | None = None
    share: float | None = None
    correlation: float = 0.0

    def spread(self) -> float:
        problem = stated_problem(sd=self.sd, share=self.share, correlation=self.correlation)
        if problem or (self.sd is None and self.share is None):
            raise ValueError(problem or BAD_SD)
        if self.share is not None:
            return math.sqrt(self.share * (1 - self.share))
        return cast(float, self.sd)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def half_width_problem(value: object) -> str | None:
    return None if _number(value) and cast(float, value) > 0 else BAD_HALF_WIDTH


def stated_problem(*, sd: object = None, share: object = None, correlation: object = 0.0) -> str | None:
    """Why stated values are refused, naming the first refused one (NaN and infinities too), or None."""
    if sd is not None and not (_number(sd) and cast(float, sd) > 0):
        return BAD_SD
    if share is not None and not (_number(share) and 0 < cast(float, share) < 1):
        return BAD_SHARE
    if not (_number(correlation) and -1 <= cast(float, correlation) <= 1):
        return BAD_CORRELATION
    return None


@dataclass(frozen=True, kw_only=True)
class Plan:
    #: The largest over the dimensions asked: people-only n from ``people_only_dimension``'s plan,
    #: prediction-powered n (or why none reaches the target) from ``dimension``'s.
    result: PlanResult
    dimension: str
    people_only_dimension: str
    basis: str
    current_n: int
    #: (half-width, people-only n, prediction-powered n) for the plot, the largest over the dimensions.
    curve: tuple[tuple[float, int | None, int | None], ...]


def _hardest(plans: dict[str, tuple[PlanResult, int]]) -> tuple[str, str]:
    """The dimension needing the most prediction-powered labels (one it cannot reach first) and the
    one needing the most people-only labels."""

    def powered(name: str) -> float:
        result = plans[name][0]
        if result.prediction_powered_reason:
            return math.inf
        return result.prediction_powered_n or 0

    return max(plans, key=powered), max(plans, key=lambda name: plans[name][0].people_only_n or 0)


def project_plan(
    *,
    project: Project,
    run: int,
    half_width: float,
    alpha: float = 0.05,
    dimension: str | None = None,
    stated: StatedValues | None = None,
) -> Plan:
    """The labels needed for ``half_width`` at ``1 - alpha`` (ValueError for bad input)."""
    if half_width_problem(half_width):
        raise ValueError(BAD_HALF_WIDTH)
    if stated is not None:
        stated.spread()  # refused values are refused even when the sample makes them unneeded
    inputs = estimate_inputs(project=project, parameters=EstimateParameters(run=run, alpha=alpha))
    names = [name for name, _ in inputs.dimensions]
    if dimension is not None and dimension not in names:
        raise ValueError(UNKNOWN_DIMENSION.format(name=dimension, names=", ".join(names)))
    candidates = [dimension] if dimension else names

    def plan_for(name: str, width: float) -> tuple[PlanResult, int]:
        has_model = ~np.isnan(inputs.model[name])
        population = int(has_model.sum())
        pooled = pooled_arrays(inputs.arrays(name))
        n = len(pooled.y)
        if n >= MIN_LABELLED:
            plan = plan_from_sample(pooled.y, pooled.yhat, half_width=width, alpha=alpha, population=population,
                                    w=pooled.w)  # fmt: skip
            return plan, n
        if stated is None:
            raise ValueError(NEEDS_STATED)
        return plan_labels(
            half_width=width, alpha=alpha, sd=stated.spread(), correlation=stated.correlation, population=population
        ), n

    def plan_all(width: float) -> tuple[PlanResult, str, str, int]:
        plans = {name: plan_for(name, width) for name in candidates}
        powered, people = _hardest(plans)
        result = replace(plans[powered][0], people_only_n=plans[people][0].people_only_n)
        return result, powered, people, plans[powered][1]

    result, chosen, people_dimension, n = plan_all(half_width)
    basis = f"sample of {n}" if n >= MIN_LABELLED else "stated values"
    basis += (
        f", dimension {chosen}"
        if chosen == people_dimension
        else (f"; prediction-powered: dimension {chosen}, people only: dimension {people_dimension}")
    )
    curve = []
    for step in CURVE_STEPS:
        point = plan_all(half_width * float(step))[0]
        curve.append((half_width * float(step), point.people_only_n, point.prediction_powered_n))
    return Plan(result=result, dimension=chosen, people_only_dimension=people_dimension, basis=basis, current_n=n,
                curve=tuple(curve))  # fmt: skip


def plan_json(plan: Plan) -> dict[str, Any]:
    """The ``plan_sample`` JSON (keys fixed)."""
    return {
        "half_width": plan.result.half_width,
        "alpha": plan.result.alpha,
        "people_only_n": plan.result.people_only_n,
        "prediction_powered_n": plan.result.prediction_powered_n,
        # Why there is no prediction-powered n (the target is out of reach within the project's items).
        "prediction_powered_reason": plan.result.prediction_powered_reason,
        "prediction_powered_dimension": plan.dimension,
        "people_only_dimension": plan.people_only_dimension,
        "population": plan.result.population,
        "basis": plan.basis,
    }
