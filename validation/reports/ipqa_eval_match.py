"""IPQA-Eval matcher check: do people agree on match / no match, and does the LLM matcher agree with
them? (IPQA, §2.1 and §1: IPQA-Eval's LLM evaluator "agrees strongly with human judgement".)

One row, the ``match`` decision over (predicted intent, gold core intent) pairs: people's kappa
(Cohen's with two people, else Fleiss'), their percent agreement and the share judged a match; with a
judge run, the matcher against people's majority: Cohen's kappa and accuracy (percent agreement with
the majority, pairs where people tie left out). Every number has the report's bootstrap interval.
"""

from __future__ import annotations

from validation.agreement.measures import MAJORITY_PERCENT_AGREEMENT
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

MATCH = "match"


class IpqaEvalMatchReport(ReportBuilder):
    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        key, header, latex_header = human_agreement_measure(ctx, [MATCH])
        noun = ctx.judge_noun
        result = ctx.result(MATCH)
        measures = result.measures()
        cells = [
            Cell.of(measures.get(key)),
            Cell.of(measures.get("percent_agreement"), format="percent"),
            Cell.of(ctx.mean(MATCH, method="share of ratings 'match'"), format="percent"),
        ]
        if ctx.judge:
            cells += [
                Cell.of(measures.get(judge_kappa_key(ctx, MATCH))),
                Cell.of(measures.get(MAJORITY_PERCENT_AGREEMENT), format="percent"),
            ]
        width = len(cells) + 1
        caption = (
            f"Agreement of {counted(len(ctx.human_raters), 'person')} on whether a predicted intent matches "
            f"a gold core intent, "
            f"over {result.n_units} pairs rated by at least one person"
            + (f"; the {noun} matcher ({ctx.judge.label}) against their majority" if ctx.judge else "")
            + f". {ctx.interval_label.capitalize()}."
        )
        return [
            Table(
                key="ipqa_eval_match",
                title="IPQA-Eval matcher vs people",
                caption=caption,
                columns=("", header, "% agreement", "Share match", f"κ (majority vs {noun})", f"Accuracy of {noun}")[
                    :width
                ],
                latex_columns=(
                    "",
                    latex_header,
                    r"\% agr.",
                    r"\% match",
                    rf"$\kappa$ (maj.--{noun})",
                    rf"Acc.\ ({noun})",
                )[:width],
                rows=(Row("Match", tuple(cells)),),
                notes=(
                    (f"Accuracy: the share of pairs where the {noun} gives people's majority answer (ties left out).",)
                    if ctx.judge
                    else (NO_JUDGE_COLUMNS,)
                ),
            )
        ]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        if not len(ctx.ratings.dimensions[MATCH]):
            return []
        figures = [confusion_figure(ctx, MATCH)]
        if ctx.judge:
            figures.append(confusion_figure(ctx, MATCH, against_judge=True))
        return figures
