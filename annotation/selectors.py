"""Reads: which projects a person sees, and how far along each one is."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation import sql
from annotation.hooks import suggestion_for_item
from annotation.latest import latest_annotations, latest_values
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


ANNOTATING_ROLES = frozenset({Role.ANNOTATOR, Role.EXPERT})


def project_with_roles(*, slug: str, user) -> tuple[Project | None, set[str]]:
    """The project and the user's roles in it (empty for outsiders), or (None, set()): one query."""
    project, roles, _ = project_with_roles_and_assignment(slug=slug, user=user, assignment_id=None)
    return project, roles


def project_with_roles_and_assignment(
    *, slug: str, user, assignment_id: int | None
) -> tuple[Project | None, set[str], Assignment | None]:
    """``project_with_roles``, and the user's assignment ``assignment_id`` in the project with its
    item (None when there is no such assignment of theirs there), in the same one query. The
    assignment knows whether its annotator may write (``annotator_may_write``) from the same rows."""
    rows = sql.project_with_roles_rows(slug=slug, user_id=user.pk, assignment_id=assignment_id)
    if not rows:
        return None, set(), None
    project = rows[0]
    roles = {row.member_role for row in rows if row.member_role}
    found = None if assignment_id is None else sql.assignment_in_row(project, user_id=user.pk)
    if found is not None:
        found.project = found.item.project = project
        found.annotator = user
        found.annotator_may_write = project.archived_at is None and any(
            row.member_role in ANNOTATING_ROLES and not row.member_paused for row in rows
        )
    return project, roles, found


#: The roles shown a project's design (overlap, suggestion exposure and probability, seed, known-answer
#: rate, adjudication rules, revealed fields): an annotator who knew it could tell when a suggestion
#: will be shown or which items check them.
DESIGN_ROLES: frozenset[str] = frozenset({Role.RESEARCHER, Role.EXPERT})


def sees_project_design(*, user, roles: Iterable[str]) -> bool:
    """Whether ``user``, with ``roles`` in a project, is shown its design (superusers are)."""
    return bool(getattr(user, "is_superuser", False)) or not DESIGN_ROLES.isdisjoint(roles)


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
            progress = annotator_progress(project=project, user=user, roles=roles[project.pk], cached=False)
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
# One definition, used by the home page, the workspace, the Team page, the project page and the API:
#
#   done      = the annotator's submitted assignments (regular and qualification items);
#   share     = for members with the Annotator role, their fair share of the regular items,
#               ceil(items × k / members with the Annotator role) capped at the items, plus every
#               qualification item (everyone gets all of those); 0 for members without that role
#               (experts only), who have no quota;
#   available = what the assignment engine can still give them: the items they hold, the
#               qualification items they have not had, the open regular items they have not had, and
#               the regular items they have not had that are full only because someone left them
#               held past CONCORD_HOLD_SECONDS (the next claim gives those places back);
#   quota     = done + min(available, max(share - done, 1)).
#
# So done <= quota always (never past 100 %), and quota == done exactly when nothing is available,
# which is when the workspace says "Nothing left for you here" — also while others hold the items
# that are left. Past the share, the quota stays one ahead of done for as long as the workspace
# serves more. Items the annotator skipped count neither as done nor as available.


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
    """The quota defined above: done, plus the rest of the share (at least one item while anything is
    available), never more than what is available."""
    return done + min(available, max(share - done, 1))


@dataclass(frozen=True)
class ProjectSize:
    regular: int  # items without a known answer
    qualification: int  # items with one
    annotators: int  # distinct members with the Annotator role (they have quotas)

    def share(self, *, overlap: int) -> int:
        return fair_share(items=self.regular, overlap=overlap, annotators=self.annotators) + self.qualification


PROJECT_SIZE_SECONDS = 60
OPEN_ITEMS_SECONDS = 5


def project_size_key(project_id: int) -> str:
    return f"concord:project-size:v3:{project_id}"


def project_size_changed(*, project_id: int) -> None:
    """The one path by which a write that adds or removes items or annotators drops the cached size:
    at once, and again when the transaction commits (a request reading meanwhile would cache the old
    counts until then)."""
    key = project_size_key(project_id)
    cache.delete(key)
    transaction.on_commit(lambda: cache.delete(key))


def open_items_key(project_id: int) -> str:
    return f"concord:open-items:{project_id}"


def project_size(*, project: Project) -> ProjectSize:
    """Regular and qualification items, members with quotas. Shown beside every item, so kept in the
    cache for a minute: counting a large project's items on each request would cost more than the rest
    of it. Imports and membership changes drop the entry (``project_size_changed``)."""
    key = project_size_key(project.pk)
    found = cache.get(key)
    if found is None:
        by_kind = Item.objects.filter(project=project).aggregate(
            regular=Count("pk", filter=Q(gold_value__isnull=True)),
            qualification=Count("pk", filter=Q(gold_value__isnull=False)),
        )
        annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR).values("user_id").distinct()
        found = (by_kind["regular"], by_kind["qualification"], annotators.count())
        cache.set(key, found, PROJECT_SIZE_SECONDS)
    return ProjectSize(*found)


