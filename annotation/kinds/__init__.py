"""The task-kind registry: one module per kind, listed in settings.CONCORD_TASK_KINDS."""

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from annotation.kinds.base import TaskKind

__all__ = ("TaskKind", "all_kinds", "get_kind", "kind_choices")


@cache
def _registry() -> dict[str, TaskKind]:
    kinds = [import_string(path)() for path in settings.CONCORD_TASK_KINDS]
    return {kind.name: kind for kind in kinds}


def get_kind(name: str) -> TaskKind:
    """The kind called ``name``; KeyError with the known names if there is none."""
    try:
        return _registry()[name]
    except KeyError:
        raise KeyError(f"unknown task kind {name!r} (known: {', '.join(_registry())})") from None


def all_kinds() -> list[TaskKind]:
    return list(_registry().values())


def kind_choices() -> list[tuple[str, str]]:
    return [(kind.name, kind.label) for kind in all_kinds()]
