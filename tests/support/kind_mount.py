"""A task kind kept under tests/ registered as a real kind is: its folders, and its registry line.

A real kind is new files in one place per layer, found by the kind's name: ``annotation/kinds/<kind>/``
(the class, ``form.html``), ``judges/kinds/<kind>/`` (prompts, baselines, generation steps),
``validation/kinds/<kind>/`` (paper evaluations) and ``validation/reports/<kind>.py`` (the report's
layout), plus its line in ``settings.CONCORD_TASK_KINDS``. A fixture kind keeps the same folders under
a root of its own (``<root>/annotation/kinds/<kind>/`` and so on). :func:`mounted_kind` puts the root's
folders on those packages' search paths (a package's ``__path__`` is where Python looks for its
subpackages), adds the root's ``annotation/kinds`` to the template folders (where ``<kind>/form.html``
is looked up, as ``annotation/kinds`` is in settings), appends the registry line and clears every
registry that caches what it found. On exit it undoes each of these and clears the registries again,
so no other test sees the kind: that is the documented reset.
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.test import override_settings

import annotation.kinds
import judges.kinds
import validation.kinds
import validation.reports
from annotation.kinds import KINDS
from judges.generation.steps import GENERATION_STEPS
from judges.prompting import PROMPTS
from validation.evaluations.registry import EVALUATIONS
from validation.reports.build import REPORT_BUILDERS

#: The packages whose subpackages (or, for reports, modules) are the kinds' folders, by name.
KIND_PACKAGES = (annotation.kinds, judges.kinds, validation.kinds, validation.reports)


def clear_kind_registries() -> None:
    """Forget what each registry found in the kinds' folders (kinds, prompts, generation steps,
    report builders, paper evaluations): the next read looks again (``Registry.reset_for_tests``)."""
    for registry in (KINDS, PROMPTS, GENERATION_STEPS, REPORT_BUILDERS, EVALUATIONS):
        registry.reset_for_tests()


def _relative(package) -> Path:
    return Path(*package.__name__.split("."))


@contextmanager
def mounted_kind(root: Path, registry_line: str) -> Iterator[str]:
    """Register the kind whose folders are under ``root`` by ``registry_line`` (the dotted path of its
    class, as settings lists a real kind); yields the kind's name. Undone on exit."""
    from django.conf import settings

    name = registry_line.split(".")[2]
    saved_paths = [list(package.__path__) for package in KIND_PACKAGES]
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [*templates[0]["DIRS"], root / _relative(annotation.kinds)]
    try:
        for package in KIND_PACKAGES:
            folder = root / _relative(package)
            if folder.is_dir():
                package.__path__.append(str(folder))
        importlib.invalidate_caches()
        with override_settings(CONCORD_TASK_KINDS=[*settings.CONCORD_TASK_KINDS, registry_line], TEMPLATES=templates):
            clear_kind_registries()
            try:
                yield name
            finally:
                clear_kind_registries()
    finally:
        for package, paths in zip(KIND_PACKAGES, saved_paths, strict=True):
            package.__path__[:] = paths
        for package in KIND_PACKAGES:
            prefix = f"{package.__name__}.{name}"
            for module in [m for m in sys.modules if m == prefix or m.startswith(f"{prefix}.")]:
                del sys.modules[module]
        importlib.invalidate_caches()
