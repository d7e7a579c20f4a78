"""Reads: which projects a person sees, and how far along each one is."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, OuterRef, Q, Subquery

from annotation import sql
from annotation.models import Annotation, Assignment, ImportJob, Item, Membership, Project, Role


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


# Every page and API call asks this; written out, since it runs on each request (see annotation/sql.py).
PROJECT_WITH_ROLES_SQL = """
SELECT p.*, m.role AS member_role
FROM annotation_project p LEFT JOIN annotation_membership m ON m.project_id = p.id AND m.user_id = %s
WHERE p.slug = %s
"""


def project_with_roles(*, slug: str, user) -> tuple[Project | None, set[str]]:
    """The project and the user's roles in it (empty for outsiders), or (None, set()): one query."""
    rows = list(Project.objects.raw(PROJECT_WITH_ROLES_SQL, [user.pk, slug]))
    if not rows:
        return None, set()
    return rows[0], {row.member_role for row in rows if row.member_role}


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
        if Role.ANNOTATOR in roles[project.pk]:
            target = fair_share(items=project.n_items, overlap=project.overlap, annotators=project.n_annotators)
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


def fair_share(*, items: int, overlap: int, annotators: int) -> int:
    """Items one annotator should do so that every item reaches ``overlap`` raters."""
    return min(items, math.ceil(items * overlap / annotators)) if annotators else 0


@dataclass(frozen=True)
class AnnotatorProgress:
    done: int
    target: int

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.target)) if self.target else 0


PROJECT_SIZE_SECONDS = 60


def project_size_key(project_id: int) -> str:
    return f"concord:project-size:{project_id}"


def project_size(*, project: Project) -> tuple[int, int]:
    """(regular items, annotating members). Shown beside every item, so kept in the cache for a
    minute: counting a large project's items on each request would cost more than the rest of it."""
    key = project_size_key(project.pk)
    found = cache.get(key)
    if found is None:
        items = Item.objects.filter(project=project, gold_value__isnull=True).count()
        annotators = (
            Membership.objects.filter(project=project, role__in=[Role.ANNOTATOR, Role.EXPERT])
            .values("user_id")
            .distinct()
            .count()
        )
        found = (items, annotators)
        cache.set(key, found, PROJECT_SIZE_SECONDS)
    return tuple(found)


def annotator_progress(*, project: Project, user) -> AnnotatorProgress:
    (done,) = sql.fetch_one(
        "SELECT COUNT(*) FROM annotation_assignment WHERE project_id = %s AND annotator_id = %s AND status = %s",
        [project.pk, user.pk, Assignment.Status.SUBMITTED],
    )
    items, annotators = project_size(project=project)
    return AnnotatorProgress(done=done, target=fair_share(items=items, overlap=project.overlap, annotators=annotators))


def latest_own_value(*, item: Item, user) -> dict | None:
    return (
        Annotation.objects.filter(item=item, rater=user.username)
        .order_by("-version")
        .values_list("value", flat=True)
        .first()
    )


def own_history(*, project: Project, user, limit: int = 200) -> list[Assignment]:
    """The user's finished items, newest first, each with the number of its latest version."""
    latest = Annotation.objects.filter(item=OuterRef("item_id"), rater=user.username).order_by("-version")
    return list(
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SUBMITTED)
        .select_related("item")
        .annotate(
            latest_version=Subquery(latest.values("version")[:1]), latest_at=Subquery(latest.values("created_at")[:1])
        )
        .order_by("-completed_at")[:limit]
    )


def last_submitted(*, project: Project, user) -> Assignment | None:
    return (
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SUBMITTED)
        .order_by("-completed_at")
        .first()
    )


def peer_values(*, item: Item, user) -> list[dict]:
    """Other raters' latest values on an item — only for kinds and roles allowed to see them (reviews)."""
    newest: dict[str, dict] = {}
    for rater, value in (
        Annotation.objects.filter(item=item)
        .exclude(rater=user.username)
        .order_by("rater", "version")
        .values_list("rater", "value")
    ):
        newest[rater] = value
    return [{"rater": rater, "value": value} for rater, value in newest.items()]


def visible_suggestion(*, assignment: Assignment):
    """The LLM suggestion this annotator sees for this item, or None (hidden by the project, or none yet)."""
    if not assignment.suggestion_visible:
        return None
    from judges.selectors import suggestion_for_display  # judges depends on annotation, not the reverse

    return suggestion_for_display(item=assignment.item)


@dataclass(frozen=True)
class AnnotatorStats:
    username: str
    submitted: int
    skipped: int
    target: int
    median_seconds: float | None
    qualification_answered: int
    qualification_accuracy: float | None  # mean agreement with the known answers, 0-1


def annotator_stats(*, project: Project) -> list[AnnotatorStats]:
    """Per annotator: progress, median seconds per item (first versions), accuracy on qualification items."""
    people = list(
        Membership.objects.filter(project=project, role__in=[Role.ANNOTATOR, Role.EXPERT])
        .values_list("user__username", flat=True)
        .distinct()
        .order_by("user__username")
    )
    counts: dict[tuple[str, str], int] = {
        (row["annotator__username"], row["status"]): row["n"]
        for row in Assignment.objects.filter(project=project)
        .values("annotator__username", "status")
        .annotate(n=Count("pk"))
    }
    seconds: dict[str, list[float]] = {}
    first_versions = Annotation.objects.filter(project=project, version=1, seconds_on_item__isnull=False)
    for rater, value in first_versions.values_list("rater", "seconds_on_item").iterator(chunk_size=5000):
        seconds.setdefault(rater, []).append(value)
    accuracy = _qualification_scores(project)
    items = Item.objects.filter(project=project, gold_value__isnull=True).count()
    share = fair_share(items=items, overlap=project.overlap, annotators=len(people))
    rows = []
    for username in people:
        scores = accuracy.get(username, [])
        rows.append(
            AnnotatorStats(
                username=username,
                submitted=counts.get((username, Assignment.Status.SUBMITTED), 0),
                skipped=counts.get((username, Assignment.Status.SKIPPED), 0),
                target=share,
                median_seconds=statistics.median(seconds[username]) if seconds.get(username) else None,
                qualification_answered=len(scores),
                qualification_accuracy=sum(scores) / len(scores) if scores else None,
            )
        )
    return rows


def _qualification_scores(project: Project) -> dict[str, list[float]]:
    """Each rater's latest answer on each qualification item, scored by the kind against the known answer."""
    kind = project.task_kind
    latest: dict[tuple[int, str], tuple[dict, dict]] = {}
    rows = (
        Annotation.objects.filter(project=project, item__gold_value__isnull=False)
        .order_by("item_id", "rater", "version")
        .values_list("item_id", "rater", "value", "item__gold_value")
    )
    for item_id, rater, value, gold in rows:
        latest[(item_id, rater)] = (value, gold)
    scores: dict[str, list[float]] = {}
    for (_, rater), (value, gold) in latest.items():
        scores.setdefault(rater, []).append(kind.gold_score(value, gold))
    return scores


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
