"""The one CSV writer, and the exact undo of its formula escape on import.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
(and their full-width forms) as a formula; model output and forum text can start that way
(``=HYPERLINK(...)``). Every CSV Concord writes goes through ``csv_writer``, which puts one ``'``
in front of such a text cell (OWASP, "CSV Injection"); numbers are written as numbers and never
escaped. Every CSV import reads cells through ``unescape_cell``, which removes exactly that ``'``,
so an exported file imports back to the same text (docs/formats.md, "Formula cells").

The escape is a bijection: a text whose first character after any leading ``'`` is a formula start
gains one ``'`` (so ``'=x`` is written ``''=x`` and reads back as ``'=x``); other text is unchanged.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, Protocol

# What makes a spreadsheet read a cell as a formula, with the full-width forms some spreadsheets also accept.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
ESCAPE = "'"


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def _is_escaped_form(text: str) -> bool:
    """Whether ``text``, past its leading quotes, starts as a formula."""
    return text.lstrip(ESCAPE).startswith(FORMULA_START)


def escape_cell(value: Any) -> Any:
    """A cell as written: text a spreadsheet would run gets one leading ``'``; anything else as given."""
    if isinstance(value, str) and value and _is_escaped_form(value):
        return ESCAPE + value
    return value


def unescape_cell(cell: str) -> str:
    """A cell as read: the exact inverse of ``escape_cell`` on text."""
    if cell.startswith(ESCAPE) and _is_escaped_form(cell):
        return cell[1:]
    return cell


class CsvWriter:
    """``csv.writer`` whose text cells are escaped (unless ``escape`` is False, a raw export asked for).

    The csv module quotes a cell holding a line break only when the break is in its own line
    terminator, so with ``\n`` a lone ``\r`` went out bare and split the row on reading: a row
    holding one is written with every cell quoted."""

    def __init__(self, handle: _Writable, *, escape: bool = True, lineterminator: str = "\n") -> None:
        self._writer = csv.writer(handle, lineterminator=lineterminator)
        self._quoted = csv.writer(handle, lineterminator=lineterminator, quoting=csv.QUOTE_ALL)
        self._escape = escape

    def writerow(self, cells: Iterable[Any]) -> None:
        row = [escape_cell(c) for c in cells] if self._escape else list(cells)
        if any(isinstance(c, str) and "\r" in c for c in row):
            self._quoted.writerow(row)
        else:
            self._writer.writerow(row)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(handle: _Writable, *, escape: bool = True, lineterminator: str = "\n") -> CsvWriter:
    """The writer for every CSV Concord writes."""
    return CsvWriter(handle, escape=escape, lineterminator=lineterminator)
