"""The validation layer's part of each task kind, found by the kind's name.

``validation/kinds/<kind>/`` holds what the papers compute from that kind's validated data: its
statistics and readers, and ``evaluations.py``, whose ``EVALUATIONS`` tuple declares the kind's paper
evaluations (:class:`validation.evaluations.registry.PaperEvaluation`); a kind without the folder or
the module has none. Its management commands are in ``commands/`` (:func:`kind_command`). The
kind's agreement report is ``validation/reports/<kind>.py``
(``validation.reports.build.report_builder``). Nothing outside these folders names a kind: the
report page, the evaluation pages, the API and snapshots loop over what
``validation.evaluations.registry`` finds here.
"""

import importlib
import importlib.util

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand

from annotation.kinds import all_kinds

__all__ = ("kind_command",)

NO_SUCH_COMMAND = "no registered task kind declares the command {name!r} (validation/kinds/<kind>/commands/)"


def kind_command(name: str) -> type[BaseCommand]:
    """The ``Command`` class of the management command ``name``, from the registered kind whose
    ``validation/kinds/<kind>/commands/`` package lists it in ``COMMANDS``.

    Django finds commands only in an app's ``management/commands/``; there each kind's command is a
    one-line module that asks for it here, so the command itself stays in its kind's folder."""
    for kind in all_kinds():
        package = f"{__name__}.{kind.name}.commands"
        if importlib.util.find_spec(f"{__name__}.{kind.name}") is None or importlib.util.find_spec(package) is None:
            continue
        if name in importlib.import_module(package).COMMANDS:
            return importlib.import_module(f"{package}.{name}").Command
    raise ImproperlyConfigured(NO_SUCH_COMMAND.format(name=name))
