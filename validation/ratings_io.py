"""Reading long-format ratings files: ``unit,rater,value`` and an optional ``dimension`` column.

The file is streamed with the csv module, one row at a time. An empty ``value`` is a missing rating;
at the ordinal and interval levels values are parsed as floats, at the nominal level they stay
strings (so ``1`` and ``1.0`` are different categories there). Surrounding whitespace is stripped
from every cell. Every problem is reported with its line and field, the first ``cap`` of them.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable
from typing import TextIO, cast

from annotation.errors import ErrorCollector, FieldError, ValidationFailed
from annotation.importing import csv_rows
from validation.agreement import LEVELS, Level, Rating

__all__ = ["COLUMNS", "DEFAULT_DIMENSION", "RatingsFileInvalid", "read_ratings"]

REQUIRED_COLUMNS = ("unit", "rater", "value")
COLUMNS = (*REQUIRED_COLUMNS, "dimension")
DEFAULT_DIMENSION = "value"

EMPTY_FILE = "the file is empty; expected the header unit,rater,value[,dimension]"
UNKNOWN_COLUMN = "unknown column; expected unit, rater, value and optionally dimension"
DUPLICATE_COLUMN = "column appears twice in the header"
MISSING_COLUMN = "missing from the header"
WRONG_WIDTH = "the row has {found} fields, the header has {expected}"
EMPTY_CELL = "empty; every row needs a {name}"
NOT_A_NUMBER = "{text!r} is not a number; level {level!r} needs numeric ratings"
NOT_FINITE = "{text!r} is not a finite number; leave the field empty for a missing rating"
DUPLICATE_RATING = "unit {unit!r} already has a rating by rater {rater!r}{where} (line {line})"
NO_ROWS = "no ratings after the header"
NOT_UTF8 = "the file is not UTF-8 text ({reason})"


class RatingsFileInvalid(ValidationFailed):
    """A ratings file could not be read; the message names each bad line and field."""

    code = "ratings_file_invalid"


def _read_ratings_iv(level: object) -> Level:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return cast(Level, level)  # one of LEVELS


def read_ratings(source: str | os.PathLike[str] | TextIO, *, level: Level, cap: int = 50) -> dict[str, list[Rating]]:
    """Ratings grouped by dimension, in the file's order.

    Parameters
    ----------
    source : path or text stream
        A CSV file with the header ``unit,rater,value`` and optionally ``dimension`` (any order).
        Without a ``dimension`` column every rating belongs to the dimension ``'value'``.
    level : {'nominal', 'ordinal', 'interval'}
        Decides how values are parsed: floats for ordinal and interval, strings for nominal.
    cap : int, default 50
        Most errors listed in the exception (the rest are counted).

    Returns
    -------
    dict of str to list of Rating

    Raises
    ------
    RatingsFileInvalid
        On an unreadable file, a bad header, a row of the wrong width, an empty unit, rater or
        dimension, a non-numeric value at the ordinal or interval level, or a second rating of the
        same unit by the same rater in one dimension.
    """
    level = _read_ratings_iv(level)
    errors = ErrorCollector(cap=cap)
    if isinstance(source, str | os.PathLike):
        try:
            # utf-8-sig drops a spreadsheet's byte-order mark; newline="" keeps quoted newlines.
            stream = open(source, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise RatingsFileInvalid([FieldError("", f"cannot open {os.fspath(source)}: {exc.strerror}")]) from None
        with stream:
            ratings = _read(stream, level, errors)
    else:
        ratings = _read(source, level, errors)
    if errors:
        raise RatingsFileInvalid(errors.errors, total=errors.total)
    return ratings


def _read(stream: Iterable[str], level: Level, errors: ErrorCollector) -> dict[str, list[Rating]]:
    reader = csv.reader(stream, strict=True)
    dimensions: dict[str, list[Rating]] = {}
    line = 1
    try:
        header = next(reader, None)
        if header is None:
            errors.add(FieldError("", EMPTY_FILE, 1))
            return dimensions
        columns = _columns(header, errors)
        if columns is None:
            return dimensions
        seen: dict[tuple[str, str, str], int] = {}
        for line, row in csv_rows(reader):
            if len(row) != len(header):
                field = header[len(row)].strip() if len(row) < len(header) else ""
                errors.add(FieldError(field, WRONG_WIDTH.format(found=len(row), expected=len(header)), line))
                continue
            rating = _rating(row, columns, level, line, errors)
            if rating is None:
                continue
            dimension, record = rating
            key = (dimension, str(record.unit), str(record.rater))
            if key in seen:
                where = "" if "dimension" not in columns else f" in dimension {dimension!r}"
                message = DUPLICATE_RATING.format(unit=key[1], rater=key[2], where=where, line=seen[key])
                errors.add(FieldError("rater", message, line))
                continue
            seen[key] = line
            dimensions.setdefault(dimension, []).append(record)
        if not seen and not errors:
            errors.add(FieldError("", NO_ROWS, reader.line_num + 1))
    except UnicodeDecodeError as exc:
        errors.add(FieldError("", NOT_UTF8.format(reason=exc.reason), line + 1))
    except csv.Error as exc:
        errors.add(FieldError("", f"CSV syntax: {exc}", reader.line_num))
    return dimensions


def _columns(header: list[str], errors: ErrorCollector) -> dict[str, int] | None:
    names = [name.strip() for name in header]
    columns: dict[str, int] = {}
    ok = True
    for index, name in enumerate(names):
        if name not in COLUMNS:
            errors.add(FieldError(name or f"#{index + 1}", UNKNOWN_COLUMN, 1))
            ok = False
        elif name in columns:
            errors.add(FieldError(name, DUPLICATE_COLUMN, 1))
            ok = False
        else:
            columns[name] = index
    for name in REQUIRED_COLUMNS:
        if name not in columns and name not in names:
            errors.add(FieldError(name, MISSING_COLUMN, 1))
            ok = False
    return columns if ok else None


def _rating(
    row: list[str], columns: dict[str, int], level: Level, line: int, errors: ErrorCollector
) -> tuple[str, Rating] | None:
    cells = {name: row[index].strip() for name, index in columns.items()}
    ok = True
    for name in ("unit", "rater", "dimension"):
        if name in cells and not cells[name]:
            errors.add(FieldError(name, EMPTY_CELL.format(name=name), line))
            ok = False
    text = cells["value"]
    value: str | float | None = None
    if text and level == "nominal":
        value = text
    elif text:
        try:
            value = float(text)
        except ValueError:
            errors.add(FieldError("value", NOT_A_NUMBER.format(text=text, level=level), line))
            return None
        if not math.isfinite(value):
            errors.add(FieldError("value", NOT_FINITE.format(text=text), line))
            return None
    if not ok:
        return None
    return cells.get("dimension", DEFAULT_DIMENSION), Rating(cells["unit"], cells["rater"], value)
