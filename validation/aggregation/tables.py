"""The aggregation's tables: flips per dimension, annotators' competence (with Dawid–Skene's confusion
matrices), and the flipped or tied items."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import RatingDimension
from validation.aggregation.frames import ORDINAL_NOTE
from validation.aggregation.methods import METHOD_LABELS
from validation.reports.tables import Cell, Row, Table

__all__ = ["LISTED_ITEMS", "RUNS_NOTE", "aggregation_tables"]

RUNS_NOTE = (
    "Runs are counted as raters here (--with-runs): their competence is on the people's scale, labelled as runs."
)
#: Items listed in the table of flipped and tied items (the JSON lists every item).
LISTED_ITEMS = 200


def aggregation_tables(result: dict[str, Any], dimensions: dict[str, RatingDimension]) -> tuple[Table, ...]:
    """The dimensions' summary, the annotators' competence (and confusion matrices), the flipped items."""
    method = METHOD_LABELS[result["method"]]
    notes = [RUNS_NOTE] if result["with_runs"] else []
    if any(d.level != "nominal" for d in dimensions.values()):
        notes.append(ORDINAL_NOTE)
    tables = [_summary(result, dimensions, method, notes), _competence(result, dimensions, notes)]
    if any("confusion" in record for record in result["annotators"]):
        tables.append(_confusions(result, dimensions))
    tables.append(_flipped(result, dimensions, method))
    return tuple(tables)


def _summary(result: dict[str, Any], dimensions: dict[str, RatingDimension], method: str, notes: list[str]) -> Table:
    rows = tuple(
        Row(
            dimensions[name].title,
            (
                Cell.count(s["n_items"]),
                Cell.count(s["n_annotators"]),
                Cell.count(s["flips"]),
                Cell.count(s["ties"]),
                Cell.text(s["reason"] or ""),
            ),
        )
        for name, s in result["dimensions"].items()
    )
    columns = ("Dimension", "Items", "Annotators", "Flips", "Ties", "Why none")
    return Table(
        key="aggregation",
        title=f"Labels by {method} against the majority vote",
        caption=(
            f"Per dimension: items aggregated, annotators, labels that differ from the majority vote (flips) and "
            f"tied votes (no majority; an expert decides). {method} through crowd-kit, seed {result['seed']}."
        ),
        columns=columns,
        latex_columns=columns,
        rows=rows,
        notes=tuple(notes),
    )


def _competence(result: dict[str, Any], dimensions: dict[str, RatingDimension], notes: list[str]) -> Table:
    spamming = result["method"] == "mace"
    rows = []
    for record in result["annotators"]:
        ci = record["ci"]
        cells = [
            Cell.text(dimensions[record["dimension"]].title),
            Cell.count(record["n_items"]),
            Cell(value=record["competence"], ci=None if ci is None else (ci[0], ci[1])),
        ]
        if spamming:
            spam = record.get("spamming_ci")
            cells.append(Cell(value=record.get("spamming"), ci=None if spam is None else (spam[0], spam[1])))
        rows.append(Row(_rater(record), tuple(cells)))
    first = next(iter(result["dimensions"].values()), None)
    interval = (
        f"{result['confidence_level']:.0%} percentile bootstrap intervals over items ({result['bootstrap']} resamples)"
        if result["bootstrap"]
        else "no interval (bootstrap 0)"
    )
    columns = ("Annotator", "Dimension", "Items", "Competence", *(("Spamming",) if spamming else ()))
    return Table(
        key="competence",
        title="Annotator competence",
        caption=f"Competence: {first['competence'] if first else ''}; {interval}.",
        columns=columns,
        latex_columns=columns,
        rows=tuple(rows),
        notes=tuple(notes),
    )


def _confusions(result: dict[str, Any], dimensions: dict[str, RatingDimension]) -> Table:
    """Dawid–Skene's confusion matrices: a row per annotator, dimension and true class."""
    classes = sorted({len(s["classes"]) for s in result["dimensions"].values()})
    width = classes[-1] if classes else 0
    rows = []
    for record in result["annotators"]:
        matrix = record.get("confusion")
        if not matrix:
            continue
        dimension = dimensions[record["dimension"]]
        labels = result["dimensions"][record["dimension"]]["classes"]
        for truth, row in zip(labels, matrix, strict=True):
            cells = [Cell.text(f"{dimension.title}: {dimension.category_label(truth)}")]
            cells += [Cell(value=p) for p in row] + [Cell(format="number")] * (width - len(row))
            rows.append(Row(_rater(record), tuple(cells)))
    answers = tuple(f"Answer {k + 1}" for k in range(width))
    return Table(
        key="confusion",
        title="Confusion matrices (Dawid–Skene)",
        caption=(
            "P(the annotator answers the column's class | the item's true class is the row's), as Dawid–Skene "
            "estimates them; the answer columns follow the dimension's classes in order."
        ),
        columns=("Annotator", "True class", *answers),
        latex_columns=("Annotator", "True class", *answers),
        rows=tuple(rows),
    )


def _flipped(result: dict[str, Any], dimensions: dict[str, RatingDimension], method: str) -> Table:
    listed = [i for i in result["items"] if i["flipped"] or i["majority"] is None][:LISTED_ITEMS]
    rows = tuple(
        Row(
            f"{i['external_id']} · {i['part']}" if "part" in i else i["external_id"],
            (
                Cell.text(dimensions[i["dimension"]].title),
                Cell.text(_shown(i["label"], dimensions[i["dimension"]])),
                Cell(value=i["probability"]),
                Cell.text(_shown(i["majority"], dimensions[i["dimension"]]) if i["majority"] is not None else "tie"),
            ),
        )
        for i in listed
    )
    columns = ("Item", "Dimension", "Label", "Probability", "Majority")
    return Table(
        key="flipped",
        title="Flipped and tied items",
        caption=(
            f"Items whose {method} label differs from the majority vote, or whose vote is tied (the first "
            f"{LISTED_ITEMS}; the JSON lists every item)."
        ),
        columns=columns,
        latex_columns=columns,
        rows=rows,
    )


def _rater(record: dict[str, Any]) -> str:
    return f"{record['rater']} (run)" if record["run"] else record["rater"]


def _shown(value: Any, dimension: RatingDimension) -> str:
    return "" if value is None else dimension.category_label(value)
