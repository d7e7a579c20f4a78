"""A design given on every path a researcher has: the New project page (with its live preview of the
annotator's form), the Settings page (read-only once answers exist), the API and ``create_project``.
A refused design names the field at its path and stores nothing; a crafted request cannot change a
design that answers were given in."""

from __future__ import annotations

import copy
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.importing import import_items
from annotation.models import Project, Role
from annotation.services import DESIGN_LOCKED_BY_ANSWERS, annotation_submit, membership_add
from annotation.synthetic import write_jsonl
from tests.annotation.test_designs import LESIONS
from tests.annotation.test_project_pages import add_project_permission, new_project_form, settings_form
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
UPSIDE_DOWN = {**LESIONS, "dimensions": [LESIONS["dimensions"][0], {"name": "fit", "min": 2, "max": 0}]}


@pytest.fixture
def creator(make_user):
    user = make_user("creator")
    add_project_permission(user)
    return user


@pytest.fixture
def answered(make_project, make_user, tmp_path):
    """A rating project of LESIONS with one item answered; `res` is its researcher."""
    project = make_project("rating", slug="lesions", design=LESIONS)
    records = [{"external_id": "a", "fields": {"report": "R"}}]
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", records))
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    annotation_submit(item=project.items.get(), user=make_user("ann"), value={"ratings": {"grade": 2}})
    return project, researcher


class NewProjectPageTests:
    def test_a_design_typed_on_the_page_is_stored(self, client, creator):
        client.force_login(creator)
        form = new_project_form(kind="rating", adjudication="default", design=json.dumps(LESIONS))
        response = client.post(reverse("project_new"), form)
        assert response.status_code == 302
        assert Project.objects.get(slug="beer-study").design == LESIONS

    def test_a_refused_design_names_the_field_and_stores_nothing(self, client, creator):
        client.force_login(creator)
        form = new_project_form(kind="rating", adjudication="default", design=json.dumps(UPSIDE_DOWN))
        response = client.post(reverse("project_new"), form)
        assert response.status_code == 400
        assert "dimensions[1].max: must be greater than min" in response.content.decode()
        assert not Project.objects.exists()

    def test_the_page_offers_each_designed_kind_s_example_to_start_from(self, client, creator):
        client.force_login(creator)
        body = client.get(reverse("project_new")).content.decode()
        assert 'id="design-builder"' in body and 'id="design-examples"' in body
        assert '"coherence"' in body and '"model_a"' in body

    def test_the_preview_is_the_annotator_s_form_for_the_design(self, client, creator):
        client.force_login(creator)
        url = reverse("project_new_design_preview")
        response = client.post(url, {"kind": "rating", "design": json.dumps(LESIONS)})
        body = response.content.decode()
        assert response.status_code == 200
        assert "Radiology report" in body and 'name="rating-grade"' in body and 'name="rating-fit"' in body
        assert "<kbd>Enter</kbd>" in body  # the keyboard hints annotators get
        refused = client.post(url, {"kind": "rating", "design": json.dumps(UPSIDE_DOWN)})
        assert refused.status_code == 422 and "dimensions[1].max: must be greater than min" in refused.content.decode()
        not_json = client.post(url, {"kind": "rating", "design": "{"})
        assert not_json.status_code == 422 and "not JSON" in not_json.content.decode()
        assert client.post(url, {"kind": "copa_likert", "design": "{}"}).status_code == 422

    def test_the_preview_is_for_people_who_may_create_projects(self, client, make_user):
        client.force_login(make_user("outsider"))
        response = client.post(reverse("project_new_design_preview"), {"kind": "rating", "design": json.dumps(LESIONS)})
        assert response.status_code == 403


class SettingsPageTests:
    def test_once_answers_exist_the_design_is_shown_read_only(self, client, answered):
        project, researcher = answered
        client.force_login(researcher)
        body = client.get(reverse("project_settings", args=[project.slug])).content.decode()
        assert DESIGN_LOCKED_BY_ANSWERS in body
        assert "Radiology report" in body  # the design itself, in the JSON box

    def test_a_crafted_settings_post_does_not_change_an_answered_design(self, client, answered):
        project, researcher = answered
        client.force_login(researcher)
        changed = copy.deepcopy(LESIONS)
        changed["dimensions"][0]["max"] = 5
        form = settings_form(project, design=json.dumps(changed))
        client.post(reverse("project_settings", args=[project.slug]), form)
        project.refresh_from_db()
        assert project.design == LESIONS


