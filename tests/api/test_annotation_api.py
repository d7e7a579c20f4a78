"""REST API: who may do what, and a bad write stores nothing."""

import pytest
from django.contrib.auth.models import Permission
from django.http import QueryDict
from rest_framework.exceptions import ValidationError

from annotation.access import NEEDS_ROLES
from annotation.apis import AssignmentOutput, AssignmentSubmitApi, RaterAnnotationOutput
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Item, Project, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


@pytest.fixture
def world(make_project, make_user, tmp_path):
    """Two projects; ann1 and ann2 annotate `main`, res researches it, stranger only belongs to `other`."""
    main, other = make_project("copa_likert", slug="main"), make_project("copa_likert", slug="other")
    import_items(project=main, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 5)))
    people = {name: make_user(name) for name in ("ann1", "ann2", "res", "stranger")}
    membership_add(project=main, user=people["ann1"], role=Role.ANNOTATOR)
    membership_add(project=main, user=people["ann2"], role=Role.ANNOTATOR)
    membership_add(project=main, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=other, user=people["stranger"], role=Role.RESEARCHER)
    # res may create projects (see tests/api/test_project_api.py for who may not).
    people["res"].user_permissions.add(
        Permission.objects.get(content_type__app_label="annotation", codename="add_project")
    )
    return main, people


def claim_and_submit(user, value=None):
    client = client_for(user)
    assignment = client.post("/api/projects/main/assignments/next/").json()
    response = client.post(
        f"/api/assignments/{assignment['id']}/submit/", {"value": value or COPA.example_value()}, format="json"
    )
    return assignment, response


READS = ["/api/projects/main/", "/api/projects/main/items/", "/api/projects/main/annotations/"]
WRITES = [
    ("/api/projects/main/items/", {"records": [{"external_id": "x", **COPA.example_payload()}]}),
    ("/api/projects/main/assignments/next/", {}),
]


class AnonymousTests:
    @pytest.mark.parametrize("url", ["/api/projects/", *READS])
    def test_reads_need_authentication(self, world, url):
        assert client_for().get(url).status_code in (401, 403)

    @pytest.mark.parametrize(("url", "body"), [*WRITES, ("/api/projects/", {"slug": "x", "kind": "copa_likert"})])
    def test_writes_need_authentication(self, world, url, body):
        assert client_for().post(url, body, format="json").status_code in (401, 403)
        assert not Project.objects.filter(slug="x").exists() and not Item.objects.filter(external_id="x").exists()


class OutsiderTests:
    @pytest.mark.parametrize("url", READS)
    def test_member_of_another_project_gets_404(self, world, url):
        _, people = world
        assert client_for(people["stranger"]).get(url).status_code == 404

    @pytest.mark.parametrize(("url", "body"), WRITES)
    def test_member_of_another_project_cannot_write(self, world, url, body):
        _, people = world
        assert client_for(people["stranger"]).post(url, body, format="json").status_code == 404

    def test_cannot_submit_someone_elses_assignment(self, world):
        _, people = world
        assignment = client_for(people["ann1"]).post("/api/projects/main/assignments/next/").json()
        response = client_for(people["ann2"]).post(
            f"/api/assignments/{assignment['id']}/submit/", {"value": COPA.example_value()}, format="json"
        )
        assert response.status_code == 404 and not Annotation.objects.exists()


class BlindingTests:
    def test_annotator_reading_someone_elses_annotation_gets_404(self, world):
        _, people = world
        _, response = claim_and_submit(people["ann1"])
        annotation_id = response.json()["id"]
        assert client_for(people["ann2"]).get(f"/api/annotations/{annotation_id}/").status_code == 404
        assert client_for(people["ann1"]).get(f"/api/annotations/{annotation_id}/").status_code == 200
        assert client_for(people["res"]).get(f"/api/annotations/{annotation_id}/").status_code == 200

    def test_annotator_lists_only_their_own(self, world):
        _, people = world
        claim_and_submit(people["ann1"])
        claim_and_submit(people["ann2"])
        own = client_for(people["ann2"]).get("/api/projects/main/annotations/").json()["results"]
        assert [a["rater"] for a in own] == ["ann2"]
        everyone = client_for(people["res"]).get("/api/projects/main/annotations/").json()["results"]
        assert sorted(a["rater"] for a in everyone) == ["ann1", "ann2"]

    def test_annotators_cannot_list_items_or_import(self, world):
        _, people = world
        assert client_for(people["ann1"]).get("/api/projects/main/items/").status_code == 403
        body = {"records": [{"external_id": "x", **COPA.example_payload()}]}
        assert client_for(people["ann1"]).post("/api/projects/main/items/", body, format="json").status_code == 403

    def test_a_refusal_names_the_roles_in_words_not_python_enums(self, world):
        _, people = world
        response = client_for(people["ann1"]).get("/api/projects/main/items/")
        assert response.json()["detail"] == NEEDS_ROLES.format(roles="experts or researchers")
        assert "Role." not in response.content.decode()


