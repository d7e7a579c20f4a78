"""A project's aggregation: each dimension (question) of its people's latest answers aggregated by one
method (``validation.aggregation.methods``), as the ``aggregate`` command, page, API and snapshots give it.

Runs are never counted as annotators: only with ``runs`` does a judge run join as one more rater, and
the JSON and tables then name it as a run (``"run": true``), so the model's competence stands on the
people's scale without being taken for a person.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotation.kinds.base import RatingDimension
from annotation.models import Project
from validation.aggregation.frames import ORDINAL_NOTE, question_frame
from validation.aggregation.methods import QuestionAggregation, aggregate_question, check_method
from validation.aggregation.tables import aggregation_tables
from validation.evaluations.base import (
    Evaluation,
    check_bootstrap,
    check_runs,
    current_versions,
    evaluated_runs,
    inputs_digest,
)
from validation.ratings import JUDGE_PREFIX, judge_rater_name, project_ratings

__all__ = [
    "NAME",
    "AggregateParameters",
    "project_aggregation",
]

NAME = "aggregate"
TITLE = "Aggregation and annotator competence"
UNKNOWN_DIMENSION = "no dimension {name!r} in a {kind} project; known: {known}"


@dataclass(frozen=True, kw_only=True)
class AggregateParameters:
    """What besides the data changes an aggregation (a snapshot stores it)."""

    method: str = "dawid_skene"
    dimension: str = ""
    runs: tuple[int, ...] = ()
    bootstrap: int = 0
    seed: int = 0
    confidence_level: float = 0.95
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": NAME,
            "method": self.method,
            "dimension": self.dimension,
            "runs": list(self.runs),
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> AggregateParameters:
        return cls(
            method=data["method"],
            dimension=data.get("dimension", ""),
            runs=tuple(data.get("runs", ())),
            bootstrap=data.get("bootstrap", 0),
            seed=data.get("seed", 0),
            confidence_level=data.get("confidence_level", 0.95),
        )

    def check(self, project: Project) -> None:
        """The caps and names, as a ValueError (exit code 1, a 400, a form error)."""
        check_method(self.method)
        names = [d.name for d in project.task_kind.rating_dimensions]
        if self.dimension and self.dimension not in names:
            raise ValueError(UNKNOWN_DIMENSION.format(name=self.dimension, kind=project.kind, known=", ".join(names)))
        check_runs(self.runs)
        check_bootstrap(self.bootstrap)


def _json_label(value: Any, dimension: RatingDimension) -> Any:
    """A label as the kind writes it: 1.0 read from a 0/1/2 scale is the category 1."""
    if value is None:
        return None
    if isinstance(value, float | np.floating) and float(value).is_integer():
        number = int(value)
        return number if not dimension.categories or number in dimension.categories else float(value)
    return value.item() if isinstance(value, np.generic) else value


def _interval(ci: Any) -> list[float] | None:
    return None if ci is None else [ci.low, ci.high]


def project_aggregation(*, project: Project, parameters: AggregateParameters) -> Evaluation:
    """Aggregate every dimension (or the one named) of the project's latest human answers.

    Raises ValueError on bad parameters and ``UnknownJudgeRun`` for a run of another project or kind.
    """
    parameters.check(project)
    kind = project.task_kind
    runs = evaluated_runs(project, parameters.runs)
    ratings = project_ratings(project=project, judge_run_ids=parameters.runs)
    people = [r for r in ratings.raters if not r.startswith(JUDGE_PREFIX)]
    run_raters = {judge_rater_name(run.run_id): run for run in runs}
    raters = [*people, *run_raters]
    dimensions = [d for d in kind.rating_dimensions if not parameters.dimension or d.name == parameters.dimension]
    items: list[dict[str, Any]] = []
    annotators: list[dict[str, Any]] = []
    summaries: dict[str, dict[str, Any]] = {}
    results: dict[str, QuestionAggregation] = {}
    for dimension in dimensions:
        frame = question_frame(ratings, dimension.name, raters)
        result = aggregate_question(
            frame,
            method=parameters.method,
            seed=parameters.seed,
            bootstrap=parameters.bootstrap,
            confidence_level=parameters.confidence_level,
        )
        results[dimension.name] = result
        ordered = dimension.level != "nominal"
        if ordered:
            # The people's median and mean per unit (runs never enter them); NaN where no person rated.
            numbers = ratings.matrix(dimension.name, people).astype(float)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a unit only a run rated: no person's value
                medians = np.nanmedian(numbers, axis=1) if people else np.full(ratings.n_units, np.nan)
                means = np.nanmean(numbers, axis=1) if people else np.full(ratings.n_units, np.nan)
        for position, task in enumerate(result.tasks):
            entry: dict[str, Any] = {
                "external_id": str(ratings.unit_external_ids[task]),
                "dimension": dimension.name,
                "label": _json_label(result.labels[position], dimension),
                "probability": float(result.probability[position]),
                "majority": _json_label(result.majority[position], dimension),
                "flipped": bool(result.flipped[position]),
            }
            if ratings.unit_suffixes[task]:
                entry["part"] = str(ratings.unit_suffixes[task])
            if ordered:
                entry["median"] = None if np.isnan(medians[task]) else float(medians[task])
                entry["mean"] = None if np.isnan(means[task]) else float(means[task])
            items.append(entry)
        for annotator in result.annotators:
            run = run_raters.get(annotator.rater)
            record: dict[str, Any] = {
                "dimension": dimension.name,
                "rater": run.label if run else annotator.rater,
                "run": run is not None,
                "competence": annotator.competence,
                "ci": _interval(annotator.confidence_interval),
                "n_items": annotator.n_items,
            }
            if run is not None:
                record["run_id"] = run.run_id
            if annotator.spamming is not None:
                record["spamming"] = annotator.spamming
                record["spamming_ci"] = _interval(annotator.spamming_interval)
            if annotator.confusion is not None:
                record["confusion"] = [list(row) for row in annotator.confusion]
            annotators.append(record)
        summaries[dimension.name] = {
            "level": dimension.level,
            "n_items": len(result.tasks),
            "n_annotators": len(result.annotators),
            "flips": result.flips,
            "ties": result.ties,
            "classes": [_json_label(c, dimension) for c in result.classes],
            "competence": result.competence_method,
            "reason": result.reason,
            **({"note": ORDINAL_NOTE} if ordered else {}),
        }
    first = next(iter(results.values()), None)
    result_json: dict[str, Any] = {
        "project": project.slug,
        "method": parameters.method,
        "parameters": dict(first.parameters) if first else {},
        "seed": parameters.seed,
        "bootstrap": parameters.bootstrap,
        "confidence_level": parameters.confidence_level,
        "with_runs": [run.run_id for run in runs],
        "items": items,
        "annotators": annotators,
        "flips": sum(s["flips"] for s in summaries.values()),
        "dimensions": summaries,
    }
    digest = inputs_digest({"ratings": ratings.digest(), "raters": raters})
    return Evaluation(
        name=NAME,
        project=project.slug,
        title=TITLE,
        parameters=parameters.to_json_dict(),
        inputs_sha256=digest,
        library_versions=current_versions(),
        result=result_json,
        tables=aggregation_tables(result_json, {d.name: d for d in dimensions}),
        judge_label="; ".join(run.label for run in runs),
    )
