"""Each rater's latest value per item (annotation.latest): the newest version wins, on every reader's
narrowing, in one statement, on PostgreSQL and SQLite alike."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.kinds import get_kind
from annotation.latest import latest_annotations, latest_values
from annotation.models import Annotation, Item

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


def copa(score: int) -> dict:
    return {"scores": dict.fromkeys(("CT", "SA", "SC", "CLM", "MS", "AMR"), score)}


@pytest.fixture
def answered(make_project):
    """Two items; on the first, ann edits twice (versions 1-3) and bob once; on the second, only bob."""
    project = make_project("copa_likert")
    first, second = (
        Item.objects.create(project=project, external_id=f"i{n}", payload=COPA.example_payload()) for n in (1, 2)
    )
    for version, score in ((1, 0), (2, 1), (3, 2)):
        Annotation.objects.create(project=project, item=first, rater="ann", version=version, value=copa(score))
    Annotation.objects.create(project=project, item=first, rater="bob", version=1, value=copa(1), source="api")
    Annotation.objects.create(project=project, item=second, rater="bob", version=1, value=copa(0))
    return project, first, second


class LatestValuesTests:
    def test_the_newest_version_of_each_rater_wins_raters_in_name_order(self, answered):
        _, first, second = answered
        with CaptureQueriesContext(connection) as queries:
            found = latest_values([first.pk, second.pk])
        assert len(queries) == 1
        assert found == {first.pk: {"ann": copa(2), "bob": copa(1)}, second.pk: {"bob": copa(0)}}
        assert list(found[first.pk]) == ["ann", "bob"]

    def test_a_project_range_one_rater_or_all_but_one(self, answered):
        project, first, second = answered
        assert latest_values([first.pk, second.pk], project_id=project.pk) == latest_values([first.pk, second.pk])
        assert latest_values([first.pk], rater="ann") == {first.pk: {"ann": copa(2)}}
        assert latest_values([first.pk, second.pk], exclude_rater="bob") == {first.pk: {"ann": copa(2)}}
        assert latest_values([]) == {}

    def test_the_queryset_keeps_the_newest_version_before_it_filters_by_source(self, answered):
        """An edit made in the browser after an API answer counts as the edit (it is the newest)."""
        project, first, second = answered
        rows = latest_annotations(project=project).values_list("item_id", "rater", "version")
        assert sorted(rows) == sorted([(first.pk, "ann", 3), (first.pk, "bob", 1), (second.pk, "bob", 1)])
        api = latest_annotations(project=project, sources=["api"]).values_list("rater", "version")
        assert list(api) == [("bob", 1)]
        Annotation.objects.create(project=project, item=first, rater="bob", version=2, value=copa(2))
        assert not latest_annotations(project=project, sources=["api"]).exists()
