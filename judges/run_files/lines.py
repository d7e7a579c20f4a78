"""Run files, line by line: the fields a line may have, its checks (a value is checked exactly as a
person's answer is), CSV cells, and the provenance line a JSONL file may open with."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation import csvcells
from annotation.errors import ErrorCollector, FieldError
from annotation.importing import (
    Record,
)
from annotation.kinds import TaskKind
from judges.kinds import kind_module
from judges.models import JudgeRun

IMPORTED_BACKEND = "imported"
RUN_FIELDS = (
    "external_id",
    "value",
    "error",
    "raw_output",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "score",
    "option_order",
)
#: The run file formats (a download's ``?format=``) and their content types.
RUN_FILE_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "csv": "text/csv; charset=utf-8"}
HEADER_KEY = "provenance"
PROVENANCE_KEYS = ("model", "prompt", "sampling", "producer_run_id")
#: Caps on what a file's provenance (or the options) may say.
MAX_MODEL = 200
MAX_PROMPT = 100
MAX_PRODUCER_RUN_ID = 200
MAX_SAMPLING_KEYS = 20
MAX_TOKENS_COUNT = 2**31 - 1
#: A call's latency at most (a week: batch APIs answer within a day); a larger number is no
#: latency, and past a double's range the database could not store it.
MAX_LATENCY_MS = 604_800_000
DEFAULT_PROMPT = "unspecified"
PROMPT_KEY = re.compile(r"^(?P<name>.+)\.v(?P<version>[1-9][0-9]{0,8})$")

UNKNOWN_FIELDS = "unknown field(s) {fields}; allowed: {allowed}"
BOTH_VALUE_AND_ERROR = "a line has either a value or an error, not both"
NEITHER_VALUE_NOR_ERROR = "missing: give the model's value, or an error saying why its output could not be used"
ERROR_NOT_TEXT = "must be a non-empty text saying why the output could not be used"
NOT_TEXT = "must be a text"
NOT_MILLISECONDS = f"must be a number of milliseconds, 0-{MAX_LATENCY_MS:,}"
NOT_TOKEN_COUNT = f"must be a whole number of tokens, 0-{MAX_TOKENS_COUNT}"
NOT_SCORE = "must be a number from 0 to 1 (the model's confidence)"
NO_SUCH_ITEM = "no item {external_id!r} in this project"
NO_OPTIONS = "{kind} items have no options to order: leave option_order out"
HEADER_NOT_FIRST = "a provenance line may only be the file's first line"
HEADER_NOT_OBJECT = "must be an object with model, prompt, sampling and producer_run_id"
HEADER_UNKNOWN = "unknown provenance field(s) {fields}; allowed: {allowed}"
MODEL_MISSING = "no model named: give it as an option (--model) or in the file's provenance line"
TEXT_TOO_LONG = "must be a text of at most {limit} characters"
SAMPLING_NOT_FLAT = (
    f"must be an object of at most {MAX_SAMPLING_KEYS} parameters, each a number, text, true/false or null"
)
IMPORTED_BEFORE = "this file was imported already, as run {run} (same model, prompt and parameters)"

#: CSV cells are read by these types, as an annotation file's columns are (``annotation.csvcells``).
RUN_CELL_SCHEMAS = {
    "latency_ms": {"type": "number"},
    "prompt_tokens": {"type": "integer"},
    "completion_tokens": {"type": "integer"},
    "score": {"type": "number"},
    "option_order": {"type": "array"},
}


@dataclass(frozen=True, kw_only=True)
class RunProvenance:
    """Where a run's outputs came from: what the file's provenance line and the options say."""

    model: str
    prompt: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)
    producer_run_id: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prompt": self.prompt,
            "sampling": dict(self.sampling),
            "producer_run_id": self.producer_run_id,
        }


@dataclass(frozen=True)
class RunImportResult:
    run: JudgeRun
    ok: int
    failed: int

    def as_dict(self) -> dict[str, int]:
        return {"run": self.run.pk, "ok": self.ok, "failed": self.failed}


# -- option orders (multiple choice) ---------------------------------------------------------------


def option_orders(kind: TaskKind) -> Any:
    """The kind's ``judges.kinds.<kind>.option_order`` module, or None when its items have no options."""
    return kind_module(kind.name, "option_order")


# -- checking one line -----------------------------------------------------------------------------


def _number_problem(value: Any, *, low: float, high: float | None) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    if isinstance(value, float) and not math.isfinite(value):  # an int of any size is finite
        return True
    return value < low or (high is not None and value > high)


RUN_FIELD_SET = frozenset(RUN_FIELDS)
_NUMBERS = (int, float)


def shape_problems(data: dict) -> list[FieldError]:
    """What is wrong with a line's fields, before its item is looked at."""
    if _plain_line(data):
        return []
    problems = []
    unknown = sorted(data.keys() - RUN_FIELD_SET)
    if unknown:
        problems.append(FieldError("", UNKNOWN_FIELDS.format(fields=unknown, allowed=list(RUN_FIELDS))))
    has_value, has_error = data.get("value") is not None, "error" in data
    if has_value and has_error:
        problems.append(FieldError("error", BOTH_VALUE_AND_ERROR))
    elif not has_value and not has_error:
        problems.append(FieldError("value", NEITHER_VALUE_NOR_ERROR))
    if has_error and (not isinstance(data["error"], str) or not data["error"].strip()):
        problems.append(FieldError("error", ERROR_NOT_TEXT))
    if "raw_output" in data and not isinstance(data["raw_output"], str):
        problems.append(FieldError("raw_output", NOT_TEXT))
    if "latency_ms" in data and _number_problem(data["latency_ms"], low=0, high=MAX_LATENCY_MS):
        problems.append(FieldError("latency_ms", NOT_MILLISECONDS))
    for name in ("prompt_tokens", "completion_tokens"):
        count = data.get(name)
        if name in data and (
            isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_TOKENS_COUNT
        ):
            problems.append(FieldError(name, NOT_TOKEN_COUNT))
    if "score" in data and _number_problem(data["score"], low=0, high=1):
        problems.append(FieldError("score", NOT_SCORE))
    return problems


