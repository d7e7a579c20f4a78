"""The agreement report's aggregation section: per dimension, how many of the people's majority labels
Dawid–Skene, MACE and Wawa would change (crowd-kit, the report's seed).

Runs never enter it: the models see the people only. GLAD is left to the aggregation page and command
(an optimiser per iteration makes it slow on a large project), and MACE to projects of at most
:data:`MACE_MAX_ANSWERS` answers per dimension, so a report on 100,000 items stays quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validation.aggregation.frames import ORDINAL_NOTE, question_frame
from validation.aggregation.methods import aggregate_question
from validation.reports.tables import Cell, Row, Table

if TYPE_CHECKING:
    from validation.reports.base import ReportContext

__all__ = ["MACE_MAX_ANSWERS", "aggregation_table"]

#: Answers per dimension up to which the report fits MACE (about a second on this many).
MACE_MAX_ANSWERS = 30_000
REPORT_METHODS = ("dawid_skene", "mace", "wawa")
TOO_MANY_FOR_MACE = (
    "MACE is fitted in the report up to {n:,} answers per dimension; the aggregation page fits it on any"
)
NOTE = (
    "Flips: items whose label under the model differs from the people's majority vote; ties have no majority and "
    "are no flip. The people only (runs never enter); GLAD and competence intervals on the aggregation page."
)


def aggregation_table(ctx: ReportContext) -> Table:
    """Per dimension: items, tied votes, and the flips of each model against the majority vote."""
    rows = []
    notes = [NOTE]
    for dimension in ctx.dimensions:
        frame = question_frame(ctx.ratings, dimension.name, list(ctx.human_raters))
        cells = []
        ties = None
        for method in REPORT_METHODS:
            if method == "mace" and len(frame) > MACE_MAX_ANSWERS:
                cells.append(Cell(format="count", note=TOO_MANY_FOR_MACE.format(n=MACE_MAX_ANSWERS)))
                continue
            result = aggregate_question(frame, method=method, seed=ctx.parameters.seed)
            if result.reason:
                cells.append(Cell(format="count", note=result.reason))
                continue
            ties = result.ties
            cells.append(Cell.count(result.flips))
        n_items = int(frame["task"].nunique())
        tie_cell = Cell.count(ties) if ties is not None else Cell(format="count", note="no model")
        rows.append(Row(dimension.title, (Cell.count(n_items), tie_cell, *cells)))
    if any(d.level != "nominal" for d in ctx.dimensions):
        notes.append(ORDINAL_NOTE)
    return Table(
        key="aggregation",
        title="Aggregation: flips against the majority vote",
        caption=(
            f"Per dimension, the people's labels aggregated by Dawid–Skene, MACE and Wawa (crowd-kit, seed "
            f"{ctx.parameters.seed}) against their majority vote."
        ),
        columns=("Dimension", "Items", "Ties", "Flips DS", "Flips MACE", "Flips Wawa"),
        latex_columns=("Dimension", "Items", "Ties", "Flips DS", "Flips MACE", "Flips Wawa"),
        rows=tuple(rows),
        notes=tuple(dict.fromkeys(notes)),
    )
