"""A project's gold: the rule for one item, then reading it for the whole project (raters' latest
values, expert decisions, the disagreement queue, and records in Concord's importable shape or the
benchmark's own, streamed in batches of items).

The rule: the expert's decision, else a known answer, else the raters' majority. A majority is gold
only once the item has the raters it needs (the project's overlap k, or the ``min_raters`` rule a
researcher set): one person's answer is not a majority, so until then the item is "waiting for
raters (n of k)". An expert's decision is gold whatever the number of raters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import orjson
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max

from annotation.errors import FieldError, ValidationFailed
from annotation.kinds import TaskKind, all_kinds
from annotation.latest import latest_values
from annotation.models import Item, Project
from annotation.sql import json_column
from judges.models import Judge, Suggestion
from judges.selectors import runs_for_project, suggestion_values
from validation.adjudication import AdjudicationRules, item_disagreements, required_raters
from validation.aggregation.labels import ItemLabels, item_posteriors, matching_value, method_labels
from validation.aggregation.methods import METHODS, UNKNOWN_METHOD
from validation.exports import WRITERS, write_csv
from validation.mcq import LabelStatement, source_facts
from validation.models import Adjudication
from validation.selectors import project_data_state

BATCH = 5000
SHAPES = ("concord", "benchmark")
UNKNOWN_SHAPE = "unknown export shape {shape!r}; choose concord (re-importable) or benchmark"


# -- the gold of one item ------------------------------------------------------------------------

ADJUDICATED, KNOWN_ANSWER, MAJORITY = "adjudicated", "known_answer", "majority"
NO_RATERS = "no ratings yet"
NO_MAJORITY = "no majority among the raters (a tie or a split): an expert decides"
WAITING_FOR_RATERS = "waiting for raters ({n} of {k})"


@dataclass(frozen=True)
class Decision:
    """An expert's adjudication of one item."""

    value: dict
    expert: str
    decided_at: datetime
    note: str = ""
    #: Whether the expert's page showed the kind's hidden fields (blind by default).
    saw_hidden_fields: bool = False


@dataclass(frozen=True)
class Gold:
    """The gold value of one item, or why there is none yet, with where it came from."""

    value: dict | None
    source: str | None
    raters: dict[str, dict] = field(default_factory=dict)
    agreement: float | None = None  # share of raters whose decision matches the gold
    decision: Decision | None = None
    missing_reason: str | None = None
    #: Fewer raters than a majority needs: the item waits for people, not for an expert.
    waiting_for_raters: bool = False
    #: The aggregation method the gold was built with, and its lowest posterior on the item.
    method: str = MAJORITY
    probability: float | None = None

    @property
    def ready(self) -> bool:
        return self.value is not None

    def provenance(self) -> dict:
        return {
            "source": self.source,
            "raters": self.raters,
            "agreement": self.agreement,
            "adjudicator": self.decision.expert if self.decision else None,
            "adjudicated_at": self.decision.decided_at.isoformat() if self.decision else None,
            "adjudication_note": self.decision.note if self.decision else None,
            "method": self.method,
            "probability": self.probability,
            # Blind gold is the default; a project may show its experts the hidden fields (logged).
            "adjudicator_saw_hidden_fields": self.decision.saw_hidden_fields if self.decision else None,
        }


