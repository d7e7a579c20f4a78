"""What validation shows on annotation's pages (registered in ValidationConfig.ready()): how much of the
project is gold-ready, on the project page; the item's gold state and a link to adjudicate it, on the item
page; and the "in disagreement" and "gold-ready" filters of the item browser."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.urls import reverse

from annotation.latest import latest_values
from annotation.models import Item, Project, Role
from judges.models import Suggestion
from judges.selectors import runs_for_project
from validation.adjudication import item_disagreements, required_raters
from validation.aggregation.labels import method_labels
from validation.goldset import _decisions, gold_summary, item_gold, item_state, project_rules, rule_posteriors

DECIDERS = {Role.EXPERT, Role.RESEARCHER}


def gold_readiness_panel(*, project: Project, user: Any, roles: set[str]) -> dict | None:
    """How many items are gold-ready and how many wait, for the project's researchers and experts."""
    if not roles & DECIDERS:
        return None
    return {"gold": gold_summary(project=project), "project": project}


def gold_panel(*, project: Project, item: Item, user: Any, roles: set[str]) -> dict:
    """The item's gold (or why it has none), why an expert should look, and where to decide it."""
    state = item_state(project=project, item=item)
    may_decide = bool(roles & DECIDERS) or user.is_superuser
    return {
        "state": state,
        "adjudicate_url": reverse("adjudication_item", args=[project.slug, item.pk]) if may_decide else "",
    }


def _batch_values(project: Project, items: Sequence[Item]):
    ids = [item.pk for item in items]
    return latest_values(ids), _decisions(ids)


def _gold_ready_ids(project: Project, items: Sequence[Item]) -> set[int]:
    """Items whose gold is ready: a few queries for the whole batch."""
    kind, rules = project.task_kind, project_rules(project)
    values, decisions = _batch_values(project, items)
    needed = required_raters(rules, overlap=project.overlap)
    ready = set()
    for item in items:
        gold = item_gold(
            kind=kind,
            values=values.get(item.pk, {}),
            decision=decisions.get(item.pk),
            known_answer=item.gold_value,
            required_raters=needed,
        )
        if gold.ready:
            ready.add(item.pk)
    return ready


def _disagreeing_ids(project: Project, items: Sequence[Item]) -> set[int]:
    """Items whose raters disagree by the project's rules and that no expert has decided yet."""
    kind, rules = project.task_kind, project_rules(project)
    values, decisions = _batch_values(project, items)
    undecided = [item for item in items if item.pk not in decisions and len(values.get(item.pk, {})) >= 1]
    judged = _judge_values(project, [item.pk for item in undecided]) if rules.llm_majority and undecided else {}
    posteriors = rule_posteriors(project, rules) if undecided else {}
    return {
        item.pk
        for item in undecided
        if item_disagreements(
            kind=kind,
            payload=item.payload,
            values=values[item.pk],
            rules=rules,
            judge_value=judged.get(item.pk),
            posterior=posteriors.get(item.pk),
        )
    }


def flipped(*, project: Project, items: Sequence[Item]) -> set[int]:
    """Items where Dawid–Skene (crowd-kit, the people's answers) labels a dimension otherwise than the
    majority vote: the flip list of the aggregation page."""
    labels = method_labels(project=project, method="dawid_skene")
    return {item.pk for item in items if any(label.flipped for label in labels.get(item.pk, {}).values())}


def _judge_values(project: Project, item_ids: list[int]) -> dict[int, dict]:
    """The latest run's OK values for just these items (the queue's evaluator, read for one batch)."""
    run = runs_for_project(project=project).first()
    if run is None:
        return {}
    found: dict[int, Any] = {}
    rows = Suggestion.objects.filter(judge_id=run.judge_id, item_id__in=item_ids, status=Suggestion.Status.OK)
    for item_id, value in rows.order_by("item_id", "-updated_at", "-id").values_list("item_id", "value"):
        found.setdefault(item_id, value)
    return found


def in_disagreement(*, project: Project, items: Sequence[Item]) -> set[int]:
    """Items whose raters disagree by the project's adjudication rules and no expert has decided yet."""
    return _disagreeing_ids(project, items)


def gold_ready(*, project: Project, items: Sequence[Item]) -> set[int]:
    return _gold_ready_ids(project, items)
