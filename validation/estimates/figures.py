"""The estimates' figures: a forest plot of the three estimates and the planner's curves."""

from __future__ import annotations

from typing import Any

from validation.estimates.build import EstimateParameters, project_estimates
from validation.estimates.planning import Plan
from validation.plots import svg_data_uri
from validation.reports.base import Figure

__all__ = ["forest_figure", "plan_figure", "report_forest"]


def _point(part: dict[str, Any]) -> list[float | None] | None:
    if part.get("estimate") is None:
        return None
    ci = part.get("ci") or [None, None]
    return [part["estimate"], ci[0], ci[1]]


def forest_figure(result: dict[str, Any], *, key: str = "estimates") -> Figure:
    """Every dimension (and group) with its model-only point and people-only and PPI intervals."""
    rows = []
    for entry in result[key]:
        label = entry["dimension"] if entry.get("group") is None else f"{entry['dimension']} · {entry['group']}"
        if key == "differences":
            label = f"{entry['dimension']} · {' − '.join(entry['groups'])}"
        rows.append(
            {
                "label": label,
                "model": _point(entry["model_only"]),
                "people": _point(entry["people_only"]),
                "ppi": _point(entry["prediction_powered"]),
            }
        )
    level = round((1 - result["alpha"]) * 100, 2)
    title = "Estimates" if key == "estimates" else "Differences"
    return Figure(
        key=f"forest-{key}",
        title=f"{title}: model only, people only and prediction-powered ({level:g}% intervals)",
        kind="forest",
        data={"rows": rows, "xlabel": "mean" if key == "estimates" else "difference of means"},
        alt=f"Forest plot of {len(rows)} rows: per row the model-only mean and the people-only and "
        "prediction-powered intervals.",
    )


def plan_figure(plan: Plan) -> Figure:
    """Half-width against human labels, people only and prediction-powered, the current n marked."""
    return Figure(
        key="plan",
        title=f"Half-width against human labels ({plan.dimension})",
        kind="lines",
        data={
            "series": [
                {"name": "People only", "x": [p[1] for p in plan.curve], "y": [p[0] for p in plan.curve]},
                {"name": "Prediction-powered", "x": [p[2] for p in plan.curve], "y": [p[0] for p in plan.curve]},
            ],
            "xlabel": "human labels (n)",
            "ylabel": "interval half-width",
            "mark": plan.current_n or None,
            "mark_label": f"now: {plan.current_n}",
        },
        alt="Interval half-width against the number of human labels, people only and prediction-powered.",
    )


def report_forest(*, project: Any, run_id: int | None) -> str | None:
    """The forest plot the agreement report shows for its judge run (as an SVG data URI), or None
    without a run or with nothing to estimate."""
    if run_id is None:
        return None
    try:
        evaluation = project_estimates(project=project, parameters=EstimateParameters(run=run_id))
    except ValueError:
        return None
    if not any(entry["prediction_powered"].get("estimate") is not None for entry in evaluation.result["estimates"]):
        return None
    return svg_data_uri(forest_figure(evaluation.result))
