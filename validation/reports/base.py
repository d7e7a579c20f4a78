"""What a report's builder reads, and the sections every task kind gets.

A report is tables and figures computed from one project's ratings (their types are in
``validation.reports.tables``, re-exported here). A task kind lays out its own paper's tables with a
builder (the one in ``validation/reports/<kind>.py``, found by the kind's name); every report then
adds the full per-dimension agreement table and, with a judge run, the anchoring table (agreement
with the LLM when its suggestion was shown vs hidden).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from annotation.kinds.base import RatingDimension, TaskKind
from validation.aggregation.report import aggregation_table
from validation.agreement import (
    MEASURES,
    AgreementResult,
    ConfusionMatrix,
    DimensionAgreement,
    ExposureComparison,
    JointAgreement,
    Measure,
    confusion_matrix,
    mean_rating,
)
from validation.agreement.measures import (
    FLEISS_KAPPA,
    KRIPPENDORFF_ALPHA,
    Weighting,
    cohen_key,
    majority_kappa_key,
)
from validation.agreement.summaries import ExposureInput, exposure_comparisons, exposure_input
from validation.ratings import HIDDEN, SHOWN, RatingSet
from validation.reports.replacement import report_alt_test
from validation.reports.tables import (
    WEIGHTS,
    Cell,
    Figure,
    JudgeInfo,
    ReportParameters,
    Row,
    Table,
    Weights,
    counted,
    interval_label,
)

__all__ = [
    "WEIGHTS",
    "Cell",
    "Figure",
    "JudgeInfo",
    "ReportBuilder",
    "ReportContext",
    "ReportParameters",
    "Row",
    "Table",
    "Weights",
    "counted",
    "interval_label",
]

NO_JUDGE = "no judge run chosen"
NO_JUDGE_COLUMNS = "Columns comparing people with an LLM appear when a judge run is chosen."
NO_EXPOSURE_RECORDED = "no rating records whether the suggestion was visible"
#: Which ratings the anchoring comparison takes: a rating made before the run's suggestion for its
#: item existed was not "hidden", it could not have been shown.
ANCHORING_WHICH_RATINGS = (
    "Only ratings made once the run's suggestion for their item existed enter (it could have been shown "
    "then); earlier ratings, made before any suggestion, are left out of both groups."
)
#: Whether the groups were randomised, by the project's suggestion exposure (annotation.SuggestionExposure).
ANCHORING_RANDOMISED = (
    "The groups were randomised: each (item, annotator) saw the suggestion with probability {p:g}, so the "
    "difference estimates the suggestion's effect."
)
ANCHORING_NOT_RANDOMISED = (
    "The groups were not randomised (the project {setting}); shown and hidden ratings may differ in time, "
    "items and people, so the difference is not an estimate of the suggestion's effect."
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
    #: Whether the anchoring groups were randomised, in words (from the project's suggestion exposure).
    exposure_design: str = ""
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
        """Items at least one person rated (what captions count): a judge's scores alone do not make
        an item rated, or a run over the whole project would count items no one has seen."""
        people = [i for i in map(self.ratings.rater_index, self.human_raters) if i is not None]
        rated = np.zeros(self.ratings.n_units, dtype=bool)
        for ratings in self.ratings.dimensions.values():
            rated[ratings.unit[np.isin(ratings.rater, people)]] = True
        return int(len(np.unique(self.ratings.unit_items[rated])))

    @property
    def interval_label(self) -> str:
        return interval_label(self.parameters)

    # -- derived statistics, computed once per report ----------------------------------------------
    def weighting(self, name: str) -> Weighting:
        """The kappa weighting shown for a dimension: the report's weights when ordered, else none."""
        return report_weighting(self.dimension(name), self.parameters)

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
                level=dimension.level,
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
        return self.cached("exposure", self._exposures).get(name)

    def _exposures(self) -> dict[str, ExposureComparison]:
        """Every dimension's comparison with recorded exposure, from one set of resamples: those the
        agreement computed with its own resamples (``report_agreement``), else computed here."""
        if self.agreement.exposures:
            return self.agreement.exposures
        return exposure_comparisons(
            exposure_inputs(self.ratings, self.kind, self.parameters, self.human_raters, self.judge),
            bootstrap=self.parameters.bootstrap,
            seed=self.parameters.seed,
            confidence_level=self.parameters.confidence_level,
        )


def report_weighting(dimension: RatingDimension, parameters: ReportParameters) -> Weighting:
    """The kappa weighting shown for a dimension: the report's weights when ordered, else none."""
    return "unweighted" if dimension.level == "nominal" else cast(Weighting, parameters.weights)


def exposure_inputs(
    ratings: RatingSet,
    kind: TaskKind,
    parameters: ReportParameters,
    human_raters: Sequence[str],
    judge: JudgeInfo | None,
) -> dict[str, ExposureInput]:
    """The anchoring comparison's inputs of every dimension whose ratings record exposure (none
    without a judge): people's ratings against the judge's, split by whether its suggestion showed."""
    if judge is None:
        return {}
    inputs = {}
    for dimension in kind.rating_dimensions:
        visible = ratings.visibility(dimension.name, human_raters)
        if not ((visible == SHOWN) | (visible == HIDDEN)).any():
            continue
        inputs[dimension.name] = exposure_input(
            ratings.matrix(dimension.name, human_raters),
            ratings.matrix(dimension.name, [judge.rater])[:, 0],
            visible,
            level=dimension.level,
            weighting=report_weighting(dimension, parameters),
            categories=dimension.categories,
        )
    return inputs


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
        if ctx.judge is not None and ctx.dimensions:
            tables.append(
                report_alt_test(ctx.ratings, ctx.dimensions, ctx.human_raters, ctx.judge.rater, ctx.judge.label)
            )
        tables.append(aggregation_table(ctx))
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
            f"{ctx.interval_label.capitalize()}, shown, hidden and difference from the same resamples. "
            f"{ctx.exposure_design}"
        ).strip(),
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
        notes=(ANCHORING_WHICH_RATINGS,),
    )
