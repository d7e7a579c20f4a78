"""The task-kind registry: one module per kind, listed in settings.CONCORD_TASK_KINDS.

``KINDS`` is an :class:`annotation.registry.Registry`: it loads again when a test changes the
setting, and a test may add a kind for a block with ``KINDS.registered(name, kind)``.
"""

from collections.abc import Iterator

from django.conf import settings
from django.utils.module_loading import import_string

from annotation.kinds.base import TaskKind
from annotation.registry import Registry

__all__ = ("KINDS", "TaskKind", "all_kinds", "get_kind", "kind_choices")


def _configured() -> Iterator[tuple[str, TaskKind]]:
    for path in settings.CONCORD_TASK_KINDS:
        kind = import_string(path)()
        yield kind.name, kind


KINDS: Registry[TaskKind] = Registry("task kind", load=_configured, setting="CONCORD_TASK_KINDS")


def get_kind(name: str) -> TaskKind:
    """The kind called ``name``; KeyError with the known names if there is none."""
    return KINDS.get(name)


def all_kinds() -> list[TaskKind]:
    return KINDS.all()


def kind_choices() -> list[tuple[str, str]]:
    return [(kind.name, kind.label) for kind in all_kinds()]
