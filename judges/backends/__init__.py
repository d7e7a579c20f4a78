"""The judge-backend registry: settings.CONCORD_JUDGE_BACKENDS maps a name to its class (``BACKENDS``).

A backend is described by its class attributes (``is_baseline``, ``needs_server``, ``needs_model``,
``gpu``; see :class:`~judges.backends.base.JudgeBackend`); ``Judge.backend`` is checked against this
registry as ``Project.kind`` is against the task kinds'.
"""

from collections.abc import Iterator

from django.conf import settings
from django.utils.module_loading import import_string

from annotation.registry import Registry
from judges.backends.base import JudgeBackend

__all__ = (
    "BACKENDS",
    "JudgeBackend",
    "backend_choices",
    "backend_class",
    "backend_names",
    "get_backend",
    "runnable_backend_choices",
    "runnable_backend_names",
)


def _configured() -> Iterator[tuple[str, type[JudgeBackend]]]:
    for name, path in settings.CONCORD_JUDGE_BACKENDS.items():
        yield name, import_string(path)


#: The backend classes by name (an :class:`annotation.registry.Registry`, loaded again when a test
#: changes the setting).
BACKENDS: Registry[type[JudgeBackend]] = Registry("backend", load=_configured, setting="CONCORD_JUDGE_BACKENDS")


def backend_names() -> list[str]:
    # The setting's names, without importing every class: a judge's name check (an imported run's
    # judge too) would otherwise load the OpenAI client, about a second, in a process never calling it.
    return list(settings.CONCORD_JUDGE_BACKENDS)


def runnable_backend_names() -> list[str]:
    """The backends a run can be started on (``runs_items``): not ``imported``, whose outputs come from a file."""
    return [name for name in backend_names() if backend_class(name).runs_items]


def backend_class(name: str) -> type[JudgeBackend]:
    """The class of the backend called ``name`` (its attributes describe it); KeyError naming the known ones."""
    return BACKENDS.get(name)


def get_backend(name: str) -> JudgeBackend:
    """A fresh instance of the backend called ``name``; KeyError naming the known ones otherwise."""
    return backend_class(name)()


def backend_choices() -> list[tuple[str, str]]:
    """(name, label) of every registered backend, in registry order."""
    return [(name, backend_class(name).label) for name in backend_names()]


def runnable_backend_choices() -> list[tuple[str, str]]:
    """(name, label) of every backend a run can be started on, in registry order."""
    return [(name, backend_class(name).label) for name in runnable_backend_names()]
