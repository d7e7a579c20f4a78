"""``alt_test_plan --categories K --raters R --rater-noise X --model-noise Y --epsilon E --sizes 30:200:10``:
how many items the Alternative Annotator Test needs, from the authors' simulation (their Appendix C).

Prints, per number of items, the share of simulated studies the model passes, with the mean winning
rate and advantage probability. Needs no project. Exit codes: 0 success, 1 bad value, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT
from validation.alttest.planning import PlanParameters, parse_sizes, plan_json, plan_table, simulate_plan
from validation.alttest.statistics import DEFAULT_EPSILON, DEFAULT_Q
from validation.management.commands._shared import add_format_argument, json_text, non_negative_int
from validation.reports.render import render_csv, render_latex, render_markdown


class Command(BaseCommand):
    help = "Share of simulated studies in which the model passes the Alternative Annotator Test, per number of items."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--categories", type=int, required=True, metavar="K", help="labels of the task")
        parser.add_argument("--raters", type=int, required=True, metavar="R", help="annotators per item")
        parser.add_argument(
            "--rater-noise",
            type=float,
            required=True,
            metavar="X",
            help="annotators' noise, 0-1 (0.1 ≈ kappa 0.80, 0.2 ≈ 0.63, 0.3 ≈ 0.48, 0.4 ≈ 0.36)",
        )
        parser.add_argument("--model-noise", type=float, required=True, metavar="Y", help="the model's noise, 0-1")
        parser.add_argument("--epsilon", type=float, default=DEFAULT_EPSILON, metavar="E", help="ε (0.2)")
        parser.add_argument("--q", type=float, default=DEFAULT_Q, help="false discovery rate (0.05)")
        parser.add_argument("--sizes", default="30:200:10", metavar="FROM:TO:STEP", help="items to try (30:200:10)")
        parser.add_argument("--datasets", type=int, default=20, help="simulated data sets (20)")
        parser.add_argument("--boots", type=int, default=10, help="draws per data set and size (10)")
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="seed (0)")
        add_format_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            parameters = PlanParameters.from_json_dict({**options, "sizes": parse_sizes(options["sizes"])})
            points = simulate_plan(parameters)
        except ValueError as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        fmt = options["format"]
        if fmt == "json":
            self.stdout.write(json_text(plan_json(parameters, points)))
            return
        tables = (plan_table(parameters, points),)
        if fmt == "md":
            text = render_markdown(tables)
        elif fmt == "latex":
            text = render_latex(tables)
        else:
            text = render_csv(tables)
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
