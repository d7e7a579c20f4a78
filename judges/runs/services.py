"""Writes: the lifecycle every run type shares (save, chunk, cancel, resume, stop, recount, finish, watch).

Keyword-only and atomic. Services never enqueue Celery tasks (tasks import services, not the
reverse): callers send what a service returns through ``judges.tasks.run_dispatch`` on commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from annotation.errors import FieldError, ValidationFailed
from judges.backends import get_backend
from judges.backends.base import FAILED, OK, Outcome
from judges.errors import CANNOT_CANCEL, CANNOT_RESUME, CHUNK_GAVE_UP, RunStateError
from judges.leasing import chunks_to_resend, pending_chunk_ids, restart_run, stop_run
from judges.models import LeasedChunk, RunState
from judges.runs.types import ChunkT, ChunkWork, RunType, get_run_type, run_type_of

#: Why a chunk stopped its run when its worker left no error.
LEASE_LOST = "its worker stopped renewing the lease"


def run_save_new(run: RunState) -> RunState:
    """Save a new run after its checks; ValidationFailed naming each bad field (nothing saved then)."""
    try:
        run.full_clean()
    except ValidationError as exc:
        raise ValidationFailed([FieldError(f, "; ".join(m)) for f, m in exc.message_dict.items()]) from None
    run.save()
    return run


def chunk_ranges(numbers: Iterable[int], size: int) -> Iterator[tuple[int, int, int]]:
    """(first, last, count) of consecutive ranges of at most ``size`` numbers, from numbers in ascending order."""
    first = last = count = 0
    for number in numbers:
        if count == size:
            yield first, last, count
            count = 0
        if count == 0:
            first = number
        last = number
        count += 1
    if count:
        yield first, last, count


def run_chunks_create(
    *, run: RunState, numbers: Iterable[int], make: Callable[[int, int, int, int], ChunkT]
) -> list[ChunkT]:
    """Split ``numbers`` (ascending ids or record numbers) into the run's chunks of ``run.chunk_size``;
    ``make(number, first, last, size)`` builds one chunk."""
    ranges = enumerate(chunk_ranges(numbers, run.chunk_size))
    chunks = [make(n, first, last, count) for n, (first, last, count) in ranges]
    run_type_of(run).chunk_model.objects.bulk_create(chunks, batch_size=1000)
    return chunks


@transaction.atomic
def run_cancel(*, run: RunState) -> RunState:
    """Stop a running run. Workers finish the request in hand, keep what is done, and hand chunks back.
    RunStateError if it is not running."""
    run = type(run).objects.select_for_update().get(pk=run.pk)
    if run.status != run.Status.RUNNING:
        raise RunStateError(_state_message(CANNOT_CANCEL, run))
    run.status, run.finished_at, run.watch_token = run.Status.CANCELLED, timezone.now(), ""
    run.save(update_fields=["status", "finished_at", "watch_token"])
    return run


def _state_message(template: str, run: RunState) -> str:
    return template.format(label=run_type_of(run).label, run=run.pk, status=run.get_status_display().lower())


@transaction.atomic
def run_resume(*, run: RunState) -> RunState:
    """Run a cancelled or stopped run again from where it was; what is done is kept, not redone.
    RunStateError if it is not cancelled or stopped, or if a run it may not run beside is running."""
    run_type = run_type_of(run)
    run = type(run).objects.select_for_update().get(pk=run.pk)
    if run.status not in (run.Status.CANCELLED, run.Status.FAILED):
        raise RunStateError(_state_message(CANNOT_RESUME, run))
    twin = run_type.running_twin(run)
    if twin is not None:
        raise RunStateError(run_type.twin_running(run, twin))
    restart_run(run)
    if not run.chunks.exclude(status=LeasedChunk.Status.DONE).exists():
        run_type.finish(run)  # stopped after its last chunk (e.g. its items could not be imported): finish again
    return run


def run_stop(*, run_type: str, run_id: int, reason: str) -> None:
    """Stop a running run on an error every request would hit (bad key, unknown model, a chunk failing
    over and over)."""
    stop_run(get_run_type(run_type).run_model, run_id=run_id, reason=reason)


def run_refresh(*, run_type: str, run_id: int) -> RunState:
    """Recount the run from its chunks. Call inside a transaction that holds the run row
    (select_for_update), so concurrent chunk results are counted one at a time."""
    spec = get_run_type(run_type)
    run = spec.run_model.objects.get(pk=run_id)
    sums = spec.chunk_model.objects.filter(run_id=run_id).aggregate(
        total=Sum("size"), ok=Sum("ok_count"), failed=Sum("failed_count")
    )
    # A chunk's size may be recounted when it is recorded (items deleted meanwhile leave the total).
    run.total = (sums["total"] or 0) + run.settled_at_start
    run.ok_count, run.failed_count = sums["ok"] or 0, sums["failed"] or 0
    run.pending_count = max(0, run.total - run.done_count)
    run.save(update_fields=["total", "ok_count", "failed_count", "pending_count"])
    return run


def _finish_if_done(spec: RunType, run: RunState) -> bool:
    """Finish a locked running run whose every chunk is done; whether it was finished."""
    if run.status != run.Status.RUNNING or run.chunks.exclude(status=LeasedChunk.Status.DONE).exists():
        return False
    spec.finish(run)
    return True


@transaction.atomic
def run_finish_if_done(*, run_type: str, run_id: int) -> RunState | None:
    """Finish the run once, when every chunk is done (its items imported, for generation runs);
    None if it is not running or not done yet."""
    spec = get_run_type(run_type)
    run = spec.run_model.objects.select_for_update().select_related(*spec.run_related).filter(pk=run_id).first()
    if run is None or not _finish_if_done(spec, run):
        return None
    return run


# -- sending chunks and watching runs -----------------------------------------------------------------


@dataclass(frozen=True)
class Dispatch:
    """Chunks of a run to send to the workers, and where."""

    run_type: str
    run_id: int
    chunk_ids: list[int]
    gpu: bool


def run_chunks_mark_sent(*, run_type: str, run_id: int) -> Dispatch:
    """Mark every waiting chunk of a running run as sent now, and return them to send."""
    spec = get_run_type(run_type)
    run = spec.run_model.objects.select_related(*spec.run_related).get(pk=run_id)
    ids = pending_chunk_ids(spec.chunk_model, run_id=run.pk) if run.is_active else []
    return Dispatch(run_type=spec.name, run_id=run.pk, chunk_ids=ids, gpu=get_backend(spec.backend_name(run)).gpu)


def run_new_watch(*, run_type: str, run_id: int) -> str | None:
    """A new watch token for a running run (older watchers then stop), or None if it is not running."""
    token = uuid.uuid4().hex
    updated = get_run_type(run_type).running().filter(pk=run_id).update(watch_token=token)
    return token if updated else None


@transaction.atomic
def run_watch(*, run_type: str, run_id: int, token: str) -> Dispatch | None:
    """One look at a running run: hand out again the chunks whose worker vanished.

    A chunk whose lease ran out lost its worker (killed, or its host went away): it waits again and
    is sent anew. Waiting chunks are also sent again when nothing of the run is running and their
    last send is old, since a broker can lose messages (a restarted Redis without persistence, a
    killed worker that had taken a message off the filesystem queue); the interval doubles with each
    resend. Duplicates are harmless: only one worker can claim a chunk. A run whose last chunk was
    recorded by a worker that died before finishing it is finished here. Returns the chunks to send,
    or None when this watcher should stop (the run is not running, or a newer watcher took over).
    """
    spec = get_run_type(run_type)
    run = spec.run_model.objects.select_for_update().select_related(*spec.run_related).filter(pk=run_id).first()
    if run is None or run.status != run.Status.RUNNING or run.watch_token != token:
        return None
    ids, gave_up = chunks_to_resend(spec.chunk_model, run_id=run.pk)
    if gave_up is not None:
        error = gave_up.last_error or LEASE_LOST
        reason = CHUNK_GAVE_UP.format(number=gave_up.number, attempts=gave_up.attempts, error=error)
        run_stop(run_type=spec.name, run_id=run.pk, reason=reason)
        return None
    run_refresh(run_type=spec.name, run_id=run.pk)
    if _finish_if_done(spec, spec.run_model.objects.select_related(*spec.run_related).get(pk=run.pk)):
        return None
    return Dispatch(run_type=spec.name, run_id=run.pk, chunk_ids=ids, gpu=get_backend(spec.backend_name(run)).gpu)


@dataclass(frozen=True)
class ChunkReport:
    ok: int
    failed: int
    waiting: int


def chunk_record(
    *, run_type: str, chunk: LeasedChunk, token: str, work: ChunkWork, outcomes: list[Outcome], error: str = ""
) -> ChunkReport | None:
    """Store the final outcomes and the chunk's counts if the claim is still ours, then recount the
    run; None when the claim was lost (nothing is written then). The chunk is done when none of
    its rows waits."""
    spec = get_run_type(run_type)
    final = [o for o in outcomes if o.status in (OK, FAILED)]
    now = timezone.now()
    with transaction.atomic():
        # Holding the run row orders concurrent chunk results, so the recount below sees them all.
        spec.run_model.objects.select_for_update().filter(pk=chunk.run_id).first()
        held = spec.chunk_model.objects.select_for_update().filter(pk=chunk.pk, claim_token=token).first()
        if held is None:
            return None
        ok, failed, size = spec.store_outcomes(chunk, work, final)
        waiting = max(0, size - ok - failed)
        spec.chunk_model.objects.filter(pk=chunk.pk).update(
            status=LeasedChunk.Status.PENDING if waiting else LeasedChunk.Status.DONE,
            claim_token="",
            lease_expires_at=None,
            size=size,
            ok_count=ok,
            failed_count=failed,
            last_error=error[:2000],
            finished_at=None if waiting else now,
        )
        run_refresh(run_type=run_type, run_id=chunk.run_id)
    return ChunkReport(ok=ok, failed=failed, waiting=waiting)
