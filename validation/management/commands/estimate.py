"""``estimate SLUG --run ID``: the benchmark quantities three ways (model only, people only, prediction-powered).

Per estimated dimension of the kind, overall and per group of ``--by FIELD``, with the group
differences: the run's mean, people's mean on the labelled sample with its ``1 - alpha`` interval,
and the PPI++ mean with its interval, lambda and effective sample size. ``--truth gold`` takes
each item's gold instead of its raters' mean. ``--freeze`` stores a snapshot; ``--check ID``
recomputes one. Exit codes: 0 success, 1 bad input (unknown project, run or snapshot, bad value),
2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.estimates.build import NAME, TRUTHS, EstimateParameters, alpha_problem, project_estimates
from validation.evaluations.base import UnknownJudgeRun
from validation.management.commands._shared import (
    add_format_argument,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    checked_number,
    write_evaluation,
)


class Command(BaseCommand):
    help = "Model-only, people-only and prediction-powered estimates per dimension (and group) for a judge run."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("--run", type=int, metavar="ID", help="the judge run (imported runs too)")
        parser.add_argument("--by", default="", metavar="FIELD", help="payload field (or meta.KEY) to group by")
        parser.add_argument(
            "--alpha", type=checked_number(alpha_problem), default=0.05, help="intervals at 1 - alpha (0.05)"
        )
        parser.add_argument("--truth", choices=TRUTHS, default="mean", help="people's value: raters' mean or gold")
        parser.add_argument(
            "--no-fpc",
            dest="fpc",
            action="store_false",
            help="no finite-population correction (the items stand for a larger population)",
        )
        add_format_argument(parser)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], NAME)
            return
        if options["run"] is None:
            raise CommandError("--run is required", returncode=2)
        parameters = EstimateParameters(
            run=options["run"], by=options["by"], alpha=options["alpha"], truth=options["truth"], fpc=options["fpc"]
        )
        try:
            evaluation = project_estimates(project=project, parameters=parameters)
        except (UnknownJudgeRun, ValueError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        write_evaluation(self, project, evaluation, options)
