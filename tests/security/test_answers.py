"""Answers are never lost, borrowed or given by someone the project's rules do not allow."""

import pytest

from annotation.importing import import_items
from annotation.kinds import all_kinds, get_kind
from annotation.models import Annotation, Assignment, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


def project_with_people(make_project, make_user, tmp_path, kind, *roles: tuple[str, str]):
    project = make_project(kind.name, slug="p", overlap=2)
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(kind, 3)))
    people = {}
    for username, role in roles:
        people[username] = make_user(username)
        membership_add(project=project, user=people[username], role=role)
    return project, people


def claim(user) -> dict:
    response = client_for(user).post("/api/projects/p/assignments/next/")
    assert response.status_code == 200, response.content
    return response.json()


def submit(user, assignment: dict, value: dict, key: str | None = None):
    body = {"value": value, "idempotency_key": key}
    return client_for(user).post(f"/api/assignments/{assignment['id']}/submit/", body, format="json")


class IdempotencyKeyTests:
    def test_two_raters_with_one_idempotency_key_both_store_their_answers(self, make_project, make_user, tmp_path):
        project, people = project_with_people(
            make_project, make_user, tmp_path, COPA, ("a", Role.ANNOTATOR), ("b", Role.ANNOTATOR)
        )
        first, second = claim(people["a"]), claim(people["b"])
        b_value = {"scores": {**COPA.example_value()["scores"], "CT": 0}}
        a_answer = submit(people["a"], first, COPA.example_value(), key="1")
        b_answer = submit(people["b"], second, b_value, key="1")
        assert (a_answer.status_code, b_answer.status_code) == (201, 201)
        # B gets B's own stored answer back, never A's.
        assert b_answer.json()["rater"] == "b" and b_answer.json()["value"] == b_value
        stored = dict(Annotation.objects.filter(project=project).values_list("rater", "value"))
        assert stored == {"a": COPA.example_value(), "b": b_value}
        assert Annotation.objects.get(rater="b").item.assignments.get(annotator=people["b"]).pk == second["id"]

    def test_a_repeated_key_from_the_same_rater_stores_one_version(self, make_project, make_user, tmp_path):
        project, people = project_with_people(make_project, make_user, tmp_path, COPA, ("a", Role.ANNOTATOR))
        assignment = claim(people["a"])
        first = submit(people["a"], assignment, COPA.example_value(), key="retry-1")
        again = submit(people["a"], assignment, COPA.example_value(), key="retry-1")
        assert first.json()["id"] == again.json()["id"]
        assert Annotation.objects.filter(project=project).count() == 1


#: Every (kind, value) pair a kind reserves to some roles, from the registry.
RESERVED = [(kind, value) for kind in all_kinds() for value in kind.example_values_needing_roles()]


@pytest.mark.parametrize(("kind", "value"), RESERVED, ids=[f"{k.name}-{v['action']}" for k, v in RESERVED])
class RoleReservedValueTests:
    """Values the form shows only to some roles are refused for others by the service."""

    def test_annotator_cannot_submit_a_value_reserved_to_other_roles(
        self, kind, value, make_project, make_user, tmp_path
    ):
        project, people = project_with_people(make_project, make_user, tmp_path, kind, ("ann", Role.ANNOTATOR))
        assignment = claim(people["ann"])
        response = submit(people["ann"], assignment, value)
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "not_permitted"
        assert not Annotation.objects.filter(project=project).exists()
        # The refused submit rolled back: the assignment is still open for a permitted answer.
        assert Assignment.objects.get(pk=assignment["id"]).status == Assignment.Status.ASSIGNED

    def test_holders_of_the_role_may_submit_it(self, kind, value, make_project, make_user, tmp_path):
        holders = [(f"holder-{role}", role) for role in sorted(kind.roles_for_value(value))]
        _, people = project_with_people(make_project, make_user, tmp_path, kind, *holders)
        for user in people.values():
            assert submit(user, claim(user), value).status_code == 201


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda kind: kind.name)
def test_the_example_answer_needs_no_special_role(kind, make_project, make_user, tmp_path):
    _, people = project_with_people(make_project, make_user, tmp_path, kind, ("ann", Role.ANNOTATOR))
    assert submit(people["ann"], claim(people["ann"]), kind.example_value()).status_code == 201


def test_label_contextualization_reserves_reviews_to_experts():
    kind = get_kind("label_contextualization")
    assert kind.example_values_needing_roles(), "the review rule must be exercised by the tests above"
    assert all(kind.roles_for_value(v) == {"expert"} for v in kind.example_values_needing_roles())
