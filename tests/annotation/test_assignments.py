"""The assignment engine: k distinct annotators per item, reproducible orders, never past k."""

import json
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from scipy.stats import kendalltau

from annotation.assignments import (
    HOLDS_EXPIRED_NOTICE,
    AssignmentClosed,
    Claim,
    MemberPaused,
    assignment_claim,
    assignment_claim_next,
    assignment_current,
    assignment_skip,
    assignment_submit,
    assignment_unskip,
    presentation_seed,
    suggestion_exposed,
)
from annotation.errors import ValidationFailed
from annotation.importing import import_annotations, import_items
from annotation.kinds import all_kinds, get_kind
from annotation.member_services import member_pause, member_remove
from annotation.models import Annotation, Assignment, Item, Role
from annotation.services import membership_add, project_archive
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for
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


class PresentationSeedTests:
    def test_the_seed_is_the_annotators_own_and_the_same_on_every_visit(self, make_project):
        """A kind shuffles an item's options or responses from it (TaskKind.presentation)."""
        project = make_project("intent_mcq", seed=9)
        pairs = [(i, u) for i in range(20) for u in range(5)]
        seeds = {(i, u): presentation_seed(project=project, item_id=i, annotator_id=u) for i, u in pairs}
        assert seeds == {(i, u): presentation_seed(project=project, item_id=i, annotator_id=u) for i, u in pairs}
        assert len(set(seeds.values())) == len(seeds)  # per item and annotator, not a shared order
        other = make_project("intent_mcq", slug="other", seed=10)
        assert presentation_seed(project=other, item_id=1, annotator_id=1) != seeds[(1, 1)]

    def test_kinds_that_show_items_as_imported_present_none(self):
        assert all(kind.presentation(payload=kind.example_payload(), seed=1) is None for kind in all_kinds())


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


def positions(order: list[str]) -> list[int]:
    """Each item's place in the order, items taken in one fixed order (their external ids sorted)."""
    place = {external_id: n for n, external_id in enumerate(order)}
    return [place[external_id] for external_id in sorted(order)]


def is_rotation(order: list[str], other: list[str]) -> bool:
    return len(order) == len(other) and any(other == order[n:] + order[:n] for n in range(len(order)))


@pytest.mark.django_db
class OwnOrderTests:
    def test_each_annotator_walks_a_permutation_of_their_own_not_a_shifted_shared_order(self, mcq_project, make_user):
        project = mcq_project(n_items=200, overlap=4, seed=11)
        orders = [drain(project, make_user(f"rater{n}")) for n in range(4)]
        assert all(sorted(order) == sorted(orders[0]) and len(order) == 200 for order in orders)
        taus = []
        for n, order in enumerate(orders):
            for other in orders[n + 1 :]:
                assert not is_rotation(order, other)
                taus.append(kendalltau(positions(order), positions(other)).statistic)
        # Independent orders: tau about 0. They are drawn a block of about 3 items at a time (64
        # blocks here), so a pair's tau spreads like that of two permutations of 64 (standard
        # deviation about 0.1, measured over annotator ids), not of 200: the bounds leave room for
        # that and still refuse one shared order (tau near 1), as is_rotation refuses a shifted one.
        assert all(abs(tau) < 0.5 for tau in taus), taus
        assert abs(sum(taus) / len(taus)) < 0.2, taus

    def test_an_order_is_reproducible_from_the_seed_and_the_annotator(self, make_project, make_user, tmp_path):
        path = write_jsonl(tmp_path / "i.jsonl", synthetic_records(MCQ, 200))
        projects = [make_project("intent_mcq", slug=slug, overlap=2, seed=seed) for slug, seed in
                    (("one", 5), ("two", 5), ("three", 6))]  # fmt: skip
        for project in projects:
            import_items(project=project, path=path)
        a, b = make_user("a"), make_user("b")
        order_a = drain(projects[0], a)
        assert drain(projects[1], a) == order_a  # same seed, same items, same person: same order
        assert drain(projects[1], b) != order_a  # another person
        assert drain(projects[2], a) != order_a  # another seed

    def test_the_order_needs_one_statement_per_claim_however_large_the_project(self, mcq_project, make_user):
        project = mcq_project(n_items=300, overlap=1)
        user = make_user("a")
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        assignment_submit(assignment=assignment_claim_next(project=project, user=user), value={"chosen": [0]})
        with CaptureQueriesContext(connection) as queries:
            assignment_claim_next(project=project, user=user)
        walks = [q["sql"] for q in queries if "order_key" in q["sql"]]
        assert len(walks) == 1 and "UNION ALL" in walks[0]


def age_hold(assignment, *, seconds: float) -> None:
    """Make the hold look opened ``seconds`` ago (as if its holder left it on screen that long)."""
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def pair(mcq_project, make_user):
    """A 2-item k = 1 project with two annotators."""
    project = mcq_project(n_items=2, overlap=1)
    people = [make_user(name) for name in ("a", "b")]
    for user in people:
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
    return project, people


