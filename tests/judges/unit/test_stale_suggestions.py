"""A run's scores for an item whose payload an import replaced scored an earlier version: they are
marked on the item page and left out of estimates, agreement and the workspace until the run is
repeated (issue 41, point 8)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import ImportJob, Item
from annotation.synthetic import synthetic_records
from judges.selectors import (
    ok_suggestions,
    scored_on_earlier_version_count,
    suggestion_for_display,
    suggestion_values,
)
from tests.validation.conftest import copa_value, suggest
from validation.ratings import judge_rater_name, project_ratings

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


def write(path, records) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


@pytest.fixture
def scored_then_updated(make_project, judge_run, tmp_path):  # noqa: F811
    project = make_project("copa_likert", suggestion_exposure="shown")
    records = list(synthetic_records(COPA, 3))
    import_items(project=project, path=write(tmp_path / "items.jsonl", records))
    run = judge_run(project)
    items = list(Item.objects.filter(project=project).order_by("pk"))
    for item in items:
        suggest(run, item, copa_value(2))
    changed = [dict(records[0], question="A reworded question?"), *records[1:]]
    result = import_items(
        project=project, path=write(tmp_path / "again.jsonl", changed), existing=ImportJob.Existing.UPDATE
    )
    assert result.updated == 1
    return project, run, items


def test_the_updated_item_s_score_is_left_out_until_the_run_is_repeated(scored_then_updated):
    project, run, items = scored_then_updated
    updated = Item.objects.get(pk=items[0].pk)
    assert updated.payload_updated_at is not None and items[1].payload_updated_at is None
    assert [item_id for item_id, _ in suggestion_values(run_id=run.pk)] == [items[1].pk, items[2].pk]
    assert scored_on_earlier_version_count(run=run) == 1
    ratings = project_ratings(project=project, judge_run_id=run.pk)
    judged = ratings.matrix("CT", [judge_rater_name(run.pk)])[:, 0]
    assert sorted(ratings.unit_items[~np.isnan(judged)]) == [items[1].pk, items[2].pk]
    assert suggestion_for_display(item=updated) is None  # annotators do not see a score of other text
    assert suggestion_for_display(item=items[1]) is not None
    # Scored again on the new text (a new prompt hash): back in.
    suggest(run, updated, copa_value(1), prompt_sha256="q" * 64)
    assert ok_suggestions(run_id=run.pk).filter(item=updated).count() == 1
    assert scored_on_earlier_version_count(run=run) == 1  # the old row stays, marked
    assert dict(suggestion_values(run_id=run.pk))[updated.pk] == copa_value(1)
