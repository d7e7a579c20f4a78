"""The agreement report's replace-test section: the Alternative Annotator Test of the report's judge run.

With a judge run chosen, every report (whatever the kind) adds the test at the defaults of the
authors' code (ε = 0.2, q = 0.05, 2 annotators per item, 30 units per annotator; alignment by each
dimension's level), pooled and per dimension, so a frozen report keeps it and ``--check`` recomputes
it. The ``alt_test`` evaluation (``validation.alttest``) gives the same table with other options,
several runs, agreement by who rated and calibration.
"""

from __future__ import annotations

from collections.abc import Sequence

from annotation.kinds.base import RatingDimension
from validation.alttest.statistics import EPSILON_GUIDANCE, POOLED, AltTestBlock, AltTestOptions, RunTest, alt_test
from validation.ratings import RatingSet
from validation.reports.tables import Cell, Row, Table

__all__ = ["EPSILON_MEANING", "alt_test_table", "rate_cell", "report_alt_test"]

EPSILON_MEANING = (
    "ε is the advantage the annotators are granted for what the model saves (cost, time): the model must "
    "win the leave-one-out comparison against each annotator at least ε more often than it loses. "
    "The paper's guidance: " + ", ".join(f"{value:g} for {who}" for who, value in EPSILON_GUIDANCE.items()) + "."
)


def report_alt_test(
    ratings: RatingSet,
    dimensions: Sequence[RatingDimension],
    humans: Sequence[str],
    judge_rater: str,
    judge_label: str,
) -> Table:
    """The section: the judge run against the people, at the reference code's defaults."""
    blocks = [
        AltTestBlock(
            name=d.name,
            level=d.level,
            people=ratings.matrix(d.name, humans),
            models={"0": ratings.matrix(d.name, [judge_rater])[:, 0]},
        )
        for d in dimensions
    ]
    options = AltTestOptions()
    return alt_test_table(alt_test(blocks, humans, options=options), {0: judge_label}, options.epsilon)


def rate_cell(value: float | None, note: str | None) -> Cell:
    return Cell(value=value, note=None if value is not None else note)


def alt_test_table(tests: list[RunTest], models: dict[int, str], epsilon: float) -> Table:
    rows: list[Row] = []
    for test in tests:
        for position, scope in enumerate(test.scopes):
            tested = len(scope.raters)
            rows.append(
                Row(
                    f"{models[int(test.run)]} · {scope.scope}",
                    (
                        Cell.count(test.rank),
                        Cell.text(scope.metric),
                        Cell.count(scope.n_units),
                        Cell.text(f"{sum(r.rejected for r in scope.raters)} of {tested}"),
                        rate_cell(scope.winning_rate, scope.reason),
                        rate_cell(scope.advantage_probability, scope.reason),
                        Cell.text("passed" if scope.passed else "failed"),
                        Cell.count(len(scope.skipped)),
                    ),
                    summary=position == 0 and scope.scope == POOLED,
                    rule_above=position == 0 and bool(rows),
                )
            )
    return Table(
        key="alt_test",
        title="Alternative Annotator Test",
        caption=(
            f"Per run and scope: annotators the model won against (BY-rejected at q) of those tested, winning rate "
            f"(passes at 0.5) and advantage probability, at ε = {epsilon:g}; runs ranked by advantage probability."
        ),
        columns=(
            "Run · scope",
            "Rank",
            "Metric",
            "Units",
            "Won",
            "Winning rate",
            "Advantage prob.",
            "Result",
            "Skipped",
        ),
        latex_columns=("Run · scope", "Rank", "Metric", "$n$", "Won", r"$\omega$", r"$\rho$", "Result", "Skipped"),
        rows=tuple(rows),
        notes=(EPSILON_MEANING,),
    )
