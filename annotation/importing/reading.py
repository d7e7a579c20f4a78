"""Reading import files: JSONL or CSV, one record at a time, with the line each starts on.

Memory does not grow with the file. Problems go to an ``ErrorCollector`` naming line and field and
the bad records are left out, so a caller keeps checking the rest and stores nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings

from annotation import csvsafe, jsonsafe
from annotation.errors import ErrorCollector, FieldError, ImportRejected

ProgressCallback = Callable[[int, int], None]  # (bytes read, records read)

MAX_EXTERNAL_ID = 255
PROGRESS_EVERY = 2000

UNSUPPORTED_FORMAT = "unsupported file type {suffix!r}: use .jsonl (one JSON object per line) or .csv"
NOT_UTF8 = "the file is not UTF-8 text ({reason})"
RECORD_TOO_LARGE = "the record is larger than {limit:,} bytes (CONCORD_MAX_RECORD_BYTES)"
ID_CHARACTER = (
    "contains {char} ({name}) at position {position}: ids are visible text, without control or format "
    "characters (NUL, bidirectional overrides, zero-width spaces, line separators)"
)
# Unicode categories refused in ids: controls, format characters (bidi overrides, zero-width),
# line and paragraph separators, surrogates.
ID_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


@dataclass(frozen=True)
class Record:
    line: int
    data: dict


def file_format(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    raise ImportRejected([FieldError("", UNSUPPORTED_FORMAT.format(suffix=suffix or "(none)"))])


class _Source:
    """A UTF-8 text stream (BOM or not) over a binary file that can report how far it has read."""

    def __init__(self, path: str | Path) -> None:
        self.raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        # newline="" keeps CSV's embedded newlines intact; JSONL lines are stripped anyway.
        self.text = io.TextIOWrapper(self.raw, encoding="utf-8-sig", newline="")

    def bytes_read(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        self.text.close()


def _bounded_lines(text: io.TextIOBase, limit: int) -> Iterator[tuple[str, bool]]:
    """Each line with whether it is longer than ``limit`` bytes. A longer line is read in pieces and
    dropped, so one huge line never sits in memory whole."""
    while line := text.readline(limit + 1):
        if len(line) > limit and not line.endswith(("\n", "\r")):
            while (rest := text.readline(limit + 1)) and not rest.endswith(("\n", "\r")):
                pass
            yield line[:limit], True
            continue
        # Characters are at most 4 bytes: only a line that could pass the limit is measured in bytes.
        yield line, len(line) * 4 > limit and len(line.encode("utf-8", "surrogatepass")) > limit


def _jsonl_records(source: _Source, errors: ErrorCollector) -> Iterator[Record]:
    limit = settings.CONCORD_MAX_RECORD_BYTES
    depth = jsonsafe.max_depth()  # read once: a setting costs more to look up than a short line to parse
    for line_no, (line, too_large) in enumerate(_bounded_lines(source.text, limit), start=1):
        if too_large:
            errors.add(FieldError("", RECORD_TOO_LARGE.format(limit=limit), line_no))
            continue
        if not line.strip():
            continue
        try:
            data = jsonsafe.loads(line, depth=depth)
        except jsonsafe.UnsafeJSON as exc:
            errors.add(FieldError(exc.path, exc.message, line_no))
            continue
        if not isinstance(data, dict):
            errors.add(FieldError("", f"each line must be a JSON object, got {type(data).__name__}", line_no))
            continue
        yield Record(line_no, data)


def csv_rows(reader) -> Iterator[tuple[int, list[str]]]:
    """The non-blank rows of a csv.reader with the line each starts on (a quoted cell may span lines),
    each cell with the formula escape of Concord's CSV writer undone (``annotation.csvsafe``)."""
    previous_end = reader.line_num
    for row in reader:
        start, previous_end = previous_end + 1, reader.line_num
        if any(cell.strip() for cell in row):
            yield start, [csvsafe.unescape_cell(cell) for cell in row]


