"""Projects over the API: who may create one (the security rule), and settings changed with PATCH
under the same rules as the Settings page; a refused request stores nothing."""

import pytest
from django.contrib.auth.models import Permission

from annotation.access import CANNOT_CREATE_PROJECTS
from annotation.assignments import assignment_claim_next
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Membership, Project, Role
from annotation.services import KIND_LOCKED_BY_ITEMS, OVERLAP_BELOW_DONE, PROJECT_ARCHIVED, membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


@pytest.fixture
def team(make_project, make_user, tmp_path):
    project = make_project("copa_likert", slug="pilot", overlap=2)
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 1)))
    people = {name: make_user(name) for name in ("outsider", "annotator", "annotator2", "expert", "researcher")}
    people["staff"] = make_user("staff")
    people["staff"].is_staff = True
    people["staff"].save(update_fields=["is_staff"])
    membership_add(project=project, user=people["annotator"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["annotator2"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["expert"], role=Role.EXPERT)
    membership_add(project=project, user=people["researcher"], role=Role.RESEARCHER)
    return project, people


def as_(people, who):
    return client_for(None if who == "anonymous" else people[who])


NEW = {"slug": "fresh", "kind": "intent_mcq", "overlap": 3, "guidelines": "Read me."}


class ProjectCreateTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 401), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 403),
         ("staff", 201)],
    )  # fmt: skip
    def test_who_may_create_a_project(self, team, who, status):
        _, people = team
        response = as_(people, who).post("/api/projects/", NEW, format="json")
        assert response.status_code == status
        assert Project.objects.filter(slug="fresh").exists() == (status == 201)

    def test_refusal_says_why_and_reveals_nothing_about_taken_slugs(self, team):
        _, people = team
        response = as_(people, "outsider").post("/api/projects/", {"slug": "pilot", "kind": "x"}, format="json")
        assert response.status_code == 403 and response.json()["detail"] == CANNOT_CREATE_PROJECTS

    def test_holder_of_add_project_creates_and_becomes_researcher(self, team):
        _, people = team
        people["outsider"].user_permissions.add(
            Permission.objects.get(content_type__app_label="annotation", codename="add_project")
        )
        response = as_(people, "outsider").post("/api/projects/", NEW, format="json")
        assert response.status_code == 201 and response.json()["archived_at"] is None
        assert Membership.objects.filter(project__slug="fresh", user=people["outsider"], role=Role.RESEARCHER).exists()

    def test_self_service_setting_lets_anyone_signed_in_create(self, team, settings):
        _, people = team
        settings.CONCORD_SELF_SERVICE_PROJECTS = True
        assert as_(people, "annotator").post("/api/projects/", NEW, format="json").status_code == 201
        assert as_(people, "anonymous").post("/api/projects/", {**NEW, "slug": "x"}, format="json").status_code == 401

    def test_guidelines_over_the_cap_are_refused(self, team):
        _, people = team
        body = {**NEW, "guidelines": "x" * 100_001}
        assert as_(people, "staff").post("/api/projects/", body, format="json").status_code == 400
        assert not Project.objects.filter(slug="fresh").exists()


class ProjectPatchTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 401), ("outsider", 404), ("annotator", 403), ("expert", 403), ("researcher", 200),
         ("staff", 404)],
    )  # fmt: skip
    def test_who_may_change_settings(self, team, who, status):
        project, people = team
        response = as_(people, who).patch("/api/projects/pilot/", {"title": "Changed"}, format="json")
        assert response.status_code == status
        assert (Project.objects.get(pk=project.pk).title == "Changed") == (status == 200)

    def test_only_the_fields_sent_change(self, team):
        project, people = team
        body = {"overlap": 3, "suggestion_exposure": "randomised", "suggestion_probability": 0.2}
        response = as_(people, "researcher").patch("/api/projects/pilot/", body, format="json")
        assert response.status_code == 200 and response.json()["overlap"] == 3
        project.refresh_from_db()
        assert (project.suggestion_exposure, project.suggestion_probability, project.title) == (
            "randomised", 0.2, project.title,
        )  # fmt: skip

    def test_kind_cannot_change_once_items_exist(self, team):
        project, people = team
        response = as_(people, "researcher").patch("/api/projects/pilot/", {"kind": "intent_mcq"}, format="json")
        assert response.status_code == 400 and response.json()["errors"] == [
            {"field": "kind", "message": KIND_LOCKED_BY_ITEMS, "line": None}
        ]
        assert Project.objects.get(pk=project.pk).kind == "copa_likert"

    def test_k_cannot_go_below_the_annotators_an_item_has(self, team):
        project, people = team
        for who in ("annotator", "annotator2"):
            assignment_claim_next(project=project, user=people[who])
        body = {"overlap": 1, "title": "Not stored either"}
        response = as_(people, "researcher").patch("/api/projects/pilot/", body, format="json")
        assert response.status_code == 400 and response.json()["errors"] == [
            {"field": "overlap", "message": OVERLAP_BELOW_DONE.format(minimum=2), "line": None}
        ]
        project.refresh_from_db()
        assert (project.overlap, project.title) == (2, "pilot")

    def test_bad_values_are_400(self, team):
        _, people = team
        for body in ({"overlap": 0}, {"suggestion_probability": 1.5}, {"adjudication_rules": {"nope": True}},
                     {"kind": "unknown"}, {"guidelines": "x" * 100_001}):  # fmt: skip
            assert as_(people, "researcher").patch("/api/projects/pilot/", body, format="json").status_code == 400

    def test_archive_hides_the_project_from_annotators_and_stops_claims(self, team):
        project, people = team
        response = as_(people, "researcher").patch("/api/projects/pilot/", {"archived": True}, format="json")
        assert response.status_code == 200 and response.json()["archived_at"] is not None
        assert as_(people, "annotator").get("/api/projects/").json()["results"] == []
        assert [p["slug"] for p in as_(people, "researcher").get("/api/projects/").json()["results"]] == ["pilot"]
        claim = as_(people, "annotator").post("/api/projects/pilot/assignments/next/")
        assert claim.status_code == 403
        assert claim.json() == {"code": "project_archived", "detail": PROJECT_ARCHIVED, "errors": []}
        assert not project.assignments.exists()
        # Exports stay open to the researcher.
        assert as_(people, "researcher").get("/api/projects/pilot/items/").status_code == 200
        restored = as_(people, "researcher").patch("/api/projects/pilot/", {"archived": False}, format="json")
        assert restored.json()["archived_at"] is None
        assert as_(people, "annotator").post("/api/projects/pilot/assignments/next/").status_code == 200


class ProjectListPageTests:
    """GET /api/projects/ is a page like every other list: ``?limit=`` within its documented cap."""

    @pytest.fixture
    def three(self, team, make_project):
        project, people = team
        for slug in ("second", "third"):
            membership_add(
                project=make_project("copa_likert", slug=slug), user=people["researcher"], role=Role.RESEARCHER
            )
        return people

    def test_limit_and_offset_page_the_projects(self, three):
        api = as_(three, "researcher")
        first = api.get("/api/projects/?limit=2").json()
        rest = api.get("/api/projects/?limit=2&offset=2").json()
        assert first["count"] == 3 and len(first["results"]) == 2 and first["next"] is not None
        assert len(rest["results"]) == 1
        assert {p["slug"] for p in first["results"] + rest["results"]} == {"pilot", "second", "third"}

    @pytest.mark.parametrize("query", ["limit=abc", "limit=5000", "limit=0", "limit=-1", "offset=x"])
    def test_a_limit_that_is_not_a_count_within_the_cap_is_400_naming_it(self, three, query):
        response = as_(three, "researcher").get(f"/api/projects/?{query}")
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == [query.split("=")[0]]
