"""The assignment engine: who annotates which item next.

Each item goes to exactly ``overlap`` distinct annotators, each annotator in an order of their own
drawn from (project seed, annotator): the project's key range (``Item.order_key``, seeded random) is
cut into about one block per ``BLOCK_ITEMS`` items, each annotator visits the blocks in a seeded
permutation of their own (``block_at``) and takes a block's items in a keyed mix of their keys. The
annotator's place (``AnnotatorState.cursor``) is how far along their blocks they are, so every claim
is one statement over a few short ranges of a partial index of open items, never a scan of the
project; when those blocks hold nothing more for them, one walk of the same index in key order
finds what is left. A claim is a conditional UPDATE (``assigned_count < overlap``), so two
annotators asking at once can never push an item past k, and an annotator holds at most one item
at a time (a partial unique constraint). A hold left without an answer for CONCORD_HOLD_SECONDS
goes back to the pool on the next claim by anyone, and its holder is told on their next claim.
Qualification items (known answers) are mixed in at the project's rate for everyone.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation import rows, selectors, sql
from annotation.errors import ConcordError, FieldError, ValidationFailed
from annotation.hooks import suggestion_for_item
from annotation.item_places import places_give_back
from annotation.models import (
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
NOT_ANNOTATING = "you are no longer a member who annotates in this project"
NOT_SKIPPED = "this item is not one you skipped"
ITEM_NOW_FULL = "this item has meanwhile reached its {overlap} annotators, so it no longer needs your answer"
#: The skip reason of a hold that went back to the pool (shown in the holder's history).
HOLD_EXPIRED_REASON = "released: left without an answer for over {minutes} minutes"
HOLD_EXPIRED = "you left this item without an answer for over {minutes} minutes, so it went back to the pool for others"
HOLDS_EXPIRED_NOTICE = "The item you left open went back to the pool after {minutes} minutes without an answer."
ANNOTATING_ROLES = selectors.ANNOTATING_ROLES

#: Items per block of the project's key range, at most on average: the annotator's own order
#: permutes the blocks, so more blocks make two annotators' orders less alike.
BLOCK_ITEMS = 4
#: Blocks one claim looks through before walking the key order for what is left.
LOOKAHEAD_BLOCKS = 4
KEY_BITS = 62  # item_order_key is below 2**62
END_OF_ORDER = 2**KEY_BITS  # the cursor of an annotator past their last block


class NotAssigned(ConcordError):
    code = "not_assigned"
    http_status = 404


class AssignmentClosed(ConcordError):
    code = "assignment_closed"
    http_status = 409


class HoldExpired(AssignmentClosed):
    """The item went back to the pool after CONCORD_HOLD_SECONDS without an answer."""

    code = "hold_expired"


class MemberPaused(ConcordError, PermissionDenied):
    """A paused member is served no new items and writes nothing. A PermissionDenied too, so pages answer 403."""

    code = "member_paused"
    http_status = 403


class NotAnnotating(ConcordError, PermissionDenied):
    """The user is not (or no longer) an annotator or expert of the project: they write nothing there."""

    code = "not_annotating"
    http_status = 403


def seeded_int(*parts: Any) -> int:
    """A reproducible number in [0, 2**64) from the given parts (seed, ids, counters)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def seeded_fraction(*parts: Any) -> float:
    """A reproducible number in [0, 1) from the given parts (seed, ids, counters)."""
    return seeded_int(*parts) / 2**64


def presentation_seed(*, project: Project, item_id: int, annotator_id: int) -> int:
    """The seed a task kind draws one annotator's presentation of one item from (``TaskKind.presentation``):
    drawn from the project seed, the item and the annotator, so it is the same on every visit and
    edit of theirs and independent across annotators."""
    return seeded_int(project.seed, "presentation", item_id, annotator_id)


def assignment_presentation(*, assignment: Assignment) -> dict | None:
    """How the assignment's item is shown to its annotator (None: as imported), on the page and the API alike."""
    project = assignment.project
    seed = presentation_seed(project=project, item_id=assignment.item_id, annotator_id=assignment.annotator_id)
    return project.task_kind.presentation(payload=assignment.item.payload, seed=seed)


def suggestion_exposed(*, project: Project, item_id: int, annotator_id: int) -> bool:
    """Whether the project's exposure setting shows the LLM suggestion to this annotator for this item."""
    if project.suggestion_exposure == SuggestionExposure.SHOWN:
        return True
    if project.suggestion_exposure == SuggestionExposure.RANDOMISED:
        return seeded_fraction(project.seed, "exposure", item_id, annotator_id) < project.suggestion_probability
    return False


