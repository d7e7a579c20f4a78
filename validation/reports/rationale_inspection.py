"""Rationale inspection report (paper 001, section 3.2 and appendix B.1): the experts' kappa on the
Pass/Fail verdict and the pass rate (the paper reports kappa 0.7251 and a 97% alignment rate), then
each failure category: how often Fail verdicts name it and how well the experts agree on it."""

from __future__ import annotations

import numpy as np

from annotation.kinds.rationale_inspection import FAIL
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

VERDICT = "verdict"


class RationaleInspectionReport(ReportBuilder):
    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        categories = [d for d in ctx.dimensions if d.name != VERDICT]
        key, header, latex_header = human_agreement_measure(ctx, [VERDICT])
        noun = ctx.judge_noun
        verdict = ctx.result(VERDICT).measures()
        cells = [
            Cell.of(verdict.get(key)),
            Cell.of(verdict.get("percent_agreement"), format="percent"),
            Cell.of(ctx.mean(VERDICT, method="share of Pass verdicts"), format="percent"),
            *([Cell.of(verdict.get(judge_kappa_key(ctx, VERDICT)))] if ctx.judge else []),
        ]
        width = len(cells) + 1
        verdict_table = Table(
            key="rationale_verdict",
            title="Rationale inspection",
            caption=(
                f"Agreement of {len(ctx.human_raters)} experts on Pass/Fail for {ctx.result(VERDICT).n_units} "
                f"rationales rated by at least one expert, and the share of Pass verdicts. "
                f"{ctx.interval_label.capitalize()}."
            ),
            columns=("", header, "% agreement", "Pass rate", f"κ (majority vs {noun})")[:width],
            latex_columns=("", latex_header, r"\% agr.", "Pass rate", rf"$\kappa$ (maj.--{noun})")[:width],
            rows=(Row("Verdict", tuple(cells)),),
            notes=() if ctx.judge else (NO_JUDGE_COLUMNS,),
        )
        fails = ctx.numeric_humans(VERDICT) == FAIL
        category_key, category_header, category_latex = human_agreement_measure(ctx, [c.name for c in categories])
        rows = []
        for category in categories:
            measures = ctx.result(category.name).measures()
            rows.append(
                Row(
                    category.title,
                    (
                        Cell.of(
                            ctx.mean(
                                category.name, mask=fails, method=f"share of Fail verdicts naming {category.name}"
                            ),
                            format="percent",
                        ),
                        Cell.of(measures.get(category_key)),
                        Cell.of(measures.get("percent_agreement"), format="percent"),
                    ),
                )
            )
        category_table = Table(
            key="rationale_failures",
            title="Failure categories",
            caption=(
                f"Per failure category: the share of Fail verdicts that name it ({int(np.count_nonzero(fails))} Fail "
                f"verdicts), and agreement on naming it (every verdict counts; a Pass names none). "
                f"{ctx.interval_label.capitalize()}."
            ),
            columns=("Failure category", "Share of Fail verdicts", category_header, "% agreement"),
            latex_columns=("Failure category", r"\% of Fail", category_latex, r"\% agr."),
            rows=tuple(rows),
        )
        return [verdict_table, category_table]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        figures = []
        if len(ctx.ratings.dimensions[VERDICT]):
            figures.append(confusion_figure(ctx, VERDICT))
            if ctx.judge:
                figures.append(confusion_figure(ctx, VERDICT, against_judge=True))
        fails = ctx.numeric_humans(VERDICT) == FAIL
        categories = [d for d in ctx.dimensions if d.name != VERDICT]
        shares = [ctx.mean(c.name, mask=fails, method=f"share of Fail verdicts naming {c.name}") for c in categories]
        figures.append(
            Figure(
                key="rationale-failures",
                title="Failure categories among Fail verdicts",
                kind="bars",
                data={
                    "groups": [c.title for c in categories],
                    "series": [
                        {
                            "name": "share of Fail verdicts",
                            "values": [s.statistic for s in shares],
                            "low": [s.confidence_interval.low if s.confidence_interval else None for s in shares],
                            "high": [s.confidence_interval.high if s.confidence_interval else None for s in shares],
                        }
                    ],
                },
                alt="Bars: share of Fail verdicts naming each failure category, with intervals.",
            )
        )
        return figures