@pytest.mark.django_db
class HoldExpiryTests:
    def test_a_hold_past_its_time_goes_back_to_the_pool_on_the_next_claim_by_anyone(self, pair, settings):
        settings.CONCORD_HOLD_SECONDS = 600
        project, (a, b) = pair
        held = assignment_claim_next(project=project, user=a)
        drain(project, b)  # b gets the other item; a's is held
        assert assignment_claim_next(project=project, user=b) is None
        age_hold(held, seconds=599)
        assert assignment_claim_next(project=project, user=b) is None  # not yet
        age_hold(held, seconds=601)
        again = assignment_claim_next(project=project, user=b)
        assert again is not None and again.item_id == held.item_id
        held.refresh_from_db()
        assert held.status == Assignment.Status.SKIPPED and held.skip_reason.startswith("released: left")
        assert Item.objects.get(pk=held.item_id).assigned_count == 1

    def test_the_returning_holder_is_told_on_the_page_and_cannot_answer_the_released_item(self, pair, client, settings):
        settings.CONCORD_HOLD_SECONDS = 600
        project, (a, b) = pair
        held = assignment_claim_next(project=project, user=a)
        age_hold(held, seconds=700)
        assignment_claim_next(project=project, user=b)  # releases a's hold, takes an item
        client.force_login(a)
        url = reverse("assignment_submit", args=[project.slug, held.pk])
        response = client.post(url, {"chosen": ["0"], "idempotency_key": "k1"})
        assert response.status_code == 409 and b"went back to the pool" in response.content
        assert not Annotation.objects.filter(rater="a").exists()
        page = client.get(reverse("workspace", args=[project.slug]))
        assert HOLDS_EXPIRED_NOTICE.format(minutes=10).encode() in page.content
        assert HOLDS_EXPIRED_NOTICE.encode()[:20] not in client.get(reverse("workspace", args=[project.slug])).content

    def test_the_api_says_how_many_holds_expired_and_refuses_their_answers(self, pair, settings):
        settings.CONCORD_HOLD_SECONDS = 600
        project, (a, b) = pair
        api = client_for(a)
        first = api.post(f"/api/projects/{project.slug}/assignments/next/").json()
        assert first["holds_expired"] == 0
        age_hold(Assignment.objects.get(pk=first["id"]), seconds=601)
        assignment_claim_next(project=project, user=b)
        refused = api.post(f"/api/assignments/{first['id']}/submit/", {"value": {"chosen": [0]}}, format="json")
        assert refused.status_code == 409 and refused.json()["code"] == "hold_expired"
        assert not Annotation.objects.exists()

    def test_the_holder_who_comes_back_before_anyone_claims_keeps_the_item(self, pair, settings):
        settings.CONCORD_HOLD_SECONDS = 600
        project, (a, _) = pair
        held = assignment_claim_next(project=project, user=a)
        age_hold(held, seconds=5000)
        assert assignment_claim(project=project, user=a) == Claim(assignment_current(project=project, user=a))
        assert assignment_current(project=project, user=a).pk == held.pk  # served again, the hold renewed
        annotation = assignment_submit(assignment=held, value={"chosen": [0]})
        assert annotation.version == 1

    def test_the_api_next_reports_expired_holds(self, mcq_project, make_user, settings):
        settings.CONCORD_HOLD_SECONDS = 600
        project = mcq_project(n_items=4, overlap=1)
        a, b = make_user("a"), make_user("b")
        for user in (a, b):
            membership_add(project=project, user=user, role=Role.ANNOTATOR)
        api = client_for(a)
        first = api.post(f"/api/projects/{project.slug}/assignments/next/").json()
        age_hold(Assignment.objects.get(pk=first["id"]), seconds=601)
        assignment_claim_next(project=project, user=b)
        second = api.post(f"/api/projects/{project.slug}/assignments/next/").json()
        assert second["holds_expired"] == 1 and second["id"] != first["id"]
        assert api.post(f"/api/projects/{project.slug}/assignments/next/").json()["holds_expired"] == 0


@pytest.mark.django_db
class AnswerSourceTests:
    def test_an_answer_from_the_workspace_is_web(self, pair, client):
        project, (a, _) = pair
        held = assignment_claim_next(project=project, user=a)
        client.force_login(a)
        client.post(reverse("assignment_submit", args=[project.slug, held.pk]), {"chosen": ["0"]})
        assert list(Annotation.objects.values_list("source", flat=True)) == ["web"]

    def test_an_answer_and_an_edit_through_the_api_are_api(self, pair):
        project, (a, _) = pair
        api = client_for(a)
        held = api.post(f"/api/projects/{project.slug}/assignments/next/").json()
        for value in ([0], [1]):  # the answer, then an edit
            response = api.post(f"/api/assignments/{held['id']}/submit/", {"value": {"chosen": value}}, format="json")
            assert response.status_code == 201 and response.json()["source"] == "api"
        assert list(Annotation.objects.values_list("source", flat=True)) == ["api", "api"]

    def test_an_imported_label_is_import(self, pair, tmp_path):
        project, _ = pair
        external_id = Item.objects.filter(project=project).values_list("external_id", flat=True).first()
        path = tmp_path / "labels.jsonl"
        path.write_text(json.dumps({"rater": "old-study", "external_id": external_id, "value": {"chosen": [0]}}))
        import_annotations(project=project, path=path)
        assert list(Annotation.objects.values_list("source", flat=True)) == ["import"]


