"""IPQA report: the human validation table (paper 000, section 2.4): per label (expressed, core),
kappa and percent agreement between annotators over (item, candidate intent) units, the share
judged "yes", and, with a judge run, the annotators' majority against the LLM."""

from __future__ import annotations

from validation.reports.base import (
    NO_JUDGE_COLUMNS,
    Cell,
    Figure,
    ReportBuilder,
    ReportContext,
    Row,
    Table,
    confusion_figure,
    counted,
    human_agreement_measure,
    judge_kappa_key,
)


class IpqaCoreIntentReport(ReportBuilder):
    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        names = [d.name for d in ctx.dimensions]
        key, header, latex_header = human_agreement_measure(ctx, names)
        noun = ctx.judge_noun
        rows = []
        for dimension in ctx.dimensions:
            measures = ctx.result(dimension.name).measures()
            cells = [
                Cell.of(measures.get(key)),
                Cell.of(measures.get("percent_agreement"), format="percent"),
                Cell.of(
                    ctx.mean(dimension.name, method=f"share of ratings 'yes' ({dimension.name})"), format="percent"
                ),
            ]
            if ctx.judge:
                cells += [
                    Cell.of(measures.get(judge_kappa_key(ctx, dimension.name))),
                    Cell.of(measures.get("majority_vs_reference.percent_agreement"), format="percent"),
                ]
            rows.append(Row(dimension.title, tuple(cells)))
        width = 6 if ctx.judge else 4
        units = max((ctx.result(n).n_units for n in names), default=0)
        caption = (
            f"Agreement between {counted(len(ctx.human_raters), 'annotator')} on whether each candidate intent "
            f"is expressed "
            f"in the question and narrative, and whether the selected answer addresses it (core): {units} "
            f"(item, intent) units from {ctx.n_items} items rated by at least one annotator."
            + (f" Majority vs {noun}: {ctx.judge.label}." if ctx.judge else "")
            + f" {ctx.interval_label.capitalize()}."
        )
        return [
            Table(
                key="ipqa_validation",
                title="IPQA human validation",
                caption=caption,
                columns=("Label", header, "% agreement", "Share yes", f"κ (majority vs {noun})", f"% agr. vs {noun}")[
                    :width
                ],
                latex_columns=(
                    "Label",
                    latex_header,
                    r"\% agr.",
                    r"\% yes",
                    rf"$\kappa$ (maj.--{noun})",
                    rf"\% agr.\ (maj.--{noun})",
                )[:width],
                rows=tuple(rows),
                notes=() if ctx.judge else (NO_JUDGE_COLUMNS,),
            )
        ]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        names = [d.name for d in ctx.dimensions if len(ctx.ratings.dimensions[d.name])]
        figures = [confusion_figure(ctx, n) for n in names]
        if ctx.judge:
            figures += [confusion_figure(ctx, n, against_judge=True) for n in names]
        return figures
