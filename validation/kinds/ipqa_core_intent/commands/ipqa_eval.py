"""``ipqa_eval SLUG --predictions FILE --run ID``: IPQA-Eval precision, recall and F1 (IPQA, §2.1).

SLUG is the IPQA project (gold core intents); ``--run`` a judge run over the ``ipqa_eval_match`` project
that ``ipqa_eval_pairs`` built from the same predictions. Per item a one-to-one matching of predicted to
gold core intents from the run's match decisions; overall the macro averages with seeded bootstrap
intervals over items. ``--freeze`` / ``--check ID`` as for ``copa_eval`` (a snapshot keeps the
predictions, so a check scores the same ones again). Exit codes: 0 success, 1 bad input (unknown project
or run, wrong kind, a bad predictions file: each problem by line and field), 2 usage error."""

from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ValidationFailed
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.evaluations.base import (
    UnknownJudgeRun,
    WrongKind,
    check_kind,
)
from validation.kinds.ipqa_core_intent.ipqa_pairs import SOURCE_KIND, read_predictions
from validation.kinds.ipqa_core_intent.ipqa_report import IpqaEvalParameters, ipqa_evaluation
from validation.management.commands._shared import (
    add_bootstrap_arguments,
    add_snapshot_arguments,
    check_evaluation_snapshot,
    write_evaluation,
)


class Command(BaseCommand):
    help = "IPQA-Eval: macro precision, recall and F1 of predicted against gold core intents."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an ipqa_core_intent project")
        parser.add_argument("--predictions", metavar="FILE", help="JSONL: external_id, predicted_intents")
        parser.add_argument("--run", type=int, metavar="ID", help="a judge run over the match project")
        add_bootstrap_arguments(parser, over="items")
        add_snapshot_arguments(parser, parser.add_mutually_exclusive_group())

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_or_fail(options["slug"])
        if options["check"] is not None:
            check_evaluation_snapshot(self, project, options["check"], "ipqa_eval")
            return
        if not options["predictions"] or options["run"] is None:
            raise CommandError("--predictions and --run are required (or --check SNAPSHOT_ID)", returncode=2)
        try:
            check_kind(project, expected=SOURCE_KIND, evaluation="ipqa_eval")
            predictions = read_predictions(options["predictions"], project=project)
            parameters = IpqaEvalParameters(
                run=options["run"], bootstrap=options["bootstrap"], seed=options["seed"], predictions=predictions
            )
            evaluation = ipqa_evaluation(project=project, parameters=parameters)
        except (UnknownJudgeRun, WrongKind, ValidationFailed) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        except ValueError as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        except OSError as exc:
            raise CommandError(f"cannot read {options['predictions']}: {exc.strerror}", returncode=BAD_INPUT) from None
        write_evaluation(self, project, evaluation, options)
