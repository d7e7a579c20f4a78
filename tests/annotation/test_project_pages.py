"""Setting a project up in the browser: New project, Settings, archive, the guidelines preview,
first-run guidance and the study checklist; who may open each page; the commands that do the same."""

import json

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils.html import escape

from annotation.access import CANNOT_CREATE_PROJECTS, can_create_projects
from annotation.assignments import assignment_claim_next
from annotation.demo import demo_load
from annotation.importing import import_items
from annotation.kinds import all_kinds, get_kind
from annotation.models import Item, Membership, Project, Role
from annotation.services import (
    KIND_LOCKED_BY_ANSWERS,
    KIND_LOCKED_BY_ITEMS,
    OVERLAP_BELOW_DONE,
    SEED_LOCKED,
    ProjectArchived,
    annotation_submit,
    membership_add,
    project_archive,
    project_create_as,
    project_update,
)
from annotation.setup_checklist import setup_checklist
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
PEOPLE = ("anonymous", "outsider", "annotator", "expert", "researcher", "staff")


def add_project_permission(user) -> None:
    user.user_permissions.add(Permission.objects.get(content_type__app_label="annotation", codename="add_project"))


@pytest.fixture
def team(make_project, make_user):
    """A CoPA project; `researcher` researches it (without the right to create projects), `staff` is
    staff but no member, `creator` holds annotation.add_project and belongs to nothing."""
    project = make_project("copa_likert", slug="pilot", title="Pilot", overlap=2)
    people = {name: make_user(name) for name in ("outsider", "annotator", "annotator2", "expert", "researcher")}
    people["staff"] = make_user("staff")
    people["staff"].is_staff = True
    people["staff"].save(update_fields=["is_staff"])
    people["creator"] = make_user("creator")
    add_project_permission(people["creator"])
    membership_add(project=project, user=people["annotator"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["annotator2"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["expert"], role=Role.EXPERT)
    membership_add(project=project, user=people["researcher"], role=Role.RESEARCHER)
    return project, people


def client_as(client, people, who):
    if who != "anonymous":
        client.force_login(people[who])
    return client


def new_project_form(**overrides) -> dict:
    form = {
        "title": "Beer study",
        "slug": "beer-study",
        "kind": "copa_likert",
        "guidelines": "# Read this\n\nScore each factor.",
        "overlap": "3",
        "suggestion_exposure": "randomised",
        "suggestion_probability": "0.25",
        "seed": "7",
        "qualification_rate": "0.1",
        "adjudication": "custom",
        "adj_unanimous": "",
        "adj_ordinal_distance": "2",
        "adj_llm_majority": "on",
    }
    return {**form, **overrides}


def settings_form(project: Project, **overrides) -> dict:
    form = new_project_form(
        title=project.title, kind=project.kind, guidelines=project.guidelines, overlap=str(project.overlap),
        suggestion_exposure=project.suggestion_exposure, suggestion_probability=str(project.suggestion_probability),
        seed=str(project.seed), qualification_rate=str(project.qualification_rate), adjudication="default",
    )  # fmt: skip
    del form["slug"]
    return {**form, **overrides}


def add_items(project, n=4, tmp_path=None, name="items.jsonl"):
    import_items(project=project, path=write_jsonl(tmp_path / name, synthetic_records(get_kind(project.kind), n)))


class CreatePermissionRuleTests:
    def test_only_staff_holders_of_add_project_or_self_service_may_create(self, team, settings):
        _, people = team
        assert can_create_projects(people["staff"]) and can_create_projects(people["creator"])
        for who in ("outsider", "annotator", "expert", "researcher"):
            assert not can_create_projects(people[who])
        settings.CONCORD_SELF_SERVICE_PROJECTS = True
        assert can_create_projects(people["outsider"])

    def test_service_refuses_an_unpermitted_user_and_stores_nothing(self, team):
        _, people = team
        with pytest.raises(Exception) as refused:
            project_create_as(user=people["researcher"], slug="sneaky", kind="copa_likert")
        assert str(refused.value) == CANNOT_CREATE_PROJECTS
        assert not Project.objects.filter(slug="sneaky").exists()


class NewProjectPageTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 302), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 403),
         ("staff", 200)],
    )  # fmt: skip
    def test_who_may_open_the_new_project_page(self, client, team, who, status):
        _, people = team
        assert client_as(client, people, who).get(reverse("project_new")).status_code == status

    @pytest.mark.parametrize("who", ["anonymous", "outsider", "annotator", "expert", "researcher"])
    def test_a_crafted_create_by_an_unpermitted_user_stores_nothing(self, client, team, who):
        _, people = team
        response = client_as(client, people, who).post(reverse("project_new"), new_project_form())
        assert response.status_code in (302, 403)
        assert not Project.objects.filter(slug="beer-study").exists()

    def test_page_shows_a_card_per_kind_with_its_example_item(self, client, team):
        _, people = team
        body = client_as(client, people, "creator").get(reverse("project_new")).content.decode()
        for kind in all_kinds():
            name = kind.name
            assert f'value="{name}"' in body and escape(kind.description) in body
            first_field = next(iter(kind.example_payload()))
            assert f"<dt>{first_field}</dt>" in body
        assert "project_form.js" in body and "<script>" not in body

    def test_creating_a_project_stores_every_setting_and_makes_the_creator_its_researcher(self, client, team):
        _, people = team
        response = client_as(client, people, "creator").post(reverse("project_new"), new_project_form())
        assert response.status_code == 302 and response["Location"] == reverse("project_detail", args=["beer-study"])
        project = Project.objects.get(slug="beer-study")
        assert (project.kind, project.overlap, project.seed) == ("copa_likert", 3, 7)
        assert (project.suggestion_exposure, project.suggestion_probability) == ("randomised", 0.25)
        assert project.qualification_rate == 0.1 and project.guidelines.startswith("# Read this")
        assert project.adjudication_rules == {"unanimous": False, "ordinal_distance": 2, "llm_majority": True}
        assert Membership.objects.filter(project=project, user=people["creator"], role=Role.RESEARCHER).exists()

    def test_default_adjudication_stores_no_rules(self, client, team):
        _, people = team
        client_as(client, people, "staff").post(reverse("project_new"), new_project_form(adjudication="default"))
        assert Project.objects.get(slug="beer-study").adjudication_rules is None

    def test_bad_values_come_back_with_errors_and_store_nothing(self, client, team):
        _, people = team
        form = new_project_form(slug="pilot", overlap="0", kind="nope", suggestion_probability="2")
        response = client_as(client, people, "creator").post(reverse("project_new"), form)
        assert response.status_code == 400
        errors = response.context["form"].errors
        assert {"slug", "overlap", "kind", "suggestion_probability"} <= set(errors)
        assert Project.objects.count() == 1

    def test_too_long_guidelines_are_refused(self, client, team):
        _, people = team
        response = client_as(client, people, "creator").post(
            reverse("project_new"), new_project_form(guidelines="x" * 100_001)
        )
        assert response.status_code == 400 and not Project.objects.filter(slug="beer-study").exists()

    def test_self_service_setting_opens_the_page_to_everyone_signed_in(self, client, team, settings):
        _, people = team
        settings.CONCORD_SELF_SERVICE_PROJECTS = True
        response = client_as(client, people, "outsider").post(reverse("project_new"), new_project_form())
        assert response.status_code == 302 and Project.objects.filter(slug="beer-study").exists()


class GuidelinesPreviewTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 302), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 403),
         ("staff", 200)],
    )  # fmt: skip
    def test_who_may_preview_on_the_new_project_page(self, client, team, who, status):
        _, people = team
        response = client_as(client, people, who).post(reverse("project_new_preview"), {"guidelines": "*hi*"})
        assert response.status_code == status

    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 302), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 200),
         ("staff", 403)],
    )  # fmt: skip
    def test_who_may_preview_on_the_settings_page(self, client, team, who, status):
        _, people = team
        url = reverse("project_settings_preview", args=["pilot"])
        assert client_as(client, people, who).post(url, {"guidelines": "*hi*"}).status_code == status

    def test_preview_renders_markdown_without_anything_executable(self, client, team):
        _, people = team
        text = "## Rules\n\n**bold** <script>alert(1)</script> <a href='x' onclick='evil()'>link</a>"
        body = client_as(client, people, "creator").post(reverse("project_new_preview"), {"guidelines": text})
        html = body.content.decode()
        assert "<h2>Rules</h2>" in html and "<strong>bold</strong>" in html
        assert "<script" not in html and "onclick" not in html

    def test_preview_leaves_tex_for_katex(self, client, team):
        _, people = team
        text = "Use $\\mathrm{Var}(X+Y)$ for spread; prices like $5 and $10 stay text."
        html = client_as(client, people, "creator").post(reverse("project_new_preview"), {"guidelines": text})
        assert '<span class="math math-inline" data-math>\\mathrm{Var}(X+Y)</span>' in html.content.decode()
        assert "$5 and $10" in html.content.decode()

    def test_settings_page_previews_the_saved_guidelines(self, client, team):
        project, people = team
        project_update(project=project, guidelines="Score **carefully**: $x_1$ first.")
        html = client_as(client, people, "researcher").get(reverse("project_settings", args=["pilot"])).content.decode()
        preview = html.split('id="guidelines-preview"')[1].split("</section>")[0]
        assert "Nothing written yet" not in preview and "<strong>carefully</strong>" in preview
        assert "data-math>x_1</span>" in preview and "/static/vendor/katex/katex.min.js" in html

    def test_preview_refuses_text_over_the_cap(self, client, team):
        _, people = team
        response = client_as(client, people, "creator").post(
            reverse("project_new_preview"), {"guidelines": "x" * 100_001}
        )
        assert response.status_code == 422 and b"at most 100,000 characters" in response.content


class SettingsPageTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 302), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 200),
         ("staff", 403)],
    )  # fmt: skip
    def test_who_may_open_settings(self, client, team, who, status):
        _, people = team
        assert client_as(client, people, who).get(reverse("project_settings", args=["pilot"])).status_code == status

    @pytest.mark.parametrize("who", ["outsider", "annotator", "expert", "staff"])
    def test_a_crafted_settings_post_by_a_non_researcher_changes_nothing(self, client, team, who):
        project, people = team
        url = reverse("project_settings", args=["pilot"])
        response = client_as(client, people, who).post(url, settings_form(project, title="Hijacked"))
        assert response.status_code == 403 and Project.objects.get(pk=project.pk).title == "Pilot"

    def test_superuser_may_change_settings(self, client, team, django_user_model):
        project, _ = team
        client.force_login(django_user_model.objects.create_superuser("root", password="pw-for-tests-1"))
        url = reverse("project_settings", args=["pilot"])
        assert client.post(url, settings_form(project, title="Renamed")).status_code == 302
        assert Project.objects.get(pk=project.pk).title == "Renamed"

    def test_researcher_changes_settings(self, client, team):
        project, people = team
        form = settings_form(project, title="Pilot 2", overlap="3", kind="intent_mcq", guidelines="New rules",
                             suggestion_exposure="shown", adjudication="custom", adj_unanimous="on",
                             adj_ordinal_distance="", adj_llm_majority="")  # fmt: skip
        response = client_as(client, people, "researcher").post(reverse("project_settings", args=["pilot"]), form)
        assert response.status_code == 302
        project.refresh_from_db()
        assert (project.title, project.overlap, project.kind) == ("Pilot 2", 3, "intent_mcq")
        assert project.guidelines == "New rules"
        assert project.suggestion_exposure == "shown"
        assert project.adjudication_rules == {"unanimous": True, "ordinal_distance": None, "llm_majority": False}

    def test_kind_and_seed_are_read_only_with_the_reason_once_items_exist(self, client, team, tmp_path):
        project, people = team
        add_items(project, tmp_path=tmp_path)
        client_as(client, people, "researcher")
        body = client.get(reverse("project_settings", args=["pilot"])).content.decode()
        assert escape(KIND_LOCKED_BY_ITEMS) in body and escape(SEED_LOCKED) in body
        assert 'name="kind"' not in body  # no kind cards to choose from
        # A hand-made request naming another kind and seed changes neither.
        form = settings_form(project, kind="intent_mcq", seed="99", title="Still copa")
        assert client.post(reverse("project_settings", args=["pilot"]), form).status_code == 302
        project.refresh_from_db()
        assert (project.kind, project.seed, project.title) == ("copa_likert", 0, "Still copa")

    def test_lowering_k_below_what_is_done_is_refused_with_the_minimum(self, client, team, tmp_path):
        project, people = team
        add_items(project, n=1, tmp_path=tmp_path)  # one item, so both annotators answer it
        for who in ("annotator", "annotator2"):
            assignment = assignment_claim_next(project=project, user=people[who])
            annotation_submit(item=assignment.item, user=people[who], value=COPA.example_value())
        client_as(client, people, "researcher")
        body = client.get(reverse("project_settings", args=["pilot"])).content.decode()
        assert "cannot go below 2" in body and escape(KIND_LOCKED_BY_ANSWERS) in body
        response = client.post(reverse("project_settings", args=["pilot"]), settings_form(project, overlap="1"))
        assert response.status_code == 400
        assert OVERLAP_BELOW_DONE.format(minimum=2) in response.content.decode()
        assert Project.objects.get(pk=project.pk).overlap == 2


