"""``draw_sample SLUG --n N | --fraction F --seed S``: draw items into the project's validation sample.

Only sampled items are served to annotators; the others stay model-only. A second call extends the
same sample (with the same ``--strata``). Prints the draw as JSON. Exit codes: 0 success, 1 bad
input (the field and what to change), 2 usage error.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ConcordError
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from annotation.sampling import ALLOCATIONS, draw_json, validation_sample_draw


class Command(BaseCommand):
    help = "Draw items (seeded, optionally stratified) into a project's validation sample: only they are served."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        size = parser.add_mutually_exclusive_group(required=True)
        size.add_argument("--n", type=int, help="items to add to the sample")
        size.add_argument("--fraction", type=float, help="share of the project's items to add (0-1]")
        parser.add_argument("--strata", default="", metavar="FIELD", help="payload field (or meta.KEY) to stratify by")
        parser.add_argument("--allocation", choices=ALLOCATIONS, default="proportional", help="per stratum")
        parser.add_argument("--seed", type=int, required=True, help="random seed of the draw")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        try:
            draw = validation_sample_draw(
                project=project,
                n=options["n"],
                fraction=options["fraction"],
                strata=options["strata"],
                allocation=options["allocation"],
                seed=options["seed"],
            )
        except ConcordError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        self.stdout.write(json.dumps(draw_json(draw), ensure_ascii=False))
