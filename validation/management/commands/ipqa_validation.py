"""``ipqa_validation SLUG [--judge-run ID]``: an IPQA project's human validation by question complexity.

Per number of intents the gold judges expressed, then per number of gold core intents: the annotators'
percent agreement and Krippendorff's alpha on each label (expressed, core) with seeded bootstrap
intervals over units, and with ``--judge-run`` their majority against the judge
(``validation.kinds.ipqa_core_intent.validation_report``). ``--freeze`` / ``--check ID`` as for
``copa_eval``. Exit codes: 0 success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from annotation.management.commands._base import project_or_fail
from validation.evaluations.base import FORMATS, MAX_BOOTSTRAP
from validation.kinds.ipqa_core_intent.validation_report import IpqaValidationParameters, ipqa_validation_evaluation
from validation.management.commands._shared import (
    add_snapshot_arguments,
    check_evaluation_snapshot,
    evaluate_or_fail,
    non_negative_int,
    write_evaluation,
)


class Command(BaseCommand):
    help = "IPQA human validation by question complexity: agreement per number of expressed and core intents."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an ipqa_core_intent project")
        parser.add_argument("--judge-run", type=int, metavar="ID", help="compare the annotators' majority with a run")
        parser.add_argument(
            "--bootstrap",
            type=non_negative_int,
            default=1000,
            metavar="N",
            help=f"bootstrap resamples over units (1000; at most {MAX_BOOTSTRAP})",
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="bootstrap seed (0)")
        parser.add_argument("--format", choices=FORMATS, default="json", help="output format (json)")
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "ipqa_validation")
            return
        parameters = IpqaValidationParameters(
            judge_run=options["judge_run"], bootstrap=options["bootstrap"], seed=options["seed"]
        )
        evaluation = evaluate_or_fail(lambda: ipqa_validation_evaluation(project=project, parameters=parameters))
        write_evaluation(self, project, evaluation, options)
