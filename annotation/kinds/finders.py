"""Serves each task kind's form script, ``annotation/kinds/<kind>/form.js``, as static ``kinds/<kind>/form.js``.

Only that one file per kind folder is a static file: the kinds' Python modules, schemas and form
partials live beside it and are never collected or served. Listed in settings.STATICFILES_FINDERS,
so ``runserver``, the test server and ``collectstatic`` (and WhiteNoise after it) all find the scripts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

from annotation.kinds.base import KIND_SCRIPT, KIND_SCRIPT_PREFIX, KINDS_DIR


class KindScriptFinder(BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=KINDS_DIR)
        # collectstatic puts a storage's files under its prefix: kinds/<kind>/form.js.
        self.storage.prefix = KIND_SCRIPT_PREFIX  # type: ignore[attr-defined]  # read by collectstatic only

    def _scripts(self) -> dict[str, Path]:
        """Static path → file, for every kind folder that has a form script."""
        return {
            f"{KIND_SCRIPT_PREFIX}/{script.parent.name}/{KIND_SCRIPT}": script
            for script in sorted(KINDS_DIR.glob(f"*/{KIND_SCRIPT}"))
        }

    def find(self, path: str, find_all: bool = False, **kwargs) -> str | list[str]:  # type: ignore[override]  # stubs say None on no match
        # No match is an empty list, as Django's own finders answer (None would read as a match).
        found = self._scripts().get(path)
        if found is None:
            return []
        return [str(found)] if find_all else str(found)

    def list(self, ignore_patterns: Iterable[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        for script in self._scripts().values():
            yield script.relative_to(KINDS_DIR).as_posix(), self.storage
