"""CoPA report: the paper's Table 7 (paper 001, section 5.5).

Per factor, human-human weighted Cohen's kappa and the Spearman correlation between the mean human
rating and the LLM score, then "Overall": the unweighted mean over the six factors (the paper's
Overall row is this mean: 0.643 and 0.754 are the means of its six rows). Here every value also
carries a bootstrap interval; Overall's comes from the same resamples of responses as the factors'.
"""

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
)


class CopaLikertReport(ReportBuilder):
    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        names = [d.name for d in ctx.dimensions]
        key, header, latex_header = human_agreement_measure(ctx, names)
        noun = ctx.judge_noun
        keys = [key, "spearman"] if ctx.judge else [key]
        rows = []
        for dimension in ctx.dimensions:
            measures = ctx.result(dimension.name).measures()
            rows.append(Row(dimension.name, tuple(Cell.of(measures.get(k)) for k in keys)))
        overall = tuple(Cell.of(ctx.agreement.overall.get(k), missing="not defined on every factor") for k in keys)
        rows.append(Row("Overall", overall, summary=True))
        people = len(ctx.human_raters)
        factors = "; ".join(f"{d.name} {d.title}" for d in ctx.dimensions)
        judge = f" and the {noun} scores ({ctx.judge.label})" if ctx.judge else ""
        versus = (
            f", and Human-{noun} the Spearman correlation between the average human ratings{judge}" if ctx.judge else ""
        )
        caption = (
            f"Human-Human reports the agreement between the {counted(people, 'annotator')} ({header}){versus}. "
            f"{ctx.n_items} responses rated by at least one annotator. Overall is the mean over the factors. "
            f"{ctx.interval_label.capitalize()}."
        )
        return [
            Table(
                key="copa_table7",
                title="CoPA scoring vs human judgement (Table 7)",
                caption=caption,
                columns=("Factor", f"Human-Human ({header})", f"Human-{noun} (ρ)")[: len(keys) + 1],
                latex_columns=("Factor", f"Human-Human ({latex_header})", rf"Human-{noun} ($\rho$)")[: len(keys) + 1],
                rows=tuple(rows),
                notes=(f"Factors: {factors}.", *(() if ctx.judge else (NO_JUDGE_COLUMNS,))),
            )
        ]

    def figures(self, ctx: ReportContext) -> list[Figure]:
        names = [d.name for d in ctx.dimensions]
        key, header, _ = human_agreement_measure(ctx, names)
        series = [_series(ctx, names, key, f"Human-Human {header}")]
        if ctx.judge:
            series.append(_series(ctx, names, "spearman", f"Human-{ctx.judge.noun} ρ"))
        figures = [
            Figure(
                key="copa-factors",
                title="Agreement per factor",
                kind="bars",
                data={"groups": [*names, "Overall"], "series": [_with_overall(ctx, s, k) for s, k in series]},
                alt="Bars per factor and overall: " + ", ".join(s[0]["name"] for s in series) + ", with intervals.",
            )
        ]
        figures += [confusion_figure(ctx, n) for n in names if len(ctx.ratings.dimensions[n])]
        if ctx.judge:
            figures += [confusion_figure(ctx, n, against_judge=True) for n in names if len(ctx.ratings.dimensions[n])]
        return figures


def _series(ctx: ReportContext, names: list[str], key: str, label: str) -> tuple[dict, str]:
    values, lows, highs = [], [], []
    for name in names:
        result = ctx.result(name).measures().get(key)
        statistic = None if result is None else result.statistic
        interval = None if result is None else result.confidence_interval
        values.append(statistic)
        lows.append(None if interval is None else interval.low)
        highs.append(None if interval is None else interval.high)
    return {"name": label, "values": values, "low": lows, "high": highs}, key


def _with_overall(ctx: ReportContext, series: dict, key: str) -> dict:
    overall = ctx.agreement.overall.get(key)
    interval = None if overall is None else overall.confidence_interval
    return {
        **series,
        "values": [*series["values"], None if overall is None else overall.statistic],
        "low": [*series["low"], None if interval is None else interval.low],
        "high": [*series["high"], None if interval is None else interval.high],
    }
