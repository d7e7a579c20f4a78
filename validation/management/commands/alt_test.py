"""``alt_test SLUG --run ID [--run ID ...]``: may a run's labels replace the people's?

The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025) per run, pooled over the kind's
dimensions and per dimension, the runs ranked by advantage probability; beside it agreement by who
rated and, where a run's lines carry ``score``, calibration. ``--freeze`` stores a snapshot; ``--check
ID`` recomputes one. Exit codes: 0 success, 1 bad input (unknown project, run or snapshot, bad
value), 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import project_or_fail
from validation.alttest.build import NAME, AltTestParameters, alt_test_evaluation
from validation.alttest.statistics import (
    DEFAULT_EPSILON,
    DEFAULT_MIN_ITEMS,
    DEFAULT_MIN_RATERS,
    DEFAULT_Q,
    METRICS,
    SCOPES,
    AltTestOptions,
)
from validation.management.commands._shared import (
    add_format_argument,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    evaluate_or_fail,
    non_negative_int,
    write_evaluation,
)


class Command(BaseCommand):
    help = "The Alternative Annotator Test: may a judge run replace the annotators? Pooled and per dimension."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument(
            "--run", type=int, action="append", default=[], metavar="RUN_ID", help="a judge run (repeat)"
        )
        parser.add_argument(
            "--epsilon",
            type=float,
            default=DEFAULT_EPSILON,
            metavar="E",
            help="the annotators' advantage: 0.1 crowd workers, 0.15 skilled, 0.2 experts (0.2)",
        )
        parser.add_argument("--q", type=float, default=DEFAULT_Q, help="false discovery rate of the BY step (0.05)")
        parser.add_argument(
            "--metric", choices=METRICS, default="auto", help="alignment (auto: by the dimension's level)"
        )
        parser.add_argument("--scope", choices=SCOPES, default="both", help="pooled, per dimension, or both (both)")
        parser.add_argument(
            "--min-raters", type=int, default=DEFAULT_MIN_RATERS, metavar="N", help="annotators an item needs (2)"
        )
        parser.add_argument(
            "--min-items", type=int, default=DEFAULT_MIN_ITEMS, metavar="N", help="items an annotator needs (30)"
        )
        parser.add_argument(
            "--bootstrap",
            type=non_negative_int,
            default=1000,
            metavar="N",
            help="resamples of the agreement intervals (1000)",
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="bootstrap seed (0)")
        add_format_argument(parser)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], NAME)
            return
        if not options["run"]:
            raise CommandError("--run is required", returncode=2)
        parameters = AltTestParameters(
            runs=tuple(options["run"]),
            options=AltTestOptions.from_json_dict(options),
            bootstrap=options["bootstrap"],
            seed=options["seed"],
        )
        evaluation = evaluate_or_fail(lambda: alt_test_evaluation(project=project, parameters=parameters))
        write_evaluation(self, project, evaluation, options)
