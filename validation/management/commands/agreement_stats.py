"""``agreement_stats FILE.csv``: agreement measures for any long-format ratings file (docs/cli.md).

Exit codes: 0 success, 1 bad input (the message names the line and field), 2 usage error. The
result goes to stdout; errors to stderr.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from validation.agreement import LEVELS, DimensionAgreement, dimension_agreement
from validation.management.commands._shared import add_format_argument, non_negative_int
from validation.ratings_io import RatingsFileInvalid, read_ratings
from validation.reports.render import render_dimensions_csv, render_dimensions_latex, render_dimensions_markdown

BAD_INPUT = 1
UNKNOWN_REFERENCE = "--reference: rater {rater!r} has no rating in {file}"


class Command(BaseCommand):
    help = "Agreement measures (kappa, alpha, percent agreement, rank correlations) for a unit,rater,value CSV."
    # Reads a file and prints numbers: nothing here needs the database or the project's checks.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("file", metavar="FILE.csv", help="columns unit,rater,value and optionally dimension")
        parser.add_argument("--level", choices=LEVELS, default="nominal", help="level of measurement (nominal)")
        parser.add_argument("--reference", metavar="RATER", help="correlate the other raters' mean with this rater")
        parser.add_argument(
            "--bootstrap", type=non_negative_int, default=0, metavar="N", help="bootstrap resamples for CIs (0)"
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="bootstrap seed (0)")
        add_format_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        file = options["file"]
        try:
            dimensions = read_ratings(file, level=options["level"])
        except RatingsFileInvalid as exc:
            raise CommandError(f"{file}: {exc.message}", returncode=BAD_INPUT) from None
        reference = options["reference"]
        if reference is not None and not any(r.rater == reference for rs in dimensions.values() for r in rs):
            raise CommandError(UNKNOWN_REFERENCE.format(rater=reference, file=file), returncode=BAD_INPUT)
        results = {
            name: dimension_agreement(
                ratings,
                level=options["level"],
                reference=reference,
                bootstrap=options["bootstrap"],
                seed=options["seed"],
            )
            for name, ratings in dimensions.items()
        }
        fmt = options["format"]
        if fmt == "json":
            payload = {"dimensions": {name: result.to_json_dict() for name, result in results.items()}}
            # allow_nan=False: a NaN reaching the output is a bug, never a number.
            text = json.dumps(payload, indent=2, allow_nan=False)
        else:
            renderers: dict[str, Callable[[Mapping[str, DimensionAgreement]], str]] = {
                "md": render_dimensions_markdown,
                "latex": render_dimensions_latex,
                "csv": render_dimensions_csv,
            }
            text = renderers[fmt](results)
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
