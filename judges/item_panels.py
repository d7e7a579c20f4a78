"""The item page's judge panel (registered in JudgesConfig.ready()): each judge's latest suggestion for
the item, as the kind reads a value (a line per judgement), or its failure with the reason and the raw output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.kinds.base import ValueLine
from annotation.models import Item, Project
from annotation.value_grid import value_lines
from judges.models import Suggestion
from judges.selectors import is_scored_on_earlier_version

#: Raw model output shown on the page, at most (the rest stays in the database and the API).
RAW_OUTPUT_CHARS = 20_000


@dataclass(frozen=True)
class ShownSuggestion:
    suggestion: Suggestion
    #: The value as the kind reads it (empty for a failure, or a value the kind no longer accepts).
    lines: list[ValueLine]
    problems: list[str]
    raw_output: str
    raw_truncated: bool
    #: Stored before an import replaced the item's payload: left out of estimates and agreement.
    earlier_version: bool = False


def suggestions_panel(*, project: Project, item: Item, user: Any, roles: set[str]) -> dict:
    """One query: the item's suggestions with their judges and runs, newest first per judge."""
    kind = project.task_kind
    latest: dict[int, Suggestion] = {}
    rows = Suggestion.objects.filter(item=item).select_related("judge", "run").order_by("judge_id", "-updated_at")
    for suggestion in rows:
        latest.setdefault(suggestion.judge_id, suggestion)
    shown = []
    for suggestion in sorted(latest.values(), key=lambda s: (s.judge.name, s.judge_id)):
        problems, lines = [], []
        if suggestion.status == Suggestion.Status.OK:
            problems = [str(p) for p in kind.check_value(suggestion.value, payload=item.payload)]
            if not problems and suggestion.value is not None:
                lines = value_lines(kind=kind, value=suggestion.value, payload=item.payload)
        raw = suggestion.raw_output or ""
        shown.append(
            ShownSuggestion(
                suggestion=suggestion,
                lines=lines,
                problems=problems,
                raw_output=raw[:RAW_OUTPUT_CHARS],
                raw_truncated=len(raw) > RAW_OUTPUT_CHARS,
                earlier_version=is_scored_on_earlier_version(suggestion, item),
            )
        )
    return {"suggestions": shown, "kind": kind}
