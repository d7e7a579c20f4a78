"""Storing computed numbers frozen, and checking them against a recomputation: the one snapshot record
that agreement reports (``validation.services``) and paper evaluations
(``validation.evaluations.snapshots``) both write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from annotation.models import Project
from validation.models import ReportSnapshot, SnapshotCheck

__all__ = ["MAX_DIFFERENCES", "numbers_digest", "snapshot_check_against", "snapshot_store"]

#: Differing numbers listed on a check (the rest are counted).
MAX_DIFFERENCES = 50


def numbers_digest(numbers: dict[str, Any]) -> str:
    """SHA-256 of the numbers as canonical JSON (sorted keys, no spaces; floats as Python's repr)."""
    text = json.dumps(numbers, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def snapshot_store(
    *,
    project: Project,
    evaluation: str = "",
    parameters: dict[str, Any],
    judge_run_id: int | None,
    judge_label: str,
    inputs_sha256: str,
    numbers: dict[str, Any],
    library_versions: dict[str, str],
    render: Callable[[str], str],
    user: Any = None,
    title: str = "",
) -> ReportSnapshot:
    """Store computed numbers frozen with their provenance and their tables in every format
    (agreement reports and the paper evaluations alike): ``evaluation`` names the paper evaluation,
    "" for the project's agreement report; ``kind`` records the project's task kind either way."""
    snapshot = ReportSnapshot(
        project=project,
        title=title,
        kind=project.kind,
        evaluation=evaluation,
        parameters=parameters,
        judge_run_id=judge_run_id,
        judge_label=judge_label[:400],
        inputs_sha256=inputs_sha256,
        numbers=numbers,
        numbers_sha256=numbers_digest(numbers),
        library_versions=library_versions,
        markdown=render("md"),
        latex=render("latex"),
        csv=render("csv"),
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    snapshot.full_clean()
    snapshot.save()
    return snapshot


def _differences(stored: Any, recomputed: Any, path: str, out: list[dict[str, Any]]) -> None:
    """Every leaf where the two JSON trees differ. Numbers must be equal exactly: same inputs, same
    seed and same library versions give bit-identical results, so any change is reported."""
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in sorted(set(stored) | set(recomputed)):
            _differences(stored.get(key), recomputed.get(key), f"{path}.{key}" if path else key, out)
    elif isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(recomputed):
        for index, (a, b) in enumerate(zip(stored, recomputed, strict=True)):
            _differences(a, b, f"{path}[{index}]", out)
    elif stored != recomputed:
        out.append({"path": path, "stored": stored, "recomputed": recomputed})


def snapshot_check_against(
    *,
    snapshot: ReportSnapshot,
    versions: dict[str, str],
    recompute: Callable[[], Any],
    order: Callable[[dict[str, Any]], Any],
    user: Any = None,
) -> SnapshotCheck:
    """Recompute (``recompute()`` returns an object with ``numbers()`` and ``inputs_sha256``) and store
    what matches the snapshot: inputs, every number (the first differences, sorted by ``order``),
    library versions. A failure to recompute is the check's finding, kept on its row."""
    common = {
        "snapshot": snapshot,
        "library_versions": versions,
        "versions_match": versions == snapshot.library_versions,
        "checked_by": user if getattr(user, "is_authenticated", False) else None,
    }
    try:
        result = recompute()
    except Exception as exc:  # noqa: BLE001 - any failure to recompute is the check's finding, kept on its row
        check = SnapshotCheck(
            **common, inputs_sha256="", inputs_match=False, numbers_match=False, error=f"{type(exc).__name__}: {exc}"
        )
        check.save()
        return check
    # Round-trip through JSON so both sides are compared in the form the snapshot stored.
    recomputed = json.loads(json.dumps(result.numbers(), allow_nan=False))
    differences: list[dict[str, Any]] = []
    _differences(snapshot.numbers, recomputed, "", differences)
    differences.sort(key=order)
    check = SnapshotCheck(
        **common,
        inputs_sha256=result.inputs_sha256,
        inputs_match=result.inputs_sha256 == snapshot.inputs_sha256,
        numbers_match=not differences,
        differences=differences[:MAX_DIFFERENCES],
        difference_count=len(differences),
    )
    check.full_clean()
    check.save()
    return check
