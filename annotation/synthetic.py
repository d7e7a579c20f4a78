"""Generated items of any kind, for load tests and benchmarks (never shown as real data)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from annotation.kinds import TaskKind


def synthetic_records(kind: TaskKind, count: int, *, start: int = 0) -> Iterator[dict]:
    """``count`` valid import records built from the kind's example, each with its own id."""
    template = kind.example_payload()
    for number in range(start, start + count):
        yield {"external_id": f"{kind.name}-{number:07d}", **template, "meta": {"synthetic": number}}


def write_jsonl(path: str | Path, records: Iterator[dict]) -> Path:
    path = Path(path)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path
