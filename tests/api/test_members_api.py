"""Members API: only a project's researchers (and superusers) list, add, change and remove members;
others are refused and nothing changes."""

import pytest
from django.contrib.auth import get_user_model

from annotation.assignments import assignment_claim_next
from annotation.kinds import get_kind
from annotation.models import Invitation, Item, Membership, Role
from annotation.services import membership_add
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
User = get_user_model()
COPA = get_kind("copa_likert")
LIST = "/api/projects/study/members/"


def member_url(name: str) -> str:
    return f"/api/projects/study/members/{name}/"


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", slug="study", overlap=2)
    people = {name: make_user(name) for name in ("res", "exp", "ann", "outsider")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["exp"], role=Role.EXPERT)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    people["staff"] = User.objects.create_superuser("staff", "staff@example.org", "pw-for-tests-1")
    return project, people


def memberships(project) -> set[tuple[str, str, bool]]:
    return set(Membership.objects.filter(project=project).values_list("user__username", "role", "paused"))


class PermissionTests:
    CALLS = [
        ("get", LIST, None),
        ("post", LIST, {"username": "outsider", "role": "researcher"}),
        ("get", member_url("ann"), None),
        ("patch", member_url("ann"), {"roles": ["researcher"]}),
        ("delete", member_url("res"), None),
    ]

    def test_anonymous_is_refused(self, study):
        project, _ = study
        before = memberships(project)
        for method, url, body in self.CALLS:
            assert getattr(client_for(), method)(url, body, format="json").status_code in (401, 403), url
        assert memberships(project) == before

    def test_outsiders_learn_nothing_and_members_without_the_role_are_refused(self, study):
        project, people = study
        before = memberships(project)
        for name, expected in (("outsider", 404), ("ann", 403), ("exp", 403)):
            client = client_for(people[name])
            for method, url, body in self.CALLS:
                assert getattr(client, method)(url, body, format="json").status_code == expected, (name, method, url)
        assert memberships(project) == before

    def test_researcher_and_superuser_may_list(self, study):
        _, people = study
        for name in ("res", "staff"):
            response = client_for(people[name]).get(LIST)
            assert response.status_code == 200
            assert [m["username"] for m in response.json()] == ["ann", "exp", "res"]


class WriteTests:
    def test_add_existing_member_then_change_roles_and_pause(self, study):
        project, people = study
        client = client_for(people["res"])
        response = client.post(LIST, {"username": "outsider", "role": "annotator"}, format="json")
        assert response.status_code == 201
        body = response.json()
        assert body == {
            "entered": "outsider",
            "role": "annotator",
            "outcome": "added",
            "invitation_url": "",
            "temporary_password": "",
        }
        response = client.patch(
            member_url("outsider"), {"roles": ["annotator", "expert"], "paused": True}, format="json"
        )
        assert response.status_code == 200
        assert response.json()["roles"] == ["annotator", "expert"] and response.json()["state"] == "paused"

    def test_new_account_by_invitation_returns_the_link_once(self, study):
        project, people = study
        response = client_for(people["res"]).post(
            LIST,
            {"username": "dana", "email": "dana@example.org", "role": "annotator", "accounts": "invite"},
            format="json",
        )
        assert response.status_code == 201 and response["Cache-Control"] == "no-store"
        body = response.json()
        assert body["outcome"] == "invitation_sent" and "/invite/#" in body["invitation_url"]
        assert Invitation.objects.filter(user__username="dana").count() == 1
        listed = client_for(people["res"]).get(LIST)
        assert body["invitation_url"].rsplit("#", 1)[1] not in listed.content.decode()
        dana = next(m for m in listed.json() if m["username"] == "dana")
        assert dana["state"] == "invited" and dana["email"] == "dana@example.org"  # the address the researcher typed

    def test_staff_flags_cannot_be_granted_through_the_api(self, study):
        project, people = study
        client = client_for(people["res"])
        refused = client.post(LIST, {"username": "outsider", "role": "staff"}, format="json")
        assert refused.status_code == 400
        crafted = client.post(
            LIST, {"username": "outsider", "role": "annotator", "is_staff": True, "is_superuser": True}, format="json"
        )
        assert crafted.status_code == 201
        outsider = User.objects.get(username="outsider")
        assert not outsider.is_staff and not outsider.is_superuser

    def test_bad_input_names_the_field_and_stores_nothing(self, study):
        project, people = study
        client = client_for(people["res"])
        before = memberships(project)
        for body in (
            {"username": "ghost", "role": "annotator"},
            {"username": "x" * 151, "role": "annotator"},
            {"email": "not-an-email", "role": "annotator"},
            {"role": "annotator"},
        ):
            response = client.post(LIST, body, format="json")
            assert response.status_code == 400, body
        assert client.patch(member_url("ann"), {"roles": []}, format="json").status_code == 400
        assert client.patch(member_url("ann"), {}, format="json").status_code == 400
        assert memberships(project) == before
        assert not User.objects.filter(username="ghost").exists()

    def test_remove_keeps_answers_releases_items_and_protects_the_last_researcher(self, study):
        project, people = study
        Item.objects.create(project=project, external_id="i1", payload=COPA.example_payload())
        held = assignment_claim_next(project=project, user=people["ann"])
        client = client_for(people["res"])
        assert client.delete(member_url("ann")).status_code == 204
        item = Item.objects.get(pk=held.item_id)
        assert item.assigned_count == 0 and item.is_open
        assert client.delete(member_url("ann")).status_code == 404
        refused = client.delete(member_url("res"))
        assert refused.status_code == 409 and refused.json()["code"] == "last_researcher"

    def test_a_paused_annotator_cannot_claim_through_the_api(self, study):
        project, people = study
        Item.objects.create(project=project, external_id="i1", payload=COPA.example_payload())
        client_for(people["res"]).patch(member_url("ann"), {"paused": True}, format="json")
        response = client_for(people["ann"]).post("/api/projects/study/assignments/next/")
        assert response.status_code == 403 and response.json()["code"] == "member_paused"
        client_for(people["res"]).patch(member_url("ann"), {"paused": False}, format="json")
        assert client_for(people["ann"]).post("/api/projects/study/assignments/next/").status_code == 200
