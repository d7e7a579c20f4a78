"""Reads: which projects a person sees, and how far along each one is."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.core.cache import cache
from django.db.models import Count, JSONField, OuterRef, Q, Subquery
from django.utils import timezone

from annotation import sql
from annotation.hooks import suggestion_for_item
from annotation.models import Annotation, Assignment, ImportJob, Item, Membership, Project, Role


@dataclass(frozen=True)
class ProjectProgress:
    project: Project
    roles: tuple[str, ...]
    items: int
    items_complete: int  # items with at least `overlap` distinct raters
    my_done: int  # this user's submitted items (see "an annotator's quota and progress" below)
    my_target: int  # this user's quota (0 when they do not annotate here)

    @property
    def percent_complete(self) -> int:
        return round(100 * self.items_complete / self.items) if self.items else 0

    @property
    def my_percent(self) -> int:
        return min(100, round(100 * self.my_done / self.my_target)) if self.my_target else 0


def project_with_roles(*, slug: str, user) -> tuple[Project | None, set[str]]:
    """The project and the user's roles in it (empty for outsiders), or (None, set()): one query."""
    rows = sql.project_with_roles_rows(slug=slug, user_id=user.pk)
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
    projects = Project.objects.filter(pk__in=roles).annotate(n_items=Count("items", distinct=True))
    rows = []
    for project in projects:
        if project.archived_at is not None and Role.RESEARCHER not in roles[project.pk]:
            continue  # archived: only its researchers still list it
        progress = None
        if set(roles[project.pk]) & {Role.ANNOTATOR, Role.EXPERT}:
            progress = annotator_progress(project=project, user=user, cached=False)
        rows.append(
            ProjectProgress(
                project=project,
                roles=tuple(sorted(roles[project.pk])),
                items=project.n_items,
                items_complete=items_complete(project=project),
                my_done=progress.done if progress else 0,
                my_target=progress.target if progress else 0,
            )
        )
    return rows


def fair_share(*, items: int, overlap: int, annotators: int) -> int:
    """Regular items one annotator should do so that every item reaches ``overlap`` raters."""
    return min(items, math.ceil(items * overlap / annotators)) if annotators else 0


# -- an annotator's quota and progress ------------------------------------------------------------
#
# One definition, used by the home page, the workspace and the researcher's table:
#
#   done      = the annotator's submitted assignments (regular and qualification items);
#   share     = their fair share of the regular items, ceil(items × k / annotating members) capped
#               at the items, plus every qualification item (everyone gets all of those);
#   available = what the assignment engine can still give them: the items they hold, the
#               qualification items they have not had, and the open regular items they have not had;
#   quota     = min(max(share, done), done + available).
#
# So done <= quota always (never past 100 %), and quota == done exactly when nothing is available,
# which is when the workspace says "Nothing left for you here". Items the annotator skipped count
# neither as done nor as available.


@dataclass(frozen=True)
class AnnotatorProgress:
    done: int
    target: int  # the quota
    held: int = 0
    skipped: int = 0

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.target)) if self.target else 0

    @property
    def has_closed(self) -> bool:
        """Whether the annotator has submitted or skipped anything here ("undo last" has a target)."""
        return bool(self.done or self.skipped)


def annotator_quota(*, share: int, done: int, available: int) -> int:
    """The quota defined above: the fair share, raised to what is done, lowered to what can still be done."""
    return min(max(share, done), done + available)


@dataclass(frozen=True)
class ProjectSize:
    regular: int  # items without a known answer
    qualification: int  # items with one
    annotators: int  # distinct members who annotate (annotators and experts)

    def share(self, *, overlap: int) -> int:
        return fair_share(items=self.regular, overlap=overlap, annotators=self.annotators) + self.qualification


PROJECT_SIZE_SECONDS = 60
OPEN_ITEMS_SECONDS = 5


def project_size_key(project_id: int) -> str:
    return f"concord:project-size:v2:{project_id}"


def open_items_key(project_id: int) -> str:
    return f"concord:open-items:{project_id}"


