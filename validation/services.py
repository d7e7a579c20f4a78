"""Writes: freezing a report as a snapshot, and checking a snapshot by recomputing it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotation.models import Project
from validation.models import ReportSnapshot, SnapshotCheck
from validation.reports import Report, ReportParameters, build_report, library_versions
from validation.reports.render import render_csv, render_latex, render_markdown

__all__ = [
    "MAX_DIFFERENCES",
    "numbers_digest",
    "render_report",
    "report_header",
    "report_snapshot_check",
    "report_snapshot_create",
]

#: Differing numbers listed on a check (the rest are counted).
MAX_DIFFERENCES = 50


def numbers_digest(numbers: dict[str, Any]) -> str:
    """SHA-256 of the numbers as canonical JSON (sorted keys, no spaces; floats as Python's repr)."""
    text = json.dumps(numbers, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


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
        kind=report.kind,
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


def snapshot_store(
    *,
    project: Project,
    kind: str,
    parameters: dict[str, Any],
    judge_run_id: int | None,
    judge_label: str,
    inputs_sha256: str,
    numbers: dict[str, Any],
    library_versions: dict[str, str],
    render: Callable[[str], str],
    user: Any = None,
    title: str = "",
) -> ReportSnapshot:
    """Store computed numbers frozen with their provenance and their tables in every format
    (agreement reports and the paper evaluations alike)."""
    snapshot = ReportSnapshot(
        project=project,
        title=title,
        kind=kind,
        parameters=parameters,
        judge_run_id=judge_run_id,
        judge_label=judge_label[:400],
        inputs_sha256=inputs_sha256,
        numbers=numbers,
        numbers_sha256=numbers_digest(numbers),
        library_versions=library_versions,
        markdown=render("md"),
        latex=render("latex"),
        csv=render("csv"),
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    snapshot.full_clean()
    snapshot.save()
    return snapshot


def _differences(stored: Any, recomputed: Any, path: str, out: list[dict[str, Any]]) -> None:
    """Every leaf where the two JSON trees differ. Numbers must be equal exactly: same inputs, same
    seed and same library versions give bit-identical results, so any change is reported."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in sorted(set(stored) | set(recomputed)):
            _differences(stored.get(key), recomputed.get(key), f"{path}.{key}" if path else key, out)
    elif isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(recomputed):
        for index, (a, b) in enumerate(zip(stored, recomputed, strict=True)):
            _differences(a, b, f"{path}[{index}]", out)
    elif stored != recomputed:
        out.append({"path": path, "stored": stored, "recomputed": recomputed})


def report_snapshot_check(*, snapshot: ReportSnapshot, user: Any = None) -> SnapshotCheck:
    """Recompute the snapshot's report from today's data with its stored parameters and compare.

    The check says whether the inputs still digest the same, whether every number is identical, and
    whether the library versions are those of the snapshot; it lists the first differing numbers.
    """
    # Deferred: validation.evaluations.snapshots imports this module's digest helpers, so a top import is a cycle.
    from validation.evaluations.snapshots import EVALUATIONS, evaluation_snapshot_check

    if snapshot.kind in EVALUATIONS:  # a frozen paper evaluation (copa_eval, mcq_eval) recomputes itself
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


def snapshot_check_against(
    *,
    snapshot: ReportSnapshot,
    versions: dict[str, str],
    recompute: Callable[[], Any],
    order: Callable[[dict[str, Any]], Any],
    user: Any = None,
) -> SnapshotCheck:
    """Recompute (``recompute()`` returns an object with ``numbers()`` and ``inputs_sha256``) and store
    what matches the snapshot: inputs, every number (the first differences, sorted by ``order``),
    library versions. A failure to recompute is the check's finding, kept on its row."""
    common = {
        "snapshot": snapshot,
        "library_versions": versions,
        "versions_match": versions == snapshot.library_versions,
        "checked_by": user if getattr(user, "is_authenticated", False) else None,
    }
    try:
        result = recompute()
    except Exception as exc:  # noqa: BLE001 - any failure to recompute is the check's finding, kept on its row
        check = SnapshotCheck(
            **common, inputs_sha256="", inputs_match=False, numbers_match=False, error=f"{type(exc).__name__}: {exc}"
        )
        check.save()
        return check
    # Round-trip through JSON so both sides are compared in the form the snapshot stored.
    recomputed = json.loads(json.dumps(result.numbers(), allow_nan=False))
    differences: list[dict[str, Any]] = []
    _differences(snapshot.numbers, recomputed, "", differences)
    differences.sort(key=order)
    check = SnapshotCheck(
        **common,
        inputs_sha256=result.inputs_sha256,
        inputs_match=result.inputs_sha256 == snapshot.inputs_sha256,
        numbers_match=not differences,
        differences=differences[:MAX_DIFFERENCES],
        difference_count=len(differences),
    )
    check.full_clean()
    check.save()
    return check
