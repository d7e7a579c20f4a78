"""The assignment engine: k distinct annotators per item, reproducible orders, never past k."""

from collections import Counter

import pytest
from django.db import connection

from annotation.assignments import (
    AssignmentClosed,
    assignment_claim_next,
    assignment_skip,
    assignment_submit,
    suggestion_exposed,
)
from annotation.errors import ValidationFailed
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Item, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.concurrency import run_at_once

MCQ = get_kind("intent_mcq")


@pytest.fixture
def mcq_project(make_project, tmp_path):
    def make(n_items: int = 12, **options):
        project = make_project("intent_mcq", **options)
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(MCQ, n_items)))
        return project

    return make


def drain(project, user) -> list[str]:
    """Claim and submit until nothing is left, as an annotator of the project; the external ids in
    the order served."""
    membership_add(project=project, user=user, role=Role.ANNOTATOR)
    served = []
    while (assignment := assignment_claim_next(project=project, user=user)) is not None:
        served.append(assignment.item.external_id)
        assignment_submit(assignment=assignment, value={"chosen": [0]})
    return served


def claim_as_annotator(project, user):
    membership_add(project=project, user=user, role=Role.ANNOTATOR)
    return assignment_claim_next(project=project, user=user)


@pytest.mark.django_db
class ClaimTests:
    def test_each_item_reaches_exactly_k_distinct_annotators(self, mcq_project, make_user):
        project = mcq_project(n_items=10, overlap=2)
        people = [make_user(f"a{i}") for i in range(3)]
        served = {user.username: drain(project, user) for user in people}
        per_item = Counter(external_id for ids in served.values() for external_id in ids)
        assert set(per_item.values()) == {2} and len(per_item) == 10
        assert all(len(ids) == len(set(ids)) for ids in served.values())
        assert not Item.objects.filter(is_open=True).exists()

    def test_order_is_reproducible_per_annotator_and_differs_between_them(self, make_project, make_user, tmp_path):
        path = write_jsonl(tmp_path / "i.jsonl", synthetic_records(MCQ, 12))
        twins = [make_project("intent_mcq", slug=slug, overlap=2, seed=5) for slug in ("one", "two")]
        for project in twins:
            import_items(project=project, path=path)
        a, b = make_user("a"), make_user("b")
        order_a = drain(twins[0], a)
        assert drain(twins[1], a) == order_a  # same seed, same items, same person: same order
        assert drain(twins[0], b) != order_a and sorted(drain(twins[1], b)) == sorted(order_a)

    def test_held_item_is_served_again_until_finished(self, mcq_project, make_user):
        project, user = mcq_project(), make_user("a")
        first = assignment_claim_next(project=project, user=user)
        assert assignment_claim_next(project=project, user=user).pk == first.pk

    def test_skipped_item_is_never_served_again_and_goes_to_someone_else(self, mcq_project, make_user):
        project = mcq_project(n_items=1, overlap=1)
        a, b = make_user("a"), make_user("b")
        membership_add(project=project, user=a, role=Role.ANNOTATOR)
        assignment_skip(assignment=assignment_claim_next(project=project, user=a), reason="unreadable")
        assert assignment_claim_next(project=project, user=a) is None
        assert assignment_claim_next(project=project, user=b) is not None

    def test_skip_needs_a_reason(self, mcq_project, make_user):
        assignment = claim_as_annotator(mcq_project(), make_user("a"))
        with pytest.raises(ValidationFailed, match="say why"):
            assignment_skip(assignment=assignment, reason="  ")

    def test_submitted_item_cannot_be_skipped(self, mcq_project, make_user):
        assignment = claim_as_annotator(mcq_project(), make_user("a"))
        assignment_submit(assignment=assignment, value={"chosen": [0]})
        with pytest.raises(AssignmentClosed):
            assignment_skip(assignment=assignment, reason="changed my mind")

    def test_invalid_value_stores_nothing_and_keeps_the_item(self, mcq_project, make_user):
        assignment = claim_as_annotator(mcq_project(), make_user("a"))
        with pytest.raises(ValidationFailed):
            assignment_submit(assignment=assignment, value={"chosen": [42]})
        assignment.refresh_from_db()
        assert assignment.status == "assigned" and not Annotation.objects.exists()

    def test_time_on_item_and_exposure_are_recorded(self, mcq_project, make_user):
        assignment = claim_as_annotator(mcq_project(), make_user("a"))
        annotation = assignment_submit(assignment=assignment, value={"chosen": [1]})
        assert annotation.seconds_on_item is not None and annotation.seconds_on_item >= 0
        assert annotation.suggestion_visible is False

    def test_qualification_items_are_mixed_in_for_everyone(self, make_project, make_user, tmp_path):
        project = make_project("intent_mcq", overlap=1, qualification_rate=0.5, seed=3)
        records = list(synthetic_records(MCQ, 20))
        for record in records[:3]:
            record["gold"] = {"chosen": record["answers"]}
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", iter(records)))
        a, b = make_user("a"), make_user("b")
        served_a, served_b = drain(project, a), drain(project, b)
        gold_ids = {r["external_id"] for r in records[:3]}
        assert gold_ids <= set(served_a) and gold_ids <= set(served_b)
        assert len(served_a) + len(served_b) == 17 + 2 * 3  # regular items once (k=1), gold items for both
        assert set(served_a[:8]) & gold_ids  # mixed in early, not all left for the end

    def test_known_answer_items_still_come_once_regular_items_run_out(self, make_project, make_user, tmp_path):
        project = make_project("intent_mcq", overlap=1, qualification_rate=0.000001)
        records = list(synthetic_records(MCQ, 4))
        records[0]["gold"] = {"chosen": records[0]["answers"]}
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", iter(records)))
        assert drain(project, make_user("a"))[-1] == records[0]["external_id"]
        assert drain(project, make_user("b")) == [records[0]["external_id"]]


@pytest.mark.django_db
class ExposureTests:
    def test_randomised_exposure_is_seeded_and_near_p(self, make_project):
        project = make_project("intent_mcq", suggestion_exposure="randomised", suggestion_probability=0.3, seed=9)
        shown = [suggestion_exposed(project=project, item_id=i, annotator_id=u) for i in range(200) for u in range(5)]
        assert 0.25 < sum(shown) / len(shown) < 0.35
        again = [suggestion_exposed(project=project, item_id=i, annotator_id=u) for i in range(200) for u in range(5)]
        assert shown == again

    def test_hidden_and_shown(self, make_project):
        hidden = make_project("intent_mcq", slug="h")
        shown = make_project("intent_mcq", slug="s", suggestion_exposure="shown")
        assert not suggestion_exposed(project=hidden, item_id=1, annotator_id=1)
        assert suggestion_exposed(project=shown, item_id=1, annotator_id=1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locking under concurrency is tested on PostgreSQL")
def test_concurrent_claims_never_push_an_item_past_k(mcq_project, make_user):
    project = mcq_project(n_items=30, overlap=2)
    people = [make_user(f"c{i}") for i in range(8)]
    for user in people:
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
    _, failures = run_at_once(lambda user: drain(project, user), people)
    assert not failures
    per_item = Counter(Assignment.objects.values_list("item_id", flat=True))
    assert set(per_item.values()) == {2} and len(per_item) == 30
    assert set(Item.objects.values_list("assigned_count", flat=True)) == {2}
