"""``aggregate SLUG --method M``: each dimension of the people's latest answers aggregated by a model of
the annotators (crowd-kit), beside the majority vote.

Per item: the label, its posterior (the share of votes for ``majority``), the majority vote and whether
the label flips it; per annotator: competence (Dawid–Skene: accuracy from the confusion matrix, with
the matrix; MACE: competence and spamming; GLAD: ability; Wawa and majority: accuracy against the vote)
with a bootstrap interval over items (``--bootstrap N --seed S``); the flips. Runs are never counted
as annotators unless named with ``--with-runs`` (then labelled as runs). ``--freeze`` stores a
snapshot; ``--check ID`` recomputes one. Exit codes: 0 success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from annotation.management.commands._base import project_or_fail
from validation.aggregation.build import NAME, AggregateParameters, project_aggregation
from validation.aggregation.methods import METHODS
from validation.management.commands._shared import (
    add_bootstrap_arguments,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    evaluate_or_fail,
    write_evaluation,
)


class Command(BaseCommand):
    help = (
        "Aggregate the people's answers by majority vote, Dawid–Skene, MACE, GLAD or Wawa, with annotator competence."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("--method", choices=METHODS, default="dawid_skene", help="aggregation method (dawid_skene)")
        parser.add_argument("--dimension", default="", metavar="D", help="one dimension (default: every one)")
        parser.add_argument(
            "--with-runs", type=int, nargs="+", default=[], metavar="RUN", help="judge runs counted as raters"
        )
        # The seed also draws MACE's start.
        add_bootstrap_arguments(parser, over="items, for competence intervals", default=0)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], NAME)
            return
        parameters = AggregateParameters(
            method=options["method"],
            dimension=options["dimension"],
            runs=tuple(options["with_runs"]),
            bootstrap=options["bootstrap"],
            seed=options["seed"],
        )
        evaluation = evaluate_or_fail(lambda: project_aggregation(project=project, parameters=parameters))
        write_evaluation(self, project, evaluation, options)
