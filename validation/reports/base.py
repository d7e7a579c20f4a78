"""What a report is made of, and the sections every task kind gets.

A report is tables and figures computed from one project's ratings. A task kind lays out its own paper's
tables with a builder (the one in ``validation/reports/<kind>.py``, found by the kind's name); every
report then adds the full per-dimension agreement table and, with a judge run, the anchoring table
(agreement with the LLM when its suggestion was shown vs hidden).

Tables hold cells (a number, its confidence interval, or the reason it is empty); they render to
HTML, Markdown, LaTeX (booktabs) and CSV alike (``validation.reports.render``). Figures hold the
data of a plot; ``validation.plots`` draws them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from annotation.kinds.base import RatingDimension, TaskKind
from validation.agreement import (
    MEASURES,
    AgreementResult,
    ConfusionMatrix,
    DimensionAgreement,
    ExposureComparison,
    JointAgreement,
    Measure,
    confusion_matrix,
    exposure_comparison,
    mean_rating,
)
from validation.agreement.measures import (
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    CellFormat,
    cohen_key,
    majority_kappa_key,
)
from validation.ratings import HIDDEN, SHOWN, RatingSet

__all__ = [
    "Cell",
    "Figure",
    "ReportBuilder",
    "ReportContext",
    "ReportParameters",
    "Row",
    "Table",
]

Weights = Literal["linear", "quadratic"]
WEIGHTS: tuple[str, ...] = ("linear", "quadratic")

NO_JUDGE = "no judge run chosen"
NO_JUDGE_COLUMNS = "Columns comparing people with an LLM appear when a judge run is chosen."
NO_EXPOSURE_RECORDED = "no rating records whether the suggestion was visible"


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
        ci = None if result.confidence_interval is None else tuple(result.confidence_interval)
        return cls(value=result.statistic, ci=ci, format=format, n=result.n_units)  # type: ignore[arg-type]

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


@dataclass
class ReportContext:
    """What a kind's builder reads: the ratings, the agreement already computed, the parameters, and
    the other inputs it asked for (``ReportBuilder.inputs``), loaded and digested beforehand by
    ``validation.reports.build``. A builder reads nothing else: it lays out, it never queries."""

    kind: TaskKind
    parameters: ReportParameters
    ratings: RatingSet
    agreement: JointAgreement
    human_raters: tuple[str, ...]
    judge: JudgeInfo | None
    #: Inputs besides the ratings, by the loader's name (``ReportBuilder.inputs``).
    inputs: Mapping[str, Any] = field(default_factory=dict)
    #: When raters saw a field their kind hides from them (the project revealed it): one line each.
    blinding_notes: tuple[str, ...] = ()
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    def cached(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per report: tables and figures often need the same statistic."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # -- shapes ----------------------------------------------------------------------------------
    @property
    def judge_noun(self) -> str:
        """What the tables call the machine rater: the judge's own noun, or "LLM" without a run."""
        return self.judge.noun if self.judge else "LLM"

    @property
    def dimensions(self) -> tuple[RatingDimension, ...]:
        return self.kind.rating_dimensions

    def dimension(self, name: str) -> RatingDimension:
        return next(d for d in self.kind.rating_dimensions if d.name == name)

    def result(self, name: str) -> DimensionAgreement:
        return self.agreement.dimensions[name]

    def humans(self, name: str) -> npt.NDArray[Any]:
        """Units x people for one dimension (NaN or None where missing)."""
        return self.ratings.matrix(name, self.human_raters)

    def judge_column(self, name: str) -> npt.NDArray[Any] | None:
        if self.judge is None:
            return None
        return self.ratings.matrix(name, [self.judge.rater])[:, 0]

    def numeric_humans(self, name: str, positive: Any = None) -> npt.NDArray[np.float64]:
        """People's ratings as numbers: 1.0 where the rating equals ``positive`` (for string
        categories), the value itself for numbers; NaN where missing."""
        matrix = self.humans(name)
        if matrix.dtype != object:
            return matrix.astype(float)
        present = matrix != None  # noqa: E711 - elementwise comparison on an object array
        out = np.full(matrix.shape, np.nan)
        out[present] = (matrix[present] == positive).astype(float)
        return out

    @cached_property
    def n_items(self) -> int:
        return int(len(np.unique(self.ratings.unit_items)))

    @property
    def interval_label(self) -> str:
        return interval_label(self.parameters)

    # -- derived statistics, computed once per report ----------------------------------------------
    def weighting(self, name: str) -> str:
        """The kappa weighting shown for a dimension: the report's weights when ordered, else none."""
        return "unweighted" if self.dimension(name).level == "nominal" else self.parameters.weights

    def mean(
        self, name: str, *, positive: Any = None, mask: npt.NDArray[np.bool_] | None = None, method: str
    ) -> AgreementResult:
        key = ("mean", name, positive, None if mask is None else mask.tobytes(), method)
        if key not in self._cache:
            self._cache[key] = mean_rating(
                self.numeric_humans(name, positive),
                mask=mask,
                bootstrap=self.parameters.bootstrap,
                seed=self.parameters.seed,
                confidence_level=self.parameters.confidence_level,
                method=method,
            )
        return self._cache[key]

    def confusion(self, name: str, *, against_judge: bool = False) -> ConfusionMatrix:
        key = ("confusion", name, against_judge)
        if key not in self._cache:
            dimension = self.dimension(name)
            raters = list(self.human_raters)
            reference = None
            if against_judge and self.judge is not None:
                raters.append(self.judge.rater)
                reference = len(raters) - 1
            self._cache[key] = confusion_matrix(
                self.ratings.matrix(name, raters),
                level=dimension.level,  # type: ignore[arg-type]
                reference=reference,
                categories=dimension.categories,
                raters=[self.judge.noun if self.judge and r == self.judge.rater else r for r in raters],
            )
        return self._cache[key]

    def exposure(self, name: str) -> ExposureComparison | None:
        """Agreement with the judge when its suggestion was shown vs hidden; None without a judge or
        without recorded exposure."""
        if self.judge is None:
            return None
        key = ("exposure", name)
        if key not in self._cache:
            visible = self.ratings.visibility(name, self.human_raters)
            recorded = (visible == SHOWN) | (visible == HIDDEN)
            if not recorded.any():
                self._cache[key] = None
            else:
                dimension = self.dimension(name)
                self._cache[key] = exposure_comparison(
                    self.humans(name),
                    self.judge_column(name),  # type: ignore[arg-type]
                    visible,
                    level=dimension.level,  # type: ignore[arg-type]
                    weighting=self.weighting(name),  # type: ignore[arg-type]
                    categories=dimension.categories,
                    bootstrap=self.parameters.bootstrap,
                    seed=self.parameters.seed,
                    confidence_level=self.parameters.confidence_level,
                )
        return self._cache[key]