def _csv_records(
    source: _Source,
    errors: ErrorCollector,
    decode: Callable[[str, str], Any],
    columns: set[str],
    required: set[str],
) -> Iterator[Record]:
    reader = csv.reader(source.text)
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [name.strip() for name in header]
    unknown = [name for name in header if name not in columns]
    repeated = sorted({name for name in header if header.count(name) > 1})
    problems = [
        f"unknown column(s) {unknown}; allowed: {sorted(columns)}" if unknown else "",
        f"repeated column(s) {repeated}" if repeated else "",
        f"missing column(s) {sorted(required - set(header))}" if required - set(header) else "",
    ]
    for problem in filter(None, problems):
        errors.add(FieldError("", problem, 1))
    if any(problems):
        return
    limit = settings.CONCORD_MAX_RECORD_BYTES
    for start, row in csv_rows(reader):
        if len(row) != len(header):
            errors.add(FieldError("", f"has {len(row)} cells, the header has {len(header)}", start))
            continue
        size = sum(map(len, row))
        if size * 4 > limit and sum(len(cell.encode("utf-8", "surrogatepass")) for cell in row) > limit:
            errors.add(FieldError("", RECORD_TOO_LARGE.format(limit=limit), start))
            continue
        data: dict[str, Any] = {}
        bad = False
        for name, cell in zip(header, row, strict=True):
            if cell == "":
                continue  # an empty cell is an absent field
            try:
                data[name] = decode(name, cell)
            except jsonsafe.UnsafeJSON as exc:  # a JSON cell: the error names the part of it
                errors.add(FieldError(exc.path or name, exc.message, start))
                bad = True
            except ValueError as exc:
                errors.add(FieldError(name, str(exc), start))
                bad = True
        if not bad:
            yield Record(start, data)


def read_records(
    path: str | Path,
    errors: ErrorCollector,
    *,
    decode_csv: Callable[[str, str], Any],
    csv_columns: set[str],
    csv_required: set[str],
    progress: ProgressCallback | None = None,
) -> Iterator[Record]:
    """Yield the file's records; problems go to ``errors`` and the bad records are left out."""
    fmt = file_format(path)
    source = _Source(path)
    count = 0
    try:
        records = (
            _jsonl_records(source, errors)
            if fmt == "jsonl"
            else _csv_records(source, errors, decode_csv, csv_columns, csv_required)
        )
        for record in records:
            count += 1
            if progress and count % PROGRESS_EVERY == 0:
                progress(source.bytes_read(), count)
            yield record
    except UnicodeDecodeError as exc:
        errors.add(FieldError("", NOT_UTF8.format(reason=exc.reason), None))
    except csv.Error as exc:
        errors.add(FieldError("", f"CSV syntax: {exc}", None))
    finally:
        if progress:
            progress(source.bytes_read(), count)
        source.close()


def record_external_id(data: dict, line: int, errors: ErrorCollector) -> str | None:
    """The record's external id, stripped and NFC-normalised; None (with the error added) when refused."""
    value = data.get("external_id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        errors.add(FieldError("external_id", "missing: every record needs a non-empty external_id", line))
        return None
    if not isinstance(value, str):
        errors.add(FieldError("external_id", f"must be a string or a whole number, got {json.dumps(value)}", line))
        return None
    # Spaces around an id are nearly always a spreadsheet artefact; "a " and "a" are one item.
    # NFC: "é" typed as one character or as "e" plus a combining accent is one id, so one item.
    value = value.strip()
    if not value.isascii():
        value = unicodedata.normalize("NFC", value)
    problem = external_id_problem(value)
    if problem:
        errors.add(FieldError("external_id", problem, line))
        return None
    return value


def external_id_problem(value: str) -> str | None:
    """Why a (stripped, NFC) external id is refused, or None."""
    if len(value) > MAX_EXTERNAL_ID:
        return f"longer than {MAX_EXTERNAL_ID} characters"
    if value.isascii() and value.isprintable():
        return None  # the common case, without a look at each character
    for position, char in enumerate(value, start=1):
        if unicodedata.category(char) in ID_REFUSED_CATEGORIES:
            name = unicodedata.name(char, "a control character")
            return ID_CHARACTER.format(char=f"U+{ord(char):04X}", name=name, position=position)
    return None


def dumps_json(data: Any) -> str:
    """Compact JSON text, as ``json.dumps`` writes it with ``ensure_ascii=False``, several times faster."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, which the standard encoder writes
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read a block at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
