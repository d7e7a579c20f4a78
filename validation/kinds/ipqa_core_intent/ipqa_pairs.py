"""IPQA-Eval's inputs: a predictions file, an IPQA project's gold core intents, and the match
project's items, one per (item, predicted intent, gold core intent) (IPQA, §2.1).

A predictions file is JSONL, one object per line: ``external_id`` (an item of the IPQA project) and
``predicted_intents`` (a list of distinct non-empty strings). Caps: ``MAX_PREDICTION_LINES`` lines,
``MAX_PREDICTED_INTENTS`` intents per line, ``MAX_INTENT_CHARS`` characters per intent, and
``CONCORD_MAX_RECORD_BYTES`` per line. A bad file is refused whole, each problem named by line and
field (the first ``CONCORD_IMPORT_ERROR_CAP``, then a count).

Gold core intents are read from the IPQA project's gold (``validation.goldset``: an expert's
decision, else a known answer, else the raters' majority): the intents judged expressed and core.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from jsonschema import Draft202012Validator

from annotation.errors import ErrorCollector, FieldError, ImportRejected
from annotation.importing import external_id_problem, file_format, import_items, read_records
from annotation.kinds.wording import describe_schema_error, field_path
from annotation.models import Item, Project
from validation.evaluations.base import check_kind
from validation.goldset import project_items_state

__all__ = [
    "MAX_INTENT_CHARS",
    "MAX_PAIRS",
    "MAX_PREDICTED_INTENTS",
    "MAX_PREDICTION_LINES",
    "GoldItem",
    "PairsResult",
    "build_pairs",
    "gold_core_intents",
    "pair_external_id",
    "read_predictions",
]

SOURCE_KIND, MATCH_KIND = "ipqa_core_intent", "ipqa_eval_match"
#: Lines a predictions file may have.
MAX_PREDICTION_LINES = 100_000
#: Predicted intents one item may have.
MAX_PREDICTED_INTENTS = 20
#: Characters one predicted intent may have.
MAX_INTENT_CHARS = 1000
#: (predicted, gold) pairs one ``ipqa_eval_pairs`` call may create.
MAX_PAIRS = 500_000

NOT_JSONL = "a predictions file is JSONL (.jsonl): one JSON object per line"
TOO_MANY_LINES = f"more than {MAX_PREDICTION_LINES:,} lines"
REPEATED_ID = "external id {external_id!r} was given on line {first}"
UNKNOWN_ITEM = "no item {external_id!r} in project {slug!r}"
TOO_MANY_PAIRS = f"the predictions make {{n:,}} (predicted, gold) pairs; at most {MAX_PAIRS:,} at once"

PREDICTION_SCHEMA = {
    "type": "object",
    "properties": {
        "external_id": {"type": ["string", "integer"]},
        "predicted_intents": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_INTENT_CHARS},
            "maxItems": MAX_PREDICTED_INTENTS,
            "uniqueItems": True,
        },
    },
    "required": ["external_id", "predicted_intents"],
    "additionalProperties": False,
}
_VALIDATOR = Draft202012Validator(PREDICTION_SCHEMA)


def _normalised_id(value: str | int) -> str:
    text = str(value).strip()
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def read_predictions(path: str | Path, *, project: Project | None = None) -> dict[str, tuple[str, ...]]:
    """external id → predicted intents, in file order; ImportRejected naming each bad line and field.

    With ``project``, every external id must be an item of it.
    """
    errors = ErrorCollector(cap=settings.CONCORD_IMPORT_ERROR_CAP)
    if file_format(path) != "jsonl":
        raise ImportRejected([FieldError("", NOT_JSONL)])
    found: dict[str, tuple[str, ...]] = {}
    lines: dict[str, int] = {}
    records = read_records(path, errors, decode_csv=lambda _name, cell: cell, csv_columns=set(), csv_required=set())
    for record in records:
        if record.line > MAX_PREDICTION_LINES:
            errors.add(FieldError("", TOO_MANY_LINES, record.line))
            break
        problems = sorted(_VALIDATOR.iter_errors(record.data), key=lambda e: list(map(str, e.absolute_path)))
        if problems:
            for problem in problems:
                errors.add(FieldError(field_path(problem.absolute_path), describe_schema_error(problem), record.line))
            continue
        external_id = _normalised_id(record.data["external_id"])
        problem = "must not be empty" if not external_id else external_id_problem(external_id)
        if problem:
            errors.add(FieldError("external_id", problem, record.line))
            continue
        if external_id in lines:
            first = lines[external_id]
            errors.add(FieldError("external_id", REPEATED_ID.format(external_id=external_id, first=first), record.line))
            continue
        lines[external_id] = record.line
        found[external_id] = tuple(record.data["predicted_intents"])
    if project is not None and found and not errors:
        known = set(
            Item.objects.filter(project=project, external_id__in=list(found)).values_list("external_id", flat=True)
        )
        for external_id in found:
            if external_id not in known:
                message = UNKNOWN_ITEM.format(external_id=external_id, slug=project.slug)
                errors.add(FieldError("external_id", message, lines[external_id]))
    if errors:
        raise ImportRejected(errors.errors, total=errors.total)
    return found


@dataclass(frozen=True)
class GoldItem:
    """An IPQA item's question and gold core intents; ``missing`` says why there are none."""

    external_id: str
    question: str
    core_intents: tuple[str, ...]
    missing: str | None = None
    #: The intents the gold judges expressed (the question's complexity, with ``len(core_intents)``).
    n_expressed: int = 0