def item_gold(
    *,
    kind: TaskKind,
    values: Mapping[str, dict],
    decision: Decision | None = None,
    known_answer: dict | None = None,
    required_raters: int = 1,
) -> Gold:
    """Gold for one item from its raters' latest values (rater → value).

    A majority counts only from ``required_raters`` raters on (the project's overlap); with fewer,
    the item has no gold yet and says how many raters it has of how many it needs.
    """
    raters = dict(values)
    if decision is None and known_answer is None and len(raters) < required_raters:
        waiting = WAITING_FOR_RATERS.format(n=len(raters), k=required_raters)
        return Gold(None, None, raters, missing_reason=waiting if raters else NO_RATERS, waiting_for_raters=True)
    keys = [kind.decision_key(v) for v in raters.values()]  # once per value: exports call this a million times
    value: dict | None
    if decision is not None:
        value, source = decision.value, ADJUDICATED
    elif known_answer is not None:
        value, source = known_answer, KNOWN_ANSWER
    else:
        value, source = kind.consensus(list(raters.values()), keys=keys), MAJORITY
    if value is None:
        return Gold(None, None, raters, missing_reason=NO_MAJORITY if raters else NO_RATERS)
    key = kind.decision_key(value)
    # The share of raters agreeing with the gold says nothing with one rater: null, not 0 or 1.
    agreement = sum(k == key for k in keys) / len(keys) if len(keys) >= 2 else None
    return Gold(value, source, raters, agreement, decision)


# -- a project's gold -----------------------------------------------------------------------------


def project_rules(project: Project) -> AdjudicationRules:
    return AdjudicationRules.from_json(project.adjudication_rules, kind=project.task_kind)


def _decisions(item_ids: list[int], *, project_id: int | None = None) -> dict[int, Decision]:
    """The latest expert decision per item. With ``project_id``, ``item_ids`` must be ascending ids of
    that project and are read as their range, as ``latest_values`` reads them: an export's batch of
    5,000 ids is then two parameters to send and plan, not 5,000."""
    found: dict[int, Decision] = {}
    if project_id is not None and item_ids:
        narrowed = Adjudication.objects.filter(
            project_id=project_id, item_id__gte=item_ids[0], item_id__lte=item_ids[-1]
        )
    else:
        narrowed = Adjudication.objects.filter(item_id__in=item_ids)
    rows = narrowed.order_by("item_id", "created_at", "id")
    for item_id, value, expert, at, note, saw in rows.values_list(
        "item_id", "value", "expert__username", "created_at", "note", "saw_hidden_fields"
    ):
        found[item_id] = Decision(value=value, expert=expert, decided_at=at, note=note, saw_hidden_fields=saw)
    return found


@dataclass(frozen=True)
class ItemRow:
    """The parts of an item gold needs, read as plain values (no model instances for a million rows)."""

    pk: int
    external_id: str
    payload: dict
    gold_value: dict | None


@dataclass(frozen=True)
class ItemState:
    item: ItemRow | Item
    gold: Gold
    reasons: list[str]  # why an expert should look (empty: nothing to adjudicate)
    judge_value: dict | None

    @property
    def needs_expert(self) -> bool:
        """A disagreement, or a full set of raters with no majority; an item short of raters waits for them."""
        if self.gold.decision is not None:
            return False
        return bool(self.reasons) or (
            not self.gold.ready and bool(self.gold.raters) and not self.gold.waiting_for_raters
        )

    @property
    def waiting_for_raters(self) -> bool:
        return not self.needs_expert and self.gold.waiting_for_raters and bool(self.gold.raters)


def _item_rows(project_id: int, after_pk: int) -> list[ItemRow]:
    """The next batch of a project's items after ``after_pk``, JSON decoded here (as for values)."""
    rows = Item.objects.filter(project_id=project_id, pk__gt=after_pk).order_by("pk")
    sql, params = rows.values_list("pk", "external_id", "payload", "gold_value")[:BATCH].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            ItemRow(pk, external_id, json_column(payload), json_column(gold))
            for pk, external_id, payload, gold in cursor
        ]


