"""What higher layers add to the project page, the item browser and the item page, without annotation
importing them.

``judges`` and ``validation`` depend on ``annotation``, never the reverse; yet a researcher's item
page shows a judge's suggestions and a link to adjudicate, the project page shows how many items are
gold-ready, and the browser filters items by disagreement. So those apps register here, from their
``AppConfig.ready()``:

* a *project panel*: a function ``(*, project, user, roles) -> dict | None`` and the template that
  renders the dict (as ``panel``) on the project page; None leaves the panel out;
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

from annotation.registry import Registry

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


#: The registries (:class:`annotation.registry.Registry`); a test adds an entry with ``registered``.
PROJECT_PANELS: Registry[ItemPanel] = Registry("project panel", replaces=True)
ITEM_PANELS: Registry[ItemPanel] = Registry("item panel", replaces=True)
ITEM_FILTERS: Registry[ItemFilter] = Registry("item filter", replaces=True)


def register_project_panel(name: str, func: PanelFunc, *, template: str, order: int = 100) -> None:
    """Show ``template`` on every project page, with ``panel`` set to what ``func`` returns."""
    PROJECT_PANELS.register(name, ItemPanel(name=name, template=template, func=func, order=order))


def register_item_panel(name: str, func: PanelFunc, *, template: str, order: int = 100) -> None:
    """Show ``template`` on every item page, with ``panel`` set to what ``func`` returns."""
    ITEM_PANELS.register(name, ItemPanel(name=name, template=template, func=func, order=order))


def register_item_filter(name: str, func: FilterFunc, *, label: str) -> None:
    """Offer ``name`` as an item-browser filter; ``func`` picks the matching items of a batch."""
    ITEM_FILTERS.register(name, ItemFilter(name=name, label=label, func=func))


def project_panels(*, project: Any, user: Any, roles: set[str]) -> list[RenderedPanel]:
    """The registered panels for this project page, in their order, leaving out those that return None."""
    return _render(PROJECT_PANELS, project=project, user=user, roles=roles)


def item_panels(*, project: Any, item: Any, user: Any, roles: set[str]) -> list[RenderedPanel]:
    """The registered panels for this item page, in their order, leaving out those that return None."""
    return _render(ITEM_PANELS, project=project, item=item, user=user, roles=roles)


def _render(panels: Registry[ItemPanel], **arguments: Any) -> list[RenderedPanel]:
    rendered = []
    for panel in sorted(panels.all(), key=lambda p: (p.order, p.name)):
        context = panel.func(**arguments)
        if context is not None:
            rendered.append(RenderedPanel(name=panel.name, template=panel.template, context=context))
    return rendered


def item_filters() -> dict[str, ItemFilter]:
    return dict(ITEM_FILTERS.items())


def matching_ids(name: str, *, project: Any, items: Sequence[Any]) -> set[int]:
    """The ids among ``items`` that the registered filter ``name`` keeps."""
    return ITEM_FILTERS.get(name).func(project=project, items=items)
