"""What higher layers supply to annotation's own rules, without annotation importing them.

``judges`` and ``validation`` depend on ``annotation``, never the reverse (``make lint`` checks it).
Yet the workspace shows a judge's suggestion, and a project's adjudication rules are validation's to
check. So those apps register here, from their ``AppConfig.ready()``, in the style of
``annotation.panels`` and ``annotation.setup_checklist``:

* the *suggestion provider*: a function ``(*, item) -> object | None`` giving the suggestion an
  annotator may see for an item (an object with ``value`` and ``run``), or None. Without one, no
  item has a suggestion.
* the *project rules validator*: a function ``(rules, *, kind) -> object`` that raises ValueError or
  TypeError, with a message a researcher can act on, when a project's ``adjudication_rules`` are not
  valid for its task kind. Without one, any JSON object is accepted.

Registering again replaces the function (a reloaded app config stays one entry).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SuggestionProvider = Callable[..., Any]
RulesValidator = Callable[..., Any]

RULES_NOT_AN_OBJECT = "adjudication rules must be a JSON object"

_suggestion_provider: SuggestionProvider | None = None
_rules_validator: RulesValidator | None = None


def register_suggestion_provider(func: SuggestionProvider) -> None:
    """Let ``func(item=...)`` choose the suggestion the workspace shows for an item."""
    global _suggestion_provider
    _suggestion_provider = func


def register_project_rules_validator(func: RulesValidator) -> None:
    """Let ``func(rules, kind=...)`` check a project's adjudication rules when the project is cleaned."""
    global _rules_validator
    _rules_validator = func


def suggestion_for_item(*, item: Any) -> Any | None:
    """The suggestion the registered provider gives for ``item``, or None when no provider is registered."""
    return None if _suggestion_provider is None else _suggestion_provider(item=item)


def check_project_rules(rules: Any, *, kind: Any) -> None:
    """Raise ValueError or TypeError when ``rules`` are not valid adjudication rules for ``kind``."""
    if _rules_validator is None:
        if not isinstance(rules, dict):
            raise TypeError(RULES_NOT_AN_OBJECT)
        return
    _rules_validator(rules, kind=kind)
