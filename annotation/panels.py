"""What higher layers add to the item browser and the item page, without annotation importing them.

``judges`` and ``validation`` depend on ``annotation``, never the reverse; yet a researcher's item
page shows a judge's suggestions and a link to adjudicate, and the browser filters items by
disagreement. So those apps register here, from their ``AppConfig.ready()``:

* an *item panel*: a function ``(*, project, item, user, roles) -> dict | None`` and the template
  that renders the dict (as ``panel``) on the item page; None leaves the panel out;
* an *item filter*: a function ``(*, project, items) -> set[int]`` that, given a batch of the
  project's items (model instances with ``pk``, ``external_id``, ``payload``, ``gold_value``),
  returns the ids that match. The browser calls it on bounded batches (see annotation.item_browser).

Registering the same name twice replaces the entry (a reloaded app config stays one entry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

PanelFunc = Callable[..., dict | None]
FilterFunc = Callable[..., set[int]]


@dataclass(frozen=True)
class ItemPanel:
    name: str
    template: str
    func: PanelFunc
    order: int = 100


@dataclass(frozen=True)
class ItemFilter:
    name: str
    label: str
    func: FilterFunc


@dataclass(frozen=True)
class RenderedPanel:
    """One panel ready for the item page: its template and what the template reads as ``panel``."""

    name: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)


_PANELS: dict[str, ItemPanel] = {}
_FILTERS: dict[str, ItemFilter] = {}


def register_item_panel(name: str, func: PanelFunc, *, template: str, order: int = 100) -> None:
    """Show ``template`` on every item page, with ``panel`` set to what ``func`` returns."""
    _PANELS[name] = ItemPanel(name=name, template=template, func=func, order=order)


def register_item_filter(name: str, func: FilterFunc, *, label: str) -> None:
    """Offer ``name`` as an item-browser filter; ``func`` picks the matching items of a batch."""
    _FILTERS[name] = ItemFilter(name=name, label=label, func=func)


def item_panels(*, project: Any, item: Any, user: Any, roles: set[str]) -> list[RenderedPanel]:
    """The registered panels for this item page, in their order, leaving out those that return None."""
    rendered = []
    for panel in sorted(_PANELS.values(), key=lambda p: (p.order, p.name)):
        context = panel.func(project=project, item=item, user=user, roles=roles)
        if context is not None:
            rendered.append(RenderedPanel(name=panel.name, template=panel.template, context=context))
    return rendered


def item_filters() -> dict[str, ItemFilter]:
    return dict(_FILTERS)


def matching_ids(name: str, *, project: Any, items: Sequence[Any]) -> set[int]:
    """The ids among ``items`` that the registered filter ``name`` keeps."""
    return _FILTERS[name].func(project=project, items=items)
