"""``agreement SLUG``: agreement measures for a project (the contract is in docs/cli.md).

Prints the ``agreement_stats`` JSON shape (one dimension per factor, intent label or verdict) or the
same table as Markdown, LaTeX or CSV; with ``--report``, the kind's paper tables instead. With a
judge run the judge is compared with the people (Spearman and Kendall against their mean, kappa
against their majority) and, only with ``--judge-as-rater``, also counted among them.
``--freeze`` stores a snapshot of the report; ``--check ID`` recomputes one and says what changed.

Exit codes: 0 success, 1 bad input (unknown project, run or snapshot), 2 usage error. Output goes
to stdout; errors to stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from validation.agreement import DimensionAgreement
from validation.management.commands._shared import (
    add_format_argument,
    add_snapshot_arguments,
    checked_json,
    frozen_json,
    json_text,
    non_negative_int,
)
from validation.models import ReportSnapshot
from validation.reports import ReportParameters, UnknownJudgeRun, build_report
from validation.reports.render import render_dimensions_csv, render_dimensions_latex, render_dimensions_markdown
from validation.selectors import project_dimension_agreement
from validation.services import render_report, report_snapshot_check, report_snapshot_create

BAD_INPUT = 1
#: Resamples when a report is asked for and --bootstrap is not given (the report page's default).
REPORT_BOOTSTRAP = 1000
UNKNOWN_PROJECT = "no project with slug {slug!r}"
UNKNOWN_SNAPSHOT = "no snapshot {id} in project {slug!r}"


class Command(BaseCommand):
    help = "Agreement measures for a project's annotations (and a judge run), as JSON, Markdown, LaTeX or CSV."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug", help="project slug")
        add_format_argument(parser)
        parser.add_argument("--with-judge", type=int, metavar="RUN_ID", help="compare people with this judge run")
        parser.add_argument(
            "--judge-as-rater", action="store_true", help="also count the judge among the raters in the coefficients"
        )
        parser.add_argument(
            "--bootstrap",
            type=non_negative_int,
            metavar="N",
            help=f"bootstrap resamples for CIs (0; {REPORT_BOOTSTRAP} with --report/--freeze)",
        )
        parser.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="bootstrap seed (0)")
        parser.add_argument(
            "--weights", choices=("linear", "quadratic"), default="linear", help="weighted kappa in the paper tables"
        )
        parser.add_argument("--source", action="append", choices=("web", "api", "import"), help="annotation sources")
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--report", action="store_true", help="print the kind's paper tables")
        add_snapshot_arguments(parser, what, frozen="a snapshot of the report")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(slug=options["slug"])
        except Project.DoesNotExist:
            raise CommandError(UNKNOWN_PROJECT.format(slug=options["slug"]), returncode=BAD_INPUT) from None
        if options["check"] is not None:
            self._check(project, options["check"])
            return
        reporting = options["report"] or options["freeze"]
        bootstrap = options["bootstrap"] if options["bootstrap"] is not None else (REPORT_BOOTSTRAP if reporting else 0)
        parameters = ReportParameters(
            judge_run_id=options["with_judge"],
            bootstrap=bootstrap,
            seed=options["seed"],
            weights=options["weights"],
            sources=tuple(options["source"] or ()),
        )
        try:
            if options["freeze"]:
                self._freeze(project, parameters, options["title"])
            elif options["report"]:
                self._report(project, parameters, options["format"])
            else:
                self._dimensions(project, parameters, options["format"], options["judge_as_rater"])
        except (UnknownJudgeRun, ValueError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None

    def _write(self, text: str) -> None:
        self.stdout.write(text, ending="" if text.endswith("\n") else "\n")

    def _dimensions(self, project: Project, parameters: ReportParameters, fmt: str, judge_as_rater: bool) -> None:
        results = project_dimension_agreement(project=project, parameters=parameters, judge_as_rater=judge_as_rater)
        if fmt == "json":
            self._write(json_text({"dimensions": {name: r.to_json_dict() for name, r in results.items()}}))
        else:
            renderers: dict[str, Callable[[Mapping[str, DimensionAgreement]], str]] = {
                "md": render_dimensions_markdown,
                "latex": render_dimensions_latex,
                "csv": render_dimensions_csv,
            }
            self._write(renderers[fmt](results))

    def _report(self, project: Project, parameters: ReportParameters, fmt: str) -> None:
        report = build_report(project=project, parameters=parameters)
        if fmt == "json":
            self._write(
                json_text(
                    {
                        "project": report.project,
                        "kind": report.kind,
                        "inputs_sha256": report.inputs_sha256,
                        "parameters": report.parameters.to_json_dict(),
                        "library_versions": report.library_versions,
                        **report.numbers(),
                    }
                )
            )
        else:
            self._write(render_report(report, fmt))

    def _freeze(self, project: Project, parameters: ReportParameters, title: str) -> None:
        snapshot = report_snapshot_create(project=project, parameters=parameters, title=title)
        self._write(frozen_json(project, snapshot))

    def _check(self, project: Project, snapshot_id: int) -> None:
        snapshot = ReportSnapshot.objects.filter(pk=snapshot_id, project=project).first()
        if snapshot is None:
            raise CommandError(UNKNOWN_SNAPSHOT.format(id=snapshot_id, slug=project.slug), returncode=BAD_INPUT)
        self._write(checked_json(snapshot, report_snapshot_check(snapshot=snapshot)))
