"""Freezing a paper evaluation, and checking a frozen one, in the agreement reports' snapshot record.

A snapshot of ``copa_eval`` or ``mcq_eval`` is a ``ReportSnapshot`` whose ``kind`` names the
evaluation: the inputs' SHA-256, the parameters (with the human-score table for ``mcq_eval``), the
library versions, every number (``Evaluation.numbers()``: the JSON result and the tables) and the
tables rendered as Markdown, LaTeX and CSV. A check recomputes it from today's data with the stored
parameters and stores a ``SnapshotCheck`` saying what changed, as for a frozen report; the report
page's snapshot view shows, downloads and checks both alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.db import transaction

from annotation.models import Project
from validation.evaluations.base import Evaluation, current_versions, render_evaluation
from validation.evaluations.copa_report import CopaEvalParameters, copa_evaluation
from validation.evaluations.mcq_report import McqEvalParameters, mcq_evaluation
from validation.models import ReportSnapshot, SnapshotCheck
from validation.services import MAX_DIFFERENCES, numbers_digest

__all__ = ["EVALUATIONS", "evaluation_snapshot_check", "evaluation_snapshot_create", "recompute"]

#: Snapshot kind → (parameters from their JSON, the evaluation).
EVALUATIONS: dict[str, tuple[Callable[[dict], Any], Callable[..., Evaluation]]] = {
    "copa_eval": (CopaEvalParameters.from_json_dict, copa_evaluation),
    "mcq_eval": (McqEvalParameters.from_json_dict, mcq_evaluation),
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
    numbers = evaluation.numbers()
    snapshot = ReportSnapshot(
        project=project,
        title=title,
        kind=evaluation.name,
        parameters=evaluation.parameters,
        judge_run_id=None,
        judge_label=evaluation.judge_label[:400],
        inputs_sha256=evaluation.inputs_sha256,
        numbers=numbers,
        numbers_sha256=numbers_digest(numbers),
        library_versions=evaluation.library_versions,
        markdown=render_evaluation(evaluation, "md"),
        latex=render_evaluation(evaluation, "latex"),
        csv=render_evaluation(evaluation, "csv"),
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    snapshot.full_clean()
    snapshot.save()
    return snapshot


def _differences(stored: Any, recomputed: Any, path: str, out: list[dict[str, Any]]) -> None:
    """Every leaf where two JSON trees differ; numbers must be identical (same inputs, seed, versions)."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in sorted(set(stored) | set(recomputed)):
            _differences(stored.get(key), recomputed.get(key), f"{path}.{key}" if path else key, out)
    elif isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(recomputed):
        for index, (a, b) in enumerate(zip(stored, recomputed, strict=True)):
            _differences(a, b, f"{path}[{index}]", out)
    elif stored != recomputed:
        out.append({"path": path, "stored": stored, "recomputed": recomputed})


def evaluation_snapshot_check(*, snapshot: ReportSnapshot, user: Any = None) -> SnapshotCheck:
    """Recompute a frozen evaluation and store what matches: inputs, every number, library versions."""
    versions = current_versions()
    common = {
        "snapshot": snapshot,
        "library_versions": versions,
        "versions_match": versions == snapshot.library_versions,
        "checked_by": user if getattr(user, "is_authenticated", False) else None,
    }
    try:
        evaluation = recompute(project=snapshot.project, kind=snapshot.kind, parameters=snapshot.parameters)
    except Exception as exc:  # noqa: BLE001 - any failure to recompute is the check's finding, kept on its row
        check = SnapshotCheck(
            **common, inputs_sha256="", inputs_match=False, numbers_match=False, error=f"{type(exc).__name__}: {exc}"
        )
        check.save()
        return check
    recomputed = json.loads(json.dumps(evaluation.numbers(), allow_nan=False))
    differences: list[dict[str, Any]] = []
    _differences(snapshot.numbers, recomputed, "", differences)
    # The command's numbers first, then the tables that show them: the stored list is capped.
    differences.sort(key=lambda d: d["path"].startswith("tables."))
    check = SnapshotCheck(
        **common,
        inputs_sha256=evaluation.inputs_sha256,
        inputs_match=evaluation.inputs_sha256 == snapshot.inputs_sha256,
        numbers_match=not differences,
        differences=differences[:MAX_DIFFERENCES],
        difference_count=len(differences),
    )
    check.full_clean()
    check.save()
    return check