@pytest.mark.django_db
class WriteRuleTests:
    """One rule for every write path: removed, paused and archived write nothing, page or API."""

    def submit_by_api(self, user, assignment_id: int):
        return client_for(user).post(
            f"/api/assignments/{assignment_id}/submit/", {"value": {"chosen": [1]}}, format="json"
        )

    def test_a_removed_member_cannot_answer_or_edit_through_the_api(self, pair):
        project, (a, _) = pair
        answered = assignment_claim_next(project=project, user=a)
        assignment_submit(assignment=answered, value={"chosen": [0]})
        held = assignment_claim_next(project=project, user=a)
        member_remove(project=project, actor=None, user=a)
        for assignment in (answered, held):  # an edit, and the item they held
            response = self.submit_by_api(a, assignment.pk)
            assert response.status_code == 403 and response.json()["code"] == "not_annotating"
        assert Annotation.objects.count() == 1

    def test_a_paused_member_cannot_unskip_what_the_pause_released_nor_answer_it(self, pair, client):
        project, (a, _) = pair
        held = assignment_claim_next(project=project, user=a)
        member_pause(project=project, actor=None, user=a)
        client.force_login(a)
        client.post(reverse("assignment_unskip", args=[project.slug, held.pk]))
        held.refresh_from_db()
        assert held.status == Assignment.Status.SKIPPED
        with pytest.raises(MemberPaused):
            assignment_unskip(assignment=held)
        assert self.submit_by_api(a, held.pk).json()["code"] == "member_paused"
        page = client.post(reverse("assignment_submit", args=[project.slug, held.pk]), {"chosen": ["0"]})
        assert page.status_code == 403
        assert not Annotation.objects.exists()

    def test_a_paused_member_writes_nothing_even_on_items_answered_before(self, pair, client):
        project, (a, _) = pair
        answered = assignment_claim_next(project=project, user=a)
        assignment_submit(assignment=answered, value={"chosen": [0]})
        member_pause(project=project, actor=None, user=a)
        assert self.submit_by_api(a, answered.pk).json()["code"] == "member_paused"
        client.force_login(a)
        page = client.post(reverse("assignment_submit", args=[project.slug, answered.pk]), {"chosen": ["1"]})
        assert page.status_code == 403
        assert Annotation.objects.count() == 1

    def test_an_archived_project_takes_no_answers_nor_edits(self, pair, client):
        project, (a, _) = pair
        answered = assignment_claim_next(project=project, user=a)
        assignment_submit(assignment=answered, value={"chosen": [0]})
        held = assignment_claim_next(project=project, user=a)
        project_archive(project=project)
        for assignment in (answered, held):
            response = self.submit_by_api(a, assignment.pk)
            assert response.status_code == 403 and response.json()["code"] == "project_archived"
        client.force_login(a)
        for assignment in (answered, held):
            page = client.post(reverse("assignment_submit", args=[project.slug, assignment.pk]), {"chosen": ["1"]})
            assert page.status_code == 403
        skip = client_for(a).post(f"/api/assignments/{held.pk}/skip/", {"reason": "x"}, format="json")
        assert skip.status_code == 403
        assert Annotation.objects.count() == 1
        held.refresh_from_db()
        assert held.status == Assignment.Status.ASSIGNED


@pytest.mark.django_db
class OneHoldTests:
    def test_unskipping_puts_the_item_held_now_back_to_the_pool(self, mcq_project, make_user):
        project = mcq_project(n_items=3, overlap=1)
        a = make_user("a")
        membership_add(project=project, user=a, role=Role.ANNOTATOR)
        skipped = assignment_skip(assignment=assignment_claim_next(project=project, user=a), reason="later")
        held = assignment_claim_next(project=project, user=a)
        assignment_unskip(assignment=skipped)
        assert list(Assignment.objects.filter(annotator=a, status="assigned").values_list("pk", flat=True)) == [
            skipped.pk
        ]
        assert Item.objects.get(pk=held.item_id).assigned_count == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="parallel requests are tested on PostgreSQL")
def test_parallel_first_requests_give_an_annotator_one_hold(mcq_project, make_user):
    project = mcq_project(n_items=10, overlap=1)
    user = make_user("a")
    membership_add(project=project, user=user, role=Role.ANNOTATOR)
    results, failures = run_at_once(lambda _: assignment_claim_next(project=project, user=user), list(range(6)))
    assert not failures
    assert len({assignment.pk for assignment in results}) == 1
    assert Assignment.objects.filter(annotator=user, status="assigned").count() == 1
    assert Item.objects.filter(is_open=False).count() == 1