def member_share(*, project: Project, size: ProjectSize, roles: Iterable[str]) -> int:
    """The share defined above for a member with these roles."""
    return size.share(overlap=project.overlap) if Role.ANNOTATOR in roles else 0


def held_before() -> datetime:
    """Holds opened before this moment have expired (CONCORD_HOLD_SECONDS)."""
    return timezone.now() - timedelta(seconds=settings.CONCORD_HOLD_SECONDS)


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
    open_not_had, qualification_had, stale_not_had = sql.available_counts(
        project_id=project.pk, user_id=user.pk, held_before=held_before()
    )
    return held + max(0, size.qualification - qualification_had) + open_not_had + stale_not_had


def annotator_progress(
    *,
    project: Project,
    user,
    roles: Iterable[str],
    nothing_left: bool = False,
    cached: bool = True,
    counts: dict[str, int] | None = None,
    size: ProjectSize | None = None,
) -> AnnotatorProgress:
    """The annotator's done count and quota (defined above), for a member with these ``roles``.

    The workspace asks on every request, so this stays cheap: one index-only count of the user's
    assignments, the project's size from the cache, and the open-item count from a cache of a few
    seconds. Only when that count cannot show that enough is available (near the end of the user's
    share) does it count exactly. ``nothing_left`` says the engine just found nothing for them;
    ``cached=False`` counts open items afresh (pages that are not on the hot path); ``counts`` (the
    user's assignments by status) and ``size`` come from a caller that read them already (a claim)."""
    counts = _status_counts(project, user) if counts is None else counts
    done = counts.get(Assignment.Status.SUBMITTED, 0)
    held = counts.get(Assignment.Status.ASSIGNED, 0)
    skipped = counts.get(Assignment.Status.SKIPPED, 0)
    size = project_size(project=project) if size is None else size
    to_go = max(member_share(project=project, size=size, roles=roles) - done, 1)
    if nothing_left:
        available = 0
    elif held >= to_go:
        available = held
    elif _open_items(project, cached=cached) - (done + held + skipped) >= to_go - held:
        # Open items they never had are at least all open items less every item they ever had.
        available = to_go
    else:
        available = _available(project, user, size=size, held=held)
    quota = annotator_quota(share=to_go + done, done=done, available=available)
    return AnnotatorProgress(done=done, target=quota, held=held, skipped=skipped)


@dataclass(frozen=True)
class TeamAvailability:
    """What everyone in a project can still be given, counted once for all of them (annotator_quota)."""

    size: ProjectSize
    open_items: int
    had_open: dict[int, int]  # per annotator id: open regular items they have had
    had_qualification: dict[int, int]  # per annotator id: qualification items they have had
    stale_items: int  # regular items full only because of holds past CONCORD_HOLD_SECONDS
    had_stale: dict[int, int]  # per annotator id: those items they have had

    def available(self, *, user_id: int, held: int) -> int:
        return (
            held
            + max(0, self.size.qualification - self.had_qualification.get(user_id, 0))
            + max(0, self.open_items - self.had_open.get(user_id, 0))
            + self.stale_items
            - self.had_stale.get(user_id, 0)
        )


def team_availability(*, project: Project) -> TeamAvailability:
    """The parts of ``available`` (defined above) for every member at once: two queries."""
    stale_holds = Assignment.objects.filter(
        project=project, status=Assignment.Status.ASSIGNED, opened_at__lt=held_before()
    ).values("item_id")
    stale = Q(is_open=False, gold_value__isnull=True, held_out=False, pk__in=stale_holds)
    items = Item.objects.filter(project=project).aggregate(
        open=Count("pk", filter=Q(is_open=True)), stale=Count("pk", filter=stale)
    )
    had_open, had_qualification, had_stale = {}, {}, {}
    for annotator_id, n_open, n_qualification, n_stale in (
        Assignment.objects.filter(project=project)
        .order_by()
        .values("annotator_id")
        .annotate(
            n_open=Count("pk", filter=Q(item__is_open=True)),
            n_qualification=Count("pk", filter=Q(item__gold_value__isnull=False)),
            n_stale=Count(
                "pk",
                filter=Q(
                    item__is_open=False, item__gold_value__isnull=True, item__held_out=False, item__in=stale_holds
                ),
            ),
        )
        .values_list("annotator_id", "n_open", "n_qualification", "n_stale")
    ):
        had_open[annotator_id], had_qualification[annotator_id], had_stale[annotator_id] = (
            n_open,
            n_qualification,
            n_stale,
        )
    return TeamAvailability(
        size=project_size(project=project),
        open_items=items["open"],
        had_open=had_open,
        had_qualification=had_qualification,
        stale_items=items["stale"],
        had_stale=had_stale,
    )


