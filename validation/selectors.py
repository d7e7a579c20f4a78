"""Reads: the live report of a project (cached until its data change), its figures, its snapshots."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, Prefetch, QuerySet

from annotation.models import Annotation, Item, Project
from judges.models import Suggestion
from validation.agreement import DimensionAgreement
from validation.agreement.dimensions import Progress
from validation.models import ReportSnapshot, SnapshotCheck
from validation.ratings import project_ratings
from validation.reports import Figure, Report, ReportParameters, build_report
from validation.reports.build import judge_info, report_agreement

__all__ = [
    "evaluation_figures",
    "project_data_state",
    "project_dimension_agreement",
    "project_report",
    "project_snapshots",
    "report_cache_key",
    "report_figures",
]

#: How long a computed report stays cached (it is keyed by the data's state, so it never goes stale).
CACHE_SECONDS = getattr(settings, "CONCORD_REPORT_CACHE_SECONDS", 24 * 3600)


def project_data_state(*, project: Project) -> str:
    """A cheap fingerprint of everything a report reads; it changes whenever any of it does.

    Annotations and items are append-only, so their count and highest id say whether anything was
    added or removed; suggestions can be redone in place, so their latest update time counts too.
    """
    # Timestamps too: counts and ids alone repeat when a database is recreated, the times do not.
    state = {
        "project": [project.pk, project.created_at],
        "annotations": list(
            Annotation.objects.filter(project=project)
            .aggregate(n=Count("id"), top=Max("id"), latest=Max("created_at"))
            .values()
        ),
        "items": list(Item.objects.filter(project=project).aggregate(n=Count("id"), top=Max("id")).values()),
    }
    suggestions = Suggestion.objects.filter(item__project=project).aggregate(
        n=Count("id"), top=Max("id"), updated=Max("updated_at")
    )
    state["suggestions"] = [suggestions["n"], suggestions["top"], suggestions["updated"]]
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()[:32]


def _cache_key(project: Project, parameters: ReportParameters) -> str:
    digest = hashlib.sha256(json.dumps(parameters.to_json_dict(), sort_keys=True).encode()).hexdigest()[:24]
    return f"concord:report:{project.pk}:{project_data_state(project=project)}:{digest}"


def project_report(*, project: Project, parameters: ReportParameters, progress: Progress | None = None) -> Report:
    """The project's report for these parameters, computed once per state of its data (any new
    answer, item or suggestion changes the key). ``progress`` follows the bootstrap."""
    key = _cache_key(project, parameters)
    report = cache.get(key)
    if report is None:
        report = build_report(project=project, parameters=parameters, progress=progress)
        cache.set(key, report, CACHE_SECONDS)
    return report


def _figure_uris(figures: Any, key_prefix: str) -> list[tuple[Figure, str]]:
    from validation.plots import svg_data_uri  # matplotlib loads only where a page shows plots

    out = []
    for figure in figures:
        key = f"{key_prefix}:{figure.key}"
        uri = cache.get(key)
        if uri is None:
            uri = svg_data_uri(figure)
            cache.set(key, uri, CACHE_SECONDS)
        out.append((figure, uri))
    return out


def report_cache_key(report: Report) -> str:
    """What identifies a report's rendering: its project, inputs' digest and parameters."""
    parameters = hashlib.sha256(json.dumps(report.parameters.to_json_dict(), sort_keys=True).encode()).hexdigest()[:16]
    return f"{report.project}:{report.inputs_sha256[:32]}:{parameters}"


def report_figures(*, report: Report) -> list[tuple[Figure, str]]:
    """Each figure with its SVG as a data URI (cached with the report's inputs and parameters)."""
    return _figure_uris(report.figures, f"concord:figure-svg:{report_cache_key(report)}")


def evaluation_figures(*, evaluation: Any) -> list[tuple[Figure, str]]:
    """A paper evaluation's figures with their SVG as data URIs (cached with its inputs and parameters)."""
    parameters = hashlib.sha256(json.dumps(evaluation.parameters, sort_keys=True).encode()).hexdigest()[:16]
    prefix = f"concord:evaluation-svg:{evaluation.project}:{evaluation.inputs_sha256[:32]}:{parameters}"
    return _figure_uris(evaluation.figures, prefix)


def project_snapshots(*, project: Project) -> QuerySet[ReportSnapshot]:
    """The project's snapshots, newest first, each with its checks (newest first)."""
    return (
        ReportSnapshot.objects.filter(project=project)
        .select_related("created_by")
        .prefetch_related(Prefetch("checks", queryset=SnapshotCheck.objects.order_by("-checked_at", "-id")))
        .defer("markdown", "latex", "csv", "numbers")
    )


def project_dimension_agreement(
    *,
    project: Project,
    parameters: ReportParameters,
    judge_as_rater: bool = False,
    progress: Progress | None = None,
) -> dict[str, DimensionAgreement]:
    """Every dimension's agreement for a project (the ``agreement`` command's and the API's numbers).

    Raises UnknownJudgeRun when ``parameters.judge_run_id`` names no run of this project.
    """
    judge = judge_info(project, parameters.judge_run_id)
    ratings = project_ratings(project=project, judge_run_id=parameters.judge_run_id, sources=parameters.sources or None)
    agreement, _ = report_agreement(
        ratings, project.task_kind, parameters, judge, judge_as_rater=judge_as_rater, progress=progress
    )
    return agreement.dimensions
