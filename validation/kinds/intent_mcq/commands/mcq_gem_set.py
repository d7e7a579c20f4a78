"""``mcq_gem_set SLUG --run ID [--run ID ...] --per-domain N [--seed S] [-o FILE.jsonl]``: the IntentGrasp Gem Set.

The instances of an ``intent_mcq`` project (the All Set) that every given run fails (each open model's
first run; a failure is an answer other than the key, or no readable answer), then at most N per domain
drawn with the seed (paper 002, §3). Prints the JSON (or ``--format`` md, latex, csv: the per-domain
table); ``-o`` also writes the chosen items as an item file for ``import_items``. ``--freeze`` /
``--check ID`` as for ``copa_eval``. Exit codes: 0 success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand

from annotation.management.commands._base import project_or_fail
from validation.evaluations.base import MAX_RUNS
from validation.kinds.intent_mcq.sets_report import GemSetParameters, gem_set_evaluation, write_set_items
from validation.management.commands._shared import (
    add_format_argument,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    evaluate_or_fail,
    non_negative_int,
    write_evaluation,
    write_or_fail,
)


class Command(BaseCommand):
    help = "IntentGrasp Gem Set: instances every given run fails, downsampled per domain with a seed."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an intent_mcq project (the All Set)")
        parser.add_argument(
            "--run",
            type=int,
            action="append",
            default=[],
            metavar="ID",
            help=f"a model's first run (at most {MAX_RUNS})",
        )
        parser.add_argument(
            "--per-domain", type=int, default=50, metavar="N", help="instances kept per domain, at most (50)"
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="seed of the draw (0)")
        parser.add_argument("-o", "--output", metavar="FILE.jsonl", help="also write the chosen items as an item file")
        add_format_argument(parser)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "mcq_gem_set")
            return
        parameters = GemSetParameters(
            runs=tuple(options["run"]), per_domain=options["per_domain"], seed=options["seed"]
        )
        evaluation = evaluate_or_fail(lambda: gem_set_evaluation(project=project, parameters=parameters))
        if options["output"]:
            path = options["output"]
            write_or_fail(
                path, lambda: write_set_items(project=project, external_ids=evaluation.result["items"], path=path)
            )
        write_evaluation(self, project, evaluation, options)
