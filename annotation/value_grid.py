"""Values side by side, as the kind reads them: a column per answer (a rater, a judge), a row per
judgement. The item page shows raters' answers this way, the adjudication page adds the judge's,
and a judge's run page lists each suggestion's lines."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.kinds import TaskKind
from annotation.kinds.base import ValueLine

NOT_ANSWERED = "—"


@dataclass(frozen=True)
class GridRow:
    """One judgement across the compared values: its label, each column's answer, and whether they differ."""

    label: str
    cells: tuple[str, ...]
    differs: bool
    free_text: bool


@dataclass(frozen=True)
class ValueGrid:
    """Values side by side: a column per rater (and the LLM), a row per judgement (a CoPA factor,
    an intent's expressed/core, an MCQ option)."""

    columns: tuple[str, ...]
    rows: tuple[GridRow, ...]

    @property
    def n_differing(self) -> int:
        return sum(row.differs for row in self.rows)


def value_lines(*, kind: TaskKind, value: dict, payload: dict) -> list[ValueLine]:
    """``kind.value_lines``, but a value from before a schema change is shown as stored, never a 500."""
    try:
        return kind.value_lines(value, payload)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return [ValueLine("value", "Value as stored", str(value))]


def value_grid(*, kind: TaskKind, payload: dict, columns: list[tuple[str, dict]]) -> ValueGrid:
    """Lay out ``(column name, value)`` pairs as the kind reads them, marking rows whose answers differ
    (free text never counts as a difference; a judgement one column lacks does)."""
    per_column = [
        {line.key: line for line in value_lines(kind=kind, value=value, payload=payload)} for _, value in columns
    ]
    keys: dict[str, ValueLine] = {}
    for lines in per_column:
        for key, line in lines.items():
            keys.setdefault(key, line)
    rows = []
    for key, first in keys.items():
        cells = tuple(lines[key].text if key in lines else NOT_ANSWERED for lines in per_column)
        differs = not first.free_text and len(set(cells)) > 1
        rows.append(GridRow(first.label, cells, differs, first.free_text))
    return ValueGrid(columns=tuple(name for name, _ in columns), rows=tuple(rows))
