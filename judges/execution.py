"""Running one chunk of a run: claim it under a lease, call the backend, record what came back.

Every step is safe to repeat, which is what lets a run survive a killed worker:

- Claiming is one conditional UPDATE. A chunk that is done, or held under a live lease, is not
  taken again, so a redelivered message does nothing.
- While a worker works, a heartbeat thread renews its lease and watches for a cancel. A killed
  worker stops renewing; the run's watcher then hands the chunk to another worker.
- Results are recorded in one transaction that first checks the claim is still ours: a worker
  that lost its lease records nothing, so two workers never both write a chunk.
- Settled items are skipped: an OK suggestion of the judge for the same prompt (from any run) is
  kept, and so is a failure this run already recorded; a failure from an earlier run is retried.

Claims, leases and hand-backs are ``judges.leasing``, shared with generation runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Item
from judges.backends import get_backend
from judges.backends.base import FAILED, OK, UNAVAILABLE, CallOptions, Outcome, RetryPolicy
from judges.errors import CHUNK_GAVE_UP, BackendMisconfigured, BackendUnavailable
from judges.leasing import HEARTBEAT_SECONDS, Lease, abandon_chunk, claim_chunk, release_chunk, worker_name
from judges.models import JudgeChunk, JudgeRun, Suggestion
from judges.prompting import JudgeRequest, Prompt, get_prompt, sha256_json
from judges.services import judge_run_refresh, judge_run_stop

logger = logging.getLogger(__name__)

__all__ = ("HEARTBEAT_SECONDS", "Lease", "worker_name", "chunk_claim", "chunk_release", "chunk_abandon")

CANNOT_BUILD = "could not build the prompt for this item: {error}"
PROMPT_GONE = "prompt {prompt} is no longer installed on this worker"
SUGGESTION_FIELDS = [
    "run",
    "status",
    "value",
    "raw_output",
    "failure_reason",
    "attempts",
    "tokens_in",
    "tokens_out",
    "latency_ms",
    "updated_at",
]


def chunk_claim(*, chunk_id: int) -> JudgeChunk | None:
    """Take the chunk if it waits, or if its holder's lease ran out; None if it is not ours to take."""
    return claim_chunk(JudgeChunk, chunk_id=chunk_id, related=("run__judge",))


def chunk_release(*, chunk_id: int, token: str, error: str = "") -> None:
    """Hand a claimed chunk back untouched (it waits for the next claim)."""
    release_chunk(JudgeChunk, chunk_id=chunk_id, token=token, error=error)


def chunk_abandon(*, chunk_id: int, error: str) -> None:
    """After an unexpected error in a worker: note it, hand the chunk back, stop the run if it keeps failing."""
    chunk = abandon_chunk(JudgeChunk, chunk_id=chunk_id, error=error)
    if chunk is not None and chunk.attempts >= settings.JUDGE_CHUNK_MAX_CLAIMS:
        judge_run_stop(
            run_id=chunk.run_id, reason=CHUNK_GAVE_UP.format(number=chunk.number, attempts=chunk.attempts, error=error)
        )


@dataclass(frozen=True)
class ChunkReport:
    ok: int
    failed: int
    waiting: int


def _unbuildable(prompt: Prompt, item_id: int, payload: dict, error: Exception) -> Outcome:
    request = JudgeRequest(
        item_id=item_id,
        payload=payload,
        prompt_sha256=sha256_json({"unbuildable": prompt.key, "payload": payload}),
        schema={},
    )
    return Outcome(request, FAILED, reason=CANNOT_BUILD.format(error=f"{type(error).__name__}: {error}"), attempts=0)


