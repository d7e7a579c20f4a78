"""Reads: generation runs, their progress, token counts and failures."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet, Sum

from annotation.models import Project
from judges.models import GenerationRecord, GenerationRun


def generation_runs_for_project(*, project: Project) -> QuerySet[GenerationRun]:
    return GenerationRun.objects.filter(project=project).order_by("-created_at", "-id")


@dataclass(frozen=True)
class TokenCounts:
    tokens_in: int
    tokens_out: int
    answered: int


def generation_tokens(*, run: GenerationRun) -> TokenCounts:
    """Tokens the model read and wrote over the run's answered records (as the server reported them)."""
    sums = GenerationRecord.objects.filter(run=run, attempts__gt=0).aggregate(
        tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out")
    )
    answered = GenerationRecord.objects.filter(run=run, tokens_out__isnull=False).count()
    return TokenCounts(tokens_in=sums["tokens_in"] or 0, tokens_out=sums["tokens_out"] or 0, answered=answered)


def generation_failures(*, run: GenerationRun) -> QuerySet[GenerationRecord]:
    """The run's failed records with their raw output and reason, in file order."""
    return GenerationRecord.objects.filter(run=run, status=GenerationRecord.Status.FAILED).order_by("number")


def generation_summary(*, run: GenerationRun) -> dict:
    """The command line's JSON for a run."""
    return {
        "project": run.project.slug,
        "run": run.pk,
        "step": run.step,
        "records": run.total,
        "items_created": run.items_created,
        "failed": run.failed_count,
    }
