"""Leased chunks, shared by judge runs and generation runs.

A run is split into chunks; a chunk model has ``run`` (whose model has a ``status`` that is
``"running"`` while it runs), ``status`` (pending / running / done), ``claim_token``,
``claimed_by``, ``lease_expires_at``, ``attempts``, ``sends`` and ``enqueued_at``. These helpers
claim a chunk under a lease, renew the lease while a worker works, hand chunks back, and find the
chunks a watcher must send again. Each step is one conditional UPDATE, so it is safe to repeat: a
redelivered message claims nothing, and two workers never hold one chunk.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import F, Q
from django.utils import timezone

if TYPE_CHECKING:
    from judges.models import LeasedChunk, RunState

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 2.0
RUNNING = "running"
PENDING, DONE = "pending", "done"
# Chunks marked sent per statement: a run can have more chunks than a statement may carry parameters.
MARK_SENT_BATCH = 10_000


def worker_name() -> str:
    """Who holds a claim, for people reading the chunk table (host and process)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def run_model(chunk_model: type[LeasedChunk]) -> type[RunState]:
    # The abstract model has no ``run`` field; each concrete chunk model declares one.
    run_field = chunk_model._meta.get_field("run")  # type: ignore[misc]  # the field is the subclass's
    return cast("type[RunState]", run_field.related_model)


def claim_chunk(
    chunk_model: type[LeasedChunk], *, chunk_id: int, related: tuple[str, ...] = ("run",)
) -> LeasedChunk | None:
    """Take the chunk if it waits, or if its holder's lease ran out; None if it is not ours to take."""
    now = timezone.now()
    taken = (
        chunk_model.objects.filter(pk=chunk_id, run__status=RUNNING)
        .filter(Q(status=PENDING) | Q(status=RUNNING, lease_expires_at__lt=now))
        .update(
            status=RUNNING,
            claim_token=uuid.uuid4().hex,
            claimed_by=worker_name()[:200],
            lease_expires_at=now + timedelta(seconds=settings.JUDGE_LEASE_SECONDS),
            attempts=F("attempts") + 1,
        )
    )
    if not taken:
        return None
    return chunk_model.objects.select_related(*related).get(pk=chunk_id)


def release_chunk(chunk_model: type[LeasedChunk], *, chunk_id: int, token: str, error: str = "") -> None:
    """Hand a claimed chunk back untouched (it waits for the next claim)."""
    chunk_model.objects.filter(pk=chunk_id, claim_token=token).update(
        status=PENDING, claim_token="", lease_expires_at=None, last_error=error[:2000]
    )


def abandon_chunk(chunk_model: type[LeasedChunk], *, chunk_id: int, error: str) -> LeasedChunk | None:
    """After an unexpected error in a worker: note it and hand the chunk back. Returns the chunk as it
    was (its ``attempts`` tell the caller whether to stop the run), or None if there is none."""
    chunk = chunk_model.objects.filter(pk=chunk_id).first()
    if chunk is None:
        return None
    chunk_model.objects.filter(pk=chunk_id, status=RUNNING).update(
        status=PENDING, claim_token="", lease_expires_at=None, last_error=error[:2000]
    )
    return chunk


class Lease:
    """Renews a claim while the chunk is worked on; sets ``stop`` on a cancel or a lost claim.

    Runs in its own thread (with its own database connection) so that it beats while the worker
    waits on the network or the GPU.
    """

    def __init__(self, chunk: LeasedChunk, token: str) -> None:
        self.chunk_model = type(chunk)
        self.run_model = run_model(self.chunk_model)
        self.chunk_id, self.run_id, self.token = chunk.pk, chunk.run_id, token
        self.stop = threading.Event()
        self._finished = threading.Event()
        self._interval = min(HEARTBEAT_SECONDS, settings.JUDGE_LEASE_SECONDS / 3)
        self._thread = threading.Thread(target=self._beat, name=f"lease-chunk-{chunk.pk}", daemon=True)

    def __enter__(self) -> Lease:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._finished.set()
        self._thread.join()

    def renew(self) -> bool:
        """Extend the lease; False when the claim is gone or the run no longer runs."""
        until = timezone.now() + timedelta(seconds=settings.JUDGE_LEASE_SECONDS)
        renewed = self.chunk_model.objects.filter(pk=self.chunk_id, claim_token=self.token).update(
            lease_expires_at=until
        )
        running = self.run_model.objects.filter(pk=self.run_id, status=RUNNING).exists()
        return bool(renewed) and running

    def _beat(self) -> None:
        try:
            while not self._finished.wait(self._interval):
                try:
                    if not self.renew():
                        self.stop.set()
                except DatabaseError:
                    # The database may be back by the next beat; the lease is long enough to ride it out.
                    logger.warning("could not renew the lease of chunk %s", self.chunk_id, exc_info=True)
        finally:
            connection.close()


