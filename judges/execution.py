"""Judge runs as a run type of the chunked-run engine (judges.runs): a judge's answers on a project's items.

A chunk is an id range of the project's items. Settled items are skipped: an OK suggestion of the
judge for the same prompt (from any run) is kept, and so is a failure this run already recorded; a
failure from an earlier run is retried. Outcomes are stored as suggestions, keyed by (judge, item,
prompt hash), so rerunning never duplicates.
"""

from __future__ import annotations

from annotation.models import Item
from annotation.table_statistics import statistics_refreshed
from judges.backends.base import FAILED, OK, Outcome
from judges.errors import RUN_ALREADY_ACTIVE
from judges.models import Judge, JudgeChunk, JudgeRun, Suggestion
from judges.prompting import JudgeRequest, Prompt, get_prompt
from judges.runs.execution import ChunkReport, chunk_process, outcome_columns, outcomes_upsert, unbuildable
from judges.runs.types import ChunkWork, RunType, register_run_type

PROMPT_GONE = "prompt {prompt} is no longer installed on this worker"
JUDGE_RUNS = "judge"


@register_run_type
class JudgeRuns(RunType[JudgeRun, JudgeChunk, Prompt]):
    name = JUDGE_RUNS
    label = "run"
    unit = "items"
    run_model = JudgeRun
    chunk_model = JudgeChunk
    claim_related = ("run__judge",)
    url_name = "judge_run"
    dom_prefix = "run-progress"
    counted = "done"

    def backend_name(self, run: JudgeRun) -> str:
        return run.judge.backend

    def running_twin(self, run: JudgeRun) -> JudgeRun | None:
        return self.running().filter(judge=run.judge_id, project=run.project_id).exclude(pk=run.pk).first()

    def twin_running(self, run: JudgeRun, twin: JudgeRun) -> str:
        return RUN_ALREADY_ACTIVE.format(run=twin.pk)

    def prompt(self, run: JudgeRun) -> Prompt:
        # Bound to the project's kind: a designed kind's prompt and answer schema follow its design.
        return get_prompt(run.judge.prompt_key).for_kind(run.project.task_kind)

    def prompt_gone(self, run: JudgeRun) -> str:
        return PROMPT_GONE.format(prompt=run.judge.prompt_key)

    def call_config(self, run: JudgeRun) -> Judge:
        return run.judge

    def chunk_work(self, chunk: JudgeChunk, prompt: Prompt) -> ChunkWork:
        run, judge = chunk.run, chunk.run.judge
        items = Item.objects.filter(
            project_id=run.project_id, pk__gte=chunk.first_item_id, pk__lte=chunk.last_item_id
        ).order_by("pk")
        work = ChunkWork(requests=[])
        requests: list[JudgeRequest] = []
        for item_id, external_id, payload in items.values_list("pk", "external_id", "payload"):
            work.size += 1
            try:
                requests.append(
                    prompt.build(item_id=item_id, payload=payload, external_id=external_id, seed=judge.seed)
                )
            except Exception as exc:  # a payload this prompt cannot read fails alone, with the reason
                work.outcomes.append(unbuildable(unit="item", row_id=item_id, data=payload, error=exc, salt=prompt.key))
        stored = {
            (item_id, sha): (status, run_id)
            for item_id, sha, status, run_id in Suggestion.objects.filter(
                judge=judge, item_id__in=[r.item_id for r in requests]
            ).values_list("item_id", "prompt_sha256", "status", "run_id")
        }
        for request in requests:
            status, made_by = stored.get((request.item_id, request.prompt_sha256), (None, None))
            if status == Suggestion.Status.OK or (status == Suggestion.Status.FAILED and made_by == run.pk):
                work.settled[request.item_id] = status
            else:
                work.requests.append(request)
        return work

    def store_outcomes(self, chunk: JudgeChunk, work: ChunkWork, outcomes: list[Outcome]) -> tuple[int, int, int]:
        rows = [
            Suggestion(
                judge_id=chunk.run.judge_id,
                run_id=chunk.run_id,
                item_id=o.request.item_id,
                prompt_sha256=o.request.prompt_sha256,
                value=o.value if o.status == OK else None,
                **outcome_columns(o),
            )
            for o in outcomes
        ]
        outcomes_upsert(
            Suggestion, rows, unique_fields=["judge", "item", "prompt_sha256"], extra_fields=("run", "value")
        )
        statuses = [*work.settled.values(), *(o.status for o in outcomes)]
        return statuses.count(OK), statuses.count(FAILED), work.size

    def finish(self, run: JudgeRun) -> JudgeRun:
        """Complete the run; a large one's suggestions are written a chunk at a time, so the
        suggestion table's statistics are taken once here, before its report is opened."""
        run = super().finish(run)
        statistics_refreshed(Suggestion, run.total)
        return run


def judge_chunk_process(*, chunk_id: int, final_attempt: bool = True) -> ChunkReport | None:
    """Judge the chunk's unsettled items and record the outcomes; None if the chunk was not ours."""
    return chunk_process(run_type=JUDGE_RUNS, chunk_id=chunk_id, final_attempt=final_attempt)