NO_GOLD = "no gold yet"
NO_CORE_INTENT = "the gold has no core intent"


def gold_core_intents(*, project: Project) -> dict[str, GoldItem]:
    """Every item's gold core intents: intents its gold judges expressed and core, in candidate order."""
    check_kind(project, expected=SOURCE_KIND, evaluation="ipqa_eval")
    found = {}
    for state in project_items_state(project=project, with_reasons=False):
        item = state.item
        if not state.gold.ready:
            found[item.external_id] = GoldItem(item.external_id, item.payload["question"], (), NO_GOLD)
            continue
        assert state.gold.value is not None  # a ready gold has its value
        intents = state.gold.value["intents"]
        core = tuple(j["intent"] for j in intents if j["expressed"] and j["core"])
        found[item.external_id] = GoldItem(
            item.external_id,
            item.payload["question"],
            core,
            None if core else NO_CORE_INTENT,
            n_expressed=sum(1 for j in intents if j["expressed"]),
        )
    return found


#: Characters of the IPQA item's id kept at the front of a pair's id (the digest keeps it unique).
_ID_PREFIX = 200


def pair_external_id(source_external_id: str, predicted: str, gold: str) -> str:
    """The match item's id for one (item, predicted intent, gold core intent): the item's id (its first
    200 characters), ``~`` and 16 hex digits of the SHA-256 of the three. The same pair always gets the
    same id, whatever the order of the predictions."""
    digest = hashlib.sha256(json.dumps([source_external_id, predicted, gold], ensure_ascii=False).encode()).hexdigest()
    return f"{source_external_id[:_ID_PREFIX]}~{digest[:16]}"


@dataclass(frozen=True)
class PairsResult:
    """What ``build_pairs`` did: pairs created and already there, and items with no pair and why."""

    created: int
    existing: int
    items: int
    skipped: dict[str, int]


def build_pairs(*, source: Project, target: Project, predictions: dict[str, tuple[str, ...]]) -> PairsResult:
    """Create the match project's items, one per (item, predicted intent, gold core intent), all or none.

    Pairs already in ``target`` (the same id) are left as they are, so building again after more
    predictions adds only the new pairs. Items without gold, without a gold core intent, or with no
    predicted intent give no pair and are counted.
    """
    check_kind(target, expected=MATCH_KIND, evaluation="ipqa_eval_pairs")
    gold = gold_core_intents(project=source)
    records, skipped, items = [], {NO_GOLD: 0, NO_CORE_INTENT: 0, "no predicted intent": 0}, 0
    for external_id, predicted in predictions.items():
        entry = gold.get(external_id)
        if entry is None:  # read_predictions(project=source) refuses such ids; a caller may not have
            raise ImportRejected(
                [FieldError("external_id", UNKNOWN_ITEM.format(external_id=external_id, slug=source.slug))]
            )
        if entry.missing:
            skipped[entry.missing] += 1
            continue
        if not predicted:
            skipped["no predicted intent"] += 1
            continue
        items += 1
        for intent in predicted:
            for gold_intent in entry.core_intents:
                records.append(
                    {
                        "external_id": pair_external_id(external_id, intent, gold_intent),
                        "question": entry.question,
                        "predicted_intent": intent,
                        "gold_intent": gold_intent,
                        "source": {"project": source.slug, "external_id": external_id},
                    }
                )
    if len(records) > MAX_PAIRS:
        raise ImportRejected([FieldError("predicted_intents", TOO_MANY_PAIRS.format(n=len(records)))])
    ids = [r["external_id"] for r in records]
    existing = set()
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        existing |= set(
            Item.objects.filter(project=target, external_id__in=chunk).values_list("external_id", flat=True)
        )
    new = [r for r in records if r["external_id"] not in existing]
    created = 0
    if new:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "pairs.jsonl"
            with path.open("w", encoding="utf-8") as out:
                for record in new:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            created = import_items(project=target, path=path).imported
    return PairsResult(created=created, existing=len(records) - len(new), items=items, skipped=skipped)