def project_items_state(*, project: Project, with_reasons: bool = True) -> Iterator[ItemState]:
    """Every item with its gold and (unless told not to) its disagreements, a batch of items and their
    values at a time."""
    kind, rules = project.task_kind, project_rules(project)
    needed = required_raters(rules, overlap=project.overlap)
    posteriors = rule_posteriors(project, rules) if with_reasons else {}
    last_pk = 0
    while batch := _item_rows(project.pk, last_pk):
        last_pk = batch[-1].pk
        ids = [item.pk for item in batch]
        values, decisions = latest_values(ids, project_id=project.pk), _decisions(ids, project_id=project.pk)
        judged = _judge_values(project, ids) if with_reasons and rules.llm_majority else {}
        for item in batch:
            raters = values.get(item.pk, {})
            gold = item_gold(
                kind=kind,
                values=raters,
                decision=decisions.get(item.pk),
                known_answer=item.gold_value,
                required_raters=needed,
            )
            reasons = (
                item_disagreements(
                    kind=kind,
                    payload=item.payload,
                    values=raters,
                    rules=rules,
                    judge_value=judged.get(item.pk),
                    posterior=posteriors.get(item.pk),
                )
                if with_reasons
                else []
            )
            yield ItemState(item=item, gold=gold, reasons=reasons, judge_value=judged.get(item.pk))


def rule_posteriors(project: Project, rules: AdjudicationRules) -> dict[int, float]:
    """Each item's lowest posterior under the rules' method, when a rule routes by it (else nothing)."""
    if rules.posterior_below is None:
        return {}
    return item_posteriors(project=project, method=rules.posterior_method)


def _judge_values(project: Project, item_ids: list[int]) -> dict[int, dict]:
    """The latest judge run's OK values for these items: the LLM evaluator the humans are checked against."""
    run = runs_for_project(project=project).first()
    if run is None:
        return {}
    wanted = set(item_ids)
    return {item_id: value for item_id, value in suggestion_values(run_id=run.pk) if item_id in wanted}


@dataclass(frozen=True)
class GoldSummary:
    items: int
    ready: int
    adjudicated: int
    majority: int
    known_answer: int
    waiting_for_expert: int
    unrated: int
    #: Items with some raters but fewer than a majority needs (no gold yet, nothing for an expert).
    waiting_for_raters: int = 0
    required_raters: int = 1

    @property
    def percent_ready(self) -> int:
        return round(100 * self.ready / self.items) if self.items else 0


GOLD_SUMMARY_SECONDS = 24 * 3600


def gold_summary(*, project: Project) -> GoldSummary:
    """How much of the project is gold-ready. Walking every item is seconds for a large project, so
    the answer is cached under a fingerprint of the data it reads: any change gives a new key."""
    decisions = Adjudication.objects.filter(project=project).aggregate(n=Count("id"), top=Max("id"))
    key = (
        "concord:gold-summary:"
        + hashlib.sha256(
            orjson.dumps(
                [
                    project_data_state(project=project),
                    decisions["n"],
                    decisions["top"],
                    project.adjudication_rules,
                    project.overlap,
                ],
                option=orjson.OPT_SORT_KEYS,
            )
        ).hexdigest()
    )
    summary = cache.get(key)
    if summary is None:
        summary = _count_gold(project)
        cache.set(key, summary, GOLD_SUMMARY_SECONDS)
    return summary


def _count_gold(project: Project) -> GoldSummary:
    counts = {"items": 0, "ready": 0, "adjudicated": 0, "majority": 0, "known_answer": 0, "waiting": 0, "unrated": 0}
    counts["short"] = 0
    needed = required_raters(project_rules(project), overlap=project.overlap)
    for state in project_items_state(project=project):
        counts["items"] += 1
        if state.gold.ready:
            counts["ready"] += 1
            counts[cast(str, state.gold.source)] += 1  # a ready gold has its source
        if state.needs_expert:
            counts["waiting"] += 1
        if state.waiting_for_raters:
            counts["short"] += 1
        if not state.gold.raters and not state.gold.ready:
            counts["unrated"] += 1
    return GoldSummary(
        items=counts["items"], ready=counts["ready"], adjudicated=counts["adjudicated"], majority=counts["majority"],
        known_answer=counts["known_answer"], waiting_for_expert=counts["waiting"], unrated=counts["unrated"],
        waiting_for_raters=counts["short"], required_raters=needed,
    )  # fmt: skip


def adjudication_queue(*, project: Project, limit: int = 100) -> list[ItemState]:
    """Items waiting for an expert, in item order."""
    return adjudication_lists(project=project, limit=limit)[0]


