"""What a report is made of: its parameters, and the tables, cells and figures it holds.

Tables hold cells (a number, its confidence interval, or the reason it is empty); they render to
HTML, Markdown, LaTeX (booktabs) and CSV alike (``validation.reports.render``). Figures hold the
data of a plot; ``validation.plots`` draws them. ``validation.reports.base`` lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from validation.agreement import AgreementResult
from validation.agreement.measures import CellFormat

__all__ = [
    "WEIGHTS",
    "Cell",
    "Figure",
    "JudgeInfo",
    "ReportParameters",
    "Row",
    "Table",
    "Weights",
    "counted",
    "interval_label",
]

Weights = Literal["linear", "quadratic"]
WEIGHTS: tuple[str, ...] = ("linear", "quadratic")


@dataclass(frozen=True, kw_only=True)
class ReportParameters:
    """Everything besides the ratings that changes a report's numbers; snapshots store it.

    Attributes
    ----------
    judge_run_id : int or None
        A judge run compared with the people (never counted among them).
    bootstrap : int
        Resamples for every confidence interval (0: none).
    seed : int
        Seed of the resampling.
    confidence_level : float
    weights : {'linear', 'quadratic'}
        Weights of the weighted kappas the paper tables show for ordinal dimensions.
    sources : tuple of str
        Annotation sources to use (``web``, ``api``, ``import``); empty for all.
    light_edit : float
        Largest normalised edit distance (edits / length of the longer text) at which an edited LLM
        draft counts as lightly edited rather than rewritten.
    """

    judge_run_id: int | None = None
    bootstrap: int = 1000
    seed: int = 0
    confidence_level: float = 0.95
    weights: Weights = "linear"
    sources: tuple[str, ...] = ()
    light_edit: float = 0.2

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "judge_run_id": self.judge_run_id,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
            "weights": self.weights,
            "sources": list(self.sources),
            "light_edit": self.light_edit,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> ReportParameters:
        return cls(**{**data, "sources": tuple(data.get("sources", ()))})


@dataclass(frozen=True)
class Cell:
    """One table cell: a value, its interval, or why it is empty (``note``), and ``n``, the units the
    value was computed on (a kappa's units that both raters rated, not every unit someone rated)."""

    value: float | int | str | None = None
    ci: tuple[float, float] | None = None
    format: CellFormat = "number"
    note: str | None = None
    n: int | None = None

    @classmethod
    def of(cls, result: AgreementResult | None, *, format: CellFormat = "number", missing: str = "") -> Cell:
        if result is None:
            return cls(format=format, note=missing or None)
        if result.statistic is None:
            return cls(format=format, note=result.reason or missing or None)
        interval = result.confidence_interval
        ci = None if interval is None else (interval.low, interval.high)
        return cls(value=result.statistic, ci=ci, format=format, n=result.n_units)

    @classmethod
    def text(cls, value: str) -> Cell:
        return cls(value=value, format="text")

    @classmethod
    def count(cls, value: int) -> Cell:
        return cls(value=int(value), format="count")

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "value": self.value,
            "ci": None if self.ci is None else list(self.ci),
            "format": self.format,
            "note": self.note,
        }
        if self.n is not None:
            data["n"] = self.n
        return data

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> Cell:
        ci = data.get("ci")
        return cls(
            value=data.get("value"),
            ci=None if ci is None else (ci[0], ci[1]),
            format=data.get("format", "number"),
            note=data.get("note"),
            n=data.get("n"),
        )


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]
    #: A summary row (CoPA's "Overall"): set off by a rule and shown in bold.
    summary: bool = False
    #: A rule above the row, without the emphasis of a summary.
    rule_above: bool = False


@dataclass(frozen=True)
class Table:
    """A paper-ready table. ``latex_columns`` are the headers in LaTeX (math, escapes)."""

    key: str
    title: str
    caption: str
    columns: tuple[str, ...]
    latex_columns: tuple[str, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()
    #: Header groups over the columns after the first, as (title, number of columns): layout for the
    #: HTML page only, so it is neither compared nor stored with a snapshot's numbers.
    column_groups: tuple[tuple[str, int], ...] = field(default=(), compare=False)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "caption": self.caption,
            "columns": list(self.columns),
            "rows": [
                {
                    "label": r.label,
                    "summary": r.summary,
                    "rule_above": r.rule_above,
                    "cells": [c.to_json_dict() for c in r.cells],
                }
                for r in self.rows
            ],
            "latex_columns": list(self.latex_columns),
            "notes": list(self.notes),
        }

    @classmethod
    def from_json_dict(cls, key: str, data: dict[str, Any]) -> Table:
        """A table back from a snapshot's stored numbers, to show it as it was frozen."""
        return cls(
            key=key,
            title=data["title"],
            caption=data["caption"],
            columns=tuple(data["columns"]),
            latex_columns=tuple(data.get("latex_columns", data["columns"])),
            rows=tuple(
                Row(
                    r["label"],
                    tuple(Cell.from_json_dict(c) for c in r["cells"]),
                    summary=r.get("summary", False),
                    rule_above=r.get("rule_above", False),
                )
                for r in data["rows"]
            ),
            notes=tuple(data.get("notes", ())),
        )


@dataclass(frozen=True)
class Figure:
    """A plot's data; ``kind`` says how ``validation.plots`` draws it, ``alt`` describes it in words."""

    key: str
    title: str
    kind: Literal["heatmap", "bars", "histogram", "correlation", "forest", "lines"]
    data: dict[str, Any]
    alt: str


@dataclass(frozen=True, kw_only=True)
class JudgeInfo:
    """The judge run a report compares people with."""

    run_id: int
    rater: str
    label: str
    is_baseline: bool

    @property
    def noun(self) -> str:
        # A baseline is always called one, never passed off as an LLM: readers compare LLMs with baselines.
        return "baseline" if self.is_baseline else "LLM"

    @property
    def described(self) -> str:
        """The noun and the label, the noun said once ("baseline · copa_jaccard.v1 …", not "baseline baseline …")."""
        return self.label if self.label.lower().startswith(self.noun.lower()) else f"{self.noun} {self.label}"


#: Nouns whose plural is not the singular plus "s".
_PLURALS = {"person": "people"}


def counted(n: int, noun: str) -> str:
    """``n`` and the noun in the number it takes: "1 person", "2 people", "1 annotator", "3 annotators"."""
    return f"{n} {noun if n == 1 else _PLURALS.get(noun, noun + 's')}"


def interval_label(parameters: ReportParameters) -> str:
    if not parameters.bootstrap:
        return "no confidence intervals (bootstrap off)"
    return (
        f"{round(parameters.confidence_level * 100)}% percentile bootstrap intervals over units "
        f"({parameters.bootstrap} resamples, seed {parameters.seed})"
    )
