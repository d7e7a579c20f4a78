"""IntentGrasp MCQ instances from approved label statements (paper 002, §3).

For every example text of a label with a gold statement: the options are u = min(10, T) statements
of the same dataset (T = its distinct statements), every correct one included, the rest drawn from
the dataset's pool; the draw and the option order come from the seed, so the same seed gives the
same file.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from annotation.kinds.intent_mcq import MAX_OPTIONS

QUESTION = "Which statement describes the intent behind this text?"


@dataclass(frozen=True)
class LabelStatement:
    external_id: str
    dataset: str
    label: str
    statement: str
    examples: tuple[str, ...]


def mcq_instances(labels: Iterable[LabelStatement], *, seed: int) -> Iterator[dict]:
    """Import records for an ``intent_mcq`` project, in a stable order (dataset, label, example)."""
    by_dataset: dict[str, list[LabelStatement]] = {}
    for label in labels:
        by_dataset.setdefault(label.dataset, []).append(label)
    for dataset in sorted(by_dataset):
        members = sorted(by_dataset[dataset], key=lambda s: (s.label, s.external_id))
        pool = sorted({member.statement for member in members})
        size = min(MAX_OPTIONS, len(pool))
        if size < 2:
            continue  # one statement is no question
        for member in members:
            for number, example in enumerate(member.examples):
                rng = random.Random(f"{seed}:{dataset}:{member.external_id}:{number}")
                # Labels that share a statement are all right: the statement appears once, as correct.
                distractors = rng.sample([s for s in pool if s != member.statement], size - 1)
                options = [member.statement, *distractors]
                rng.shuffle(options)
                yield {
                    "external_id": f"{member.external_id}-ex{number + 1}",
                    "context": example,
                    "context_type": "query",
                    "question": QUESTION,
                    "options": options,
                    "answers": [options.index(member.statement)],
                    "meta": {"dataset": dataset, "label": member.label, "built_from": member.external_id, "seed": seed},
                }
