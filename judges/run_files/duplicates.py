"""Whether a run's outputs repeat those of another run of the project.

A run file exported and imported again (its provenance line now says "imported") comes back as a
second run with the same answers; counted as two runs it would weigh one model twice in every
comparison of runs. An import whose outputs equal a run's is refused, naming that run, unless the
researcher says it is a separate run all the same."""

from __future__ import annotations

import hashlib

import orjson
from django.db.models import Count, Q

from annotation.errors import FieldError
from judges.models import JudgeRun, Suggestion
from judges.selectors import run_item_results, runs_for_project

SAME_OUTPUTS = (
    "same outputs as run {run}: every item has the same answer or failure. Nothing imported; if it is a "
    "separate run all the same, import it again with \u201cImport even if another run has the same outputs\u201d "
    "(--allow-same-outputs; allow_same_outputs in the API)"
)


def run_outputs_sha256(*, run: JudgeRun) -> str:
    """SHA-256 of the run's answer per item (item id, status and value; each item's newest row)."""
    sha, previous = hashlib.sha256(), None
    rows = run_item_results(run=run).values_list("item_id", "status", "value")
    for item_id, status, value in rows.iterator(chunk_size=2000):
        if item_id != previous:
            previous = item_id
            sha.update(orjson.dumps([item_id, status, value], option=orjson.OPT_SORT_KEYS) + b"\n")
    return sha.hexdigest()


def _counts(run: JudgeRun) -> tuple[int, int]:
    found = run_item_results(run=run).aggregate(
        ok=Count("id", filter=Q(status=Suggestion.Status.OK)),
        failed=Count("id", filter=Q(status=Suggestion.Status.FAILED)),
    )
    return found["ok"], found["failed"]


def same_outputs_run(*, run: JudgeRun) -> JudgeRun | None:
    """Another run of the project with exactly ``run``'s outputs, or None. Only runs with as many
    answers and failures are hashed, so a project of many runs reads few of them."""
    counts = _counts(run)
    digest = None
    for other in runs_for_project(project=run.project).exclude(pk=run.pk).order_by("pk"):
        if _counts(other) != counts:
            continue
        digest = digest or run_outputs_sha256(run=run)
        if run_outputs_sha256(run=other) == digest:
            return other
    return None


def same_outputs_error(run: JudgeRun) -> FieldError | None:
    """The refusal naming the run whose outputs ``run`` repeats, or None."""
    twin = same_outputs_run(run=run)
    return FieldError("", SAME_OUTPUTS.format(run=twin.pk)) if twin is not None else None
