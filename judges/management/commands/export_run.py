"""export_run RUN_ID -o FILE.jsonl|FILE.csv

Writes a run in the format import_run reads (judges.run_files), so a run made here can be compared
elsewhere or imported into another project. Exit codes (docs/cli.md): 0, 1 bad input, 2 usage.
Prints ``{"run": ID, "lines": n, "path": FILE}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ImportRejected
from annotation.importing import file_format
from judges.management.commands._runs import BAD_INPUT, USAGE
from judges.models import JudgeRun
from judges.run_files import judge_run_export


class Command(BaseCommand):
    help = "Write a judge run's outputs as a run file (.jsonl with its provenance line, or .csv)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("run_id", type=int, help="the run's id")
        parser.add_argument("-o", "--output", required=True, help="FILE.jsonl or FILE.csv")

    def handle(self, *args, **o) -> None:
        try:
            fmt = file_format(o["output"])
        except ImportRejected as exc:
            raise CommandError(exc.errors[0].message, returncode=USAGE) from None
        run = JudgeRun.objects.select_related("judge", "project").filter(pk=o["run_id"]).first()
        if run is None:
            raise CommandError(f"no run {o['run_id']}", returncode=BAD_INPUT)
        path = Path(o["output"])
        try:
            with path.open("w", encoding="utf-8", newline="") as out:
                lines = judge_run_export(run=run, out=out, fmt=fmt)
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror}", returncode=BAD_INPUT) from None
        self.stdout.write(json.dumps({"run": run.pk, "lines": lines, "path": str(path)}))