class ProjectUpdateServiceTests:
    def test_kind_cannot_change_once_answers_exist(self, team, tmp_path):
        project, people = team
        add_items(project, tmp_path=tmp_path)
        annotation_submit(item=Item.objects.filter(project=project).first(), user=people["annotator"],
                          value=COPA.example_value())  # fmt: skip
        with pytest.raises(ValidationError) as refused:
            project_update(project=project, kind="intent_mcq")
        assert refused.value.message_dict == {"kind": [KIND_LOCKED_BY_ANSWERS]}
        assert Project.objects.get(pk=project.pk).kind == "copa_likert"

    def test_raising_k_reopens_full_items_and_lowering_closes_them(self, team, tmp_path):
        project, people = team
        add_items(project, n=1, tmp_path=tmp_path)
        for who in ("annotator", "annotator2"):
            assignment_claim_next(project=project, user=people[who])
        item = Item.objects.get(project=project)
        assert not item.is_open
        project = project_update(project=project, overlap=3)
        item.refresh_from_db()
        assert item.is_open and assignment_claim_next(project=project, user=people["expert"]).item == item
        project_update(project=project, overlap=3, title="Same k")  # no change of k: nothing reopened
        with pytest.raises(ValidationError):
            project_update(project=project, overlap=2)

    def test_invalid_adjudication_rules_are_refused(self, team):
        project, _ = team
        with pytest.raises(ValidationError) as refused:
            project_update(project=project, adjudication_rules={"nonsense": 1})
        assert "adjudication_rules" in refused.value.message_dict


class ArchiveTests:
    @pytest.mark.parametrize(
        ("who", "status"),
        [("anonymous", 302), ("outsider", 403), ("annotator", 403), ("expert", 403), ("researcher", 302),
         ("staff", 403)],
    )  # fmt: skip
    def test_who_may_archive(self, client, team, who, status):
        project, people = team
        response = client_as(client, people, who).post(reverse("project_archive", args=["pilot"]))
        assert response.status_code == status
        project.refresh_from_db()
        assert (project.archived_at is not None) == (who == "researcher")

    def test_archive_and_restore_from_the_settings_page(self, client, team):
        project, people = team
        client_as(client, people, "researcher")
        client.post(reverse("project_archive", args=["pilot"]))
        assert Project.objects.get(pk=project.pk).archived_at is not None
        assert b"Restore project" in client.get(reverse("project_settings", args=["pilot"])).content
        client.post(reverse("project_archive", args=["pilot"]), {"restore": "1"})
        assert Project.objects.get(pk=project.pk).archived_at is None

    def test_an_archived_project_hands_out_no_items(self, team, tmp_path):
        project, people = team
        add_items(project, tmp_path=tmp_path)
        project = project_archive(project=project)
        with pytest.raises(ProjectArchived):
            assignment_claim_next(project=project, user=people["annotator"])

    def test_workspace_of_an_archived_project_is_refused(self, client, team, tmp_path):
        project, people = team
        add_items(project, tmp_path=tmp_path)
        project_archive(project=project)
        response = client_as(client, people, "annotator").get(reverse("workspace", args=["pilot"]))
        assert response.status_code == 403
        assert not project.assignments.exists()

    def test_archived_projects_leave_annotators_home_and_stay_in_researchers_archived_section(self, client, team):
        project, people = team
        project_archive(project=project)
        annotator_home = client_as(client, people, "annotator").get(reverse("home")).content.decode()
        assert "Pilot" not in annotator_home
        client.force_login(people["researcher"])
        home = client.get(reverse("home")).content.decode()
        assert 'id="archived-heading"' in home and reverse("project_detail", args=["pilot"]) in home

    def test_researcher_still_reads_an_archived_project(self, client, team):
        project, people = team
        project_archive(project=project)
        response = client_as(client, people, "researcher").get(reverse("project_detail", args=["pilot"]))
        assert response.status_code == 200 and b"Archived on" in response.content


