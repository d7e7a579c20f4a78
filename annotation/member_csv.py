"""Reading a CSV of people to add to a project's team (``username,email,role``): each line checked,
every problem named by line and field, nothing read past the caps (``annotation.member_services``
holds the caps and messages, and adds the people)."""

from __future__ import annotations

import csv
import io

from annotation.errors import ErrorCollector, FieldError, ValidationFailed
from annotation.member_services import (
    BAD_HEADER,
    BAD_ROW_WIDTH,
    CSV_COLUMNS,
    EMPTY_FILE,
    FILE_TOO_LARGE,
    MAX_CSV_BYTES,
    MAX_ROWS,
    NOT_UTF8,
    TOO_MANY_ROWS,
    MemberSpec,
)


def members_from_csv(data: bytes) -> list[MemberSpec]:
    """People from a CSV with the header ``username,email,role`` (any order), line numbers kept.
    Problems are a ValidationFailed naming each line and field; nothing is read past the caps."""
    if len(data) > MAX_CSV_BYTES:
        raise ValidationFailed([FieldError("file", FILE_TOO_LARGE.format(limit=MAX_CSV_BYTES))])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationFailed([FieldError("file", NOT_UTF8)]) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    names = [cell.strip().lower() for cell in header or []]
    if sorted(names) != sorted(CSV_COLUMNS):
        got = ",".join(header or []) or "nothing"
        raise ValidationFailed([FieldError("", BAD_HEADER.format(got=got[:80]), line=1)])
    position = {name: names.index(name) for name in CSV_COLUMNS}
    specs: list[MemberSpec] = []
    errors = ErrorCollector()
    for cells in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(specs) >= MAX_ROWS:
            raise ValidationFailed([FieldError("", TOO_MANY_ROWS.format(limit=MAX_ROWS), line=line)])
        if len(cells) != len(CSV_COLUMNS):
            errors.add(FieldError("", BAD_ROW_WIDTH.format(n=len(cells)), line=line))
            continue
        values = {name: cells[index].strip() for name, index in position.items()}
        specs.append(MemberSpec(username=values["username"], email=values["email"], role=values["role"], line=line))
    if errors:
        raise ValidationFailed(errors.errors, total=errors.total)
    if not specs:
        raise ValidationFailed([FieldError("file", EMPTY_FILE)])
    return specs
