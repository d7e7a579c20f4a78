"""Exporting a run in the format an import reads, so a round trip is lossless."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Iterator
from typing import Any, TextIO

from annotation import csvsafe
from annotation.importing import (
    dumps_json,
)
from judges.models import JudgeRun, Suggestion
from judges.run_files.lines import HEADER_KEY, PROVENANCE_KEYS, RUN_FIELDS, option_orders


def run_provenance(run: JudgeRun) -> dict[str, Any]:
    """What a run's file says of where its outputs came from: an imported run keeps its producer's
    provenance; a run made here names its judge's model, prompt and sampling and itself."""
    if run.provenance.get("model"):
        return {k: run.provenance[k] for k in PROVENANCE_KEYS if run.provenance.get(k) not in (None, "", {})}
    judge = run.judge
    sampling: dict[str, Any] = {"temperature": judge.temperature, "max_tokens": judge.max_tokens}
    if judge.seed is not None:
        sampling["seed"] = judge.seed
    return {
        "model": judge.model or judge.backend_label,
        "prompt": judge.prompt_key,
        "sampling": {} if judge.is_baseline else sampling,
        "producer_run_id": f"concord run {run.pk}",
    }


def run_lines(run: JudgeRun) -> Iterator[dict[str, Any]]:
    """The run's file lines, in item order: one per item, its newest suggestion of the run's judge."""
    orders = option_orders(run.project.task_kind)
    rows = (
        Suggestion.objects.filter(judge_id=run.judge_id, item__project_id=run.project_id)
        .order_by("item_id", "-updated_at", "-id")
        .values_list(
            "item_id",
            "item__external_id",
            "status",
            "value",
            "failure_reason",
            "raw_output",
            "latency_ms",
            "tokens_in",
            "tokens_out",
            "score",
            "option_order",
        )  # fmt: skip
    )
    previous = None
    for item_id, external_id, status, value, reason, raw, latency, tokens_in, tokens_out, score, order in rows.iterator(
        chunk_size=2000
    ):
        if item_id == previous:
            continue  # an item judged under two prompt hashes: its newest answer, as reports read it
        previous = item_id
        line: dict[str, Any] = {"external_id": external_id}
        if status == Suggestion.Status.OK:
            line["value"] = value if order is None or orders is None else orders.to_shown_order(value, order)
        else:
            line["error"] = reason
        optional = {
            "raw_output": raw or None,
            "latency_ms": latency,
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "score": score,
            "option_order": order,
        }
        line.update({k: v for k, v in optional.items() if v is not None})
        yield line


def run_file_lines(run: JudgeRun, fmt: str) -> Iterator[str]:
    """The run in the import format, a line of text at a time: ``jsonl`` (its provenance line first)
    or ``csv`` (a header row; CSV carries no provenance, which the import's options then give)."""
    if fmt == "jsonl":
        yield json.dumps({HEADER_KEY: run_provenance(run)}, ensure_ascii=False) + "\n"
        for line in run_lines(run):
            yield dumps_json(line) + "\n"
        return
    buffer = io.StringIO()
    writer = csvsafe.csv_writer(buffer)
    for row in itertools.chain([RUN_FIELDS], ([_csv_cell(line.get(n)) for n in RUN_FIELDS] for line in run_lines(run))):
        writer.writerow(row)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def judge_run_export(*, run: JudgeRun, out: TextIO, fmt: str) -> int:
    """Write the run to ``out`` in the import format; the number of item lines written."""
    count = -1  # the provenance line or the CSV header is not an item
    for text in run_file_lines(run, fmt):
        out.write(text)
        count += 1
    return count


def _csv_cell(value: Any) -> Any:
    """Text as is (the writer escapes formulas), numbers as numbers, lists and objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return value
    return dumps_json(value)