def _hold_minutes() -> int:
    return max(1, round(settings.CONCORD_HOLD_SECONDS / 60))


# -- the annotator's own order ----------------------------------------------------------------------


def block_bits(regular_items: int) -> int:
    """log2 of the number of blocks the key range is cut into for a project of this size."""
    return math.ceil(math.log2(regular_items / BLOCK_ITEMS)) if regular_items > BLOCK_ITEMS else 0


_MIX_MULTIPLIER = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: a multiplicative hash


def block_at(*, seed: int, annotator_id: int, bits: int, position: int) -> int:
    """The block at ``position`` of the annotator's own order of the 2**bits blocks: a bijection drawn
    from (seed, annotator), a four-round Feistel network on an even number of bits, cycle-walking
    until the value falls below 2**bits."""
    if bits == 0:
        return 0
    half = (bits + 1) // 2
    mask = (1 << half) - 1
    digest = hashlib.blake2b(f"{seed}:order:{annotator_id}:{bits}".encode(), digest_size=32).digest()
    keys = [int.from_bytes(digest[n : n + 8], "big") for n in range(0, 32, 8)]
    value = position
    while True:
        left, right = value >> half, value & mask
        for key in keys:
            mixed = ((right ^ key) * _MIX_MULTIPLIER) & (2**64 - 1)
            left, right = right, left ^ (mixed >> (64 - half))
        value = (left << half) | right
        if value < 1 << bits:
            return value


def item_mix(*, seed: int, annotator_id: int) -> tuple[int, int]:
    """(a, c) of the annotator's order within a block: by (key mod M * a + c) mod M, M = sql.MIX_MODULUS."""
    modulus = sql.MIX_MODULUS
    a = 1 + int(seeded_fraction(seed, "mix", annotator_id) * (modulus - 1))
    return a, int(seeded_fraction(seed, "mix-offset", annotator_id) * modulus)


def _fallback_start(project: Project, user) -> int:
    """Where the walk in key order for what the annotator's blocks left starts: their own seeded key."""
    return int(seeded_fraction(project.seed, "start", user.pk) * END_OF_ORDER)


def _next_open_item(project: Project, user, cursor: int, size: selectors.ProjectSize) -> tuple[Item | None, int]:
    """The next open item for the user in their own order, with one more annotator counted on it, and
    their new cursor. The whole row comes back, since the page shows it next. Raises _LookAgain when
    the item's last place went to someone else between finding it and taking it."""
    bits = block_bits(size.regular)
    shift = KEY_BITS - bits
    position = min(cursor, END_OF_ORDER) >> shift
    ahead = range(position, min(position + LOOKAHEAD_BLOCKS, 1 << bits))
    blocks = [block_at(seed=project.seed, annotator_id=user.pk, bits=bits, position=p) for p in ahead]
    if blocks:
        where = {
            "project_id": project.pk,
            "user_id": user.pk,
            "blocks": [(block << shift, (block + 1) << shift) for block in blocks],
            "mix": item_mix(seed=project.seed, annotator_id=user.pk),
        }
        # Found and taken in one statement; when nothing comes back, a plain read says whether the
        # blocks were empty for the user or someone took the last place first.
        found = sql.take_in_blocks(**where, overlap=project.overlap)
        if found is None and sql.next_in_blocks(**where) is not None:
            raise _LookAgain
        if found is not None:
            found.project = project
            return found, ahead[blocks.index(found.order_key >> shift)] << shift
    # Nothing in these blocks: move past them, and take what is left anywhere in key order (wrapping once).
    cursor = min(position + LOOKAHEAD_BLOCKS, 1 << bits) << shift
    start = _fallback_start(project, user)
    for wrapped in (False, True):
        found = sql.next_open_item(project_id=project.pk, cursor=start, user_id=user.pk, wrapped=wrapped)
        if found is not None:
            if not _take_place(project, found.pk):
                raise _LookAgain  # someone else took the last place first
            found.project = project
            return found, cursor
    return None, cursor


# -- claims -------------------------------------------------------------------------------------------


def _assignment_with_item(project: Project | None, user, found: Assignment | None) -> Assignment | None:
    """An assignment read by annotation/sql.py, tied to the objects the caller already holds."""
    if found is None:
        return None
    found.annotator = user
    if project is not None:
        found.project = found.item.project = project
    return found