class DesignApiTests:
    def test_a_project_is_created_with_its_design(self, creator):
        response = client_for(creator).post(
            "/api/projects/", {"slug": "lesions", "kind": "rating", "design": LESIONS}, format="json"
        )
        assert response.status_code == 201, response.content
        assert response.json()["design"] == LESIONS

    def test_a_refused_design_is_a_400_naming_the_path(self, creator):
        response = client_for(creator).post(
            "/api/projects/", {"slug": "lesions", "kind": "rating", "design": UPSIDE_DOWN}, format="json"
        )
        assert response.status_code == 400
        assert "dimensions[1].max: must be greater than min" in json.dumps(response.json())
        assert not Project.objects.exists()

    def test_a_crafted_patch_cannot_change_an_answered_design(self, answered):
        project, researcher = answered
        changed = {**LESIONS, "comment": True}
        response = client_for(researcher).patch(f"/api/projects/{project.slug}/", {"design": changed}, format="json")
        assert response.status_code == 400
        assert DESIGN_LOCKED_BY_ANSWERS in json.dumps(response.json())
        project.refresh_from_db()
        assert project.design == LESIONS


class CreateProjectCommandTests:
    def test_the_design_file_is_stored(self, tmp_path, capsys):
        path = tmp_path / "design.json"
        path.write_text(json.dumps(LESIONS))
        call_command("create_project", "lesions", "--kind", "rating", "--design", str(path))
        assert Project.objects.get(slug="lesions").design == LESIONS

    def test_a_refused_design_exits_1_naming_the_field(self, tmp_path):
        path = tmp_path / "design.json"
        path.write_text(json.dumps(UPSIDE_DOWN))
        with pytest.raises(CommandError) as refused:
            call_command("create_project", "lesions", "--kind", "rating", "--design", str(path))
        assert refused.value.returncode == 1
        assert "design: dimensions[1].max: must be greater than min" in str(refused.value)
        path.write_text("{not json")
        with pytest.raises(CommandError) as not_json:
            call_command("create_project", "lesions", "--kind", "rating", "--design", str(path))
        assert not_json.value.returncode == 1 and "not JSON" in str(not_json.value)
        assert not Project.objects.exists()


def test_the_settings_preview_is_for_the_project_s_researchers(client, answered, make_user):
    project, researcher = answered
    annotator = make_user("ann2")
    membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
    url = reverse("project_design_preview", args=[project.slug])
    client.force_login(annotator)
    assert client.post(url, {"kind": "rating", "design": json.dumps(LESIONS)}).status_code == 403
    client.force_login(researcher)
    assert client.post(url, {"kind": "rating", "design": json.dumps(LESIONS)}).status_code == 200


def test_project_settings_changes_a_design_until_answers_exist(answered, make_project, tmp_path):
    project, _ = answered
    path = tmp_path / "design.json"
    path.write_text(json.dumps({**LESIONS, "comment": True}))
    with pytest.raises(CommandError) as refused:
        call_command("project_settings", project.slug, "--design", str(path))
    assert refused.value.returncode == 1 and DESIGN_LOCKED_BY_ANSWERS in str(refused.value)
    fresh = make_project("rating", slug="fresh", design=LESIONS)
    call_command("project_settings", fresh.slug, "--design", str(path))
    fresh.refresh_from_db()
    assert fresh.design["comment"] is True


def test_a_scale_up_to_ten_says_which_key_gives_ten(client, creator):
    client.force_login(creator)
    design = {**LESIONS, "dimensions": [{"name": "quality", "min": 1, "max": 10}]}
    body = client.post(reverse("project_new_design_preview"), {"kind": "rating", "design": json.dumps(design)})
    assert "key <kbd>0</kbd> is 10" in body.content.decode()
