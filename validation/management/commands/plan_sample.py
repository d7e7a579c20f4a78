"""``plan_sample SLUG --run ID --half-width W``: human labels needed, people only and prediction-powered.

Plans from the labelled sample (or, before any label, from ``--sd``/``--share`` and
``--correlation``) for the dimension needing the most labels, or ``--dimension``. Exit codes: 0
success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.estimates.build import alpha_problem
from validation.estimates.planning import StatedValues, half_width_problem, plan_json, project_plan, stated_problem
from validation.evaluations.base import UnknownJudgeRun
from validation.management.commands._shared import checked_number, json_text


class Command(BaseCommand):
    help = "How many human labels a target interval half-width needs, people only and prediction-powered."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("--run", type=int, required=True, metavar="ID", help="the judge run")
        parser.add_argument(
            "--half-width",
            type=checked_number(half_width_problem),
            required=True,
            metavar="W",
            help="target half-width",
        )
        parser.add_argument(
            "--alpha", type=checked_number(alpha_problem), default=0.05, help="intervals at 1 - alpha (0.05)"
        )
        parser.add_argument("--dimension", help="plan for this dimension (default: the one needing most labels)")
        stated = parser.add_mutually_exclusive_group()
        stated.add_argument(
            "--sd", type=checked_number(lambda sd: stated_problem(sd=sd)), help="people's standard deviation, stated"
        )
        stated.add_argument(
            "--share", type=checked_number(lambda share: stated_problem(share=share)), help="people's share, stated"
        )
        parser.add_argument(
            "--correlation",
            type=checked_number(lambda r: stated_problem(correlation=r)),
            default=0.0,
            help="model-human correlation, stated",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        stated = None
        if options["sd"] is not None or options["share"] is not None:
            stated = StatedValues(sd=options["sd"], share=options["share"], correlation=options["correlation"])
        try:
            plan = project_plan(
                project=project,
                run=options["run"],
                half_width=options["half_width"],
                alpha=options["alpha"],
                dimension=options["dimension"],
                stated=stated,
            )
        except (UnknownJudgeRun, ValueError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        self.stdout.write(json_text(plan_json(plan)))
