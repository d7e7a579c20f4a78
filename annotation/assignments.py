"""The assignment engine: who annotates which item next.

Each item goes to exactly ``overlap`` distinct annotators. Items sit in a seeded pseudo-random order
(``Item.order_key``); each annotator walks that order from their own seeded starting point, keeping
a cursor, so their order is reproducible, differs from other annotators', and every request is one
walk along a partial index of open items — never a scan of the project. A claim is a conditional
UPDATE (``assigned_count < overlap``), so two annotators asking at once can never push an item
past k. Qualification items (known answers) are mixed in at the project's rate for everyone.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from annotation import sql
from annotation.errors import ConcordError, FieldError, ValidationFailed
from annotation.models import (
    REOPENED,
    Annotation,
    AnnotatorState,
    Assignment,
    Item,
    Membership,
    Project,
    SuggestionExposure,
)
from annotation.services import PROJECT_ARCHIVED, ProjectArchived, annotation_submit

CLAIM_ATTEMPTS = 8
NOT_YOUR_ASSIGNMENT = "this item is not assigned to you"
ALREADY_CLOSED = "this item was already submitted or skipped; open it from your history to edit"
SKIP_NEEDS_REASON = "say why you skip this item"
MEMBER_PAUSED = "your membership in this project is paused: a researcher can resume it"
NOT_SKIPPED = "this item is not one you skipped"
ITEM_NOW_FULL = "this item has meanwhile reached its {overlap} annotators, so it no longer needs your answer"


class NotAssigned(ConcordError):
    code = "not_assigned"
    http_status = 404


class AssignmentClosed(ConcordError):
    code = "assignment_closed"
    http_status = 409


class MemberPaused(ConcordError, PermissionDenied):
    """A paused member is served no new items. A PermissionDenied too, so pages answer 403."""

    code = "member_paused"
    http_status = 403


def seeded_fraction(*parts: Any) -> float:
    """A reproducible number in [0, 1) from the given parts (seed, ids, counters)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def suggestion_exposed(*, project: Project, item_id: int, annotator_id: int) -> bool:
    """Whether the project's exposure setting shows the LLM suggestion to this annotator for this item."""
    if project.suggestion_exposure == SuggestionExposure.SHOWN:
        return True
    if project.suggestion_exposure == SuggestionExposure.RANDOMISED:
        return seeded_fraction(project.seed, "exposure", item_id, annotator_id) < project.suggestion_probability
    return False


def _assignment_with_item(project: Project | None, user, found: Assignment | None) -> Assignment | None:
    """An assignment read by annotation/sql.py, tied to the objects the caller already holds."""
    if found is None:
        return None
    found.annotator = user
    if project is not None:
        found.project = found.item.project = project
    return found


def _state(project: Project, user) -> tuple[int, int, int]:
    """(id, cursor, served) of the user's place in the project's order, locked until the claim ends.
    A paused member gets MemberPaused instead."""
    row = sql.annotator_state_locked(project_id=project.pk, user_id=user.pk)
    if row is not None:
        if row[3]:
            raise MemberPaused(MEMBER_PAUSED)
        return row[:3]
    if Membership.objects.filter(project=project, user=user, paused=True).exists():  # first claim only
        raise MemberPaused(MEMBER_PAUSED)
    start = int(seeded_fraction(project.seed, "start", user.pk) * 2**62)
    # A parallel first request inserting the same row raises IntegrityError: the claim retries.
    state = AnnotatorState.objects.create(project=project, annotator=user, cursor=start)
    return state.pk, state.cursor, state.served


def _not_mine(user):
    return ~Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=user))


def _next_open_item(project: Project, user, cursor: int) -> Item | None:
    """The first open item after the cursor that the user has not had, wrapping round once. The whole
    row comes back, since the page shows it next."""
    for wrapped in (False, True):
        found = sql.next_open_item(project_id=project.pk, cursor=cursor, user_id=user.pk, wrapped=wrapped)
        if found is not None:
            found.project = project
            return found
    return None


def _take_place(project: Project, item_id: int) -> bool:
    """Count one more annotator on the item, unless it already has k. True when the place was taken."""
    return sql.item_take_place(item_id=item_id, overlap=project.overlap)


def _qualification_item(project: Project, user) -> Item | None:
    return (
        Item.objects.filter(project=project, gold_value__isnull=False)
        .filter(_not_mine(user))
        .order_by("order_key")
        .first()
    )


def assignment_current(*, project: Project, user) -> Assignment | None:
    """The item the user holds and has not finished, oldest first."""
    return _assignment_with_item(project, user, sql.current_assignment(project_id=project.pk, user_id=user.pk))


def assignment_claim_next(*, project: Project, user) -> Assignment | None:
    """The user's next item: the one they hold, else a qualification item at the project's rate, else
    the next open item in their order. None when nothing is left for them. An archived project
    serves nothing (ProjectArchived)."""
    if project.archived_at is not None:
        raise ProjectArchived(PROJECT_ARCHIVED)
    current = assignment_current(project=project, user=user)
    if current is not None:
        return assignment_open(assignment=current)
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                state_id, cursor, served = _state(project, user)
                item, advance = None, False
                if project.qualification_rate and seeded_fraction(project.seed, "qual", user.pk, served) < (
                    project.qualification_rate
                ):
                    item = _qualification_item(project, user)
                if item is None:
                    item, advance = _next_open_item(project, user, cursor), True
                    if item is not None and not _take_place(project, item.pk):
                        continue  # someone else took the last place first: look again
                if item is None:
                    # Regular items are all taken: known-answer items the user has not seen still count.
                    item, advance = _qualification_item(project, user), False
                    if item is None:
                        return None
                return _assign(project, user, item, state_id=state_id, cursor=item.order_key if advance else cursor)
        except IntegrityError:
            continue  # a parallel request of the same user claimed this item: the transaction rolled back
    return assignment_current(project=project, user=user)


