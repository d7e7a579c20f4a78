"""``discard_draw SLUG [--draw N]``: discard the latest draw of the validation sample before anyone labels it.

Its items are held out again; discarding the only draw removes the sample (every item is served
again, and a new sample may take other strata: the undo of a mistyped ``--strata``). ``--draw``, when
given, must name the latest draw. Prints ``{"project": SLUG, "discarded": N}``. Exit codes: 0
success, 1 bad input (no draw, not the latest, or its items already labelled or held), 2 usage error.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ConcordError
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from annotation.sampling import validation_sample_discard


class Command(BaseCommand):
    help = "Discard the latest validation-sample draw while nobody has labelled or opened its items."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--draw", type=int, metavar="N", help="the draw to discard (must be the latest)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        try:
            number = validation_sample_discard(project=project, number=options["draw"])
        except ConcordError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        self.stdout.write(json.dumps({"project": project.slug, "discarded": number}))
