"""Freezing a paper evaluation, and checking a frozen one, in the agreement reports' snapshot record.

A snapshot of ``copa_eval`` or ``mcq_eval`` is a ``ReportSnapshot`` whose ``kind`` names the
evaluation: the inputs' SHA-256, the parameters (with the human-score table for ``mcq_eval``), the
library versions, every number (``Evaluation.numbers()``: the JSON result and the tables) and the
tables rendered as Markdown, LaTeX and CSV. A check recomputes it from today's data with the stored
parameters and stores a ``SnapshotCheck`` saying what changed, as for a frozen report; the report
page's snapshot view shows, downloads and checks both alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotation.models import Project
from validation.estimates.build import EstimateParameters, project_estimates
from validation.evaluations.base import Evaluation, current_versions, render_evaluation
from validation.evaluations.copa_report import CopaEvalParameters, copa_evaluation
from validation.evaluations.mcq_report import McqEvalParameters, mcq_evaluation
from validation.models import ReportSnapshot, SnapshotCheck
from validation.services import snapshot_check_against, snapshot_store

__all__ = ["EVALUATIONS", "evaluation_snapshot_check", "evaluation_snapshot_create", "recompute"]

#: Snapshot kind → (parameters from their JSON, the evaluation).
EVALUATIONS: dict[str, tuple[Callable[[dict], Any], Callable[..., Evaluation]]] = {
    "copa_eval": (CopaEvalParameters.from_json_dict, copa_evaluation),
    "mcq_eval": (McqEvalParameters.from_json_dict, mcq_evaluation),
    "estimates": (EstimateParameters.from_json_dict, project_estimates),
}


def recompute(*, project: Project, kind: str, parameters: dict[str, Any]) -> Evaluation:
    """The evaluation ``kind`` from today's data, with parameters as a snapshot stores them."""
    read, evaluate = EVALUATIONS[kind]
    return evaluate(project=project, parameters=read(parameters))


@transaction.atomic
def evaluation_snapshot_create(
    *, project: Project, evaluation: Evaluation, user: Any = None, title: str = ""
) -> ReportSnapshot:
    """Store a computed evaluation frozen (it must be this project's)."""
    if evaluation.project != project.slug or evaluation.name not in EVALUATIONS:
        raise ValueError("the evaluation given was computed for another project, or is no paper evaluation")
    return snapshot_store(
        project=project,
        kind=evaluation.name,
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
        recompute=lambda: recompute(project=snapshot.project, kind=snapshot.kind, parameters=snapshot.parameters),
        order=lambda d: (d["path"].startswith("tables."), d["path"].count(".")),
        user=user,
    )