def human_agreement_measure(ctx: ReportContext, names: Sequence[str]) -> tuple[str, str, str]:
    """The human-human coefficient a paper table shows for these dimensions, one for all of them.

    Cohen's kappa (weighted at ordered levels) when exactly two people rated, as the papers report;
    otherwise Fleiss' kappa for nominal dimensions with complete data, else Krippendorff's alpha.
    Returns (measure key, plain header, LaTeX header).
    """
    results = [ctx.result(n) for n in names]
    ordered = any(ctx.dimension(n).level != "nominal" for n in names)
    weights = ctx.parameters.weights
    if results and all(r.cohen_kappa is not None for r in results):
        if ordered:
            return cohen_key(weights), f"κ_w ({weights})", rf"$\kappa_w$ ({weights})"
        return cohen_key("unweighted"), "Cohen's κ", r"Cohen's $\kappa$"
    if not ordered and results and all(r.fleiss_kappa.statistic is not None for r in results):
        return FLEISS_KAPPA, "Fleiss' κ", r"Fleiss' $\kappa$"
    level = ctx.dimension(names[0]).level if names else "nominal"
    return KRIPPENDORFF_ALPHA, f"α ({level})", rf"$\alpha$ ({level})"


def judge_kappa_key(ctx: ReportContext, name: str) -> str:
    return majority_kappa_key(ctx.weighting(name))


class ReportBuilder:
    """Lays out one task kind's report. The base class has no paper tables of its own; kinds add
    theirs (``paper_tables``) and may add figures (``figures``).

    A builder that needs data besides the ratings names its loaders in ``inputs`` (keys of
    ``validation.reports.build.INPUT_LOADERS``); the build runs them, digests what they load into the
    report's inputs hash, and hands it over as ``ctx.inputs``.
    """

    inputs: tuple[str, ...] = ()

    def __init__(self, kind: TaskKind) -> None:
        self.kind = kind

    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        return []

    def figures(self, ctx: ReportContext) -> list[Figure]:
        """Default: a confusion heatmap per dimension (people vs people)."""
        return [confusion_figure(ctx, d.name) for d in ctx.dimensions if ctx.ratings.dimensions[d.name]]

    # -- sections every report has ------------------------------------------------------------------
    def all_tables(self, ctx: ReportContext) -> list[Table]:
        tables = self.paper_tables(ctx)
        tables.append(dimension_table(ctx))
        anchoring = anchoring_table(ctx)
        if anchoring is not None:
            tables.append(anchoring)
        return tables


def confusion_figure(ctx: ReportContext, name: str, *, against_judge: bool = False) -> Figure:
    dimension = ctx.dimension(name)
    matrix = ctx.confusion(name, against_judge=against_judge)
    labels = [dimension.category_label(c) for c in matrix.categories]
    who = f"people vs {ctx.judge.noun}" if against_judge and ctx.judge else "people"
    rows, columns = matrix.rows, matrix.columns
    if rows == columns:
        # Every ordered pair of raters: one axis is a rating, the other another person's on the same unit.
        rows, columns = "one rater's rating", "another rater's rating (same unit)"
    return Figure(
        key=f"confusion-{name}{'-llm' if against_judge else ''}",
        title=f"{dimension.title}: {who}",
        kind="heatmap",
        data={
            "labels": labels,
            "counts": [list(row) for row in matrix.counts],
            "rows": rows,
            "columns": columns,
        },
        alt=f"Confusion matrix of {dimension.title} ({matrix.rows} by {matrix.columns}), {matrix.n_pairs} pairs.",
    )


