"""``copa_eval SLUG --run ID [--run ID ...] [--people]``: CoPA's Table 3 and Table 4 (paper 001, §5.2).

Does each evaluator (a judge run, or people's gold) score the answer the user accepted above the
top-voted one? Accuracy, Tie rate and Margin over the project's pairs with seeded bootstrap
intervals, and each with one factor left out. ``--freeze`` stores a snapshot; ``--check ID``
recomputes one. Exit codes: 0 success, 1 bad input (unknown project, run or snapshot, wrong kind),
2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.evaluations.base import MAX_RUNS, UnknownJudgeRun, WrongKind
from validation.kinds.copa_likert.copa_report import CopaEvalParameters, copa_evaluation
from validation.management.commands._shared import (
    add_bootstrap_arguments,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    write_evaluation,
)


class Command(BaseCommand):
    help = "CoPA evaluator comparison (Table 3) and factor ablation (Table 4) over accepted/top-voted pairs."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="a copa_likert project")
        parser.add_argument(
            "--run", type=int, action="append", default=[], metavar="ID", help=f"a judge run (at most {MAX_RUNS})"
        )
        parser.add_argument("--people", action="store_true", help="also evaluate people's gold scores")
        add_bootstrap_arguments(parser, over="pairs")
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "copa_eval")
            return
        parameters = CopaEvalParameters(
            runs=tuple(options["run"]), people=options["people"], bootstrap=options["bootstrap"], seed=options["seed"]
        )
        try:
            evaluation = copa_evaluation(project=project, parameters=parameters)
        except (UnknownJudgeRun, WrongKind, ValueError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        write_evaluation(self, project, evaluation, options)