def project_size(*, project: Project) -> ProjectSize:
    """Regular and qualification items, annotating members. Shown beside every item, so kept in the
    cache for a minute: counting a large project's items on each request would cost more than the rest
    of it. Imports and membership changes drop the entry."""
    key = project_size_key(project.pk)
    found = cache.get(key)
    if found is None:
        by_kind = Item.objects.filter(project=project).aggregate(
            regular=Count("pk", filter=Q(gold_value__isnull=True)),
            qualification=Count("pk", filter=Q(gold_value__isnull=False)),
        )
        annotators = (
            Membership.objects.filter(project=project, role__in=[Role.ANNOTATOR, Role.EXPERT])
            .values("user_id")
            .distinct()
            .count()
        )
        found = (by_kind["regular"], by_kind["qualification"], annotators)
        cache.set(key, found, PROJECT_SIZE_SECONDS)
    return ProjectSize(*found)


def _open_items(project: Project, *, cached: bool) -> int:
    """Regular items still open (fewer than k raters hold or did them)."""
    key = open_items_key(project.pk)
    found = cache.get(key) if cached else None
    if found is None:
        found = sql.open_item_count(project_id=project.pk)
        cache.set(key, found, OPEN_ITEMS_SECONDS)
    return found


def _status_counts(project: Project, user) -> dict[str, int]:
    return sql.assignment_status_counts(project_id=project.pk, user_id=user.pk)


def _available(project: Project, user, *, size: ProjectSize, held: int) -> int:
    # What the assignment engine could still give one annotator besides the items they hold.
    open_not_had, qualification_had = sql.available_counts(project_id=project.pk, user_id=user.pk)
    return held + max(0, size.qualification - qualification_had) + open_not_had


def annotator_progress(*, project: Project, user, nothing_left: bool = False, cached: bool = True) -> AnnotatorProgress:
    """The annotator's done count and quota (defined above).

    The workspace asks on every request, so this stays cheap: one index-only count of the user's
    assignments, the project's size from the cache, and the open-item count from a cache of a few
    seconds. Only when that count cannot show that enough is available (near the end of the user's
    share) does it count exactly. ``nothing_left`` says the engine just found nothing for them;
    ``cached=False`` counts open items afresh (pages that are not on the hot path)."""
    counts = _status_counts(project, user)
    done = counts.get(Assignment.Status.SUBMITTED, 0)
    held = counts.get(Assignment.Status.ASSIGNED, 0)
    skipped = counts.get(Assignment.Status.SKIPPED, 0)
    size = project_size(project=project)
    ceiling = max(size.share(overlap=project.overlap), done)
    needed = ceiling - done - held  # beyond what they hold, for the quota to reach the ceiling
    if nothing_left:
        available = 0
    elif needed <= 0:
        available = held
    elif _open_items(project, cached=cached) - (done + held + skipped) >= needed:
        # Open items they never had are at least all open items less every item they ever had.
        available = held + needed
    else:
        available = _available(project, user, size=size, held=held)
    quota = annotator_quota(share=ceiling, done=done, available=available)
    return AnnotatorProgress(done=done, target=quota, held=held, skipped=skipped)


def latest_own_value(*, item: Item, user) -> dict | None:
    return (
        Annotation.objects.filter(item=item, rater=user.username)
        .order_by("-version")
        .values_list("value", flat=True)
        .first()
    )


def own_history(*, project: Project, user, limit: int = 200) -> list[Assignment]:
    """The user's finished items, newest first, each with its latest version: number, time and value."""
    latest = Annotation.objects.filter(item=OuterRef("item_id"), rater=user.username).order_by("-version")
    return list(
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SUBMITTED)
        .select_related("item")
        .annotate(
            latest_version=Subquery(latest.values("version")[:1]),
            latest_at=Subquery(latest.values("created_at")[:1]),
            latest_value=Subquery(latest.values("value")[:1], output_field=JSONField()),
        )
        .order_by("-completed_at")[:limit]
    )


def own_skipped(*, project: Project, user, limit: int = 200) -> list[Assignment]:
    """The items the user skipped, newest first, with their reasons (each can be answered after all)."""
    return list(
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SKIPPED)
        .select_related("item")
        .order_by("-completed_at")[:limit]
    )


