"""``position_bias``: how often people prefer the response they were shown first.

Each answer records which response its rater saw first (``shown_first``, drawn per annotator and
item). Over each rater's latest answer that prefers one response and records the order, the share
that prefers the first-shown one estimates the position bias: 0.5 is none. The interval and the test
against 0.5 are ``scipy.stats.binomtest``'s (Clopper-Pearson interval, two-sided exact test); ties
and answers without a recorded order are counted apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy.stats import binomtest

from annotation.latest import latest_annotations
from annotation.models import Project
from validation.evaluations.base import Evaluation, check_kind, current_versions, inputs_digest
from validation.reports import Cell, Row, Table

KIND = "pairwise_preference"
NAME = "position_bias"
NO_ORDERED_PREFERENCE = "no answer prefers a response and records the order it was shown in"


@dataclass(frozen=True, kw_only=True)
class PositionBiasParameters:
    confidence_level: float = 0.95

    def to_json_dict(self) -> dict[str, Any]:
        return {"evaluation": NAME, "confidence_level": self.confidence_level}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> PositionBiasParameters:
        return cls(confidence_level=data["confidence_level"])


@dataclass(frozen=True)
class PositionCounts:
    first: int
    second: int
    ties: int
    unordered: int

    @property
    def n(self) -> int:
        return self.first + self.second


def position_counts(values: list[dict]) -> PositionCounts:
    first = second = ties = unordered = 0
    for value in values:
        if value["preferred"] == "tie":
            ties += 1
        elif "shown_first" not in value:
            unordered += 1
        elif value["preferred"] == value["shown_first"]:
            first += 1
        else:
            second += 1
    return PositionCounts(first, second, ties, unordered)


def position_bias(*, project: Project, parameters: PositionBiasParameters) -> Evaluation:
    check_kind(project, expected=KIND, evaluation=NAME)
    rows = sorted(latest_annotations(project=project).values_list("item__external_id", "rater", "value"))
    counts = position_counts([value for _, _, value in rows])
    share: dict[str, Any] = {"statistic": None, "confidence_interval": None, "reason": NO_ORDERED_PREFERENCE}
    p_value = None
    if counts.n:
        test = binomtest(counts.first, counts.n, p=0.5)
        interval = test.proportion_ci(confidence_level=parameters.confidence_level)
        share = {"statistic": counts.first / counts.n, "confidence_interval": [interval.low, interval.high]}
        p_value = test.pvalue
    result = {
        "project": project.slug,
        "first_shown_preferred": share,
        "p_value": p_value,
        "n": counts.n,
        "first": counts.first,
        "second": counts.second,
        "ties": counts.ties,
        "without_order": counts.unordered,
        "confidence_level": parameters.confidence_level,
    }
    ci = share["confidence_interval"]
    table = Table(
        key="position_bias",
        title="Position bias",
        caption=(
            f"Share of the {counts.n} answers preferring one response that prefer the one shown first, with its "
            f"{round(parameters.confidence_level * 100)}% Clopper-Pearson interval; {counts.ties} ties and "
            f"{counts.unordered} answers without a recorded order left out."
        ),
        columns=("", "First shown preferred", "p (vs 0.5)"),
        latex_columns=("", "First shown preferred", "$p$ (vs 0.5)"),
        rows=(
            Row(
                "All raters",
                (
                    Cell(
                        value=share["statistic"],
                        ci=None if ci is None else (ci[0], ci[1]),
                        format="percent",
                        note=share.get("reason"),
                        n=counts.n,
                    ),
                    Cell(value=p_value),
                ),
            ),
        ),
    )
    return Evaluation(
        name=NAME,
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest([[external_id, rater, value] for external_id, rater, value in rows]),
        library_versions=current_versions(),
        result=result,
        tables=(table,),
    )