#: The dimension table's columns: every measure among the people, then (with a judge) against it.
_DIMENSION_COLUMNS: tuple[Measure, ...] = tuple(m for m in MEASURES if not m.reference)
_JUDGE_COLUMNS: tuple[Measure, ...] = tuple(m for m in MEASURES if m.reference)


def dimension_table(ctx: ReportContext) -> Table:
    """Every measure for every dimension, with intervals: the appendix behind the paper tables."""
    noun = ctx.judge_noun
    columns = [
        (m.key, m.label_for(noun), m.latex_for(noun), m.format)
        for m in (*_DIMENSION_COLUMNS, *(_JUDGE_COLUMNS if ctx.judge else ()))
    ]
    rows = []
    for dimension in ctx.dimensions:
        result = ctx.result(dimension.name)
        measures = result.measures()
        cells = [Cell.count(result.n_units), Cell.count(result.n_raters)]
        cells += [Cell.of(measures.get(key), format=fmt, missing="not computed") for key, _, _, fmt in columns]
        rows.append(Row(dimension.title, tuple(cells)))
    who = counted(len(ctx.human_raters), "person")
    judge = (
        f"; the {ctx.judge.noun} ({ctx.judge.label}) is compared with them, not counted among them" if ctx.judge else ""
    )
    return Table(
        key="dimensions",
        title="Agreement by dimension",
        caption=f"Inter-rater agreement per dimension among {who}{judge}. {ctx.interval_label.capitalize()}.",
        columns=("Dimension", "Units", "Raters", *(c[1] for c in columns)),
        latex_columns=("Dimension", "Units", "Raters", *(c[2] for c in columns)),
        rows=tuple(rows),
        notes=(*ctx.blinding_notes, *_dimension_notes(ctx)),
        column_groups=(
            ("", 2),
            ("Among people", len(_DIMENSION_COLUMNS)),
            *([(f"People vs {noun}", len(_JUDGE_COLUMNS))] if ctx.judge else []),
        ),
    )


def _dimension_notes(ctx: ReportContext) -> tuple[str, ...]:
    notes = []
    for dimension in ctx.dimensions:
        for key, why in ctx.result(dimension.name).notes().items():
            if key.startswith("ci."):
                continue
            notes.append(f"{dimension.title}, {key}: {why}")
    return tuple(dict.fromkeys(notes))


def anchoring_table(ctx: ReportContext) -> Table | None:
    """Agreement with the LLM for ratings made with its suggestion shown vs hidden."""
    if ctx.judge is None:
        return None
    rows = []
    for dimension in ctx.dimensions:
        comparison = ctx.exposure(dimension.name)
        if comparison is None:
            continue
        rows.append(
            Row(
                dimension.title,
                (
                    Cell.count(comparison.n_pairs_shown),
                    Cell.of(comparison.kappa_shown),
                    Cell.count(comparison.n_pairs_hidden),
                    Cell.of(comparison.kappa_hidden),
                    Cell.of(comparison.kappa_difference),
                    Cell.of(comparison.agreement_shown, format="percent"),
                    Cell.of(comparison.agreement_hidden, format="percent"),
                    Cell.of(comparison.agreement_difference, format="percent"),
                ),
            )
        )
    if not rows:
        return Table(
            key="anchoring",
            title=f"Anchoring on the {ctx.judge.noun} suggestion",
            caption=NO_EXPOSURE_RECORDED + ".",
            columns=("Dimension",),
            latex_columns=("Dimension",),
            rows=(),
            notes=(NO_EXPOSURE_RECORDED,),
        )
    weights = ctx.parameters.weights
    return Table(
        key="anchoring",
        title=f"Anchoring on the {ctx.judge.noun} suggestion",
        caption=(
            f"Agreement of each person's rating with the {ctx.judge.noun} ({ctx.judge.label}) when its suggestion "
            f"was shown vs hidden, and the difference (shown − hidden; positive means people moved toward it). "
            f"κ pools every person's (rating, {ctx.judge.noun}) pairs; {weights} weights at ordered levels. "
            f"{ctx.interval_label.capitalize()}, shown, hidden and difference from the same resamples."
        ),
        columns=(
            "Dimension",
            "Pairs shown",
            "κ shown",
            "Pairs hidden",
            "κ hidden",
            "Δκ",
            "% agr. shown",
            "% agr. hidden",
            "Δ % agr.",
        ),
        latex_columns=(
            "Dimension",
            r"$n$ shown",
            r"$\kappa$ shown",
            r"$n$ hidden",
            r"$\kappa$ hidden",
            r"$\Delta\kappa$",
            r"\% agr.\ shown",
            r"\% agr.\ hidden",
            r"$\Delta$ \% agr.",
        ),
        rows=tuple(rows),
        notes=(
            "Only ratings that record whether the suggestion was visible enter; with randomised exposure "
            "the difference estimates the suggestion's effect.",
        ),
    )