class BadPayloadTests:
    def test_score_of_three_is_400_with_the_field_and_nothing_stored(self, world):
        _, people = world
        _, response = claim_and_submit(people["ann1"], {"scores": {**COPA.example_value()["scores"], "CT": 3}})
        assert response.status_code == 400
        assert response.json()["errors"] == [
            {"field": "value.scores.CT", "message": "must be one of 0, 1, 2, got 3", "line": None}
        ]
        assert not Annotation.objects.exists()

    def test_bulk_import_with_one_bad_record_imports_nothing(self, world):
        _, people = world
        records = [{"external_id": "ok", **COPA.example_payload()}, {"external_id": "bad", "question": "q"}]
        response = client_for(people["res"]).post("/api/projects/main/items/", {"records": records}, format="json")
        assert response.status_code == 400 and response.json()["errors"][0]["line"] == 2
        assert not Item.objects.filter(external_id__in=["ok", "bad"]).exists()

    def test_project_create_validates_fields(self, world):
        _, people = world
        body = {"slug": "main", "kind": "nope", "overlap": 0}
        response = client_for(people["res"]).post("/api/projects/", body, format="json")
        assert response.status_code == 400 and {e["field"] for e in response.json()["errors"]} == {
            "slug",
            "kind",
            "overlap",
        }

    def test_skip_without_reason_is_400(self, world):
        _, people = world
        assignment = client_for(people["ann1"]).post("/api/projects/main/assignments/next/").json()
        response = client_for(people["ann1"]).post(f"/api/assignments/{assignment['id']}/skip/", {}, format="json")
        assert response.status_code == 400 and [e["field"] for e in response.json()["errors"]] == ["reason"]


class HappyPathTests:
    def test_create_import_claim_submit_with_a_token(self, world):
        _, people = world
        res = client_for(people["res"])
        assert res.post("/api/projects/", {"slug": "new", "kind": "intent_mcq"}, format="json").status_code == 201
        records = [{"external_id": "m1", **get_kind("intent_mcq").example_payload()}]
        assert res.post("/api/projects/new/items/", {"records": records}, format="json").json() == {
            "imported": 1,
            "skipped": 0,
            "updated": 0,
        }
        assert [p["slug"] for p in res.get("/api/projects/").json()["results"]] == ["main", "new"]
        assignment, response = claim_and_submit(people["ann1"])
        assert response.status_code == 201 and response.json()["version"] == 1
        assert assignment["suggestion"] is None  # the project hides suggestions

    def test_token_endpoint_and_schema(self, world):
        response = client_for().post("/api/token/", {"username": "ann1", "password": "pw-for-tests-1"})
        assert response.status_code == 200 and len(response.json()["token"]) == 64  # hex of 32 random bytes
        schema = client_for().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert schema.status_code == 200 and "/api/projects/{slug}/assignments/next/" in schema.json()["paths"]