@dataclass(frozen=True)
class _Place:
    id: int
    cursor: int
    served: int
    holds_expired: int  # the user's holds that went back to the pool, not yet told
    stale_holds: bool  # some hold in the project is older than CONCORD_HOLD_SECONDS
    counts: dict[str, int]  # the user's assignments in the project by status, before this claim


def _counts(values: Sequence[Any]) -> dict[str, int]:
    return dict(zip(sql.STATUS_ORDER, values, strict=True))


def _state(project: Project, user, held_before: datetime) -> _Place:
    """The user's place in their order, locked until the claim ends. A paused member gets MemberPaused."""
    row = sql.annotator_state_locked(project_id=project.pk, user_id=user.pk, held_before=held_before)
    if row is not None:
        state_id, cursor, served, paused, holds_expired, stale, *counts = row
        if paused:
            raise MemberPaused(MEMBER_PAUSED)
        return _Place(state_id, cursor, served, holds_expired, bool(stale), _counts(counts))
    paused, stale, *counts = sql.first_claim_checks(project_id=project.pk, user_id=user.pk, held_before=held_before)
    if paused:
        raise MemberPaused(MEMBER_PAUSED)
    # A parallel first request inserting the same row raises IntegrityError: the claim retries.
    state = AnnotatorState.objects.create(project=project, annotator=user, cursor=0)
    return _Place(state.pk, state.cursor, state.served, 0, bool(stale), _counts(counts))


class _StaleHolds(Exception):
    """Holds to release first, outside the claim's lock on the user's place."""


class _LookAgain(Exception):
    """The item's last place went to someone else between finding it and taking it."""


@transaction.atomic
def assignments_release_held(*, project: Project, user, reason: str) -> int:
    """Close the user's open assignments in the project as skipped with ``reason`` (a member paused
    or removed) and give each item's place back, as a skip does; how many."""
    held = list(
        Assignment.objects.select_for_update()
        .filter(project=project, annotator=user, status=Assignment.Status.ASSIGNED)
        .values_list("pk", "item_id")
    )
    if not held:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _ in held]).update(
        status=Assignment.Status.SKIPPED, skip_reason=reason, completed_at=timezone.now()
    )
    # Qualification items never took a place (they go to everyone), so only regular items give one back.
    places_give_back(Item.objects.filter(pk__in=[item_id for _, item_id in held]))
    return len(held)


def holds_release_expired(*, project: Project, held_before: datetime | None = None) -> int:
    """Give every hold opened before ``held_before`` (default: CONCORD_HOLD_SECONDS ago) back to the
    pool: closed as skipped, the item's place free again, the holder told on their next claim. A
    conditional update, so two claims releasing at once release each hold once. How many were released."""
    now = timezone.now()
    held_before = held_before or selectors.held_before()
    reason = HOLD_EXPIRED_REASON.format(minutes=_hold_minutes())
    released = sql.holds_expire(project_id=project.pk, held_before=held_before, reason=reason, now=now)
    per_holder: dict[int, int] = {}
    per_item: dict[int, int] = {}
    for item_id, annotator_id in released:
        per_holder[annotator_id] = per_holder.get(annotator_id, 0) + 1
        per_item[item_id] = per_item.get(item_id, 0) + 1
    # Holders first, then items: the order every claim takes its locks in.
    for annotator_id, holds in sorted(per_holder.items()):
        sql.annotator_count_expired(project_id=project.pk, user_id=annotator_id, holds=holds)
    for item_id, places in sorted(per_item.items()):
        sql.item_give_places_back(item_id=item_id, places=places)
    return len(released)


def _not_mine(user):
    return ~Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=user))


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


@dataclass(frozen=True)
class Claim:
    #: The user's item now, or None when nothing is left for them.
    assignment: Assignment | None
    #: Items they held that went back to the pool since their last claim (CONCORD_HOLD_SECONDS).
    holds_expired: int = 0
    #: The user's assignments in the project by status once this claim is made, when the claim read
    #: them (a new item, or nothing left); None when it served the item they already held.
    counts: dict[str, int] | None = None
    #: The project's size as the claim read it (the page's progress reads it too); None likewise.
    size: selectors.ProjectSize | None = None

    @property
    def notice(self) -> str:
        return HOLDS_EXPIRED_NOTICE.format(minutes=_hold_minutes()) if self.holds_expired else ""