def judge_chunk_process(*, chunk_id: int, final_attempt: bool = True) -> ChunkReport | None:
    """Judge the chunk's unsettled items and record the outcomes; None if the chunk was not ours.

    Items whose server stayed unavailable through every retry raise BackendUnavailable (after the
    rest is recorded) so the chunk is retried later, unless this is the ``final_attempt``: then they
    are recorded as failed with the reason. Nothing unavailable is ever recorded as a value.
    """
    chunk = chunk_claim(chunk_id=chunk_id)
    if chunk is None:
        return None
    token, run = chunk.claim_token, chunk.run
    judge = run.judge
    try:
        prompt = get_prompt(judge.prompt_key)
    except KeyError:
        chunk_release(chunk_id=chunk.pk, token=token)
        judge_run_stop(run_id=run.pk, reason=PROMPT_GONE.format(prompt=judge.prompt_key))
        return None
    backend = get_backend(judge.backend)
    items = Item.objects.filter(
        project_id=run.project_id, pk__gte=chunk.first_item_id, pk__lte=chunk.last_item_id
    ).order_by("pk")
    requests: list[JudgeRequest] = []
    outcomes: list[Outcome] = []
    size = 0
    for item_id, external_id, payload in items.values_list("pk", "external_id", "payload"):
        size += 1
        try:
            requests.append(prompt.build(item_id=item_id, payload=payload, external_id=external_id, seed=judge.seed))
        except Exception as exc:  # a payload this prompt cannot read fails alone, with the reason
            outcomes.append(_unbuildable(prompt, item_id, payload, exc))
    stored = {
        (item_id, sha): (status, run_id)
        for item_id, sha, status, run_id in Suggestion.objects.filter(
            judge=judge, item_id__in=[r.item_id for r in requests]
        ).values_list("item_id", "prompt_sha256", "status", "run_id")
    }
    settled: dict[int, str] = {}
    todo: list[JudgeRequest] = []
    for request in requests:
        status, made_by = stored.get((request.item_id, request.prompt_sha256), (None, None))
        if status == Suggestion.Status.OK or (status == Suggestion.Status.FAILED and made_by == run.pk):
            settled[request.item_id] = status
        else:
            todo.append(request)
    options = CallOptions(
        concurrency=run.concurrency, timeout=settings.JUDGE_REQUEST_TIMEOUT, retry=RetryPolicy.from_settings()
    )
    with Lease(chunk, token) as lease:
        try:
            if todo:
                outcomes += backend.complete(todo, judge=judge, prompt=prompt, options=options, stop=lease.stop)
        except BackendMisconfigured as exc:
            chunk_release(chunk_id=chunk.pk, token=token, error=exc.message)
            judge_run_stop(run_id=run.pk, reason=exc.message)
            return None
        except BackendUnavailable as exc:
            if not final_attempt:
                chunk_release(chunk_id=chunk.pk, token=token, error=exc.message)
                raise
            outcomes += [Outcome(r, FAILED, reason=exc.message) for r in todo]
    unavailable = [o for o in outcomes if o.status == UNAVAILABLE]
    # After a cancel they simply wait (a resume asks again); on the last try they fail with the reason.
    retry_later = bool(unavailable) and not final_attempt and not lease.stop.is_set()
    if final_attempt and not lease.stop.is_set():
        for outcome in unavailable:
            outcome.status = FAILED
    error = unavailable[0].reason if unavailable else ""
    report = chunk_record(chunk=chunk, token=token, outcomes=outcomes, settled=settled, size=size, error=error)
    if retry_later:
        raise BackendUnavailable(unavailable[0].reason)
    return report


def chunk_record(
    *, chunk: JudgeChunk, token: str, outcomes: list[Outcome], settled: dict[int, str], size: int, error: str = ""
) -> ChunkReport | None:
    """Store the outcomes and the chunk's counts, if the claim is still ours; then recount the run."""
    final = [o for o in outcomes if o.status in (OK, FAILED)]
    statuses = list(settled.values()) + [o.status for o in final]
    ok, failed = statuses.count(OK), statuses.count(FAILED)
    done = ok + failed >= size
    now = timezone.now()
    with transaction.atomic():
        # Holding the run row orders concurrent chunk results, so the recount below sees them all.
        JudgeRun.objects.select_for_update().filter(pk=chunk.run_id).first()
        still_ours = JudgeChunk.objects.filter(pk=chunk.pk, claim_token=token).update(
            status=JudgeChunk.Status.DONE if done else JudgeChunk.Status.PENDING,
            claim_token="",
            lease_expires_at=None,
            size=size,
            ok_count=ok,
            failed_count=failed,
            last_error=error[:2000],
            finished_at=now if done else None,
        )
        if not still_ours:
            return None
        Suggestion.objects.bulk_create(
            [
                Suggestion(
                    judge_id=chunk.run.judge_id,
                    run_id=chunk.run_id,
                    item_id=o.request.item_id,
                    prompt_sha256=o.request.prompt_sha256,
                    status=o.status,
                    value=o.value if o.status == OK else None,
                    raw_output=o.raw_output,
                    failure_reason="" if o.status == OK else (o.reason or "failed without a reason"),
                    attempts=min(max(o.attempts, 1), 32767),
                    tokens_in=o.tokens_in,
                    tokens_out=o.tokens_out,
                    latency_ms=o.latency_ms,
                )
                for o in final
            ],
            batch_size=500,
            update_conflicts=True,
            unique_fields=["judge", "item", "prompt_sha256"],
            update_fields=SUGGESTION_FIELDS,
        )
        judge_run_refresh(run_id=chunk.run_id)
    return ChunkReport(ok=ok, failed=failed, waiting=size - ok - failed)
