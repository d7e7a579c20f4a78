"""What the project commands share: project lookup, project options, progress on stderr, exit codes.

Exit codes are a contract (docs/cli.md): 0 success, 1 bad input, 2 usage error.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ImportRejected
from annotation.importing import import_job_run
from annotation.importing.services import import_job_record
from annotation.kinds.designs import DESIGN_TOO_LARGE, MAX_DESIGN_BYTES
from annotation.models import ImportJob, Project, SuggestionExposure

BAD_INPUT = 1


def project_or_fail(slug: str) -> Project:
    try:
        return Project.objects.get(slug=slug)
    except Project.DoesNotExist:
        raise CommandError(f"no project with slug {slug!r}", returncode=BAD_INPUT) from None


def add_exposure_arguments(parser, *, hide: bool) -> None:
    """How annotators see LLM suggestions: ``--show-suggestions``, ``--randomise-suggestions P`` and,
    where hidden is not already the default, ``--hide-suggestions``."""
    exposure = parser.add_mutually_exclusive_group()
    if hide:
        exposure.add_argument("--hide-suggestions", action="store_true", help="hide LLM suggestions")
    exposure.add_argument("--show-suggestions", action="store_true", help="show LLM suggestions to annotators")
    exposure.add_argument(
        "--randomise-suggestions",
        type=float,
        metavar="P",
        help="show each suggestion with probability P per (item, annotator)",
    )


def chosen_exposure(options: dict) -> tuple[str, float | None] | None:
    """The suggestion exposure the options ask for (and its probability when randomised), or None."""
    if options.get("hide_suggestions"):
        return SuggestionExposure.HIDDEN, None
    if options["show_suggestions"]:
        return SuggestionExposure.SHOWN, None
    if options["randomise_suggestions"] is not None:
        return SuggestionExposure.RANDOMISED, options["randomise_suggestions"]
    return None


def read_guidelines(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}", returncode=BAD_INPUT) from None


def read_design(path: str) -> Any:
    """A design file's JSON (docs/formats.md, Designs); exit 1 naming the file when it is not JSON."""
    text = read_guidelines(path)
    if len(text.encode("utf-8")) > MAX_DESIGN_BYTES:
        raise CommandError(f"{path}: {DESIGN_TOO_LARGE}", returncode=BAD_INPUT)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})", returncode=BAD_INPUT) from None


def refused(exc: ValidationError) -> CommandError:
    """A refused project change as the command's error: one line per field."""
    lines = [f"{field}: {'; '.join(messages)}" for field, messages in exc.message_dict.items()]
    return CommandError("\n".join(lines), returncode=BAD_INPUT)


def rejected(file: str, messages: list[str], total: int) -> CommandError:
    """A refused import as the command's error (exit 1): each bad line and field, then how many more."""
    more = f"\n... and {total - len(messages)} more errors" if total > len(messages) else ""
    return CommandError(
        f"{file}: nothing imported, {total} error(s):\n" + "\n".join(messages) + more, returncode=BAD_INPUT
    )


class StderrProgress:
    """Prints how far a long import has got to stderr, at most twice a second."""

    def __init__(self, total_bytes: int) -> None:
        self.total = max(total_bytes, 1)
        self.last = 0.0

    def __call__(self, done_bytes: int, records: int) -> None:
        now = time.monotonic()
        if now - self.last >= 0.5:
            self.last = now
            sys.stderr.write(f"\r{records} records read, {100 * done_bytes / self.total:5.1f}%")
            sys.stderr.flush()


class ImportCommand(BaseCommand):
    target: str

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("file", help="a .jsonl or .csv file")

    def job_options(self, options: dict) -> dict:
        """Fields of the job row that the command's own options set."""
        return {}

    def summary(self, job: ImportJob) -> dict:
        """What the command prints on success, besides project, job and counts of rows stored."""
        return {}

    def handle(self, *args, slug: str, file: str, verbosity: int = 1, **options) -> None:
        project = project_or_fail(slug)
        try:
            size = os.path.getsize(file)
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}", returncode=BAD_INPUT) from None
        try:
            job = import_job_record(
                project=project, target=self.target, filename=file, stored_path=file, **self.job_options(options)
            )
        except ImportRejected as exc:
            raise rejected(file, [str(e) for e in exc.errors], exc.total) from None
        progress = StderrProgress(size) if verbosity > 0 and sys.stderr.isatty() else None
        job = import_job_run(job=job, progress=progress)
        if progress:
            sys.stderr.write("\n")
        if job.status == ImportJob.Status.REJECTED:
            raise rejected(file, job.errors, job.error_count)
        counts = {"imported": job.rows_imported, "unchanged": job.rows_unchanged, **self.summary(job)}
        self.stdout.write(json.dumps({"project": project.slug, **counts, "job": job.pk}))
