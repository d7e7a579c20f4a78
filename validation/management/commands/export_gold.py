import json

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ValidationFailed
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.aggregation.methods import METHODS
from validation.exports import FORMATS
from validation.goldset import SHAPES, export_gold
from validation.management.commands._shared import non_negative_int


class Command(BaseCommand):
    help = "Export a project's gold set (adjudicated, else known answer, else majority) as JSONL, CSV or Parquet."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("-o", "--output", required=True, help="file to write (replaced only when complete)")
        parser.add_argument(
            "--shape",
            choices=SHAPES,
            default="concord",
            help="concord: re-importable items with their gold; benchmark: the benchmark's own shape with provenance",
        )
        parser.add_argument(
            "--method",
            choices=METHODS,
            default="majority",
            help="aggregation the gold is built with where no expert decided (majority; recorded in the provenance)",
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of the aggregation (0)")
        parser.add_argument(
            "--raw-csv",
            action="store_true",
            help="CSV only: write text cells as they are; by default a cell a spreadsheet would run as a formula "
            "(starting with = + - @, a tab or a carriage return) gets a leading '",
        )

    def handle(self, *args, slug: str, format: str, output: str, shape: str, raw_csv: bool, **options) -> None:
        project = project_or_fail(slug)
        method = options["method"]
        try:
            count = export_gold(
                project=project,
                fmt=format,
                path=output,
                shape=shape,
                csv_escape=not raw_csv,
                method=method,
                seed=options["seed"],
            )
        except (ValidationFailed, OSError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        self.stdout.write(
            json.dumps(
                {"project": slug, "format": format, "shape": shape, "method": method, "records": count, "path": output}
            )
        )