def mark_sent(chunk_model: type[LeasedChunk], ids: list[int], now: datetime) -> None:
    for start in range(0, len(ids), MARK_SENT_BATCH):
        batch = ids[start : start + MARK_SENT_BATCH]
        chunk_model.objects.filter(pk__in=batch).update(enqueued_at=now, sends=F("sends") + 1)


def pending_chunk_ids(chunk_model: type[LeasedChunk], *, run_id: int) -> list[int]:
    """Every waiting chunk of the run, marked as sent now."""
    ids = list(chunk_model.objects.filter(run_id=run_id, status=PENDING).values_list("pk", flat=True))
    mark_sent(chunk_model, ids, timezone.now())
    return ids


def chunks_to_resend(chunk_model: type[LeasedChunk], *, run_id: int) -> tuple[list[int], LeasedChunk | None]:
    """One watcher's look at a running run: the chunks to send again, and a chunk that gave up.

    A chunk whose lease ran out lost its worker: it waits again and is sent anew. Waiting chunks are
    also sent again when nothing of the run is running and their last send is old (a broker can lose
    messages); the interval doubles with each resend. When a chunk with an expired lease has been
    claimed JUDGE_CHUNK_MAX_CLAIMS times, it is returned second and nothing is sent: the caller
    stops the run. Call inside a transaction holding the run row.
    """
    now = timezone.now()
    chunks = chunk_model.objects.filter(run_id=run_id)
    send: set[int] = set()
    for chunk in chunks.filter(status=RUNNING, lease_expires_at__lt=now):
        if chunk.attempts >= settings.JUDGE_CHUNK_MAX_CLAIMS:
            return [], chunk
        # Conditional: a worker that renewed its lease a moment ago keeps its chunk.
        released = chunks.filter(pk=chunk.pk, status=RUNNING, lease_expires_at__lt=now).update(
            status=PENDING, claim_token="", lease_expires_at=None
        )
        if released:
            send.add(chunk.pk)
    if not chunks.filter(status=RUNNING).exists():
        lease = settings.JUDGE_LEASE_SECONDS
        for pk, sent_at, sends in chunks.filter(status=PENDING).values_list("pk", "enqueued_at", "sends"):
            if sent_at is None or now - sent_at > timedelta(seconds=lease * 2 ** min(sends, 6)):
                send.add(pk)
    ids = sorted(send)
    mark_sent(chunk_model, ids, now)
    return ids, None


def restart_run(run: RunState) -> None:
    """Set a locked run running again from where it was. A chunk whose worker gave up on a repeated
    error gets a fresh count of claims and sends; rate and ETA count from now."""
    run.chunks.exclude(status=DONE).update(attempts=0, sends=0)
    run.status, run.resumed_at, run.finished_at = type(run).Status.RUNNING, timezone.now(), None
    run.done_at_resume, run.last_error = run.done_count, ""
    run.save(update_fields=["status", "resumed_at", "finished_at", "done_at_resume", "last_error"])


def stop_run(run_model: type[RunState], *, run_id: int, reason: str) -> None:
    """Stop a running run on an error every request would hit (bad key, unknown model, a chunk failing
    over and over)."""
    run_model.objects.filter(pk=run_id, status=RUNNING).update(
        status=run_model.Status.FAILED, last_error=reason[:2000], finished_at=timezone.now(), watch_token=""
    )
