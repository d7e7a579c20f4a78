"""Source readers: one module per source format, each yielding :class:`SourceRecord` one at a time.

A reader validates each record and adds a line-and-field error for anything wrong (the file is then
refused as a whole, like ``import_items``); it never keeps more than one record in memory beyond
small indexes (ids seen, label names).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from annotation.errors import ErrorCollector, FieldError
from annotation.importing import read_records

ONLY_JSONL = "source files are JSON Lines (.jsonl): one JSON object per line, got {suffix!r}"
DUPLICATE_SOURCE = "duplicate record {source_id!r} (first on line {first})"


@dataclass(frozen=True)
class SourceRecord:
    line: int
    #: Stable id of the record within its source (e.g. ``site:question_id``); part of the items' ids.
    source_id: str
    licence: str
    #: The normalised record a step reads.
    data: dict
    #: Attribution and provenance to keep with every item made from it.
    attribution: dict = field(default_factory=dict)


class SourceReader:
    """Base of a reader. Subclasses set ``name`` and ``label`` and implement :meth:`parse`."""

    name: ClassVar[str]
    label: ClassVar[str]

    def parse(self, data: dict, *, line: int, errors: ErrorCollector) -> SourceRecord | None:
        """The record of one JSON object, or None after adding its errors to ``errors``."""
        raise NotImplementedError("subclasses of SourceReader must provide parse()")

    def prepare(self, path: Path) -> None:
        """A first look at the file, for readers that need facts spanning records (label lists)."""

    def read(self, path: str | Path, errors: ErrorCollector) -> Iterator[SourceRecord]:
        path = Path(path)
        if path.suffix.lower() not in (".jsonl", ".ndjson"):
            errors.add(FieldError("", ONLY_JSONL.format(suffix=path.suffix or "(none)")))
            return
        self.prepare(path)
        seen: dict[str, int] = {}
        records = read_records(path, errors, decode_csv=lambda name, cell: cell, csv_columns=set(), csv_required=set())
        for record in records:
            parsed = self.parse(record.data, line=record.line, errors=errors)
            if parsed is None:
                continue
            first = seen.setdefault(parsed.source_id, record.line)
            if first != record.line:
                message = DUPLICATE_SOURCE.format(source_id=parsed.source_id, first=first)
                errors.add(FieldError("", message, record.line))
                continue
            yield parsed


def require(
    data: dict, name: str, kind: type | tuple[type, ...], errors: list[FieldError], *, empty_ok: bool = False
) -> Any:
    """``data[name]`` if it is of ``kind`` (and not empty), else None with an error naming the field."""
    value = data.get(name)
    if value is None:
        errors.append(FieldError(name, "missing"))
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        errors.append(FieldError(name, f"must be {names}, got {type(value).__name__}"))
        return None
    if not empty_ok and isinstance(value, str | list) and not (value.strip() if isinstance(value, str) else value):
        errors.append(FieldError(name, "must not be empty"))
        return None
    return value
