"""The input table of IntentGrasp's estimated human baseline (paper 002, Appendix A.2, Table 6).

A CSV with a header row and the columns ``dataset`` and ``score`` (others are ignored): the source
dataset's name as the MCQ instances' ``meta.dataset`` gives it, and its reported human score or
inter-annotator agreement as a fraction (0.755) or a percentage (75.5%); empty, ``none`` or ``-``
where the dataset reports none. Names match ignoring case and anything but letters and digits
("MultiWOZ-2.2" = "multiwoz22"). At most ``MAX_ROWS`` rows and ``MAX_BYTES`` bytes.

``intentgrasp_human_scores.csv`` beside this module is the paper's Table 6 (its "Score" column, with
its "# All" and "# Gem" counts as ``paper_all`` and ``paper_gem``); it is the default.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from annotation.errors import FieldError

__all__ = ["DEFAULT_TABLE", "MAX_BYTES", "MAX_ROWS", "HumanScoreTable", "dataset_key", "parse_human_scores"]

DEFAULT_TABLE = Path(__file__).resolve().parent / "data" / "intentgrasp_human_scores.csv"
MAX_ROWS = 1000
MAX_BYTES = 256 * 1024
NO_SCORE = {"", "none", "-", "—", "n/a"}

TOO_LARGE = "the table is larger than {limit} bytes"
TOO_MANY_ROWS = "the table has more than {limit} rows"
MISSING_COLUMNS = "the header needs the columns dataset and score; found {found}"
BAD_SCORE = "{text!r} is not a score: give a fraction in [0, 1], a percentage such as 75.5%, or leave it empty"
EMPTY_DATASET = "the dataset name is empty"
DUPLICATE_DATASET = "dataset {name!r} appears twice (rows {first} and {second})"


def dataset_key(name: str) -> str:
    """How dataset names are matched: lower case, letters and digits only."""
    return re.sub(r"[^0-9a-z]", "", name.casefold())


@dataclass(frozen=True)
class HumanScoreTable:
    """(dataset, score or None) rows in file order; ``source`` says where they came from."""

    rows: tuple[tuple[str, float | None], ...]
    source: str

    def score_of(self, dataset: str) -> float | None:
        return self._by_key.get(dataset_key(dataset))

    @property
    def _by_key(self) -> dict[str, float | None]:
        return {dataset_key(name): score for name, score in self.rows}

    def to_json(self) -> list[list]:
        return [[name, score] for name, score in self.rows]

    @classmethod
    def from_json(cls, rows: list[list], source: str) -> HumanScoreTable:
        return cls(
            rows=tuple((str(name), None if score is None else float(score)) for name, score in rows), source=source
        )


def _score(text: str) -> float | None:
    cleaned = text.strip()
    if cleaned.casefold() in NO_SCORE:
        return None
    percent = cleaned.endswith("%")
    try:
        value = float(cleaned.rstrip("%").strip())
    except ValueError:
        raise ValueError(BAD_SCORE.format(text=text)) from None
    value = value / 100 if percent else value
    if not 0 <= value <= 1:
        raise ValueError(BAD_SCORE.format(text=text))
    return value


def parse_human_scores(text: str, *, source: str) -> HumanScoreTable:
    """Read the table; every problem is a FieldError naming the line and the column.

    Raises
    ------
    TableError
        A ValueError whose ``errors`` are the table's problems (FieldError, with the line).
    """
    if len(text.encode()) > MAX_BYTES:
        raise TableError([FieldError("file", TOO_LARGE.format(limit=MAX_BYTES))])
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    if "dataset" not in header or "score" not in header:
        raise TableError([FieldError("header", MISSING_COLUMNS.format(found=", ".join(header) or "nothing"))])
    rows: list[tuple[str, float | None]] = []
    seen: dict[str, int] = {}
    errors: list[FieldError] = []
    for number, record in enumerate(reader, start=2):
        if number - 1 > MAX_ROWS:
            raise TableError([FieldError("file", TOO_MANY_ROWS.format(limit=MAX_ROWS))])
        record = {(k or "").strip(): (v or "") for k, v in record.items()}
        name = record.get("dataset", "").strip()
        if not name:
            errors.append(FieldError("dataset", EMPTY_DATASET, line=number))
            continue
        if dataset_key(name) in seen:
            errors.append(
                FieldError(
                    "dataset",
                    DUPLICATE_DATASET.format(name=name, first=seen[dataset_key(name)], second=number),
                    line=number,
                )
            )
            continue
        seen[dataset_key(name)] = number
        try:
            rows.append((name, _score(record.get("score", ""))))
        except ValueError as exc:
            errors.append(FieldError("score", str(exc), line=number))
    if errors:
        raise TableError(errors)
    return HumanScoreTable(rows=tuple(rows), source=source)


class TableError(ValueError):
    """The table's problems, one FieldError per line and column."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def default_human_scores() -> HumanScoreTable:
    """The paper's Table 6."""
    return parse_human_scores(DEFAULT_TABLE.read_text(encoding="utf-8"), source="IntentGrasp Table 6")
