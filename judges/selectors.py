"""Reads: runs, their progress, and the suggestions other apps use (annotators' view, agreement)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.models import Item, Project
from judges.models import Judge, JudgeRun, RunState, Suggestion
from judges.runs.types import RunType, run_type_of


def runs_for_project(*, project: Project) -> QuerySet[JudgeRun]:
    """The project's runs, newest first, with their judges."""
    return JudgeRun.objects.filter(project=project).select_related("judge").order_by("-created_at", "-id")


def judges_for_project(*, project: Project) -> QuerySet[Judge]:
    return Judge.objects.filter(project=project).order_by("name", "id")


def _run_suggestions(run: JudgeRun) -> QuerySet[Suggestion]:
    """A run's suggestions: those of its judge on its project, whichever run of the judge stored them.

    A rerun keeps the judge's OK suggestions instead of asking again (the rows stay with the run that
    made them), so a run's results are the judge's answers on the project.
    """
    return Suggestion.objects.filter(judge_id=run.judge_id, item__project_id=run.project_id)


#: A suggestion stored before an import replaced its item's payload: it scored an earlier version of
#: the item, so estimates, agreement and annotators leave it out until the run is repeated.
SCORED_EARLIER_VERSION = Q(item__payload_updated_at__gt=F("updated_at"))


def is_scored_on_earlier_version(suggestion: Suggestion, item: Item) -> bool:
    """``SCORED_EARLIER_VERSION`` for one suggestion already read (the item page marks it)."""
    return item.payload_updated_at is not None and suggestion.updated_at < item.payload_updated_at


def ok_suggestions(*, run_id: int) -> QuerySet[Suggestion]:
    """The run's OK suggestions by item, each item's newest first: the first row of an item is its
    answer (an item judged under two prompt hashes, its payload having changed, counts once). A
    suggestion scored on an earlier version of its item is not among them until the run is repeated."""
    run = JudgeRun.objects.get(pk=run_id)
    return (
        _run_suggestions(run)
        .filter(status=Suggestion.Status.OK)
        .exclude(SCORED_EARLIER_VERSION)
        .order_by("item_id", "-updated_at", "-id")
    )


def scored_on_earlier_version_count(*, run: JudgeRun) -> int:
    """How many of the run's OK suggestions scored an earlier version of their item (left out)."""
    return _run_suggestions(run).filter(SCORED_EARLIER_VERSION, status=Suggestion.Status.OK).count()


def suggestion_existed(*, run_id: int) -> Exists:
    """For an annotation queryset: whether the run's judge had an OK suggestion for the annotation's
    item when the annotation was made, so that it could have been shown (or was hidden on purpose).
    A rating made before that has no bearing on anchoring on this run."""
    run = JudgeRun.objects.get(pk=run_id)
    return Exists(
        _run_suggestions(run).filter(
            status=Suggestion.Status.OK, item_id=OuterRef("item_id"), created_at__lte=OuterRef("created_at")
        )
    )


def suggestion_values(*, run_id: int, as_text: bool = False) -> Iterator[tuple[int, Any]]:
    """(item id, value) of the run's OK suggestions, in item order. Failed items are absent, never zeros.

    ``as_text`` gives each value as its JSON text, for callers that decode many at once (decoding row
    by row is most of the cost of reading 100,000 values)."""
    previous = None
    rows = ok_suggestions(run_id=run_id).values_list("item_id", Cast("value", TextField()) if as_text else "value")
    for item_id, value in rows.iterator(chunk_size=2000):
        # An item judged under two prompt hashes (its payload changed) counts once: the newest answer.
        if item_id != previous:
            previous = item_id
            yield item_id, value


def suggestion_for_display(*, item: Item) -> Suggestion | None:
    """The suggestion an annotator may see for ``item``, or None.

    It is the newest OK suggestion of the project's most recent running or completed run for the
    item's kind, provided its value still passes the kind's checks. Whether the project shows it at
    all is the caller's decision (the project's exposure setting).
    """
    project = item.project
    # The run's judge as a subquery: one statement, on every item the workspace serves with suggestions.
    latest_run_judge = (
        JudgeRun.objects.filter(
            project_id=project.pk,
            judge__kind=project.kind,
            status__in=(JudgeRun.Status.RUNNING, JudgeRun.Status.COMPLETED),
        )
        .order_by("-created_at", "-id")
        .values("judge_id")[:1]
    )
    suggestion = (
        Suggestion.objects.filter(judge_id=Subquery(latest_run_judge), item=item, status=Suggestion.Status.OK)
        .exclude(SCORED_EARLIER_VERSION)
        .select_related("run__judge", "judge")
        .order_by("-updated_at", "-id")
        .first()
    )
    if suggestion is None or project.task_kind.check_value(suggestion.value, payload=item.payload):
        return None
    return suggestion


@dataclass(frozen=True)
class RunProgress:
    """A run's counts, rate and ETA, for a run of any run type (judges.runs.types)."""

    run: RunState
    items_per_s: float | None
    eta_seconds: float | None

    @property
    def run_type(self) -> RunType:
        return run_type_of(self.run)

    @property
    def done(self) -> int:
        return self.run.done_count

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.run.total) if self.run.total else 100

    @property
    def eta_text(self) -> str:
        if self.eta_seconds is None:
            return ""
        minutes, seconds = divmod(round(self.eta_seconds), 60)
        hours, minutes = divmod(minutes, 60)
        return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s" if minutes else f"{seconds} s"

    def as_dict(self) -> dict:
        run = self.run
        return {
            "run": run.pk,
            "status": run.status,
            "total": run.total,
            "ok": run.ok_count,
            "failed": run.failed_count,
            "pending": run.pending_count,
            "items_per_s": None if self.items_per_s is None else round(self.items_per_s, 1),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds),
            "last_error": run.last_error,
        }


def run_progress(*, run: RunState) -> RunProgress:
    """Done / failed / total from the run row; items/s over the time since the run last (re)started."""
    end = run.finished_at if run.finished_at and not run.is_active else timezone.now()
    rate = eta = None
    if run.resumed_at is not None:
        seconds = (end - run.resumed_at).total_seconds()
        done_since = run.done_count - run.done_at_resume
        if seconds > 0 and done_since > 0:
            rate = done_since / seconds
            if run.is_active:
                eta = run.pending_count / rate
    return RunProgress(run=run, items_per_s=rate, eta_seconds=eta)


def failed_suggestions(*, run: JudgeRun) -> QuerySet[Suggestion]:
    """The run's failed items with their raw output and reason, in item order."""
    return _run_suggestions(run).filter(status=Suggestion.Status.FAILED).select_related("item").order_by("item_id")


def run_item_results(*, run: JudgeRun, status: str | None = None) -> QuerySet[Suggestion]:
    """What the judge said on each item of the run (OK values and failures alike, or one ``status``),
    in item order with the item, for the run page."""
    rows = _run_suggestions(run).select_related("item").order_by("item_id", "-updated_at", "-id")
    return rows.filter(status=status) if status else rows
