"""IntentGrasp MCQ instances from approved label statements (IntentGrasp, paper 002, §3 Stage 3 and
"IntentGrasp Data Splitting").

One instance per distinct example text of a dataset. A text that is an example of several labels
has several gold intents: every one of their statements is correct (v > 1, "the number of answer
v > 1 only when x has multiple correct intents"). The options are u = min(10, T) statements of the
same dataset (T = its distinct statements): all correct ones, the other u − v drawn from the
dataset's pool. The draw and the option order come from the seed, so the same seed gives the same
file. An instance keeps its dataset, domain, text form and label type (``single`` or ``multiple``)
in ``meta`` and ``context_type``.

``max_per_dataset`` downsamples each dataset at random (seeded) to at most that many instances, as
the paper's All Set keeps no more than 500 per source dataset. It draws from the valid instances
(those that keep every correct answer), so a dataset with N or more of them gives exactly N.

The source dataset's facts the label item's ``meta`` gives travel to each instance's ``meta`` for
the breakdowns (:func:`source_facts`): ``annotation`` (``synthetic`` when ``meta.synthetic`` is
true, ``human`` when false; IntentGrasp Table 11's "Synthetic?"), ``sensitive`` (``yes``/``no``
from ``meta.sensitive``; Table 11's "Sensitive?") and ``year`` (``meta.year``; Figure 4).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

#: IntentGrasp's instances offer u = min(10, T) options (T: the statements of the dataset's pool).
MAX_OPTIONS = 10
QUESTION = "Which statement describes the intent behind this text?"
#: The text form when neither the label's ``meta.text_form`` nor ``text_forms`` names one.
DEFAULT_TEXT_FORM = "query"
TEXT_FORMS = ("query", "dialogue", "monologue")


@dataclass(frozen=True)
class LabelStatement:
    external_id: str
    dataset: str
    label: str
    statement: str
    examples: tuple[str, ...]
    domain: str = ""
    #: ``query``, ``dialogue`` or ``monologue``; empty when the label's item does not say.
    text_form: str = ""
    #: The source dataset's annotation style, sensitivity and year, as :func:`source_facts` reads them.
    source_facts: tuple[tuple[str, str], ...] = ()


def source_facts(meta: dict) -> tuple[tuple[str, str], ...]:
    """``annotation``, ``sensitive`` and ``year`` from a label item's ``meta``, those it gives."""
    facts = []
    if isinstance(meta.get("synthetic"), bool):
        facts.append(("annotation", "synthetic" if meta["synthetic"] else "human"))
    if isinstance(meta.get("sensitive"), bool):
        facts.append(("sensitive", "yes" if meta["sensitive"] else "no"))
    if isinstance(meta.get("year"), int | str) and not isinstance(meta.get("year"), bool) and str(meta["year"]):
        facts.append(("year", str(meta["year"])))
    return tuple(facts)


@dataclass
class _Instance:
    """One context of one dataset with every label it exemplifies, in the order first met."""

    context: str
    members: list[tuple[LabelStatement, int]]  # (label, example number)

    @property
    def first(self) -> tuple[LabelStatement, int]:
        return self.members[0]


@dataclass
class BuildCounts:
    """What a build left out, for the command's summary."""

    too_many_answers: int = 0
    downsampled: int = 0


def _instances(members: list[LabelStatement]) -> list[_Instance]:
    by_text: dict[str, _Instance] = {}
    for member in members:
        for number, example in enumerate(member.examples):
            instance = by_text.setdefault(example, _Instance(example, []))
            if all(m.external_id != member.external_id for m, _ in instance.members):
                instance.members.append((member, number))
    return list(by_text.values())


def mcq_instances(
    labels: Iterable[LabelStatement],
    *,
    seed: int,
    max_per_dataset: int | None = None,
    text_forms: dict[str, str] | None = None,
    counts: BuildCounts | None = None,
) -> Iterator[dict]:
    """Import records for an ``intent_mcq`` project, in a stable order (dataset, label, example).

    ``text_forms`` maps a dataset to its text form where its labels' items do not give one.
    """
    counts = counts if counts is not None else BuildCounts()
    by_dataset: dict[str, list[LabelStatement]] = {}
    for label in labels:
        by_dataset.setdefault(label.dataset, []).append(label)
    for dataset in sorted(by_dataset):
        members = sorted(by_dataset[dataset], key=lambda s: (s.label, s.external_id))
        pool = sorted({member.statement for member in members})
        size = min(MAX_OPTIONS, len(pool))
        if size < 2:
            continue  # one statement is no question
        records = []
        for instance in _instances(members):
            record = _record(instance, dataset, pool, size, seed, text_forms or {})
            if record is None:
                counts.too_many_answers += 1
            else:
                records.append(record)
        if max_per_dataset is not None and len(records) > max_per_dataset:
            # Random downsampling per dataset (IntentGrasp "Data Splitting") among the valid instances,
            # the kept ones in their order.
            keep = set(random.Random(f"{seed}:{dataset}:sample").sample(range(len(records)), max_per_dataset))
            counts.downsampled += len(records) - max_per_dataset
            records = [record for i, record in enumerate(records) if i in keep]
        yield from records


def _record(
    instance: _Instance, dataset: str, pool: list[str], size: int, seed: int, text_forms: dict[str, str]
) -> dict | None:
    first, number = instance.first
    # Labels that share a statement are all right: the statement appears once, as correct.
    correct = list(dict.fromkeys(member.statement for member, _ in instance.members))
    if len(correct) > size:
        return None  # more correct statements than options: the instance cannot keep them all
    rng = random.Random(f"{seed}:{dataset}:{first.external_id}:{number}")
    distractors = rng.sample([s for s in pool if s not in correct], size - len(correct))
    options = [*correct, *distractors]
    rng.shuffle(options)
    labels = [member.label for member, _ in instance.members]
    given = (first.text_form, text_forms.get(dataset, ""))
    text_form = next((form for form in given if form in TEXT_FORMS), DEFAULT_TEXT_FORM)
    return {
        "external_id": f"{first.external_id}-ex{number + 1}",
        "context": instance.context,
        "context_type": text_form,
        "question": QUESTION,
        "options": options,
        "answers": sorted(options.index(statement) for statement in correct),
        "meta": {
            "dataset": dataset,
            "domain": first.domain,
            "text_form": text_form,
            "label_type": "multiple" if len(correct) > 1 else "single",
            "label": " + ".join(labels),
            "labels": labels,
            "built_from": [member.external_id for member, _ in instance.members],
            "seed": seed,
            **dict(first.source_facts),
        },
    }
