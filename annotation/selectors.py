"""Reads: which projects a person sees, and how far along each one is."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Q

from annotation.models import Annotation, ImportJob, Item, Membership, Project, Role


@dataclass(frozen=True)
class ProjectProgress:
    project: Project
    roles: tuple[str, ...]
    items: int
    items_complete: int  # items with at least `overlap` distinct raters
    my_done: int  # items this user has annotated
    my_target: int  # this user's fair share: items × k / annotators

    @property
    def percent_complete(self) -> int:
        return round(100 * self.items_complete / self.items) if self.items else 0

    @property
    def my_percent(self) -> int:
        return min(100, round(100 * self.my_done / self.my_target)) if self.my_target else 0


def project_roles(*, project: Project, user) -> set[str]:
    if not user.is_authenticated:
        return set()
    return set(Membership.objects.filter(project=project, user=user).values_list("role", flat=True))


def projects_for_user(*, user) -> list[ProjectProgress]:
    """Every project the user belongs to, with their roles and progress (a few queries per project)."""
    roles: dict[int, list[str]] = {}
    for project_id, role in Membership.objects.filter(user=user).values_list("project_id", "role"):
        roles.setdefault(project_id, []).append(role)
    projects = Project.objects.filter(pk__in=roles).annotate(
        n_items=Count("items", distinct=True),
        n_annotators=Count("memberships", filter=Q(memberships__role=Role.ANNOTATOR), distinct=True),
    )
    done = dict(
        Annotation.objects.filter(project_id__in=roles, rater=user.username)
        .values("project_id")
        .annotate(n=Count("item_id", distinct=True))
        .values_list("project_id", "n")
    )
    rows = []
    for project in projects:
        target = 0
        if Role.ANNOTATOR in roles[project.pk] and project.n_annotators:
            target = min(project.n_items, math.ceil(project.n_items * project.overlap / project.n_annotators))
        rows.append(
            ProjectProgress(
                project=project,
                roles=tuple(sorted(roles[project.pk])),
                items=project.n_items,
                items_complete=items_complete(project=project),
                my_done=done.get(project.pk, 0),
                my_target=target,
            )
        )
    return rows


def items_complete(*, project: Project) -> int:
    return (
        Annotation.objects.filter(project=project)
        .values("item_id")
        .annotate(raters=Count("rater", distinct=True))
        .filter(raters__gte=project.overlap)
        .count()
    )


def project_summary(*, project: Project) -> dict:
    return {
        "items": Item.objects.filter(project=project).count(),
        "qualification_items": Item.objects.filter(project=project, gold_value__isnull=False).count(),
        "annotations": Annotation.objects.filter(project=project).count(),
        "raters": Annotation.objects.filter(project=project).values("rater").distinct().count(),
        "items_complete": items_complete(project=project),
        "members": Membership.objects.filter(project=project).select_related("user").order_by("role", "user__username"),
    }


def import_progress_key(job_id: int) -> str:
    return f"concord:import-progress:{job_id}"


@dataclass(frozen=True)
class ImportProgress:
    job: ImportJob
    bytes_read: int
    records: int

    @property
    def percent(self) -> int:
        if self.job.status == ImportJob.Status.DONE:
            return 100
        return min(99, round(100 * self.bytes_read / self.job.size_bytes)) if self.job.size_bytes else 0


def import_job_progress(*, job: ImportJob) -> ImportProgress:
    """The job row says the outcome; the cache says how far a running import has read."""
    seen = cache.get(import_progress_key(job.pk)) or {}
    return ImportProgress(job=job, bytes_read=seen.get("bytes", 0), records=seen.get("records", 0))