def _plain_line(data: dict) -> bool:
    """Whether a line is certainly well formed, by one cheap look at each field (most lines are):
    a False sends it through every check of ``shape_problems``, which names what is wrong."""
    if not data.keys() <= RUN_FIELD_SET:
        return False
    if "error" in data:
        error = data["error"]
        if data.get("value") is not None or type(error) is not str or not error.strip():
            return False
    elif data.get("value") is None:
        return False
    raw = data.get("raw_output", "")
    latency = data.get("latency_ms", 0)
    tokens_in = data.get("prompt_tokens", 0)
    tokens_out = data.get("completion_tokens", 0)
    score = data.get("score", 0)
    return (
        type(raw) is str
        and type(latency) in _NUMBERS
        and 0 <= latency <= MAX_LATENCY_MS
        and type(tokens_in) is int
        and 0 <= tokens_in <= MAX_TOKENS_COUNT
        and type(tokens_out) is int
        and 0 <= tokens_out <= MAX_TOKENS_COUNT
        and type(score) in _NUMBERS
        and 0 <= score <= 1
    )


def checked_value(kind: TaskKind, orders: Any, data: dict, payload: dict | None) -> tuple[Any, list[FieldError]]:
    """The line's value in the item's own terms, and its problems (checked as a person's answer is).

    ``orders`` is the kind's option-order module (None when its items have no options); ``payload``
    is None only for a kind whose value rules do not read it and whose items have no options."""
    if "option_order" in data:
        if orders is None:
            return None, [FieldError("option_order", NO_OPTIONS.format(kind=kind.name))]
        problems = orders.order_problems(data["option_order"], payload)
        if problems:
            return None, problems
    value = data.get("value")
    if value is None:
        return None, []
    problems = kind.check_value(value, payload=payload if payload is not None else {})
    if problems or "option_order" not in data:
        return value, problems
    # A valid answer among the options as shown; stored in the item's numbering, so it scores alike.
    return orders.to_item_order(value, data["option_order"]), []


def decode_run_cell(name: str, cell: str) -> Any:
    if name == "value":
        return csvcells.json_cell(cell, field="value", what="the model's value")
    return csvcells.schema_cell(cell, field=name, schema=RUN_CELL_SCHEMAS.get(name, {}))


def _text_problem(value: Any, limit: int) -> bool:
    return not isinstance(value, str) or len(value) > limit


def _header_provenance(data: Any, line: int, errors: ErrorCollector) -> dict[str, Any]:
    """The provenance a file's first line gives (problems go to ``errors``, naming the field)."""
    if not isinstance(data, dict):
        errors.add(FieldError(HEADER_KEY, HEADER_NOT_OBJECT, line))
        return {}
    unknown = sorted(set(data) - set(PROVENANCE_KEYS))
    if unknown:
        errors.add(FieldError(HEADER_KEY, HEADER_UNKNOWN.format(fields=unknown, allowed=list(PROVENANCE_KEYS)), line))
    limits = {"model": MAX_MODEL, "prompt": MAX_PROMPT, "producer_run_id": MAX_PRODUCER_RUN_ID}
    for name, limit in limits.items():
        if name in data and _text_problem(data[name], limit):
            errors.add(FieldError(f"{HEADER_KEY}.{name}", TEXT_TOO_LONG.format(limit=limit), line))
    if "sampling" in data and sampling_problem(data["sampling"]):
        errors.add(FieldError(f"{HEADER_KEY}.sampling", SAMPLING_NOT_FLAT, line))
    return {k: v for k, v in data.items() if k in PROVENANCE_KEYS}


def sampling_problem(sampling: Any) -> bool:
    """Whether sampling parameters are not a small flat object of scalars."""
    if not isinstance(sampling, dict) or len(sampling) > MAX_SAMPLING_KEYS:
        return True
    return any(
        len(str(k)) > 100
        or not (v is None or isinstance(v, bool | int | str) or (isinstance(v, float) and math.isfinite(v)))
        for k, v in sampling.items()
    )


def with_header(records: Iterator[Record], errors: ErrorCollector, header: dict[str, Any]) -> Iterator[Record]:
    """The file's records after its provenance line (read into ``header``); a later one is an error."""
    for number, record in enumerate(records):
        if HEADER_KEY in record.data and "external_id" not in record.data:
            if number:
                errors.add(FieldError(HEADER_KEY, HEADER_NOT_FIRST, record.line))
            else:
                header.update(_header_provenance(record.data[HEADER_KEY], record.line, errors))
            continue
        yield record


def prompt_parts(label: str) -> tuple[str, int]:
    """``name.vN`` is a prompt and its version; any other label is kept whole, without a version (0)."""
    match = PROMPT_KEY.match(label)
    if match:
        return match["name"], int(match["version"])
    return label, 0


def sampled_setting(sampling: dict[str, Any], name: str, low: float, high: float, whole: bool = False) -> Any:
    """``sampling[name]`` when it is a number within [low, high] (a whole one if ``whole``), else None."""
    value = sampling.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        return None
    return value if low <= value <= high else None
