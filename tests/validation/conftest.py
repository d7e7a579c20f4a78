"""Fixtures for validation tests: projects with annotations, judge runs with suggestions, and a
reference task kind that carries published reliability data through the database unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import execute_from_command_line

from annotation.models import Annotation, Item, Project


def add_items(project: Project, external_ids, payload: dict | None = None) -> dict[str, Item]:
    payload = payload if payload is not None else project.task_kind.example_payload()
    return {
        external_id: Item.objects.create(project=project, external_id=external_id, payload=payload)
        for external_id in external_ids
    }


def annotate(
    project: Project,
    item: Item,
    rater: str,
    value: Any,
    *,
    version: int = 1,
    visible: bool | None = None,
    source: str = Annotation.Source.WEB,
) -> Annotation:
    """One version of one rater's annotation, as the append-only log stores it."""
    return Annotation.objects.create(
        project=project,
        item=item,
        rater=rater,
        version=version,
        value=value,
        suggestion_visible=visible,
        source=source,
    )


def copa_value(*scores: int) -> dict:
    factors = ("CT", "SA", "SC", "CLM", "MS", "AMR")
    if len(scores) == 1:
        scores = scores * len(factors)
    return {"scores": dict(zip(factors, scores, strict=True))}


def suggest(run, item: Item, value: Any | None, *, failure: str = "", prompt_sha256: str = "p" * 64):
    """A judge's suggestion for ``item``: OK with ``value``, or failed with ``failure`` (value None)."""
    from judges.models import Suggestion

    status = Suggestion.Status.FAILED if failure else Suggestion.Status.OK
    return Suggestion.objects.create(
        judge=run.judge,
        run=run,
        item=item,
        prompt_sha256=prompt_sha256,
        status=status,
        value=None if failure else value,
        raw_output="not json" if failure else "",
        failure_reason=failure,
    )


def imported_run(project: Project, model: str):
    """A run of an imported judge named ``model`` (how outputs made elsewhere arrive), without lines yet."""
    from judges.models import Judge, JudgeRun

    judge = Judge.objects.create(
        project=project,
        kind=project.kind,
        name=model,
        backend="imported",
        model=model,
        prompt_name="import",
        prompt_version=0,
        fingerprint=model,
    )
    return JudgeRun.objects.create(judge=judge, project=project)


@pytest.fixture
def reference_kind(settings) -> Iterator[str]:
    """Registers ``reference_rating``: a value ``{"value": x}`` rated on three dimensions, the same
    value at the nominal, ordinal and interval level. Published data sets go through the whole
    pipeline (annotations → ratings → agreement) with it."""
    # The kinds' registry loads again when the setting changes (and again when the fixture restores it).
    settings.CONCORD_TASK_KINDS = [*settings.CONCORD_TASK_KINDS, "tests.validation.reference_kind.ReferenceRating"]
    yield "reference_rating"


def run_command(capsys, command: str, *argv: str) -> tuple[int, str, str]:
    """Run ``command`` as ``manage.py`` would; return (exit code, stdout, stderr)."""
    try:
        execute_from_command_line(["manage.py", command, *argv])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def keep_test_connection(monkeypatch):
    """manage.py closes every connection when a command ends; the test's transaction must survive it."""
    monkeypatch.setattr("django.db.connections.close_all", lambda: None)
