"""Streaming writers for gold exports: JSONL, CSV and Parquet, with memory flat in the row count.

Records arrive as an iterator and leave in batches: nothing holds the whole export. Nested values
(lists, objects) are JSON text in CSV cells and Parquet columns, so every format carries the same
information and pandas / `datasets` read them without a custom schema.

CSV text cells that a spreadsheet would run as a formula get a leading ``'`` unless the caller asks
for raw cells (``annotation.csvsafe``, the writer of every CSV; item text comes from public forums).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from annotation import csvsafe

PARQUET_BATCH = 5_000
FORMATS = ("jsonl", "csv", "parquet")


def _flat(value: Any) -> Any:
    return orjson.dumps(value).decode() if isinstance(value, dict | list) else value


def _batches(records: Iterable[dict], size: int) -> Iterator[list[dict]]:
    iterator = iter(records)
    while batch := list(islice(iterator, size)):
        yield batch


def write_jsonl(path: str | Path, records: Iterable[dict]) -> int:
    count = 0
    with open(path, "wb") as handle:
        for record in records:
            handle.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
            count += 1
    return count


def write_csv(path: str | Path, records: Iterable[dict], *, escape: bool = True) -> int:
    """One row per record; the first record's keys are the header (every record of a shape has them).

    ``escape`` (the default) neutralises formula cells; ``escape=False`` writes every text as it is.
    """
    count = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csvsafe.csv_writer(handle, escape=escape, lineterminator="\r\n")
        header: list[str] | None = None
        for record in records:
            if header is None:
                header = list(record)
                writer.writerow(header)
            writer.writerow([_flat(record.get(key, "")) for key in header])
            count += 1
    return count


def _column_type(values: list[Any]) -> pa.DataType:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64()
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.float64()
    return pa.string()


def _array(values: list[Any], kind: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # A later batch may carry a number where the first had text: keep it, as text.
        return pa.array(
            [v if v is None or isinstance(v, str) else orjson.dumps(v).decode() for v in values], pa.string()
        )


def write_parquet(path: str | Path, records: Iterable[dict], *, batch_size: int = PARQUET_BATCH) -> int:
    """Row groups of ``batch_size`` records; column types come from the first batch."""
    count = 0
    writer: pq.ParquetWriter | None = None
    schema: pa.Schema | None = None
    try:
        for batch in _batches(records, batch_size):
            names = schema.names if schema is not None else list(batch[0])
            columns: dict[str, list[Any]] = {name: [] for name in names}
            for record in batch:
                for name in names:
                    columns[name].append(_flat(record.get(name)))
            if schema is None:
                schema = pa.schema([(name, _column_type(columns[name])) for name in names])
                writer = pq.ParquetWriter(str(path), schema)
            arrays = [_array(columns[name], schema.field(name).type) for name in names]
            assert writer is not None  # opened with the first batch's schema
            writer.write_batch(pa.record_batch(arrays, schema=schema))
            count += len(batch)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:  # no records: still a valid (empty) file
        pq.write_table(pa.table({}), str(path))
    return count


WRITERS: dict[str, Callable[[str | Path, Iterable[dict]], int]] = {
    "jsonl": write_jsonl,
    "csv": write_csv,
    "parquet": write_parquet,
}