def assignment_claim(*, project: Project, user, holds_none: bool = False) -> Claim:
    """The user's next item: the one they hold, else a qualification item at the project's rate, else
    the next open item in their order; with how many of their holds expired since they last claimed.
    Holds older than CONCORD_HOLD_SECONDS go back to the pool first. An archived project serves
    nothing (ProjectArchived), nor does a paused membership (MemberPaused). ``holds_none`` says the
    caller knows the user holds nothing here (their one hold was just submitted): no need to look."""
    if project.archived_at is not None:
        raise ProjectArchived(PROJECT_ARCHIVED)
    current = None if holds_none else assignment_current(project=project, user=user)
    if current is not None:
        return Claim(assignment_open(assignment=current))
    held_before = selectors.held_before()
    size = selectors.project_size(project=project)
    released = False
    for _attempt in range(CLAIM_ATTEMPTS):
        try:
            with transaction.atomic():
                place = _state(project, user, held_before)
                if place.stale_holds and not released:
                    raise _StaleHolds
                return _claim_in_place(project, user, place, size)
        except _StaleHolds:
            holds_release_expired(project=project, held_before=held_before)
            released = True
        except _LookAgain:
            continue
        except IntegrityError:
            # A parallel request of the same user claimed first (the same item, or their one hold):
            # this transaction rolled back, and theirs is the user's item.
            current = assignment_current(project=project, user=user)
            if current is not None:
                return Claim(current)
    return Claim(assignment_current(project=project, user=user))


def _claim_in_place(project: Project, user, place: _Place, size: selectors.ProjectSize) -> Claim:
    item, cursor = None, place.cursor
    if project.qualification_rate and seeded_fraction(project.seed, "qual", user.pk, place.served) < (
        project.qualification_rate
    ):
        item = _qualification_item(project, user)
    if item is None:
        item, cursor = _next_open_item(project, user, place.cursor, size)
    if item is None:
        # Regular items are all taken: known-answer items the user has not seen still count.
        item = _qualification_item(project, user)
        if item is None:
            if place.holds_expired:
                sql.annotator_state_told(state_id=place.id)
            return Claim(None, place.holds_expired, place.counts, size)
    assignment = _assign(project, user, item, state_id=place.id, cursor=cursor)
    held = Assignment.Status.ASSIGNED
    return Claim(assignment, place.holds_expired, {**place.counts, held: place.counts[held] + 1}, size)


def assignment_claim_next(*, project: Project, user) -> Assignment | None:
    """The user's next item (``assignment_claim``), or None when nothing is left for them."""
    return assignment_claim(project=project, user=user).assignment


