"""The judge-backend registry: settings.CONCORD_JUDGE_BACKENDS maps a name to its class.

A backend is described by its class attributes (``is_baseline``, ``needs_server``, ``needs_model``,
``gpu``; see :class:`~judges.backends.base.JudgeBackend`); ``Judge.backend`` is checked against this
registry as ``Project.kind`` is against the task kinds'.
"""

from django.conf import settings
from django.utils.module_loading import import_string

from judges.backends.base import JudgeBackend

__all__ = (
    "JudgeBackend",
    "backend_choices",
    "backend_class",
    "backend_names",
    "get_backend",
    "runnable_backend_choices",
    "runnable_backend_names",
)


def backend_names() -> list[str]:
    return list(settings.CONCORD_JUDGE_BACKENDS)


def runnable_backend_names() -> list[str]:
    """The backends a run can be started on (``runs_items``): not ``imported``, whose outputs come from a file."""
    return [name for name in backend_names() if backend_class(name).runs_items]


def backend_class(name: str) -> type[JudgeBackend]:
    """The class of the backend called ``name`` (its attributes describe it); KeyError naming the known ones."""
    try:
        path = settings.CONCORD_JUDGE_BACKENDS[name]
    except KeyError:
        raise KeyError(f"unknown backend {name!r} (known: {', '.join(backend_names())})") from None
    return import_string(path)


def get_backend(name: str) -> JudgeBackend:
    """A fresh instance of the backend called ``name``; KeyError naming the known ones otherwise."""
    return backend_class(name)()


def backend_choices() -> list[tuple[str, str]]:
    """(name, label) of every registered backend, in registry order."""
    return [(name, backend_class(name).label) for name in backend_names()]


def runnable_backend_choices() -> list[tuple[str, str]]:
    """(name, label) of every backend a run can be started on, in registry order."""
    return [(name, backend_class(name).label) for name in runnable_backend_names()]
