"""IntentGrasp MCQ report (paper 002): people's F1 against the key beside the random-guess baseline.

The baseline is the paper's (Appendix A.3): one option guessed at random per instance, expected F1
(v/u) * 2/(1+v), averaged over the same instances the people answered. With a judge run its F1 is
shown on the same footing (failed items are missing, not scored 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from validation.agreement import AgreementResult, mean_rating, random_guess_f1
from validation.reports.base import Cell, Figure, ReportBuilder, ReportContext, Row, Table

F1 = "f1"
#: The loaded input (``validation.reports.build.INPUT_LOADERS``) with each answered item's key sizes.
ANSWER_KEYS = "mcq_answers_and_options"
#: Above this many annotators the per-annotator rows are left out of the table (the CSV has them all).
MAX_ANNOTATOR_ROWS = 20


class IntentMcqReport(ReportBuilder):
    inputs = (ANSWER_KEYS,)

    def _baseline(self, ctx: ReportContext) -> AgreementResult:
        return ctx.cached("mcq-baseline", lambda: self._compute_baseline(ctx))

    def _compute_baseline(self, ctx: ReportContext) -> AgreementResult:
        # (external id, correct answers, options) of the instances people answered, loaded by the build.
        sizes = ctx.inputs[ANSWER_KEYS]
        return random_guess_f1([v for _, v, _ in sizes], [u for _, _, u in sizes])

    def _scores(self, ctx: ReportContext) -> list[tuple[str, AgreementResult, int]]:
        return ctx.cached("mcq-scores", lambda: self._compute_scores(ctx))

    def _compute_scores(self, ctx: ReportContext) -> list[tuple[str, AgreementResult, int]]:
        parameters = ctx.parameters
        options: dict[str, Any] = {
            "bootstrap": parameters.bootstrap,
            "seed": parameters.seed,
            "confidence_level": parameters.confidence_level,
        }
        humans = ctx.numeric_humans(F1)
        rows: list[tuple[str, AgreementResult, int]] = [
            (
                "People (mean over answers)",
                ctx.mean(F1, method="mean F1 of people's answers against the key"),
                len(ctx.human_raters),
            ),
            ("Random guess (expected)", self._baseline(ctx), 0),
        ]
        if ctx.judge is not None:
            judged = ctx.judge_column(F1)
            assert judged is not None  # the report has a judge
            column = judged.astype(float)[:, None]
            answered = np.asarray(~np.isnan(humans).all(axis=1))
            rows.append(
                (
                    f"{ctx.judge.noun} ({ctx.judge.label}), same instances",
                    mean_rating(np.where(answered[:, None], column, np.nan), method="mean F1 of the judge", **options),
                    1,
                )
            )
        if len(ctx.human_raters) <= MAX_ANNOTATOR_ROWS:
            for j, rater in enumerate(ctx.human_raters):
                rows.append(
                    (f"annotator {rater}", mean_rating(humans[:, [j]], method=f"mean F1 of {rater}", **options), 1)
                )
        return rows

    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        rows = []
        ruled = False
        for label, result, raters in self._scores(ctx):
            # A rule sets the per-annotator rows off from the headline rows.
            first_annotator = label.startswith("annotator") and not ruled
            ruled = ruled or first_annotator
            cells = (Cell.of(result, format="percent"), Cell.count(result.n_units), Cell.count(raters))
            rows.append(Row(label, cells, rule_above=first_annotator))
        caption = (
            "F1 of the chosen options against the key, per instance, averaged; the random-guess baseline picks "
            "one option per instance (IntentGrasp Appendix A.3). " + ctx.interval_label.capitalize() + "."
        )
        return [
            Table(
                key="mcq_performance",
                title="Human performance on IntentGrasp questions",
                caption=caption,
                columns=("", "F1", "Instances", "Raters"),
                latex_columns=("", r"F1", "Instances", "Raters"),
                rows=tuple(rows),
            )
        ]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        scores = [s for s in self._scores(ctx) if not s[0].startswith("annotator")]
        results = [s[1] for s in scores]
        return [
            Figure(
                key="mcq-f1",
                title="F1 against the key",
                kind="bars",
                data={
                    "groups": [s[0] for s in scores],
                    "series": [
                        {
                            "name": "F1",
                            "values": [r.statistic for r in results],
                            "low": [r.confidence_interval.low if r.confidence_interval else None for r in results],
                            "high": [r.confidence_interval.high if r.confidence_interval else None for r in results],
                        }
                    ],
                },
                alt="Bars: people's F1, the random-guess baseline"
                + (", and the judge's F1" if ctx.judge else "")
                + ", with intervals.",
            )
        ]