def _assign(project: Project, user, item: Item, *, state_id: int, cursor: int) -> Assignment:
    """Record the claim and move the user's place on: one served item more, the cursor where it now is.
    The suggestion the user sees is found here, once: the assignment records whether there was one
    to show, and carries it to the page (``selectors.visible_suggestion``)."""
    now = timezone.now()
    suggestion = None
    if suggestion_exposed(project=project, item_id=item.pk, annotator_id=user.pk):
        item.project = project
        suggestion = suggestion_for_item(item=item)
    visible = suggestion is not None
    status = Assignment.Status.ASSIGNED
    assignment_id = sql.assignment_insert(
        project_id=project.pk, item_id=item.pk, user_id=user.pk, status=status, suggestion_visible=visible, now=now
    )
    sql.annotator_state_advance(state_id=state_id, cursor=cursor)
    assignment = rows.stored(
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
    assignment.suggestion = suggestion
    return assignment


def assignment_id_possible(assignment_id: int) -> bool:
    """Whether an assignment could have this id: outside the range there is no such row, and the
    database would refuse the number."""
    return 0 < assignment_id < 2**63


def assignment_for_user(*, assignment_id: int, user, project: Project | None = None) -> Assignment:
    """The user's own assignment (any status), within ``project`` when one is given; without one,
    the assignment's project comes with it (``assignment.project``), read by the same statement."""
    if not assignment_id_possible(assignment_id):
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


# -- writes on an assignment: one rule for pages, the API and commands ------------------------------


def annotator_may_write(*, project: Project, user) -> None:
    """Whether the user may write answers in the project now: an annotator or expert of it, not
    paused, the project not archived. Refused with ProjectArchived, NotAnnotating or MemberPaused."""
    if project.archived_at is not None:
        raise ProjectArchived(PROJECT_ARCHIVED)
    memberships = list(Membership.objects.filter(project=project, user=user).values_list("role", "paused"))
    if not {role for role, _ in memberships} & ANNOTATING_ROLES:
        raise NotAnnotating(NOT_ANNOTATING)
    if any(paused for _, paused in memberships):
        raise MemberPaused(MEMBER_PAUSED)


def _require_writer(assignment: Assignment) -> None:
    """The rule of ``annotator_may_write`` for the assignment's annotator. The reads of annotation/sql.py
    say whether it holds at no extra statement; otherwise (or to say why not) it is checked here."""
    if getattr(assignment, "annotator_may_write", False):
        return
    annotator_may_write(project=assignment.item.project, user=assignment.annotator)


def assignment_skip(*, assignment: Assignment, reason: str) -> Assignment:
    """Skip with a reason; the item's place goes back to the pool for someone else."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed([FieldError("reason", SKIP_NEEDS_REASON)])
    _require_writer(assignment)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status != Assignment.Status.ASSIGNED:
            raise _closed(locked.status, locked.skip_reason)
        locked.status, locked.skip_reason, locked.completed_at = Assignment.Status.SKIPPED, reason[:500], timezone.now()
        locked.save(update_fields=["status", "skip_reason", "completed_at"])
        sql.item_give_places_back(item_id=locked.item_id, places=1)
    return locked


class ItemFull(ConcordError):
    code = "item_full"


def assignment_unskip(*, assignment: Assignment) -> Assignment:
    """Reopen an item the user skipped, so they can answer it after all; the item they hold now, if
    any, goes back to the pool (one hold at a time). Refused (ItemFull) when the item has meanwhile
    reached k annotators: the place the skip gave back was taken by someone else."""
    _require_writer(assignment)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("project", "item").get(pk=assignment.pk)
        if locked.status != Assignment.Status.SKIPPED:
            raise AssignmentClosed(NOT_SKIPPED)
        project = locked.project
        # Known-answer items go to everyone and the skip gave no place back; others must win one again.
        if locked.item.gold_value is None and not _take_place(project, locked.item_id):
            raise ItemFull(ITEM_NOW_FULL.format(overlap=project.overlap), extra={"overlap": project.overlap})
        for held in Assignment.objects.select_for_update().filter(
            project=project, annotator_id=locked.annotator_id, status=Assignment.Status.ASSIGNED
        ):
            # Unanswered, so nothing is lost: the row goes, and the item may come to them again later.
            held.delete()
            sql.item_give_places_back(item_id=held.item_id, places=1)
        locked.status, locked.skip_reason, locked.completed_at = Assignment.Status.ASSIGNED, "", None
        locked.opened_at = timezone.now()
        locked.full_clean(exclude=["project", "item", "annotator"])
        locked.save(update_fields=["status", "skip_reason", "completed_at", "opened_at"])
    return locked


def _closed(status: str, skip_reason: str) -> AssignmentClosed:
    """Why an assignment no longer takes a first answer or a skip."""
    if status == Assignment.Status.SKIPPED and skip_reason.startswith(HOLD_EXPIRED_REASON.split("{")[0]):
        return HoldExpired(HOLD_EXPIRED.format(minutes=_hold_minutes()))
    return AssignmentClosed(ALREADY_CLOSED)


def assignment_submit(
    *,
    assignment: Assignment,
    value: Any,
    idempotency_key: str | None = None,
    suggestion_visible: bool | None = None,
    source: str = Annotation.Source.WEB,
) -> Annotation:
    """Store the annotator's value for their assignment: the first time it closes the assignment, later
    times (an edit from history, an undo) it adds a new version. ``source`` says how it came (the
    workspace, the API). Nothing is stored if the value is invalid, the assignment was skipped or went
    back to the pool (HoldExpired), or the annotator may not write (``annotator_may_write``)."""
    _require_writer(assignment)
    now = timezone.now()
    seconds = (now - assignment.opened_at).total_seconds() if assignment.opened_at else None
    with transaction.atomic():
        # Close the assignment first: the UPDATE locks the row, so a skip arriving at the same moment
        # waits, and an invalid value below rolls it back. No row changed: already closed, by a
        # submit (this is an edit, a new version) or by a skip (refused).
        closed = sql.assignment_close(assignment_id=assignment.pk, now=now)
        if not closed:
            status, skip_reason = sql.assignment_status(assignment_id=assignment.pk)
            if status == Assignment.Status.SKIPPED:
                raise _closed(status, skip_reason)
        return annotation_submit(
            item=assignment.item,
            user=assignment.annotator,
            value=value,
            idempotency_key=idempotency_key,
            seconds_on_item=seconds,
            suggestion_visible=assignment.suggestion_visible if suggestion_visible is None else suggestion_visible,
            source=source,
        )
