"""Options and output the agreement and evaluation commands share."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT
from annotation.models import Project
from validation.evaluations.base import MAX_BOOTSTRAP, UnknownJudgeRun, WrongKind, render_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_check, evaluation_snapshot_create
from validation.models import ReportSnapshot

FORMATS = ("json", "md", "latex", "csv")
UNKNOWN_EVALUATION_SNAPSHOT = "no {kind} snapshot {id} in project {slug!r}"


def non_negative_int(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{number} is negative")
    return number


def checked_number(problem: Callable[[float], str | None]) -> Callable[[str], float]:
    """An ``argparse`` type: a number that ``problem`` accepts (its message is the usage error, exit 2)."""

    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        message = problem(number)
        if message:
            raise argparse.ArgumentTypeError(message)
        return number

    return parse


def add_bootstrap_arguments(parser: argparse.ArgumentParser, *, over: str, default: int = 1000) -> None:
    """``--bootstrap N`` (resamples over ``over``), ``--seed S`` and ``--format``: every evaluation's."""
    parser.add_argument(
        "--bootstrap",
        type=non_negative_int,
        default=default,
        metavar="N",
        help=f"bootstrap resamples over {over} ({default}; at most {MAX_BOOTSTRAP})",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="bootstrap seed (0)")
    add_format_argument(parser)


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """``--format``: how every evaluation and report command prints its result."""
    parser.add_argument("--format", choices=FORMATS, default="json", help="output format (json)")


def add_snapshot_arguments(parser: argparse.ArgumentParser, modes: Any, *, frozen: str = "a snapshot") -> None:
    """``--freeze`` and ``--check ID`` in the mutually exclusive group ``modes``, and ``--title``."""
    modes.add_argument("--freeze", action="store_true", help=f"store {frozen}; print its id")
    modes.add_argument("--check", type=int, metavar="SNAPSHOT_ID", help="recompute a snapshot and compare")
    parser.add_argument("--title", default="", help="title of the snapshot (with --freeze)")


def json_text(payload: Any) -> str:
    # allow_nan=False: a NaN reaching the output is a bug, never a number.
    return json.dumps(payload, indent=2, allow_nan=False, ensure_ascii=False)


def frozen_json(project: Project, snapshot: ReportSnapshot) -> str:
    """What ``--freeze`` prints: the new snapshot and its two fingerprints."""
    return json_text(
        {
            "snapshot": snapshot.pk,
            "project": project.slug,
            "inputs_sha256": snapshot.inputs_sha256,
            "numbers_sha256": snapshot.numbers_sha256,
        }
    )


def checked_json(snapshot: ReportSnapshot, check: Any) -> str:
    """What ``--check`` prints: which parts of a recomputed snapshot match, and the differences."""
    return json_text(
        {
            "snapshot": snapshot.pk,
            "inputs_match": check.inputs_match,
            "numbers_match": check.numbers_match,
            "versions_match": check.versions_match,
            "difference_count": check.difference_count,
            "differences": check.differences,
            "error": check.error or None,
        }
    )


def check_evaluation_snapshot(command: BaseCommand, project: Project, snapshot_id: int, evaluation: str) -> None:
    """``--check`` of a paper evaluation: recompute the snapshot and print what matches."""
    snapshot = ReportSnapshot.objects.filter(pk=snapshot_id, project=project, evaluation=evaluation).first()
    if snapshot is None:
        message = UNKNOWN_EVALUATION_SNAPSHOT.format(kind=evaluation, id=snapshot_id, slug=project.slug)
        raise CommandError(message, returncode=BAD_INPUT)
    command.stdout.write(checked_json(snapshot, evaluation_snapshot_check(snapshot=snapshot)))


def freeze_evaluation(command: BaseCommand, project: Project, evaluation: Any, title: str) -> None:
    """``--freeze`` of a paper evaluation."""
    snapshot = evaluation_snapshot_create(project=project, evaluation=evaluation, title=title)
    command.stdout.write(frozen_json(project, snapshot))


def write_figure(path: Path, figure: Any) -> None:
    """A figure as SVG at ``path`` (the researcher's own file, as ``-o`` elsewhere)."""
    from validation.plots import svg  # matplotlib loads only when a figure is asked for

    try:
        path.write_text(svg(figure), encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc}", returncode=BAD_INPUT) from None


def write_evaluation(command: BaseCommand, project: Project, evaluation: Any, options: dict) -> None:
    """A paper evaluation's output: a snapshot with ``--freeze``, else the tables in ``--format``."""
    if options.get("freeze"):
        freeze_evaluation(command, project, evaluation, options["title"])
        return
    text = render_evaluation(evaluation, options["format"])
    command.stdout.write(text, ending="" if text.endswith("\n") else "\n")


def evaluate_or_fail(evaluate: Callable[[], Any]) -> Any:
    """``evaluate()``, its refusals (another kind, an unknown run, a bad parameter) as exit code 1."""
    try:
        return evaluate()
    except (UnknownJudgeRun, WrongKind, ValueError) as exc:
        raise CommandError(str(exc), returncode=BAD_INPUT) from None


def write_or_fail(path: str | Path, write: Callable[[], Any]) -> None:
    """``write()`` of a file the researcher named (as ``-o`` elsewhere), a failure as exit code 1."""
    try:
        write()
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}", returncode=BAD_INPUT) from None
