"""The judge-backend registry: settings.CONCORD_JUDGE_BACKENDS maps a name to its class."""

from django.conf import settings
from django.utils.module_loading import import_string

from judges.backends.base import JudgeBackend

__all__ = ("JudgeBackend", "backend_names", "get_backend")


def backend_names() -> list[str]:
    return list(settings.CONCORD_JUDGE_BACKENDS)


def get_backend(name: str) -> JudgeBackend:
    """A fresh instance of the backend called ``name``; KeyError naming the known ones otherwise."""
    try:
        path = settings.CONCORD_JUDGE_BACKENDS[name]
    except KeyError:
        raise KeyError(f"unknown backend {name!r} (known: {', '.join(backend_names())})") from None
    return import_string(path)()
