"""Running one chunk of a generation run on a worker: claim it under a lease (``judges.leasing``), ask
the backend for each waiting record, record every outcome, and import the items once the run's last
chunk is recorded.

The same guarantees as judge chunks: a redelivered message claims nothing, a worker that lost its
lease records nothing, a killed worker's chunk is handed out again by the watcher, and a record
settled by an earlier claim is never asked again. Each record ends OK (with its item payloads) or
failed (with the raw output and the reason); unavailable servers are retried by Celery first.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from judges.backends import get_backend
from judges.backends.base import FAILED, OK, UNAVAILABLE, CallOptions, Outcome, RetryPolicy
from judges.errors import BackendMisconfigured, BackendUnavailable
from judges.generation.prompts import StepPrompt
from judges.generation.services import (
    CHUNK_GAVE_UP,
    RecordOutcome,
    generation_chunk_record,
    generation_run_finish,
    generation_run_stop,
)
from judges.generation.steps import get_step
from judges.leasing import Lease, abandon_chunk, claim_chunk, release_chunk
from judges.models import GenerationChunk, GenerationRecord, GenerationRun
from judges.prompting import JudgeRequest, sha256_json

CANNOT_BUILD = "could not build the prompt for this record: {error}"
STEP_GONE = "step {step} or its prompt {prompt} is not installed on this worker"


@dataclass(frozen=True)
class GenerationChunkReport:
    ok: int
    failed: int
    waiting: int


def step_prompt(run: GenerationRun) -> StepPrompt:
    """The run's prompt, at the version the run started with; KeyError if this worker lacks it."""
    step = get_step(run.step)
    baseline = get_backend(run.backend).is_baseline
    return StepPrompt(step, options=run.options, baseline=baseline, version=None if baseline else run.prompt_version)


def _unbuildable(record_id: int, data: dict, error: Exception) -> Outcome:
    request = JudgeRequest(item_id=record_id, payload=data, prompt_sha256=sha256_json({"unbuildable": data}), schema={})
    return Outcome(request, FAILED, reason=CANNOT_BUILD.format(error=f"{type(error).__name__}: {error}"), attempts=0)


def _as_record_outcome(outcome: Outcome) -> RecordOutcome:
    ok = outcome.status == OK
    return RecordOutcome(
        record_id=outcome.request.item_id,
        ok=ok,
        items=outcome.value["items"] if ok else None,
        request_sha256=outcome.request.prompt_sha256,
        raw_output=outcome.raw_output,
        reason=outcome.reason,
        attempts=outcome.attempts,
        tokens_in=outcome.tokens_in,
        tokens_out=outcome.tokens_out,
        latency_ms=outcome.latency_ms,
    )


def generation_chunk_process(*, chunk_id: int, final_attempt: bool = True) -> GenerationChunkReport | None:
    """Generate for the chunk's waiting records and record the outcomes; None if the chunk was not ours.

    Records whose server stayed unavailable through every retry raise BackendUnavailable (after the
    rest is recorded) so the chunk is retried later, unless this is the ``final_attempt``: then they
    are recorded as failed with the reason.
    """
    chunk = claim_chunk(GenerationChunk, chunk_id=chunk_id, related=("run__project",))
    if chunk is None:
        return None
    token, run = chunk.claim_token, chunk.run
    try:
        prompt = step_prompt(run)
    except KeyError:
        release_chunk(GenerationChunk, chunk_id=chunk.pk, token=token)
        generation_run_stop(run_id=run.pk, reason=STEP_GONE.format(step=run.step, prompt=run.prompt_key))
        return None
    backend = get_backend(run.backend)
    records = GenerationRecord.objects.filter(
        run=run,
        number__gte=chunk.first_number,
        number__lte=chunk.last_number,
        status=GenerationRecord.Status.PENDING,
    ).order_by("number")
    requests: list[JudgeRequest] = []
    outcomes: list[Outcome] = []
    for record_id, data in records.values_list("pk", "data"):
        try:
            requests.append(prompt.build(item_id=record_id, payload=data, seed=run.seed))
        except Exception as exc:  # a record this prompt cannot read fails alone, with the reason
            outcomes.append(_unbuildable(record_id, data, exc))
    options = CallOptions(
        concurrency=run.concurrency, timeout=settings.JUDGE_REQUEST_TIMEOUT, retry=RetryPolicy.from_settings()
    )
    call = run.as_judge()
    with Lease(chunk, token) as lease:
        try:
            if requests:
                outcomes += backend.complete(requests, judge=call, prompt=prompt, options=options, stop=lease.stop)
        except BackendMisconfigured as exc:
            release_chunk(GenerationChunk, chunk_id=chunk.pk, token=token, error=exc.message)
            generation_run_stop(run_id=run.pk, reason=exc.message)
            return None
        except BackendUnavailable as exc:
            if not final_attempt:
                release_chunk(GenerationChunk, chunk_id=chunk.pk, token=token, error=exc.message)
                raise
            outcomes += [Outcome(r, FAILED, reason=exc.message) for r in requests]
    unavailable = [o for o in outcomes if o.status == UNAVAILABLE]
    # After a cancel they simply wait (a resume asks again); on the last try they fail with the reason.
    retry_later = bool(unavailable) and not final_attempt and not lease.stop.is_set()
    if final_attempt and not lease.stop.is_set():
        for outcome in unavailable:
            outcome.status = FAILED
    final = [_as_record_outcome(o) for o in outcomes if o.status in (OK, FAILED)]
    error = unavailable[0].reason if unavailable else ""
    counts = generation_chunk_record(chunk=chunk, token=token, outcomes=final, error=error)
    if counts is None:
        return None
    if retry_later:
        raise BackendUnavailable(unavailable[0].reason)
    generation_run_finish(run_id=run.pk)
    return GenerationChunkReport(*counts)


def generation_chunk_abandon(*, chunk_id: int, error: str) -> None:
    """After an unexpected error in a worker: note it, hand the chunk back, stop the run if it keeps failing."""
    chunk = abandon_chunk(GenerationChunk, chunk_id=chunk_id, error=error)
    if chunk is not None and chunk.attempts >= settings.JUDGE_CHUNK_MAX_CLAIMS:
        reason = CHUNK_GAVE_UP.format(number=chunk.number, attempts=chunk.attempts, error=error)
        generation_run_stop(run_id=chunk.run_id, reason=reason)
