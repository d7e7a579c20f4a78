"""Running one chunk of a run on a worker: claim it under a lease, call the backend, record what came back.

Every step is safe to repeat, which is what lets a run survive a killed worker:

- Claiming is one conditional UPDATE. A chunk that is done, or held under a live lease, is not
  taken again, so a redelivered message does nothing.
- While a worker works, a heartbeat thread renews its lease and watches for a cancel. A killed
  worker stops renewing; the run's watcher then hands the chunk to another worker.
- Results are recorded in one transaction that first checks the claim is still ours: a worker
  that lost its lease records nothing, so two workers never both write a chunk.
- What the run type settled (an answer kept from earlier) is never asked again.

The three retry layers: the backend retries each request (429, 5xx, timeouts, invalid answers);
a chunk whose server stayed unavailable is retried later by Celery (``final_attempt`` says when no
try is left); a chunk claimed over and over stops its run (``JUDGE_CHUNK_MAX_CLAIMS``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.conf import settings
from django.db import models

from judges.backends import get_backend
from judges.backends.base import FAILED, OK, UNAVAILABLE, CallOptions, Outcome, RetryPolicy
from judges.errors import CHUNK_GAVE_UP, BackendMisconfigured, BackendUnavailable
from judges.leasing import Lease, abandon_chunk, claim_chunk, release_chunk
from judges.models import LeasedChunk
from judges.prompting import JudgeRequest, sha256_json
from judges.runs.services import ChunkReport, chunk_record, run_finish_if_done, run_stop
from judges.runs.types import get_run_type

CANNOT_BUILD = "could not build the prompt for this {unit}: {error}"
NO_REASON = "failed without a reason"
#: The columns every stored outcome (a suggestion, a generation record) has, written on each upsert.
OUTCOME_FIELDS = ("status", "raw_output", "failure_reason", "attempts", "tokens_in", "tokens_out", "latency_ms")


def chunk_claim(*, run_type: str, chunk_id: int) -> LeasedChunk | None:
    """Take the chunk if it waits, or if its holder's lease ran out; None if it is not ours to take."""
    spec = get_run_type(run_type)
    return claim_chunk(spec.chunk_model, chunk_id=chunk_id, related=spec.claim_related)


def chunk_release(*, run_type: str, chunk_id: int, token: str, error: str = "") -> None:
    """Hand a claimed chunk back untouched (it waits for the next claim)."""
    release_chunk(get_run_type(run_type).chunk_model, chunk_id=chunk_id, token=token, error=error)


def chunk_abandon(*, run_type: str, chunk_id: int, error: str) -> None:
    """After an unexpected error in a worker: note it, hand the chunk back, stop the run if it keeps failing."""
    chunk = abandon_chunk(get_run_type(run_type).chunk_model, chunk_id=chunk_id, error=error)
    if chunk is not None and chunk.attempts >= settings.JUDGE_CHUNK_MAX_CLAIMS:
        reason = CHUNK_GAVE_UP.format(number=chunk.number, attempts=chunk.attempts, error=error)
        run_stop(run_type=run_type, run_id=chunk.run_id, reason=reason)


def unbuildable(*, unit: str, row_id: int, data: dict, error: Exception, salt: str = "") -> Outcome:
    """The failed outcome of a row the prompt cannot read, with the reason (it fails alone)."""
    request = JudgeRequest(
        item_id=row_id, payload=data, prompt_sha256=sha256_json({"unbuildable": salt, "payload": data}), schema={}
    )
    reason = CANNOT_BUILD.format(unit=unit, error=f"{type(error).__name__}: {error}")
    return Outcome(request, FAILED, reason=reason, attempts=0)


def outcome_columns(outcome: Outcome) -> dict[str, Any]:
    """The ``OUTCOME_FIELDS`` of a final outcome, as every run type stores them."""
    ok = outcome.status == OK
    return {
        "status": outcome.status,
        "raw_output": outcome.raw_output,
        "failure_reason": "" if ok else (outcome.reason or NO_REASON),
        "attempts": min(max(outcome.attempts, 1), 32767),
        "tokens_in": outcome.tokens_in,
        "tokens_out": outcome.tokens_out,
        "latency_ms": outcome.latency_ms,
    }


OutcomeRow = TypeVar("OutcomeRow", bound=models.Model)


def outcomes_upsert(
    model: type[OutcomeRow], rows: list[OutcomeRow], *, unique_fields: list[str], extra_fields: tuple[str, ...]
) -> None:
    """Insert or overwrite stored outcomes: one statement per batch (bulk_update would build a CASE per field)."""
    model._default_manager.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=unique_fields,
        update_fields=[*extra_fields, *OUTCOME_FIELDS, "updated_at"],
    )


def chunk_process(*, run_type: str, chunk_id: int, final_attempt: bool = True) -> ChunkReport | None:
    """Ask for the chunk's unsettled rows and record the outcomes; None if the chunk was not ours.

    Rows whose server stayed unavailable through every retry raise BackendUnavailable (after the
    rest is recorded) so the chunk is retried later, unless this is the ``final_attempt``: then they
    are recorded as failed with the reason. Nothing unavailable is ever recorded as a value.
    """
    spec = get_run_type(run_type)
    chunk = chunk_claim(run_type=run_type, chunk_id=chunk_id)
    if chunk is None:
        return None
    token, run = chunk.claim_token, chunk.run
    try:
        prompt = spec.prompt(run)
    except KeyError:
        chunk_release(run_type=run_type, chunk_id=chunk.pk, token=token)
        run_stop(run_type=run_type, run_id=run.pk, reason=spec.prompt_gone(run))
        return None
    work = spec.chunk_work(chunk, prompt)
    outcomes = list(work.outcomes)
    options = CallOptions(
        concurrency=run.concurrency, timeout=settings.JUDGE_REQUEST_TIMEOUT, retry=RetryPolicy.from_settings()
    )
    backend = get_backend(spec.backend_name(run))
    with Lease(chunk, token) as lease:
        try:
            if work.requests:
                call = spec.call_config(run)
                outcomes += backend.complete(work.requests, judge=call, prompt=prompt, options=options, stop=lease.stop)
        except BackendMisconfigured as exc:
            chunk_release(run_type=run_type, chunk_id=chunk.pk, token=token, error=exc.message)
            run_stop(run_type=run_type, run_id=run.pk, reason=exc.message)
            return None
        except BackendUnavailable as exc:
            if not final_attempt:
                chunk_release(run_type=run_type, chunk_id=chunk.pk, token=token, error=exc.message)
                raise
            outcomes += [Outcome(r, FAILED, reason=exc.message) for r in work.requests]
    unavailable = [o for o in outcomes if o.status == UNAVAILABLE]
    # After a cancel they simply wait (a resume asks again); on the last try they fail with the reason.
    retry_later = bool(unavailable) and not final_attempt and not lease.stop.is_set()
    if final_attempt and not lease.stop.is_set():
        for outcome in unavailable:
            outcome.status = FAILED
    error = unavailable[0].reason if unavailable else ""
    report = chunk_record(run_type=run_type, chunk=chunk, token=token, work=work, outcomes=outcomes, error=error)
    if report is None:
        return None
    if retry_later:
        raise BackendUnavailable(unavailable[0].reason)
    if not report.waiting:
        run_finish_if_done(run_type=run_type, run_id=run.pk)
    return report
