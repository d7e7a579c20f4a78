"""The rows of a release, one split at a time, each with its Arrow schema.

- ``gold``: every gold-ready item with its payload, gold value and where the gold came from;
- ``answers``: every person's latest answer, raters named by pseudonym (``rater-01`` ...), with the
  time on the item and whether a model suggestion was on screen;
- ``runs``: each run's output per item (failures included, with their reason), with model and prompt.

Rows stream from the database in batches; nothing holds a whole split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from annotation.latest import latest_annotations
from annotation.models import Project
from judges.models import JudgeRun, Suggestion
from judges.run_files.export import run_provenance
from validation.goldset import project_items_state
from validation.release.schema import arrow_converter, arrow_type

__all__ = ["SPLITS", "Split", "rater_pseudonyms", "split_rows"]

#: The splits a release can hold, in the order the card lists them.
SPLITS = ("gold", "answers", "runs")
_BATCH = 5_000
_TIMESTAMP = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True)
class Split:
    name: str
    description: str
    schema: pa.Schema
    #: Field name → what it holds, for the card and Croissant.
    meanings: dict[str, str]
    rows: Callable[[], Iterator[dict[str, Any]]]


def rater_pseudonyms(project: Project) -> dict[str, str]:
    """Each human rater's pseudonym in a release: ``rater-01`` ... in the order of their names, so the
    same project gives the same pseudonyms in every release and no name is published."""
    names = sorted(set(latest_annotations(project=project).values_list("rater", flat=True)))
    width = max(2, len(str(len(names))))
    return {name: f"rater-{number:0{width}d}" for number, name in enumerate(names, start=1)}


def _gold(project: Project) -> Split:
    kind = project.task_kind
    fields = [
        ("external_id", pa.string(), "the item's id in the study"),
        ("payload", arrow_type(kind.payload_schema), "the item as people saw it, with the fields kept for researchers"),
        ("gold", arrow_type(kind.value_schema), "the gold value, in the schema of an answer"),
        ("gold_source", pa.string(), "adjudicated (an expert decided), known_answer, or majority of the raters"),
        ("agreement", pa.float64(), "share of the item's raters whose answer matches the gold"),
        ("n_raters", pa.int64(), "how many people answered the item"),
    ]

    def rows() -> Iterator[dict[str, Any]]:
        payload_of, gold_of = arrow_converter(kind.payload_schema), arrow_converter(kind.value_schema)
        for state in project_items_state(project=project, with_reasons=False):
            gold = state.gold
            if not gold.ready:
                continue
            yield {
                "external_id": state.item.external_id,
                "payload": payload_of(state.item.payload),
                "gold": gold_of(gold.value),
                "gold_source": gold.source,
                "agreement": gold.agreement,
                "n_raters": len(gold.raters),
            }

    return _split("gold", "The gold set: one row per gold-ready item.", fields, rows)


def _answers(project: Project) -> Split:
    kind = project.task_kind
    fields = [
        ("external_id", pa.string(), "the item's id in the study"),
        ("rater", pa.string(), "the person, by pseudonym"),
        ("value", arrow_type(kind.value_schema), "the person's latest answer"),
        ("version", pa.int64(), "how many times the person saved an answer to the item (1: never edited)"),
        ("source", pa.string(), "web (answered in Concord), api, or import (answered elsewhere)"),
        ("seconds_on_item", pa.float64(), "time the item was on the person's screen, when measured"),
        ("suggestion_visible", pa.bool_(), "whether a model's suggestion was shown beside the item"),
        ("created_at", _TIMESTAMP, "when the answer was saved (UTC)"),
    ]

    def rows() -> Iterator[dict[str, Any]]:
        pseudonyms, value_of = rater_pseudonyms(project), arrow_converter(kind.value_schema)
        answers = (
            latest_annotations(project=project)
            .order_by("item_id", "rater")
            .values_list(
                "item__external_id",
                "rater",
                "value",
                "version",
                "source",
                "seconds_on_item",
                "suggestion_visible",
                "created_at",
            )
        )
        for external_id, rater, value, version, source, seconds, visible, created in answers.iterator(_BATCH):
            yield {
                "external_id": external_id,
                "rater": pseudonyms[rater],
                "value": value_of(value),
                "version": version,
                "source": source,
                "seconds_on_item": seconds,
                "suggestion_visible": visible,
                "created_at": created,
            }

    return _split("answers", "Every person's latest answer to each item they answered.", fields, rows)


def _runs(project: Project) -> Split:
    kind = project.task_kind
    fields = [
        ("external_id", pa.string(), "the item's id in the study"),
        ("run", pa.int64(), "the run's number in the study"),
        ("model", pa.string(), "the model (or baseline) that produced the output"),
        ("prompt", pa.string(), "the prompt, by name and version or the producer's label"),
        ("status", pa.string(), "ok, or failed (the output could not be read as an answer)"),
        ("value", arrow_type(kind.value_schema), "the model's answer, in the schema of a person's answer"),
        ("score", pa.float64(), "the model's confidence in [0, 1], when the run carries one"),
        ("failure_reason", pa.string(), "why a failed output could not be read"),
    ]

    def rows() -> Iterator[dict[str, Any]]:
        value_of = arrow_converter(kind.value_schema)
        for run in JudgeRun.objects.filter(project=project).select_related("judge").order_by("pk"):
            provenance = run_provenance(run)
            outputs = (
                Suggestion.objects.filter(run=run)
                .order_by("item_id")
                .values_list("item__external_id", "status", "value", "score", "failure_reason")
            )
            for external_id, status, value, score, reason in outputs.iterator(_BATCH):
                yield {
                    "external_id": external_id,
                    "run": run.pk,
                    "model": str(provenance.get("model", "")),
                    "prompt": str(provenance.get("prompt", "")),
                    "status": status,
                    "value": value_of(value),
                    "score": score,
                    "failure_reason": reason or None,
                }

    return _split("runs", "Each model run's output per item, failures included.", fields, rows)


def _split(
    name: str, description: str, fields: list[tuple[str, pa.DataType, str]], rows: Callable[[], Iterator[dict]]
) -> Split:
    return Split(
        name=name,
        description=description,
        schema=pa.schema([pa.field(field, kind) for field, kind, _ in fields]),
        meanings={field: meaning for field, _, meaning in fields},
        rows=rows,
    )


_BUILDERS: dict[str, Callable[[Project], Split]] = {"gold": _gold, "answers": _answers, "runs": _runs}


def split_rows(project: Project, name: str) -> Split:
    """The split ``name`` of ``project`` (one of :data:`SPLITS`)."""
    return _BUILDERS[name](project)