def adjudication_lists(*, project: Project, limit: int = 100) -> tuple[list[ItemState], list[ItemState]]:
    """Items waiting for an expert, and items still short of raters (an expert may decide those
    early), each in item order and at most ``limit`` long; one pass over the project."""
    queue: list[ItemState] = []
    short: list[ItemState] = []
    for state in project_items_state(project=project):
        if state.needs_expert and len(queue) < limit:
            queue.append(state)
        elif state.waiting_for_raters and len(short) < limit:
            short.append(state)
        if len(queue) >= limit and len(short) >= limit:
            break
    return queue, short


def item_state(*, project: Project, item: Item) -> ItemState:
    kind, rules = project.task_kind, project_rules(project)
    raters = latest_values([item.pk]).get(item.pk, {})
    decision = _decisions([item.pk]).get(item.pk)
    judged = _judge_values(project, [item.pk]).get(item.pk) if rules.llm_majority else None
    gold = item_gold(
        kind=kind,
        values=raters,
        decision=decision,
        known_answer=item.gold_value,
        required_raters=required_raters(rules, overlap=project.overlap),
    )
    reasons = item_disagreements(
        kind=kind,
        payload=item.payload,
        values=raters,
        rules=rules,
        judge_value=judged,
        posterior=rule_posteriors(project, rules).get(item.pk),
    )
    return ItemState(item=item, gold=gold, reasons=reasons, judge_value=judged)


def adjudication_next(*, project: Project, after_pk: int) -> ItemState | None:
    """The item an expert decides next: the first waiting for an expert after ``after_pk`` in item
    order, else the first before it (the queue wraps round); None when nothing waits."""
    earlier = None
    for state in project_items_state(project=project):
        if not state.needs_expert or state.item.pk == after_pk:
            continue
        if state.item.pk > after_pk:
            return state
        earlier = earlier or state
    return earlier


@dataclass(frozen=True)
class JudgeAnswer:
    """The latest judge run's answer on one item, with the judge that gave it."""

    judge: Judge
    value: dict


def item_judge_answer(*, project: Project, item: Item) -> JudgeAnswer | None:
    """What the project's latest judge run said about this item (the evaluator raters are checked
    against), whatever the adjudication rules; None without a run or an OK answer. Two queries."""
    run = runs_for_project(project=project).first()
    if run is None:
        return None
    found = (
        Suggestion.objects.filter(judge_id=run.judge_id, item=item, status=Suggestion.Status.OK)
        .order_by("-updated_at", "-id")
        .values_list("value", flat=True)
        .first()
    )
    return JudgeAnswer(judge=run.judge, value=found) if found is not None else None


def adjudication_payload(*, project: Project, item: Item) -> tuple[dict, list[tuple[str, str, Any]]]:
    """What the adjudication page shows of ``item``: the payload as its raters see it and no hidden
    field (blind gold, the default), or the whole payload and the kind's hidden fields when the
    project shows them to its experts (``Project.adjudicators_see_hidden``)."""
    kind = project.task_kind
    if project.adjudicators_see_hidden:
        return item.payload, kind.hidden_values(item.payload)
    return kind.rater_payload(item.payload, revealed=project.revealed_fields), []


def gold_records(*, project: Project, shape: str = "concord", method: str = MAJORITY, seed: int = 0) -> Iterator[dict]:
    """Gold-ready items as records. ``concord``: external_id, the payload and ``gold`` (imports back
    as items with known answers); ``benchmark``: the kind's published shape plus provenance, which
    names the aggregation ``method`` the gold was built with (``majority``, today's rule, by default)."""
    if shape not in SHAPES:
        raise ValidationFailed([FieldError("shape", UNKNOWN_SHAPE.format(shape=shape))])
    if method not in METHODS:
        raise ValidationFailed([FieldError("method", UNKNOWN_METHOD.format(method=method, known=", ".join(METHODS)))])
    return _gold_records(project, shape, method, seed)


