"""Freezing a paper evaluation, and checking a frozen one, in the agreement reports' snapshot record.

A snapshot of a paper evaluation is a ``ReportSnapshot`` whose ``evaluation`` names it (any evaluation
of ``validation.evaluations.registry``): the inputs' SHA-256, the parameters (everything that changes
the numbers besides the data, e.g. ``mcq_eval``'s human-score table), the library versions, every number
(``Evaluation.numbers()``: the JSON result and the tables) and the tables rendered as Markdown, LaTeX
and CSV. A check recomputes it from today's data with the stored parameters and stores a
``SnapshotCheck`` saying what changed, as for a frozen report; the report page's snapshot view shows,
downloads and checks both alike."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from annotation.models import Project
from validation.evaluations.base import Evaluation, current_versions, render_evaluation
from validation.evaluations.registry import evaluation_named, paper_evaluations
from validation.models import ReportSnapshot, SnapshotCheck
from validation.snapshotting import snapshot_check_against, snapshot_store

__all__ = ["evaluation_snapshot_check", "evaluation_snapshot_create", "recompute"]


def recompute(*, project: Project, name: str, parameters: dict[str, Any]) -> Evaluation:
    """The evaluation ``name`` from today's data, with parameters as a snapshot stores them."""
    evaluation = evaluation_named(name)
    return evaluation.evaluate(project=project, parameters=evaluation.from_json(parameters))


@transaction.atomic
def evaluation_snapshot_create(
    *, project: Project, evaluation: Evaluation, user: Any = None, title: str = ""
) -> ReportSnapshot:
    """Store a computed evaluation frozen (it must be this project's)."""
    if evaluation.project != project.slug or evaluation.name not in paper_evaluations():
        raise ValueError("the evaluation given was computed for another project, or is no paper evaluation")
    return snapshot_store(
        project=project,
        evaluation=evaluation.name,
        parameters=evaluation.parameters,
        judge_run_id=None,
        judge_label=evaluation.judge_label,
        inputs_sha256=evaluation.inputs_sha256,
        numbers=evaluation.numbers(),
        library_versions=evaluation.library_versions,
        render=lambda fmt: render_evaluation(evaluation, fmt),
        user=user,
        title=title,
    )


def evaluation_snapshot_check(*, snapshot: ReportSnapshot, user: Any = None) -> SnapshotCheck:
    """Recompute a frozen evaluation and store what matches: inputs, every number, library versions."""
    # The command's numbers first (the headline ones before their breakdowns), then the tables that
    # show them: the stored list is capped.
    return snapshot_check_against(
        snapshot=snapshot,
        versions=current_versions(),
        recompute=lambda: recompute(project=snapshot.project, name=snapshot.evaluation, parameters=snapshot.parameters),
        order=lambda d: (d["path"].startswith("tables."), d["path"].count(".")),
        user=user,
    )