class FirstRunTests:
    def test_a_creator_without_projects_is_shown_how_to_start(self, client, team):
        _, people = team
        body = client_as(client, people, "creator").get(reverse("home")).content.decode()
        assert "Start your first study" in body and reverse("project_new") in body

    def test_someone_who_may_not_create_projects_sees_no_new_project_link(self, client, team):
        _, people = team
        body = client_as(client, people, "outsider").get(reverse("home")).content.decode()
        assert reverse("project_new") not in body and "Start your first study" not in body

    def test_researcher_sees_the_study_checklist_with_a_link_per_step(self, client, team, tmp_path):
        project, people = team
        add_items(project, tmp_path=tmp_path)
        body = client_as(client, people, "researcher").get(reverse("project_detail", args=["pilot"])).content.decode()
        for step in ("guidelines", "items", "members", "judge_run", "progress", "agreement", "gold"):
            assert f'data-step="{step}"' in body
        assert 'class="step-done" data-step="items"' in body
        assert 'class="step-todo" data-step="guidelines"' in body
        for url in ("project_settings", "project_judges", "report", "adjudication_list"):
            assert reverse(url, args=["pilot"]) in body

    def test_every_step_lands_where_that_step_is_done(self, client, team, tmp_path):
        """A step's link opens a page that has the step's control in the section it points to: "Add
        annotators" lands on the Team page's add form, not on a list of members with no way to add one."""
        project, people = team
        add_items(project, tmp_path=tmp_path)
        signed_in = client_as(client, people, "researcher")
        #: The control each step is done with, as it appears in the section the link points to.
        controls = {
            "items": f'action="{reverse("import_upload", args=["pilot"])}"',
            "members": f'action="{reverse("team_add", args=["pilot"])}"',
            "progress": "Done / quota",
        }
        for step in setup_checklist(project=project):
            path, _, fragment = step.url.partition("#")
            body = signed_in.get(path).content.decode()
            assert fragment or step.key not in controls, step.key
            if fragment:
                assert f'id="{fragment}"' in body, step.key
                section = body[body.index(f'id="{fragment}"') :].split("</section>")[0]
                assert controls.get(step.key, "") in section, step.key
        members = signed_in.get(reverse("project_detail", args=["pilot"])).content.decode()
        card = members[members.index('id="members-heading"') :].split("</section>")[0]
        assert f'href="{reverse("team", args=["pilot"])}' in card  # the Members card leads to the Team page

    def test_annotators_do_not_see_the_checklist(self, client, team):
        _, people = team
        body = client_as(client, people, "annotator").get(reverse("project_detail", args=["pilot"])).content
        assert b"Study checklist" not in body


class CommandTests:
    def test_project_settings_changes_only_what_is_given(self, team, capsys):
        project, _ = team
        call_command("project_settings", "pilot", "--overlap", "3", "--randomise-suggestions", "0.3")
        project.refresh_from_db()
        assert (project.overlap, project.suggestion_exposure, project.suggestion_probability) == (3, "randomised", 0.3)
        assert project.title == "Pilot"
        assert json.loads(capsys.readouterr().out)["changed"] == [
            "overlap",
            "suggestion_exposure",
            "suggestion_probability",
        ]

    def test_project_settings_refuses_a_locked_change(self, team, tmp_path):
        project, _ = team
        add_items(project, tmp_path=tmp_path)
        with pytest.raises(CommandError, match="kind: the task kind cannot change"):
            call_command("project_settings", "pilot", "--kind", "intent_mcq")

    def test_archive_project_and_undo(self, team):
        project, _ = team
        call_command("archive_project", "pilot")
        assert Project.objects.get(pk=project.pk).archived_at is not None
        call_command("archive_project", "pilot", "--undo")
        assert Project.objects.get(pk=project.pk).archived_at is None

    def test_unknown_slug_is_a_bad_input_error(self, team):
        with pytest.raises(CommandError, match="no project"):
            call_command("archive_project", "nope")


class DemoPermissionTests:
    def test_demo_researcher_may_create_projects_and_annotators_may_not(self, django_user_model):
        demo_load()
        users = django_user_model.objects
        assert can_create_projects(users.get(username="researcher"))
        assert not can_create_projects(users.get(username="annotator1"))


class EstimatesLinkTests:
    def test_the_project_and_sample_pages_link_the_estimates_page(self, client, team):
        project, people = team
        client_as(client, people, "researcher")
        estimates = reverse("estimates", args=[project.slug])
        assert f'href="{estimates}"' in client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert f'href="{estimates}"' in client.get(reverse("validation_sample", args=[project.slug])).content.decode()