def _assign(project: Project, user, item: Item, *, state_id: int, cursor: int) -> Assignment:
    """Record the claim and move the user's place on: one served item more, the cursor where it now is."""
    now = timezone.now()
    visible = suggestion_exposed(project=project, item_id=item.pk, annotator_id=user.pk)
    status = Assignment.Status.ASSIGNED
    assignment_id = sql.assignment_insert(
        project_id=project.pk, item_id=item.pk, user_id=user.pk, status=status, suggestion_visible=visible, now=now
    )
    sql.annotator_state_advance(state_id=state_id, cursor=cursor)
    return sql.stored(
        Assignment,
        id=assignment_id,
        project=project,
        item=item,
        annotator=user,
        status=status,
        suggestion_visible=visible,
        created_at=now,
        opened_at=now,
    )


def assignment_for_user(*, assignment_id: int, user, project: Project | None = None) -> Assignment:
    """The user's own assignment (any status), within ``project`` when one is given."""
    if not 0 < assignment_id < 2**63:  # no such row, and the database would refuse the number
        raise NotAssigned(NOT_YOUR_ASSIGNMENT)
    project_id = None if project is None else project.pk
    row = sql.assignment_by_id(assignment_id=assignment_id, user_id=user.pk, project_id=project_id)
    found = _assignment_with_item(project, user, row)
    if found is None:
        raise NotAssigned(NOT_YOUR_ASSIGNMENT)
    return found


def assignment_open(*, assignment: Assignment) -> Assignment:
    """Mark the item as in front of the annotator now: time on item counts from here."""
    assignment.opened_at = timezone.now()
    sql.assignment_mark_opened(assignment_id=assignment.pk, now=assignment.opened_at)
    return assignment


def assignment_skip(*, assignment: Assignment, reason: str) -> Assignment:
    """Skip with a reason; the item's place goes back to the pool for someone else."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed([FieldError("reason", SKIP_NEEDS_REASON)])
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status != Assignment.Status.ASSIGNED:
            raise AssignmentClosed(ALREADY_CLOSED)
        locked.status, locked.skip_reason, locked.completed_at = Assignment.Status.SKIPPED, reason[:500], timezone.now()
        locked.save(update_fields=["status", "skip_reason", "completed_at"])
        if locked.item.gold_value is None:
            Item.objects.filter(pk=locked.item_id).update(assigned_count=F("assigned_count") - 1, is_open=REOPENED)
    return locked


class ItemFull(ConcordError):
    code = "item_full"


def assignment_unskip(*, assignment: Assignment) -> Assignment:
    """Reopen an item the user skipped, so they can answer it after all. Refused (ItemFull) when the
    item has meanwhile reached k annotators: the place the skip gave back was taken by someone else."""
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("project", "item").get(pk=assignment.pk)
        if locked.status != Assignment.Status.SKIPPED:
            raise AssignmentClosed(NOT_SKIPPED)
        project = locked.project
        # Known-answer items go to everyone and the skip gave no place back; others must win one again.
        if locked.item.gold_value is None and not _take_place(project, locked.item_id):
            raise ItemFull(ITEM_NOW_FULL.format(overlap=project.overlap), extra={"overlap": project.overlap})
        locked.status, locked.skip_reason, locked.completed_at = Assignment.Status.ASSIGNED, "", None
        locked.opened_at = timezone.now()
        locked.full_clean(exclude=["project", "item", "annotator"])
        locked.save(update_fields=["status", "skip_reason", "completed_at", "opened_at"])
    return locked


def assignment_submit(
    *, assignment: Assignment, value: Any, idempotency_key: str | None = None, suggestion_visible: bool | None = None
) -> Annotation:
    """Store the annotator's value for their assignment: the first time it closes the assignment, later
    times (an edit from history, an undo) it adds a new version. Nothing is stored if the value is invalid."""
    now = timezone.now()
    seconds = (now - assignment.opened_at).total_seconds() if assignment.opened_at else None
    with transaction.atomic():
        # Close the assignment first: the UPDATE locks the row, so a skip arriving at the same moment
        # waits, and an invalid value below rolls it back. No row changed: already closed, by a
        # submit (this is an edit, a new version) or by a skip (refused).
        closed = sql.assignment_close(assignment_id=assignment.pk, now=now)
        if not closed and sql.assignment_status(assignment_id=assignment.pk) == Assignment.Status.SKIPPED:
            raise AssignmentClosed(ALREADY_CLOSED)
        return annotation_submit(
            item=assignment.item,
            user=assignment.annotator,
            value=value,
            idempotency_key=idempotency_key,
            seconds_on_item=seconds,
            suggestion_visible=assignment.suggestion_visible if suggestion_visible is None else suggestion_visible,
        )
