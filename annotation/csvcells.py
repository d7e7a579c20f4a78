"""Reading one CSV cell, the same way for every import: items (payload fields, ``gold``) and annotations.

A CSV cell is text; what it means comes from the column's type, as a JSON Schema names it. Both
importers ask here, so a spelling one accepts the other accepts too (docs/formats.md, "CSV cells").
An empty cell never gets here: it is an absent field (``annotation.importing``). Each function
raises ValueError with a message a person can act on; the importer adds the line and the column.
"""

from __future__ import annotations

import math
from typing import Any

from annotation import jsonsafe

#: Boolean cells, compared without case and surrounding spaces.
TRUE_CELLS = ("true", "1", "yes")
FALSE_CELLS = ("false", "0", "no")

NOT_BOOLEAN = "must be true or false (or 1/0, yes/no), got {cell!r}"
NOT_WHOLE_NUMBER = "must be a whole number, got {cell!r}"
NOT_NUMBER = "must be a number, got {cell!r}"
NOT_JSON = "must hold {what} as JSON: {msg}"
NOT_JSON_OF_TYPE = "must hold JSON ({kind}) in this CSV cell: {msg} at char {pos}"


def boolean_cell(cell: str) -> bool:
    lowered = cell.strip().lower()
    if lowered in TRUE_CELLS:
        return True
    if lowered in FALSE_CELLS:
        return False
    raise ValueError(NOT_BOOLEAN.format(cell=cell))


def integer_cell(cell: str) -> int:
    try:
        return int(cell)
    except ValueError:
        raise ValueError(NOT_WHOLE_NUMBER.format(cell=cell)) from None


def number_cell(cell: str) -> float:
    """A finite number (``nan`` and ``inf`` are refused, as they are in JSON)."""
    try:
        number = float(cell)
    except ValueError:
        raise ValueError(NOT_NUMBER.format(cell=cell)) from None
    if not math.isfinite(number):
        raise ValueError(NOT_NUMBER.format(cell=cell))
    return number


def json_cell(cell: str, *, field: str, what: str) -> Any:
    """A cell holding a whole JSON document (``gold``, an annotation's ``value``). ``what`` says what
    it holds in the error ("the known answer"). Refusals of the JSON's contents (depth, NaN) name
    the part of it, as ``jsonsafe.UnsafeJSON``."""
    try:
        return jsonsafe.loads(cell, path=field)
    except jsonsafe.NotJSON as exc:
        raise ValueError(NOT_JSON.format(what=what, msg=exc.msg)) from None


def schema_cell(cell: str, *, field: str, schema: dict) -> Any:
    """A cell of a column whose values ``schema`` (a JSON Schema) describes: lists and objects are
    JSON in the cell (a cell of spaces is an empty one), integers, numbers and booleans are read as
    such, anything else stays text for the schema to check."""
    kind = schema.get("type")
    if kind in ("array", "object"):
        if cell.strip() == "":
            return [] if kind == "array" else {}
        try:
            return jsonsafe.loads(cell, path=field)
        except jsonsafe.NotJSON as exc:
            raise ValueError(NOT_JSON_OF_TYPE.format(kind=kind, msg=exc.msg, pos=exc.pos)) from None
    if kind == "integer":
        return integer_cell(cell)
    if kind == "number":
        return number_cell(cell)
    if kind == "boolean":
        return boolean_cell(cell)
    return cell
