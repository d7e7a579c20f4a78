"""IntentGrasp label contextualization report (paper 002, section 3): agreement of reviewers on
accept/revise, and how people treated the LLM's draft statements, per judge and prompt version.

A draft pairs with every person's latest written statement for the same label. Reviews are not
pairs (a review judges someone else's statement). Pairs are split by whether the person saw the
draft, so independent writing shows what "unchanged" means by chance.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from validation.drafts import DraftAcceptance, draft_acceptance
from validation.ratings import HIDDEN, SHOWN
from validation.reports.base import (
    NO_JUDGE_COLUMNS,
    Cell,
    Figure,
    ReportBuilder,
    ReportContext,
    Row,
    Table,
    confusion_figure,
    human_agreement_measure,
    judge_kappa_key,
)
from validation.reports.build import DraftInputs
from validation.reports.tables import CellFormat

REVIEW = "review_verdict"
NO_REVIEWS = "No reviews yet: agreement on statements appears once experts accept or revise them."
VISIBILITY = {SHOWN: "draft shown", HIDDEN: "draft hidden"}
#: The loaded input (``validation.reports.build.INPUT_LOADERS``) with the drafts and final statements.
DRAFTS = "drafts"


@dataclass(frozen=True)
class DraftGroup:
    label: str
    prompt: str
    acceptance: DraftAcceptance
    by_visibility: dict[str, DraftAcceptance]


def draft_groups(ctx: ReportContext) -> list[DraftGroup]:
    """Draft acceptance per judge (one judge is one prompt version) over the project's items."""
    return ctx.cached("draft-groups", lambda: _draft_groups(ctx))


def _draft_groups(ctx: ReportContext) -> list[DraftGroup]:
    inputs: DraftInputs = ctx.inputs[DRAFTS]
    parameters = ctx.parameters
    options: dict[str, Any] = {
        "light_edit": parameters.light_edit,
        "bootstrap": parameters.bootstrap,
        "seed": parameters.seed,
        "confidence_level": parameters.confidence_level,
    }
    groups = []
    for judge in inputs.judges:
        pairs = [
            (judge.drafts[item], final, item, visible)
            for item, _, final, visible in inputs.finals
            if item in judge.drafts
        ]
        by_visibility = {}
        for flag, name in VISIBILITY.items():
            subset = [p for p in pairs if p[3] is not None and int(p[3]) == flag]
            if subset:
                by_visibility[name] = draft_acceptance(
                    [p[0] for p in subset], [p[1] for p in subset], [p[2] for p in subset], **options
                )
        groups.append(
            DraftGroup(
                label=judge.label,
                prompt=judge.prompt,
                acceptance=draft_acceptance(
                    [p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs], **options
                ),
                by_visibility=by_visibility,
            )
        )
    return groups


def _acceptance_cells(acceptance: DraftAcceptance) -> tuple[Cell, ...]:
    def number(value: float | None, fmt: CellFormat = "number") -> Cell:
        return Cell(value=value, format=fmt) if value is not None else Cell(note="no pairs")

    return (
        Cell.count(acceptance.n_pairs),
        *(Cell.of(acceptance.shares[name], format="percent") for name in ("unchanged", "lightly_edited", "rewritten")),
        number(acceptance.quantile(0.5)),
        number(acceptance.quantile(0.9)),
        number(acceptance.mean_normalised),
    )


class LabelContextualizationReport(ReportBuilder):
    inputs = (DRAFTS,)

    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        key, header, latex_header = human_agreement_measure(ctx, [REVIEW])
        noun = ctx.judge_noun
        measures = ctx.result(REVIEW).measures()
        review = Table(
            key="label_review",
            title="Review of intent statements",
            caption=(
                f"Agreement of reviewers on accepting or revising {ctx.result(REVIEW).n_units} statements "
                f"(reviewed at least once), and the "
                f"share accepted. {ctx.interval_label.capitalize()}."
            ),
            columns=("", header, "% agreement", "Accept rate", f"κ (majority vs {noun})")[: 5 if ctx.judge else 4],
            latex_columns=("", latex_header, r"\% agr.", "Accept rate", rf"$\kappa$ (maj.--{noun})")[
                : 5 if ctx.judge else 4
            ],
            rows=(
                Row(
                    "Review verdict",
                    (
                        Cell.of(measures.get(key)),
                        Cell.of(measures.get("percent_agreement"), format="percent"),
                        Cell.of(
                            ctx.mean(REVIEW, positive="accept", method="share of accept verdicts"), format="percent"
                        ),
                        *([Cell.of(measures.get(judge_kappa_key(ctx, REVIEW)))] if ctx.judge else []),
                    ),
                ),
            ),
            notes=() if ctx.judge else (NO_JUDGE_COLUMNS,),
        )
        if not len(ctx.ratings.dimensions[REVIEW]):
            # Statements written, none reviewed: a table of empty cells would say less than this.
            review = dataclasses.replace(review, caption=NO_REVIEWS, rows=())
        rows: list[Row] = []
        for group in draft_groups(ctx):
            rows.append(
                Row(f"{group.label}, {group.prompt}", _acceptance_cells(group.acceptance), rule_above=bool(rows))
            )
            for name, acceptance in group.by_visibility.items():
                rows.append(Row(f"  {name}", _acceptance_cells(acceptance)))
        light = ctx.parameters.light_edit
        drafts = Table(
            key="draft_acceptance",
            title="LLM draft statements: accepted, edited, rewritten",
            caption=(
                "Each LLM draft against each person's final statement for the same label: unchanged (identical "
                f"but for surrounding spaces), lightly edited (normalised Levenshtein distance ≤ {light}), or "
                "rewritten; then the edit distance in characters (median, 90th percentile) and the mean normalised "
                f"distance. {ctx.interval_label.capitalize()}, over labels."
            ),
            columns=(
                "Judge, prompt",
                "Pairs",
                "Unchanged",
                "Lightly edited",
                "Rewritten",
                "Median edits",
                "90th pct edits",
                "Mean normalised",
            ),
            latex_columns=(
                "Judge, prompt",
                r"$n$",
                "Unchanged",
                "Light edit",
                "Rewritten",
                "Median",
                "P90",
                "Norm.",
            ),
            rows=tuple(rows),
            notes=() if rows else ("no judge has drafted statements for this project's labels",),
        )
        return [review, drafts]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        figures = []
        if len(ctx.ratings.dimensions[REVIEW]):
            figures.append(confusion_figure(ctx, REVIEW))
        groups = [g for g in draft_groups(ctx) if g.acceptance.n_pairs]
        if groups:
            figures.append(
                Figure(
                    key="draft-distances",
                    title="Edit distance from the LLM draft",
                    kind="histogram",
                    data={
                        "series": [
                            {"name": f"{g.label}, {g.prompt}", "values": list(g.acceptance.distances)} for g in groups
                        ],
                        "xlabel": "Levenshtein distance (characters)",
                    },
                    alt="Histogram of edit distances between LLM drafts and people's final statements, per judge.",
                )
            )
        return figures
