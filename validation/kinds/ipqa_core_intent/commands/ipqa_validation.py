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
from validation.kinds.ipqa_core_intent.validation_report import IpqaValidationParameters, ipqa_validation_evaluation
from validation.management.commands._shared import (
    add_bootstrap_arguments,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    evaluate_or_fail,
    write_evaluation,
)


class Command(BaseCommand):
    help = "IPQA human validation by question complexity: agreement per number of expressed and core intents."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an ipqa_core_intent project")
        parser.add_argument("--judge-run", type=int, metavar="ID", help="compare the annotators' majority with a run")
        add_bootstrap_arguments(parser, over="units")
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
