"""Serves each registered task kind's form script, ``form.js`` in the kind's folder (``annotation/kinds/<kind>/``), as
static ``kinds/<kind>/form.js``.

Only that one file per kind folder is a static file: the kinds' Python modules, schemas and form
partials live beside it and are never collected or served. Listed in settings.STATICFILES_FINDERS,
so ``runserver``, the test server and ``collectstatic`` (and WhiteNoise after it) all find the scripts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

from annotation.kinds import all_kinds
from annotation.kinds.base import KIND_SCRIPT, KIND_SCRIPT_PREFIX


class KindScriptFinder(BaseFinder):
    def _storage(self, kind_name: str, folder: Path) -> FileSystemStorage:
        storage = FileSystemStorage(location=folder)
        # collectstatic puts a storage's files under its prefix: kinds/<kind>/form.js.
        storage.prefix = f"{KIND_SCRIPT_PREFIX}/{kind_name}"  # type: ignore[attr-defined]  # read by collectstatic only
        return storage

    def _scripts(self) -> dict[str, tuple[str, Path]]:
        """Static path → (kind, its folder), for every registered kind whose folder has a form script."""
        return {
            f"{KIND_SCRIPT_PREFIX}/{kind.name}/{KIND_SCRIPT}": (kind.name, kind.folder)
            for kind in all_kinds()
            if (kind.folder / KIND_SCRIPT).is_file()
        }

    def find(self, path: str, find_all: bool = False, **kwargs) -> str | list[str]:  # type: ignore[override]  # stubs say None on no match
        # No match is an empty list, as Django's own finders answer (None would read as a match).
        found = self._scripts().get(path)
        if found is None:
            return []
        script = str(found[1] / KIND_SCRIPT)
        return [script] if find_all else script

    def list(self, ignore_patterns: Iterable[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        for kind_name, folder in self._scripts().values():
            yield KIND_SCRIPT, self._storage(kind_name, folder)
