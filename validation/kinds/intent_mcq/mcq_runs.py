"""An ``intent_mcq`` project's instances and each judge run's answers to them, as ``mcq_eval`` and the
evaluation sets (``mcq_gem_set``) score them.

An instance's dataset and domain are ``meta.dataset`` and ``meta.domain``, its text form the
payload's ``context_type`` (else ``meta.text_form``), its label type ``multiple`` when the key has
more than one answer, else ``single``; its annotation style, sensitivity and dataset year
``meta.annotation``, ``meta.sensitive`` and ``meta.year``; a missing field groups under "(none)".
A run's answer to an instance is its F1 against the key (NaN without a readable answer), the released
scorer's partial credit of a failed answer it can partly read, and whether the run covers the
instance at all (an answer or a failure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.kinds.intent_mcq import instance_f1
from annotation.models import Item, Project
from judges.models import JudgeRun
from judges.prompting import get_prompt
from judges.selectors import failed_suggestions, suggestion_values
from validation.evaluations.base import EvaluatedRun
from validation.kinds.intent_mcq.mcq_eval import partial_credit_f1

__all__ = ["FACETS", "NONE", "McqInstance", "RunScores", "mcq_instances_of", "run_scores"]

NONE = "(none)"
#: Breakdown facets: key, title, the paper's table.
FACETS = (
    ("dataset", "source dataset", "Table 6"),
    ("domain", "domain", "Table 10"),
    ("text_form", "text form", "Table 11"),
    ("label_type", "label type", "Table 11"),
    ("annotation", "annotation style", "Table 11"),
    ("sensitive", "sensitivity", "Table 11"),
    ("year", "dataset year", "Figure 4"),
)


@dataclass(frozen=True)
class McqInstance:
    pk: int
    external_id: str
    answers: tuple[int, ...]
    n_options: int
    groups: dict[str, str]


def _group(value: Any) -> str:
    return str(value) if value not in (None, "") else NONE


def mcq_instances_of(project: Project) -> list[McqInstance]:
    found = []
    rows = Item.objects.filter(project=project).order_by("pk").values_list("pk", "external_id", "payload")
    for pk, external_id, payload in rows.iterator(chunk_size=2000):
        meta = payload.get("meta") or {}
        answers = tuple(sorted(set(payload["answers"])))
        groups = {
            "dataset": _group(meta.get("dataset")),
            "domain": _group(meta.get("domain")),
            "text_form": _group(payload.get("context_type") or meta.get("text_form")),
            "label_type": "multiple" if len(answers) > 1 else "single",
            # The source dataset's facts ``build_mcq`` copies from the label items (validation.mcq).
            "annotation": _group(meta.get("annotation")),
            "sensitive": _group(meta.get("sensitive")),
            "year": _group(meta.get("year")),
        }
        found.append(McqInstance(pk, external_id, answers, len(payload["options"]), groups))
    return found


@dataclass(frozen=True)
class RunScores:
    run: EvaluatedRun
    f1: np.ndarray  # per instance, NaN without a readable answer
    parse_failures: int
    credit: np.ndarray  # per instance, the released scorer's partial credit of a failure (NaN: none)
    covered: np.ndarray  # per instance, whether the run has an answer or a failure for it

    @property
    def n_covered(self) -> int:
        return int(self.covered.sum())

    @property
    def shuffled(self) -> bool:
        # A baseline's seed draws its guesses, not an option order: it is never a "shuffle-42" session.
        return self.run.seed is not None and not self.run.is_baseline

    @property
    def label(self) -> str:
        if self.run.is_baseline:
            order = "baseline" if self.run.seed is None else f"baseline, seed {self.run.seed}"
        else:
            order = f"shuffle-{self.run.seed}" if self.shuffled else "no shuffle"
        return f"{order}: {self.run.label}"

    @property
    def partial_credits(self) -> int:
        return int((~np.isnan(self.credit)).sum())


def _partial_credit(run: EvaluatedRun, suggestion: Any, answers: tuple[int, ...]) -> float:
    """The released scorer's F1 of a failed answer it can partly read, else NaN."""
    try:
        prompt = get_prompt(run.prompt_key)
        item = suggestion.item
        request = prompt.build(item_id=item.pk, payload=item.payload, external_id=item.external_id, seed=run.seed)
        read = prompt.partial_value(suggestion.raw_output, request)
    except (KeyError, NotImplementedError):
        return np.nan
    if read is None:
        return np.nan
    value, n_invalid = read
    return partial_credit_f1(value["chosen"], n_invalid, answers)


def run_scores(run: EvaluatedRun, instances: list[McqInstance]) -> RunScores:
    position = {instance.pk: i for i, instance in enumerate(instances)}
    f1 = np.full(len(instances), np.nan)
    credit = np.full(len(instances), np.nan)
    for item_id, value in suggestion_values(run_id=run.run_id):
        if item_id in position:
            f1[position[item_id]] = instance_f1(value["chosen"], list(instances[position[item_id]].answers))
    failed: set[int] = set()
    for suggestion in failed_suggestions(run=JudgeRun.objects.get(pk=run.run_id)).iterator(chunk_size=500):
        i = position.get(suggestion.item_id)
        # An item failed under several prompt hashes counts once; an OK answer beside it wins.
        if i is not None and np.isnan(f1[i]) and i not in failed:
            failed.add(i)
            credit[i] = _partial_credit(run, suggestion, instances[i].answers)
    covered = ~np.isnan(f1)
    covered[list(failed)] = True
    return RunScores(run, f1, len(failed), credit, covered)
