"""What the judges layer knows of each task kind, one folder per kind found by the kind's name.

``judges/kinds/<kind>/`` holds the kind's judge and generator prompts (``prompts.py``, with their
``NAME.vN.txt`` and ``NAME.vN.schema.json`` files beside it) and its baseline methods
(``baselines.py``), each module listing its prompt instances in ``PROMPTS``, and the generator steps
that make items of the kind (``steps.py``, listing them in ``STEPS``). All are optional: a kind
without a folder simply has no prompts and no steps. ``judges.prompting`` and
``judges.generation.steps`` collect them through :func:`kind_modules`, so no shared module lists
kinds by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

from annotation.kinds import all_kinds


def kind_module(kind: str, part: str) -> ModuleType | None:
    """``judges.kinds.<kind>.<part>``, or None when the kind has no such module."""
    name = f"{__name__}.{kind}.{part}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only a missing folder or module means "none"; a broken import inside one is an error.
        if exc.name in (name, f"{__name__}.{kind}"):
            return None
        raise


def kind_modules(*parts: str) -> Iterator[ModuleType]:
    """The modules named ``parts`` of every registered kind that has them, kind by kind."""
    for kind in all_kinds():
        for part in parts:
            module = kind_module(kind.name, part)
            if module is not None:
                yield module
