"""import_run SLUG FILE [--model M] [--prompt LABEL] [--name NAME] [--sampling JSON] [--producer-run-id ID]

A model's outputs made elsewhere, imported as a run of the project (judges.run_files). Exit codes are
a contract (docs/cli.md): 0 success, 1 bad input (each bad line and field named), 2 usage error.
Prints ``{"run": ID, "ok": n, "failed": m}``.
"""

from __future__ import annotations

import json
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation import jsonsafe
from annotation.errors import ImportRejected
from annotation.management.commands._base import StderrProgress, project_or_fail, rejected
from judges.management.commands._runs import BAD_INPUT, USAGE
from judges.run_files import judge_run_import


class Command(BaseCommand):
    help = "Import a model's outputs (.jsonl or .csv, one line per item) as a run of the project: all or nothing."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("file", help="a .jsonl or .csv run file (docs/formats.md, Judge runs)")
        parser.add_argument("--model", default="", help="the model that produced the outputs (else the file's)")
        parser.add_argument("--prompt", default="", help="prompt NAME.vN or a free label (else the file's)")
        parser.add_argument("--name", default="", help="the run's judge name; default: model · prompt (imported)")
        parser.add_argument("--sampling", default=None, help="sampling parameters as JSON, e.g. '{\"temperature\": 0}'")
        parser.add_argument("--producer-run-id", default="", help="the producer's own run or batch id")
        parser.add_argument(
            "--allow-same-outputs", action="store_true", help="import even if another run has the same outputs"
        )

    def handle(self, *args, **o) -> None:
        sampling = None
        if o["sampling"] is not None:
            try:
                sampling = jsonsafe.loads(o["sampling"])
            except jsonsafe.UnsafeJSON as exc:
                raise CommandError(f"--sampling is not JSON: {exc}", returncode=USAGE) from None
        project = project_or_fail(o["slug"])
        file = o["file"]
        try:
            size = os.path.getsize(file)
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}", returncode=BAD_INPUT) from None
        progress = StderrProgress(size) if o["verbosity"] > 0 and sys.stderr.isatty() else None
        try:
            result = judge_run_import(
                project=project,
                path=file,
                model=o["model"],
                prompt=o["prompt"],
                name=o["name"],
                sampling=sampling,
                producer_run_id=o["producer_run_id"],
                progress=progress,
                allow_same_outputs=o["allow_same_outputs"],
            )
        except ImportRejected as exc:
            raise rejected(file, [str(e) for e in exc.errors], exc.total) from None
        finally:
            if progress:
                sys.stderr.write("\n")
        self.stdout.write(json.dumps(result.as_dict()))
