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

from django.db import IntegrityError, transaction
from django.db.models import BooleanField, Case, Exists, F, OuterRef, Value, When
from django.utils import timezone

from annotation.errors import ConcordError, FieldError, ValidationFailed
from annotation.models import Annotation, AnnotatorState, Assignment, Item, Project, SuggestionExposure
from annotation.services import annotation_submit

CLAIM_ATTEMPTS = 8
NOT_YOUR_ASSIGNMENT = "this item is not assigned to you"
ALREADY_CLOSED = "this item was already submitted or skipped; open it from your history to edit"
SKIP_NEEDS_REASON = "say why you skip this item"


class NotAssigned(ConcordError):
    code = "not_assigned"


class AssignmentClosed(ConcordError):
    code = "assignment_closed"


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


def _state(project: Project, user) -> AnnotatorState:
    start = int(seeded_fraction(project.seed, "start", user.pk) * 2**62)
    state, _ = AnnotatorState.objects.select_for_update().get_or_create(
        project=project, annotator=user, defaults={"cursor": start}
    )
    return state


def _not_mine(user):
    return ~Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=user))


def _next_open_item(project: Project, user, cursor: int) -> Item | None:
    """The first open item after the cursor that the user has not had, wrapping round once. The whole
    row comes back, since the page shows it next."""
    open_items = Item.objects.filter(project=project, is_open=True).filter(_not_mine(user)).order_by("order_key")
    return open_items.filter(order_key__gt=cursor).first() or open_items.filter(order_key__lte=cursor).first()


def _take_place(project: Project, item_id: int) -> bool:
    """Count one more annotator on the item, unless it already has k. True when the place was taken."""
    k = project.overlap
    return bool(
        Item.objects.filter(pk=item_id, is_open=True, assigned_count__lt=k).update(
            assigned_count=F("assigned_count") + 1,
            is_open=Case(
                When(assigned_count__lt=k - 1, then=Value(True)), default=Value(False), output_field=BooleanField()
            ),
        )
    )


def _qualification_item(project: Project, user) -> Item | None:
    return (
        Item.objects.filter(project=project, gold_value__isnull=False)
        .filter(_not_mine(user))
        .order_by("order_key")
        .first()
    )


def assignment_current(*, project: Project, user) -> Assignment | None:
    """The item the user holds and has not finished, oldest first."""
    return (
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.ASSIGNED)
        .select_related("item")
        .order_by("created_at", "pk")
        .first()
    )


def assignment_claim_next(*, project: Project, user) -> Assignment | None:
    """The user's next item: the one they hold, else a qualification item at the project's rate, else
    the next open item in their order. None when nothing is left for them."""
    current = assignment_current(project=project, user=user)
    if current is not None:
        return assignment_open(assignment=current)
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                state = _state(project, user)
                item, advance = None, False
                if project.qualification_rate and seeded_fraction(project.seed, "qual", user.pk, state.served) < (
                    project.qualification_rate
                ):
                    item = _qualification_item(project, user)
                if item is None:
                    item, advance = _next_open_item(project, user, state.cursor), True
                    if item is not None and not _take_place(project, item.pk):
                        continue  # someone else took the last place first: look again
                if item is None:
                    # Regular items are all taken: known-answer items the user has not seen still count.
                    item, advance = _qualification_item(project, user), False
                    if item is None:
                        return None
                assignment = Assignment.objects.create(
                    project=project,
                    item=item,
                    annotator=user,
                    suggestion_visible=suggestion_exposed(project=project, item_id=item.pk, annotator_id=user.pk),
                    opened_at=timezone.now(),
                )
                state.served += 1
                if advance:
                    state.cursor = item.order_key
                state.save(update_fields=["served", "cursor"])
                return assignment
        except IntegrityError:
            continue  # a parallel request of the same user claimed this item: the transaction rolled back
    return assignment_current(project=project, user=user)


def assignment_for_user(*, assignment_id: int, user) -> Assignment:
    try:
        return Assignment.objects.select_related("item__project", "annotator").get(pk=assignment_id, annotator=user)
    except Assignment.DoesNotExist:
        raise NotAssigned(NOT_YOUR_ASSIGNMENT) from None


def assignment_open(*, assignment: Assignment) -> Assignment:
    """Mark the item as in front of the annotator now: time on item counts from here."""
    assignment.opened_at = timezone.now()
    assignment.save(update_fields=["opened_at"])
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
            Item.objects.filter(pk=locked.item_id).update(assigned_count=F("assigned_count") - 1, is_open=True)
    return locked


def assignment_submit(
    *, assignment: Assignment, value: Any, idempotency_key: str | None = None, suggestion_visible: bool | None = None
) -> Annotation:
    """Store the annotator's value for their assignment: the first time it closes the assignment, later
    times (an edit from history, an undo) it adds a new version. Nothing is stored if the value is invalid."""
    seconds = (timezone.now() - assignment.opened_at).total_seconds() if assignment.opened_at else None
    with transaction.atomic():
        # Locked, so a skip arriving at the same moment cannot slip between the check and the write.
        status = Assignment.objects.select_for_update().values_list("status", flat=True).get(pk=assignment.pk)
        if status == Assignment.Status.SKIPPED:
            raise AssignmentClosed(ALREADY_CLOSED)
        annotation = annotation_submit(
            item=assignment.item,
            user=assignment.annotator,
            value=value,
            idempotency_key=idempotency_key,
            seconds_on_item=seconds,
            suggestion_visible=assignment.suggestion_visible if suggestion_visible is None else suggestion_visible,
        )
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ASSIGNED).update(
            status=Assignment.Status.SUBMITTED, completed_at=timezone.now()
        )
    return annotation