class SubmitAndNextTests:
    """POST /api/assignments/{id}/submit/?next=true: the stored annotation and the next assignment, in one request."""

    def submit_next(self, client, assignment_id: int, value=None, **body):
        url = f"/api/assignments/{assignment_id}/submit/?next=true"
        return client.post(url, {"value": value or COPA.example_value(), **body}, format="json")

    def test_answers_the_stored_annotation_and_the_next_item_as_its_rater_sees_it(self, world):
        main, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        response = self.submit_next(client, first["id"])
        body = response.json()
        assert response.status_code == 201 and body["assignment"] == first["id"] and body["source"] == "api"
        assert Annotation.objects.get(pk=body["id"]).value == COPA.example_value()
        following = body["next"]
        assert following["id"] != first["id"] and following["status"] == "assigned" and following["holds_expired"] == 0
        # The one the user now holds: asking for next again serves the same.
        assert client.post("/api/projects/main/assignments/next/").json()["id"] == following["id"]
        # Blinding: the rater's payload only, as the next endpoint gives it; no id or hidden field.
        item = Item.objects.get(project=main, assignments__pk=following["id"])
        assert following["item"] == {"payload": COPA.rater_payload(item.payload, revealed=[]), "presentation": None}
        assert item.external_id not in response.content.decode()
        assert "response_source" not in response.content.decode()

    def test_a_repeated_submit_with_its_key_stores_one_version_and_answers_the_same(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        once = self.submit_next(client, first["id"], idempotency_key="retry-1").json()
        again = self.submit_next(client, first["id"], idempotency_key="retry-1").json()
        assert (again["id"], again["version"], again["next"]["id"]) == (once["id"], 1, once["next"]["id"])
        assert Annotation.objects.count() == 1

    def test_next_is_null_when_nothing_is_left(self, world):
        _, people = world
        client = client_for(people["ann1"])
        held = client.post("/api/projects/main/assignments/next/").json()
        served = []
        while held is not None:
            served.append(held["id"])
            held = self.submit_next(client, held["id"]).json()["next"]
        assert len(served) == 5 and Annotation.objects.count() == 5

    def test_without_next_the_answer_is_the_annotation_alone(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        response = client.post(
            f"/api/assignments/{first['id']}/submit/", {"value": COPA.example_value()}, format="json"
        )
        assert response.status_code == 201 and "next" not in response.json()

    def test_a_bad_next_flag_is_400_and_stores_nothing(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        url = f"/api/assignments/{first['id']}/submit/?next=maybe"
        response = client.post(url, {"value": COPA.example_value()}, format="json")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "next"
        assert not Annotation.objects.exists()

    def test_an_invalid_value_is_400_stores_nothing_and_claims_nothing(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        response = self.submit_next(client, first["id"], value={"scores": {"CT": 3}})
        assert response.status_code == 400 and response.json()["code"] == "invalid"
        assert not Annotation.objects.exists()
        assert client.post("/api/projects/main/assignments/next/").json()["id"] == first["id"]

    def test_someone_elses_assignment_is_404_and_claims_nothing_for_them(self, world):
        _, people = world
        theirs = client_for(people["ann2"]).post("/api/projects/main/assignments/next/").json()
        response = self.submit_next(client_for(people["ann1"]), theirs["id"])
        assert response.status_code == 404 and response.json()["code"] == "not_assigned"
        assert not Annotation.objects.exists()
        assert not Assignment.objects.filter(annotator=people["ann1"]).exists()


class HotPathOutputTests:
    """The submit and next answers are built without a serializer walk: the same JSON the schema's
    serializers give."""

    def test_a_submit_answers_what_its_serializer_gives(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        body = client.post(f"/api/assignments/{first['id']}/submit/?next=true", {"value": COPA.example_value()},
                           format="json").json()  # fmt: skip
        annotation = Annotation.objects.get(pk=body["id"])
        annotation.rater_assignment = first["id"]
        assert {k: v for k, v in body.items() if k != "next"} == RaterAnnotationOutput(annotation).data
        assert body["next"] == AssignmentOutput(body["next"]).data


def reads_alike(serializer, read, data) -> None:
    """``read(data)`` gives what ``serializer`` validates ``data`` to, or refuses it with its errors."""
    checked = serializer(data=data)
    if checked.is_valid():
        assert read(data) == checked.validated_data
    else:
        with pytest.raises(ValidationError) as refused:
            read(data)
        assert refused.value.detail == checked.errors


class SubmitInputReadTests:
    """A submit's body and ``next`` flag are read without the serializers where these would take them
    as they are: what is read is what ``Input`` and ``Query`` give, and everything else still gets
    their answer."""

    KEYS = ["k-1", "x" * 100, "x" * 101, " padded ", "", "a\x00b", 7, True, None, ["k"]]

    @pytest.mark.parametrize("key", KEYS)
    def test_a_body_reads_as_the_input_serializer_reads_it(self, key):
        body = {"value": {"scores": {"CT": 1}}, "idempotency_key": key, "extra": 1}
        reads_alike(AssignmentSubmitApi.Input, AssignmentSubmitApi.read_input, body)

    @pytest.mark.parametrize("body", [{}, {"value": None}, {"value": 0}, {"value": False, "idempotency_key": "k"}])
    def test_a_missing_or_null_value_reads_as_the_input_serializer_reads_it(self, body):
        reads_alike(AssignmentSubmitApi.Input, AssignmentSubmitApi.read_input, body)

    @pytest.mark.parametrize("query", ["", "next=true", "next=1", "next=yes", "next=false", "next=0", "next=",
                                       "next=maybe", "next=false&next=true", "other=1"])  # fmt: skip
    def test_the_next_flag_reads_as_the_query_serializer_reads_it(self, query):
        reads_alike(AssignmentSubmitApi.Query, AssignmentSubmitApi.read_query, QueryDict(query))

    def test_a_key_with_surrounding_space_is_stored_as_the_serializer_cleans_it(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        url = f"/api/assignments/{first['id']}/submit/?next=true"
        response = client.post(url, {"value": COPA.example_value(), "idempotency_key": "  k-2 "}, format="json")
        assert response.status_code == 201
        assert Annotation.objects.get(pk=response.json()["id"]).idempotency_key == "k-2"

    def test_a_key_over_its_length_is_400_naming_it_and_stores_nothing(self, world):
        _, people = world
        client = client_for(people["ann1"])
        first = client.post("/api/projects/main/assignments/next/").json()
        url = f"/api/assignments/{first['id']}/submit/?next=true"
        response = client.post(url, {"value": COPA.example_value(), "idempotency_key": "k" * 101}, format="json")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "idempotency_key"
        assert not Annotation.objects.exists()