def latest_own_value(*, item: Item, user) -> dict | None:
    return latest_values([item.pk], rater=user.username).get(item.pk, {}).get(user.username)


def own_history(*, project: Project, user, limit: int = 200) -> list[Assignment]:
    """The user's finished items, newest first, each with its latest version: number, time and value."""
    done = list(
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SUBMITTED)
        .select_related("item")
        .order_by("-completed_at")[:limit]
    )
    newest = {
        annotation.item_id: annotation
        for annotation in latest_annotations(item_ids=[a.item_id for a in done], rater=user.username).only(
            "item_id", "version", "created_at", "value"
        )
    }
    for assignment in done:
        latest = newest.get(assignment.item_id)
        assignment.latest_version = latest.version if latest else None
        assignment.latest_at = latest.created_at if latest else None
        assignment.latest_value = latest.value if latest else None
    return done


def own_skipped(*, project: Project, user, limit: int = 200) -> list[Assignment]:
    """The items the user skipped, newest first, with their reasons. Each carries ``answerable``: whether
    it can still be answered (a known-answer item always; any other while it has fewer than k annotators,
    as ``assignment_unskip`` decides), so the history offers "Answer now" only where it would work."""
    skipped = list(
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.SKIPPED)
        .select_related("item")
        .order_by("-completed_at")[:limit]
    )
    for assignment in skipped:
        item = assignment.item
        assignment.answerable = item.gold_value is not None or item.assigned_count < project.overlap
    return skipped


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
    newest = latest_values([item.pk], exclude_rater=user.username).get(item.pk, {})
    return [{"rater": rater, "value": value} for rater, value in newest.items()]


def visible_suggestion(*, assignment: Assignment):
    """The LLM suggestion this annotator sees for this item, or None (hidden by the project, or none
    when the item was served). A claim finds it once and leaves it on the assignment."""
    if not assignment.suggestion_visible:
        return None
    if "suggestion" not in assignment.__dict__:
        assignment.suggestion = suggestion_for_item(item=assignment.item)
    return assignment.suggestion


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
    """Per annotating member: progress, median seconds per item (first versions), accuracy on
    qualification items."""
    people: dict[str, tuple[int, set[str]]] = {}
    for user_id, username, role in (
        Membership.objects.filter(project=project, role__in=[Role.ANNOTATOR, Role.EXPERT])
        .order_by("user__username")
        .values_list("user_id", "user__username", "role")
    ):
        people.setdefault(username, (user_id, set()))[1].add(role)
    counts: dict[tuple[str, str], int] = {
        (row["annotator__username"], row["status"]): row["n"]
        for row in Assignment.objects.filter(project=project)
        .values("annotator__username", "status")
        .annotate(n=Count("pk"))
    }
    seconds: dict[str, list[float]] = {}
    first_versions = Annotation.objects.filter(project=project, version=1, seconds_on_item__isnull=False)
    for rater, value in first_versions.values_list("rater", "seconds_on_item").iterator(chunk_size=5000):
        seconds.setdefault(rater, []).append(cast(float, value))  # the query leaves out nulls
    accuracy = _qualification_scores(project)
    team = team_availability(project=project)
    rows = []
    for username, (user_id, roles) in people.items():
        scores = accuracy.get(username, [])
        done = counts.get((username, Assignment.Status.SUBMITTED), 0)
        held = counts.get((username, Assignment.Status.ASSIGNED), 0)
        rows.append(
            AnnotatorStats(
                username=username,
                submitted=done,
                skipped=counts.get((username, Assignment.Status.SKIPPED), 0),
                target=annotator_quota(
                    share=member_share(project=project, size=team.size, roles=roles),
                    done=done,
                    available=team.available(user_id=user_id, held=held),
                ),
                median_seconds=statistics.median(seconds[username]) if seconds.get(username) else None,
                qualification_answered=len(scores),
                qualification_accuracy=sum(scores) / len(scores) if scores else None,
            )
        )
    return rows


def _qualification_scores(project: Project) -> dict[str, list[float]]:
    """Each rater's latest answer on each qualification item, scored by the kind against the known answer."""
    kind = project.task_kind
    rows = (
        latest_annotations(project=project)
        .filter(item__gold_value__isnull=False)
        .order_by("item_id", "rater")
        .values_list("rater", "value", "item__gold_value")
    )
    scores: dict[str, list[float]] = {}
    for rater, value, gold in rows:
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


IMPORT_HISTORY_PAGE = 10


def import_history(*, project: Project, page: Any = 1) -> Page:
    """One page of the project's imports, newest first, each with who made it and how far it got.
    A page number that is not one (text, past the end) gives the nearest page."""
    jobs = ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-pk")
    shown: Page[Any] = Paginator(jobs, IMPORT_HISTORY_PAGE).get_page(page)
    shown.object_list = [import_job_progress(job=job) for job in shown.object_list]
    return shown
