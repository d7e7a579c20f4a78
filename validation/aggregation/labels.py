"""Each item's labels under a method, for gold, adjudication and the item browser.

One fit per project state: the labels are cached under the project's data fingerprint
(``validation.selectors.project_data_state``), so the browser's batches and the gold export do not
refit the model; any new answer gives a new key. People only: runs never enter gold or routing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from annotation.kinds import TaskKind
from annotation.models import Project
from validation.aggregation.frames import question_frame
from validation.aggregation.methods import aggregate_question, check_method
from validation.ratings import JUDGE_PREFIX, project_ratings
from validation.selectors import project_data_state

__all__ = ["ItemLabel", "ItemLabels", "item_posteriors", "matching_value", "method_labels"]

#: How long a project's labels stay cached (a new answer changes the key anyway).
LABELS_SECONDS = 24 * 3600


@dataclass(frozen=True)
class ItemLabel:
    """One (dimension, part) of an item under a method: its label, posterior, majority and flip."""

    label: Any
    probability: float
    majority: Any
    flipped: bool


#: An item's labels by (dimension, part); the part is "" for a rating of the whole item.
ItemLabels = dict[tuple[str, str], ItemLabel]


def method_labels(*, project: Project, method: str, seed: int = 0) -> dict[int, ItemLabels]:
    """Every rated item's labels under ``method`` (crowd-kit, people's latest answers), by item id."""
    check_method(method)
    key = (
        "concord:aggregation:"
        + hashlib.sha256(f"{project.pk}:{project_data_state(project=project)}:{method}:{seed}".encode()).hexdigest()
    )
    found = cache.get(key)
    if found is None:
        found = _fitted_labels(project, method, seed)
        cache.set(key, found, LABELS_SECONDS)
    return found


def _fitted_labels(project: Project, method: str, seed: int) -> dict[int, ItemLabels]:
    ratings = project_ratings(project=project)
    people = [r for r in ratings.raters if not r.startswith(JUDGE_PREFIX)]
    labels: dict[int, ItemLabels] = {}
    for dimension in project.task_kind.rating_dimensions:
        result = aggregate_question(question_frame(ratings, dimension.name, people), method=method, seed=seed)
        for position, task in enumerate(result.tasks):
            item = int(ratings.unit_items[task])
            labels.setdefault(item, {})[(dimension.name, str(ratings.unit_suffixes[task]))] = ItemLabel(
                label=result.labels[position],
                probability=float(result.probability[position]),
                majority=result.majority[position],
                flipped=bool(result.flipped[position]),
            )
    return labels


def matching_value(kind: TaskKind, values: Mapping[str, dict], payload: dict, labels: ItemLabels) -> dict | None:
    """A rater's value whose every rating equals the method's label (the first such rater by name), else
    None: gold stays a value someone gave, and a label set no one gave is left to the majority or an expert."""
    if not labels:
        return None
    for rater in sorted(values):
        value = values[rater]
        ratings = {(dimension, suffix): rating for suffix, dimension, rating in kind.value_ratings(value, payload)}
        if ratings and all(key in ratings and _same(ratings[key], label.label) for key, label in labels.items()):
            return value
    return None


def _same(rating: Any, label: Any) -> bool:
    if label is None:
        return False
    if isinstance(rating, int | float) and isinstance(label, int | float):
        return float(rating) == float(label)
    return bool(rating == label)


def item_posteriors(*, project: Project, method: str, seed: int = 0) -> dict[int, float]:
    """Each rated item's lowest posterior under ``method`` (over its dimensions and parts), by item id:
    what the adjudication rule ``posterior_below`` compares."""
    return {
        item: min(label.probability for label in labels.values())
        for item, labels in method_labels(project=project, method=method, seed=seed).items()
    }