def _gold_records(project: Project, shape: str, method: str, seed: int) -> Iterator[dict]:
    kind = project.task_kind
    labels = method_labels(project=project, method=method, seed=seed) if method != MAJORITY else {}
    for state in project_items_state(project=project, with_reasons=False):
        gold = by_method(kind, state, labels.get(state.item.pk, {}), method) if method != MAJORITY else state.gold
        if not gold.ready:
            continue
        item = state.item
        if shape == "concord":
            yield {"external_id": item.external_id, **item.payload, "gold": gold.value}
        else:
            record = kind.benchmark_record(external_id=item.external_id, payload=item.payload, gold=gold.value)
            yield {**record, "provenance": gold.provenance()}


def by_method(kind: TaskKind, state: ItemState, labels: ItemLabels, method: str) -> Gold:
    """The item's gold built with ``method``: an expert's decision or a known answer first, as always;
    else the rater's value whose every rating is the method's label (with the method and its lowest
    posterior on the item), once the item has the raters a majority needs. An item where no rater's
    value matches the labels keeps what the majority rule gives it."""
    gold = replace(state.gold, method=method)
    if gold.source in (ADJUDICATED, KNOWN_ANSWER) or gold.waiting_for_raters or not labels:
        return gold
    value = matching_value(kind, gold.raters, state.item.payload, labels)
    if value is None:
        return gold
    key = kind.decision_key(value)
    keys = [kind.decision_key(v) for v in gold.raters.values()]
    probability = min(label.probability for label in labels.values())
    agreement = sum(k == key for k in keys) / len(keys)
    return Gold(value, method, gold.raters, agreement, method=method, probability=probability)


def export_gold(
    *,
    project: Project,
    fmt: str,
    path: str | Path,
    shape: str = "concord",
    csv_escape: bool = True,
    method: str = MAJORITY,
    seed: int = 0,
) -> int:
    """Write the gold set; the file appears only when complete (written aside, then renamed).

    CSV cells that a spreadsheet would run as formulas get a leading ``'`` unless ``csv_escape`` is
    False (annotation.csvsafe); the other formats are never changed.
    """
    if fmt not in WRITERS:
        raise ValidationFailed([FieldError("format", f"unknown format {fmt!r}; choose {', '.join(WRITERS)}")])
    records = gold_records(project=project, shape=shape, method=method, seed=seed)
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    try:
        count = write_csv(partial, records, escape=csv_escape) if fmt == "csv" else WRITERS[fmt](partial, records)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return count


NOT_A_LABEL_PROJECT = "{slug} is a {kind} project; MCQ instances are built from a {kinds} project"


def _approves_statements(kind: TaskKind) -> bool:
    """Whether the kind's gold values approve statements (``TaskKind.statement_of``), asked of its own
    example so that a project is refused before any gold exists."""
    try:
        kind.statement_of(kind.example_value())
    except NotImplementedError:
        return False
    return True


def label_statements(*, project: Project) -> list[LabelStatement]:
    """The approved statement of every label whose gold is a statement (labels that cannot be
    contextualized, or still wait for a decision, are left out)."""
    kind = project.task_kind
    if not _approves_statements(kind):
        kinds = " or ".join(k.name for k in all_kinds() if _approves_statements(k))
        raise ValueError(NOT_A_LABEL_PROJECT.format(slug=project.slug, kind=project.kind, kinds=kinds))
    found = []
    for state in project_items_state(project=project, with_reasons=False):
        statement = kind.statement_of(state.gold.value) if state.gold.ready else None
        if statement:
            payload = state.item.payload
            found.append(
                LabelStatement(
                    external_id=state.item.external_id,
                    dataset=payload["dataset"],
                    label=payload["label"],
                    statement=statement,
                    examples=tuple(payload.get("examples", ())),
                    domain=payload.get("domain", ""),
                    text_form=(payload.get("meta") or {}).get("text_form", ""),
                    source_facts=source_facts(payload.get("meta") or {}),
                )
            )
    return found
