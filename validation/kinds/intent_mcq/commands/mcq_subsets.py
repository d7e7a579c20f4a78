"""``mcq_subsets SLUG --size N --seed S [--seed S ...] [-o FOLDER]``: uniform subsets of an IntentGrasp All Set.

One subset of N instances per seed, each drawn uniformly without replacement (paper 002, App. B.1: 3 ×
470 with seeds 42, 43 and 44), for models too costly to run on every instance; ``--draw python`` (the
default) draws as the released code does, ``random.seed(S); random.sample(...)``, ``--draw numpy``
by numpy's ``default_rng``. Prints the JSON (or
``--format`` md, latex, csv: the subsets by domain); ``-o FOLDER`` also writes each subset as an item
file ``<slug>-sample-<seed>.jsonl``. ``--freeze`` / ``--check ID`` as for ``copa_eval``. Exit codes:
0 success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.kinds.intent_mcq.mcq_sets import DRAWS, MAX_SUBSETS
from validation.kinds.intent_mcq.sets_report import SubsetsParameters, subsets_evaluation, write_set_items
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
    help = "Uniform subsets of an IntentGrasp All Set, one per seed, for costly models."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an intent_mcq project (the All Set)")
        parser.add_argument("--size", type=int, default=470, metavar="N", help="instances per subset (470)")
        parser.add_argument(
            "--seed",
            type=non_negative_int,
            action="append",
            default=[],
            metavar="S",
            help=f"one subset per seed (default 42 43 44; at most {MAX_SUBSETS})",
        )
        parser.add_argument(
            "--draw",
            choices=DRAWS,
            default="python",
            help="python: random.seed(S); random.sample(...) as the release draws (default); numpy: default_rng",
        )
        parser.add_argument("-o", "--output", metavar="FOLDER", help="also write each subset as an item file there")
        add_format_argument(parser)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "mcq_subsets")
            return
        parameters = SubsetsParameters(
            size=options["size"], seeds=tuple(options["seed"]) or (42, 43, 44), draw=options["draw"]
        )
        evaluation = evaluate_or_fail(lambda: subsets_evaluation(project=project, parameters=parameters))
        if options["output"]:
            folder = Path(options["output"])
            if not folder.is_dir():
                raise CommandError(f"{folder} is not a folder", returncode=BAD_INPUT)
            for subset in evaluation.result["subsets"]:
                path = folder / f"{project.slug}-sample-{subset['seed']}.jsonl"
                write_or_fail(path, partial(write_set_items, project=project, external_ids=subset["items"], path=path))
        write_evaluation(self, project, evaluation, options)
