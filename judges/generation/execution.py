"""Generation runs as a run type of the chunked-run engine (judges.runs): source records → items.

A chunk is a range of record numbers. Each record ends OK (with its item payloads) or failed (with
the raw output and the reason); a record settled by an earlier claim is never asked again. Once
every chunk is done, the run's items are created in one atomic import
(``judges.generation.services.generation_run_complete``).
"""

from __future__ import annotations

from judges.backends import get_backend
from judges.backends.base import OK, Outcome
from judges.generation.prompts import StepPrompt
from judges.generation.services import GENERATION_ACTIVE, generation_run_complete
from judges.generation.steps import get_step
from judges.models import GenerationChunk, GenerationRecord, GenerationRun, Judge
from judges.runs.execution import ChunkReport, chunk_process, outcome_columns, outcomes_upsert, unbuildable
from judges.runs.types import ChunkWork, RunType, register_run_type

STEP_GONE = "step {step} or its prompt {prompt} is not installed on this worker"
GENERATION_RUNS = "generation"


def step_prompt(run: GenerationRun) -> StepPrompt:
    """The run's prompt, at the version the run started with; KeyError if this worker lacks it."""
    step = get_step(run.step)
    baseline = get_backend(run.backend).is_baseline
    return StepPrompt(step, options=run.options, baseline=baseline, version=None if baseline else run.prompt_version)


@register_run_type
class GenerationRuns(RunType[GenerationRun, GenerationChunk, StepPrompt]):
    name = GENERATION_RUNS
    label = "generation run"
    unit = "records"
    run_model = GenerationRun
    chunk_model = GenerationChunk
    claim_related = ("run__project",)
    url_name = "generation_run"
    dom_prefix = "generation-progress"
    counted = "records"
    makes_items = True

    def backend_name(self, run: GenerationRun) -> str:
        return run.backend

    def running_twin(self, run: GenerationRun) -> GenerationRun | None:
        return self.running().filter(project=run.project_id, step=run.step).exclude(pk=run.pk).first()

    def twin_running(self, run: GenerationRun, twin: GenerationRun) -> str:
        return GENERATION_ACTIVE.format(run=twin.pk, step=run.step)

    def prompt(self, run: GenerationRun) -> StepPrompt:
        return step_prompt(run)

    def prompt_gone(self, run: GenerationRun) -> str:
        return STEP_GONE.format(step=run.step, prompt=run.prompt_key)

    def call_config(self, run: GenerationRun) -> Judge:
        return run.as_judge()

    def chunk_work(self, chunk: GenerationChunk, prompt: StepPrompt) -> ChunkWork:
        run = chunk.run
        records = GenerationRecord.objects.filter(
            run=run,
            number__gte=chunk.first_number,
            number__lte=chunk.last_number,
            status=GenerationRecord.Status.PENDING,
        ).order_by("number")
        work = ChunkWork(requests=[], size=chunk.size)
        for record_id, data in records.values_list("pk", "data"):
            try:
                work.requests.append(prompt.build(item_id=record_id, payload=data, seed=run.seed))
            except Exception as exc:  # a record this prompt cannot read fails alone, with the reason
                failed = unbuildable(unit="record", row_id=record_id, data=data, error=exc, salt=prompt.key)
                work.outcomes.append(failed)
        return work

    def store_outcomes(self, chunk: GenerationChunk, work: ChunkWork, outcomes: list[Outcome]) -> tuple[int, int, int]:
        by_id = {o.request.item_id: o for o in outcomes}
        rows = GenerationRecord.objects.filter(pk__in=list(by_id), status=GenerationRecord.Status.PENDING)
        changed = []
        for row in rows:
            outcome = by_id[row.pk]
            row.items = outcome.value["items"] if outcome.status == OK and outcome.value is not None else None
            row.request_sha256 = outcome.request.prompt_sha256
            for name, value in outcome_columns(outcome).items():
                setattr(row, name, value)
            changed.append(row)
        outcomes_upsert(
            GenerationRecord, changed, unique_fields=["run", "number"], extra_fields=("items", "request_sha256")
        )
        in_range = GenerationRecord.objects.filter(
            run_id=chunk.run_id, number__gte=chunk.first_number, number__lte=chunk.last_number
        ).exclude(status=GenerationRecord.Status.EXISTING)
        statuses = list(in_range.values_list("status", flat=True))
        return statuses.count(OK), statuses.count(GenerationRecord.Status.FAILED), chunk.size

    def finish(self, run: GenerationRun) -> GenerationRun:
        return generation_run_complete(run=run)


def generation_chunk_process(*, chunk_id: int, final_attempt: bool = True) -> ChunkReport | None:
    """Generate for the chunk's waiting records and record the outcomes; None if the chunk was not ours."""
    return chunk_process(run_type=GENERATION_RUNS, chunk_id=chunk_id, final_attempt=final_attempt)
