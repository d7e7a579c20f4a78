"""Database rules people rely on: unique ids, valid settings, append-only history, idempotent submits."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from annotation.errors import ConcurrentEdit, ValidationFailed
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, AppendOnlyError, Item, Membership, Project, Role
from annotation.services import annotation_submit, membership_add, project_create
from annotation.synthetic import synthetic_records, write_jsonl
from tests.concurrency import run_at_once

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


@pytest.fixture
def item(make_project):
    return Item.objects.create(project=make_project("copa_likert"), external_id="i1", payload=COPA.example_payload())


class ProjectTests:
    def test_unknown_kind_is_refused(self):
        with pytest.raises(ValidationError, match="unknown task kind 'likert'"):
            project_create(slug="p", kind="likert")

    def test_overlap_below_one_is_refused_by_the_database(self, make_project):
        project = make_project()
        with pytest.raises(IntegrityError), transaction.atomic():
            Project.objects.filter(pk=project.pk).update(overlap=0)

    def test_exposure_probability_outside_0_1_is_refused(self, make_project):
        with pytest.raises(ValidationError, match="suggestion_probability"):
            make_project(suggestion_probability=1.5)
        project = make_project(slug="ok")
        with pytest.raises(IntegrityError), transaction.atomic():
            Project.objects.filter(pk=project.pk).update(suggestion_probability=-0.1)

    def test_creator_becomes_researcher(self, make_user):
        user = make_user("res")
        project = project_create(slug="p", kind="intent_mcq", created_by=user)
        assert Membership.objects.get(project=project, user=user).role == Role.RESEARCHER

    def test_membership_add_is_idempotent(self, make_project, make_user):
        project, user = make_project(), make_user("a")
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        assert Membership.objects.count() == 1


class ItemTests:
    def test_external_id_is_unique_within_a_project(self, item):
        with pytest.raises(IntegrityError), transaction.atomic():
            Item.objects.create(project=item.project, external_id="i1", payload={})


class AnnotationTests:
    def test_an_edit_is_a_new_version(self, item, make_user):
        user = make_user("ann")
        first = annotation_submit(item=item, user=user, value=COPA.example_value())
        changed = {"scores": {**COPA.example_value()["scores"], "MS": 2}}
        second = annotation_submit(item=item, user=user, value=changed)
        assert (first.version, second.version) == (1, 2)
        assert Annotation.objects.get(pk=first.pk).value == COPA.example_value()

    def test_double_submit_with_one_key_stores_one_version(self, item, make_user):
        user = make_user("ann")
        first = annotation_submit(item=item, user=user, value=COPA.example_value(), idempotency_key="k-1")
        again = annotation_submit(item=item, user=user, value=COPA.example_value(), idempotency_key="k-1")
        assert again.pk == first.pk and Annotation.objects.count() == 1

    def test_the_returned_annotation_is_the_stored_row(self, item, make_user):
        returned = annotation_submit(
            item=item,
            user=make_user("ann"),
            value=COPA.example_value(),
            idempotency_key="k-2",
            seconds_on_item=4.5,
            suggestion_visible=True,
        )
        stored = Annotation.objects.get(pk=returned.pk)
        fields = ("item_id", "rater", "version", "value", "source", "idempotency_key", "seconds_on_item",
                  "suggestion_visible", "created_at")  # fmt: skip
        assert [getattr(stored, name) for name in fields] == [getattr(returned, name) for name in fields]

    def test_invalid_value_stores_nothing(self, item, make_user):
        with pytest.raises(ValidationFailed, match="value.scores.CT: must be one of 0, 1, 2, got 3"):
            annotation_submit(
                item=item, user=make_user("ann"), value={"scores": {**COPA.example_value()["scores"], "CT": 3}}
            )
        assert Annotation.objects.count() == 0

    def test_rows_cannot_be_changed_or_deleted(self, item, make_user):
        annotation = annotation_submit(item=item, user=make_user("ann"), value=COPA.example_value())
        annotation.value = {"scores": {}}
        with pytest.raises(AppendOnlyError):
            annotation.save()
        with pytest.raises(AppendOnlyError):
            annotation.delete()

    def test_version_numbers_are_unique_per_rater_and_item(self, item, make_user):
        annotation_submit(item=item, user=make_user("ann"), value=COPA.example_value())
        with pytest.raises(IntegrityError), transaction.atomic():
            Annotation.objects.create(
                project=item.project, item=item, rater="ann", version=1, value=COPA.example_value()
            )


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers are tested on PostgreSQL")
class ConcurrentSubmitTests:
    """Eight requests of one rater at the same moment: the retried one stores once, edits never share a version."""

    def submit_at_once(self, item, user, keys: list[str]) -> tuple[list, list]:
        def submit(key: str):
            return annotation_submit(item=item, user=user, value=COPA.example_value(), idempotency_key=key)

        return run_at_once(submit, keys)

    def test_one_key_sent_eight_times_stores_one_row(self, item, make_user):
        results, failures = self.submit_at_once(item, make_user("ann"), ["same"] * 8)
        assert failures == []
        assert {annotation.pk for annotation in results} == set(Annotation.objects.values_list("pk", flat=True))
        assert Annotation.objects.count() == 1

    def test_parallel_edits_get_consecutive_versions_or_ask_to_submit_again(self, item, make_user):
        results, failures = self.submit_at_once(item, make_user("ann"), [f"k{n}" for n in range(8)])
        assert results and all(isinstance(exc, ConcurrentEdit) for exc in failures)
        versions = sorted(Annotation.objects.values_list("version", flat=True))
        assert versions == list(range(1, len(results) + 1)) == sorted(a.version for a in results)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the parameter limit of server-side binding")
def test_a_project_larger_than_one_statements_parameters_can_be_deleted(make_project, tmp_path):
    """Server-bound statements carry at most 65,535 parameters; deleting cascades in batches below that."""
    project = make_project("intent_mcq")
    records = synthetic_records(get_kind("intent_mcq"), 70_000)
    import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", records))
    project.delete()
    assert not Item.objects.exists()