def last_closed(*, project: Project, user) -> Assignment | None:
    """The item the user submitted or skipped last: what "undo last" reopens."""
    return (
        Assignment.objects.filter(
            project=project,
            annotator=user,
            status__in=[Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED],
            completed_at__isnull=False,
        )
        .order_by("-completed_at", "-pk")
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
    return suggestion_for_item(item=assignment.item)


def rater_payload(*, assignment: Assignment) -> dict:
    """The item's payload as its rater may see it, on the workspace and through the API alike: what
    the kind's form shows, plus the hidden fields the project reveals on purpose (blinding)."""
    project = assignment.project
    return project.task_kind.rater_payload(assignment.item.payload, revealed=project.revealed_fields)


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
    size = project_size(project=project)
    share = size.share(overlap=project.overlap)
    open_items = _open_items(project, cached=False)
    # Each annotator's items among the open ones and among the qualification ones: what they cannot get again.
    had_open = dict(
        Assignment.objects.filter(project=project, item__is_open=True)
        .values("annotator__username")
        .annotate(n=Count("pk"))
        .values_list("annotator__username", "n")
    )
    had_qualification = dict(
        Assignment.objects.filter(project=project, item__gold_value__isnull=False)
        .values("annotator__username")
        .annotate(n=Count("pk"))
        .values_list("annotator__username", "n")
    )
    rows = []
    for username in people:
        scores = accuracy.get(username, [])
        done = counts.get((username, Assignment.Status.SUBMITTED), 0)
        held = counts.get((username, Assignment.Status.ASSIGNED), 0)
        available = (
            held
            + max(0, size.qualification - had_qualification.get(username, 0))
            + open_items
            - had_open.get(username, 0)
        )
        rows.append(
            AnnotatorStats(
                username=username,
                submitted=done,
                skipped=counts.get((username, Assignment.Status.SKIPPED), 0),
                target=annotator_quota(share=share, done=done, available=available),
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


# -- an annotator's own pace ----------------------------------------------------------------------

PACE_DAYS = 30


@dataclass(frozen=True)
class PaceDay:
    day: date
    items: int  # first answers given that day (edits are not new items)
    median_seconds: float | None  # median time on item of those answers


@dataclass(frozen=True)
class Pace:
    days: list[PaceDay]  # oldest first, one per calendar day (UTC), days without answers included
    items: int
    median_seconds: float | None

    @property
    def busiest(self) -> int:
        return max((d.items for d in self.days), default=0)

    @property
    def last_day(self) -> date | None:
        return self.days[-1].day if self.days else None


def annotator_pace(*, user, days: int = PACE_DAYS, today: date | None = None) -> Pace:
    """Items per day and median seconds per item over the user's last ``days`` days, all projects.

    Counts first versions of answers given in the workspace or through the API (imported labels
    are not the user's pace)."""
    today = today or timezone.now().date()
    first_day = today - timedelta(days=days - 1)
    since = datetime.combine(first_day, time.min, tzinfo=UTC)
    per_day: dict[date, list[float | None]] = {}
    rows = Annotation.objects.filter(
        rater=user.username,
        version=1,
        source__in=[Annotation.Source.WEB, Annotation.Source.API],
        created_at__gte=since,
    ).values_list("created_at", "seconds_on_item")
    for created_at, seconds in rows.iterator(chunk_size=5000):
        per_day.setdefault(created_at.astimezone(UTC).date(), []).append(seconds)
    series, all_seconds = [], []
    for offset in range(days):
        day = first_day + timedelta(days=offset)
        answers = per_day.get(day, [])
        seconds = [s for s in answers if s is not None]
        all_seconds.extend(seconds)
        series.append(
            PaceDay(day=day, items=len(answers), median_seconds=statistics.median(seconds) if seconds else None)
        )
    return Pace(
        days=series,
        items=sum(d.items for d in series),
        median_seconds=statistics.median(all_seconds) if all_seconds else None,
    )
