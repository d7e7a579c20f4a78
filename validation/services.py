"""Writes: freezing a report as a snapshot, and checking a snapshot by recomputing it."""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction

from annotation.errors import ValidationFailed
from annotation.models import Item, Project
from validation.evaluations.snapshots import evaluation_snapshot_check
from validation.goldset import item_state
from validation.models import Adjudication, ReportSnapshot, SnapshotCheck
from validation.reports import Report, ReportParameters, build_report, library_versions
from validation.reports.render import render_csv, render_latex, render_markdown
from validation.snapshotting import snapshot_check_against, snapshot_store

__all__ = [
    "render_report",
    "report_header",
    "report_snapshot_check",
    "report_snapshot_create",
]


def report_header(report: Report) -> str:
    """The provenance lines printed above the tables in every download."""
    parameters = json.dumps(report.parameters.to_json_dict(), sort_keys=True)
    versions = ", ".join(f"{k} {v}" for k, v in report.library_versions.items())
    return (
        f"Concord agreement report: {report.title} ({report.project}, {report.kind})\n"
        f"Inputs SHA-256: {report.inputs_sha256}\n"
        f"Parameters: {parameters}\n"
        f"Libraries: {versions}\n"
    )


def render_report(report: Report, fmt: str) -> str:
    header = report_header(report)
    if fmt == "md":
        return render_markdown(report.tables, header="\n".join(f"> {line}" for line in header.splitlines()))
    if fmt == "latex":
        return render_latex(report.tables, header=header)
    if fmt == "csv":
        return render_csv(report.tables)
    raise ValueError(f"unknown format {fmt!r}; use md, latex or csv")


@transaction.atomic
def report_snapshot_create(
    *, project: Project, parameters: ReportParameters, user: Any = None, title: str = "", report: Report | None = None
) -> ReportSnapshot:
    """Compute the report (or take the one given, computed with ``parameters``) and store it frozen."""
    if report is None:
        report = build_report(project=project, parameters=parameters)
    if report.parameters != parameters or report.project != project.slug:
        raise ValueError("the report given was computed for other parameters or another project")
    return snapshot_store(
        project=project,
        parameters=parameters.to_json_dict(),
        judge_run_id=parameters.judge_run_id,
        judge_label=report.judge.label if report.judge else "",
        inputs_sha256=report.inputs_sha256,
        numbers=report.numbers(),
        library_versions=report.library_versions,
        render=lambda fmt: render_report(report, fmt),
        user=user,
        title=title,
    )


def report_snapshot_check(*, snapshot: ReportSnapshot, user: Any = None) -> SnapshotCheck:
    """Recompute the snapshot's report from today's data with its stored parameters and compare.

    The check says whether the inputs still digest the same, whether every number is identical, and
    whether the library versions are those of the snapshot; it lists the first differing numbers.
    """
    if snapshot.evaluation:  # a frozen paper evaluation recomputes itself
        return evaluation_snapshot_check(snapshot=snapshot, user=user)
    parameters = ReportParameters.from_json_dict(snapshot.parameters)
    # Point values first, then the tables that show them, then intervals: the stored list is capped.
    return snapshot_check_against(
        snapshot=snapshot,
        versions=library_versions(),
        recompute=lambda: build_report(project=snapshot.project, parameters=parameters),
        order=lambda d: (".ci." in d["path"] or "].ci" in d["path"], d["path"].startswith("tables.")),
        user=user,
    )


def adjudication_record(*, project: Project, item: Item, expert, value: dict, note: str = "") -> Adjudication:
    """Store an expert's decision (checked like any value of the kind) as the item's gold."""
    problems = project.task_kind.check_value(value, payload=item.payload)
    if problems:
        raise ValidationFailed(problems)
    with transaction.atomic():
        return Adjudication.objects.create(
            project=project, item=item, expert=expert, value=value, note=note.strip(),
            reasons=item_state(project=project, item=item).reasons,
            saw_hidden_fields=project.adjudicators_see_hidden,
        )  # fmt: skip
