"""``ipqa_eval_pairs SLUG --predictions FILE --into MATCH_SLUG``: the IPQA-Eval match project's items.

One item per (IPQA item, predicted intent, gold core intent) in the ``ipqa_eval_match`` project
MATCH_SLUG, so people and the LLM matcher judge the pairs that ``ipqa_eval`` scores (IPQA, §2.1).
All or nothing; pairs already there are kept. Exit codes: 0 success, 1 bad input (unknown project,
wrong kind, a bad predictions file: each problem by line and field), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ValidationFailed
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.evaluations.base import WrongKind, check_kind
from validation.kinds.ipqa_core_intent.ipqa_pairs import MATCH_KIND, SOURCE_KIND, build_pairs, read_predictions


class Command(BaseCommand):
    help = "Build an ipqa_eval_match project's items from an IPQA project's gold and a predictions file."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="an ipqa_core_intent project (the gold core intents)")
        parser.add_argument(
            "--predictions", required=True, metavar="FILE", help="JSONL: external_id, predicted_intents"
        )
        parser.add_argument("--into", required=True, metavar="MATCH_SLUG", help="an ipqa_eval_match project")

    def handle(self, *args: Any, **options: Any) -> None:
        source = project_or_fail(options["slug"])
        target = project_or_fail(options["into"])
        try:
            check_kind(source, expected=SOURCE_KIND, evaluation="ipqa_eval_pairs")
            check_kind(target, expected=MATCH_KIND, evaluation="ipqa_eval_pairs")
            predictions = read_predictions(options["predictions"], project=source)
            result = build_pairs(source=source, target=target, predictions=predictions)
        except (WrongKind, ValidationFailed) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        except OSError as exc:
            raise CommandError(f"cannot read {options['predictions']}: {exc.strerror}", returncode=BAD_INPUT) from None
        payload = {
            "project": source.slug,
            "into": target.slug,
            "items": result.items,
            "created": result.created,
            "existing": result.existing,
            "skipped": result.skipped,
        }
        self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
