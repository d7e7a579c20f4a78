"""A judge's results written in bulk leave the planner knowing them: the report that reads a run's
suggestions right after it is planned on the rows written, not on a table that looked empty."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from annotation.models import SampleItem
from annotation.sampling import validation_sample_draw
from judges.models import Suggestion
from judges.run_files import judge_run_import
from tests.judges.conftest import add_items, make_judge, run_now

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="planner statistics are PostgreSQL's")
THRESHOLD = 20


def planner_rows(model) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [model._meta.db_table])
        return cursor.fetchone()[0]


def analyzed_empty(model) -> None:
    """Statistics that say the table is empty, as a fresh database has them."""
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {model._meta.db_table}")
    assert planner_rows(model) == 0


@pytest.fixture(autouse=True)
def _threshold(settings):
    settings.CONCORD_ANALYZE_AFTER_ROWS = THRESHOLD


def test_a_completed_judge_run_takes_the_suggestion_statistics(make_project):
    project = make_project("copa_likert")
    add_items(project, THRESHOLD)
    analyzed_empty(Suggestion)
    run = run_now(make_judge(project, "baseline"), project, chunk_size=7)
    assert run.status == "completed"
    assert planner_rows(Suggestion) == Suggestion.objects.count() == THRESHOLD


def test_an_imported_run_takes_the_suggestion_statistics(make_project, tmp_path):
    project = make_project("copa_likert")
    add_items(project, THRESHOLD)
    value = project.task_kind.example_value()
    path = tmp_path / "run.jsonl"
    lines = (
        json.dumps({"external_id": f"item-{n:05d}", "value": value, "raw_output": json.dumps(value)})
        for n in range(THRESHOLD)
    )
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    analyzed_empty(Suggestion)
    judge_run_import(project=project, path=path, model="m")
    assert planner_rows(Suggestion) == Suggestion.objects.count() == THRESHOLD


def test_a_small_run_is_left_to_autovacuum(make_project):
    project = make_project("copa_likert")
    add_items(project, THRESHOLD - 1)
    analyzed_empty(Suggestion)
    run_now(make_judge(project, "baseline"), project)
    assert planner_rows(Suggestion) == 0


def test_a_validation_sample_draw_takes_the_sample_statistics(make_project):
    project = make_project("copa_likert")
    add_items(project, 2 * THRESHOLD)
    analyzed_empty(SampleItem)
    validation_sample_draw(project=project, seed=1, n=THRESHOLD)
    assert planner_rows(SampleItem) == SampleItem.objects.count() == THRESHOLD
