"""``mcq_eval SLUG --run ID [--run ID ...]``: IntentGrasp model evaluation (paper 002, §4, App. A-B).

Per run the F1 (per-instance F1 averaged) with parse failures left out and scored 0, the mean and
standard deviation over runs (``--std sample``, ddof 1, as Table 8's All Set block; ``--std
population``, ddof 0, as Table 8's Gem Set block, Tables 9 and 2) with 2-sigma error bars (a table,
and with ``--plot FILE.svg`` the figure), the random-guess baseline, breakdowns by dataset, domain, text
form and label type, and the human baseline measured and estimated (``--human-scores FILE``, the
paper's Table 6 by default). ``--freeze`` / ``--check ID`` as for ``copa_eval``. Exit codes: 0
success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.evaluations.base import MAX_RUNS, UnknownJudgeRun, WrongKind
from validation.kinds.intent_mcq.human_scores import MAX_BYTES, TableError, parse_human_scores
from validation.kinds.intent_mcq.mcq_eval import STD_DDOF
from validation.kinds.intent_mcq.mcq_report import McqEvalParameters, mcq_evaluation
from validation.management.commands._shared import (
    add_format_argument,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    write_evaluation,
    write_figure,
)


class Command(BaseCommand):
    help = "IntentGrasp F1 per run and over runs, with baselines and breakdowns, from an intent_mcq project."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an intent_mcq project")
        parser.add_argument(
            "--run", type=int, action="append", default=[], metavar="ID", help=f"a judge run (at most {MAX_RUNS})"
        )
        parser.add_argument(
            "--human-scores",
            metavar="FILE",
            help="CSV of dataset,score: reported human scores per source dataset (default: IntentGrasp Table 6)",
        )
        parser.add_argument(
            "--std",
            choices=tuple(STD_DDOF),
            default="sample",
            help="std over runs: sample (ddof 1, Table 8 All Set) or population (ddof 0, Table 8 Gem Set, Tables 9, 2)",
        )
        parser.add_argument("--plot", metavar="FILE.svg", help="also write the 2-sigma error-bar figure as SVG")
        add_format_argument(parser)
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "mcq_eval")
            return
        table = None
        if options["human_scores"]:
            path = Path(options["human_scores"])
            try:
                if path.stat().st_size > MAX_BYTES:
                    raise CommandError(f"{path}: larger than {MAX_BYTES} bytes", returncode=BAD_INPUT)
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"cannot read {path}: {exc}", returncode=BAD_INPUT) from None
            try:
                table = parse_human_scores(text, source=path.name)
            except TableError as exc:
                raise CommandError(f"{path}: " + "; ".join(str(e) for e in exc.errors), returncode=BAD_INPUT) from None
        parameters = McqEvalParameters(runs=tuple(options["run"]), human_scores=table, std=options["std"])
        try:
            evaluation = mcq_evaluation(project=project, parameters=parameters)
        except (UnknownJudgeRun, WrongKind, ValueError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        if options["plot"]:
            write_figure(Path(options["plot"]), evaluation.figures[0])
        write_evaluation(self, project, evaluation, options)
