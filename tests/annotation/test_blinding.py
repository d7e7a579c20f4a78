"""Blinding: what a kind keeps for researchers never reaches a rater's pages or API.

Every kind of the registry gets items whose hidden fields (``TaskKind.hidden_fields``) and external
ids carry unique markers; a rater then walks every page and API call they can make, crafted by hand,
and no response body may contain a marker. Researchers and experts still see the hidden fields.
"""

import copy
import json
from html.parser import HTMLParser

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.demo import demo_load
from annotation.importing import import_items
from annotation.kinds import all_kinds
from annotation.kinds.blinding import EACH, covers, path_parts, schema_leaves
from annotation.models import REVEAL_UNKNOWN, Annotation, Assignment, Item, Project, Role
from annotation.services import membership_add, project_update
from annotation.synthetic import write_jsonl
from validation.reports.base import ReportParameters
from validation.reports.build import build_report

pytestmark = pytest.mark.django_db
KINDS = all_kinds()
N_ITEMS = 4


# -- items with marked hidden fields ----------------------------------------------------------------


def _marker(tag: str, n: int) -> str:
    return f"zqhidden{tag}x{n}"


def _leaf_schema(schema: dict, parts: list[str]) -> dict:
    for part in parts:
        schema = schema["items"] if part == EACH else schema["properties"][part]
    return schema


def _marked_value(schema: dict, tag: str, markers: list[str]):
    """A valid value for a hidden field that names itself: strings and objects carry markers."""
    if schema.get("type") == "string":
        markers.append(_marker(tag, len(markers)))
        return markers[-1]
    if schema.get("type") == "object" and schema.get("properties"):
        return {name: _marked_value(schema["properties"][name], tag, markers) for name in schema.get("required", [])}
    if schema.get("type") == "object":  # free-form meta: where the draft and the label are kept
        return {name: _marked_value({"type": "string"}, tag, markers) for name in ("draft", "label", "source")}
    return None  # a number list (the MCQ key): checked by its name in JSON instead


def _mark(node, parts: list[str], schema: dict, tag: str, markers: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if head == EACH:
        for entry in node:
            _mark(entry, rest, schema["items"], tag, markers)
    elif rest:
        _mark(node[head], rest, schema["properties"][head], tag, markers)
    else:
        value = _marked_value(schema["properties"][head], tag, markers)
        if value is not None:
            node[head] = value


def marked_payload(kind, tag: str) -> tuple[dict, list[str]]:
    """The kind's example item with every hidden field holding markers, and the markers."""
    payload, markers = copy.deepcopy(kind.example_payload()), []
    for path in kind.hidden_fields:
        _mark(payload, path_parts(path), kind.payload_schema, tag, markers)
    assert kind.check_payload(payload) == []
    return payload, markers


def external_id(tag: str) -> str:
    return f"extid-zqhidden{tag}"


class FormFields(HTMLParser):
    """The fields a browser would send for the form with ``form_id``: checked choices, texts."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id, self.inside, self.textarea, self.data = form_id, False, None, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("id") == self.form_id
        elif self.inside and tag == "input" and attrs.get("name"):
            if attrs.get("type") not in ("radio", "checkbox") or "checked" in attrs:
                self.data.append((attrs["name"], attrs.get("value") or ""))
        elif self.inside and tag == "textarea":
            self.textarea = attrs["name"]
            self.data.append((self.textarea, ""))

    def handle_data(self, data):
        if self.textarea:
            self.data[-1] = (self.textarea, self.data[-1][1] + data)

    def handle_endtag(self, tag):
        if tag == "textarea":
            self.textarea = None
        elif tag == "form":
            self.inside = False


def form_data(page: str) -> dict[str, list[str]]:
    parser = FormFields("annotation-form")
    parser.feed(page)
    data: dict[str, list[str]] = {}
    for name, value in parser.data:
        data.setdefault(name, []).append(value)
    return data


@pytest.fixture
def blind_project(make_project, make_user, tmp_path):
    def make(kind):
        project = make_project(kind.name, overlap=1)
        records, markers = [], []
        for index in range(N_ITEMS):
            tag = f"{index}"
            payload, found = marked_payload(kind, tag)
            records.append({"external_id": external_id(tag), **payload})
            markers += [*found, external_id(tag)]
        import_items(project=project, path=write_jsonl(tmp_path / f"{kind.name}.jsonl", records))
        people = {name: make_user(name) for name in ("rater", "res", "exp")}
        membership_add(project=project, user=people["rater"], role=Role.ANNOTATOR)
        membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
        membership_add(project=project, user=people["exp"], role=Role.EXPERT)
        return project, people, markers

    return make


def rater_bodies(project, rater) -> list[tuple[str, str]]:
    """Every response a rater gets walking the workspace, the API, history and edit pages."""
    kind, slug, bodies = project.task_kind, project.slug, []
    page, api = Client(), APIClient()
    page.force_login(rater)
    api.force_authenticate(rater)

    def keep(label, response, status=200):
        assert response.status_code == status, (label, response.status_code)
        bodies.append((label, response.content.decode()))
        return response

    first = keep("workspace", page.get(reverse("workspace", args=[slug]))).context["assignment"]
    keep(
        "api submit",
        api.post(reverse("api_assignment_submit", args=[first.pk]), {"value": kind.example_value()}, format="json"),
        201,
    )
    edit = keep("edit page", page.get(reverse("annotation_edit", args=[slug, first.pk])))
    resubmit = keep(
        "htmx submit of the edit, next item",
        page.post(
            reverse("assignment_submit", args=[slug, first.pk]),
            form_data(edit.content.decode()),
            HTTP_HX_REQUEST="true",
        ),
    )
    assert Annotation.objects.filter(item=first.item, rater=rater.username).count() == 2  # the form round-tripped
    second = resubmit.context["assignment"]
    held = keep("api next", api.post(reverse("api_assignment_next", args=[slug]))).json()
    assert held["id"] == second.pk
    assert held["item"] == {"payload": kind.rater_payload(second.item.payload), "presentation": None}
    skipped = keep(
        "api skip", api.post(reverse("api_assignment_skip", args=[second.pk]), {"reason": "unsure"}, format="json")
    )
    # Hidden fields without a text of their own (the MCQ key, a list of numbers) are not even there.
    assert skipped.json()["item"] == {"payload": kind.rater_payload(second.item.payload), "presentation": None}
    third = keep("workspace again", page.get(reverse("workspace", args=[slug]))).context["assignment"]
    submit_third = reverse("assignment_submit", args=[slug, third.pk])
    keep("htmx empty submit", page.post(submit_third, {}, HTTP_HX_REQUEST="true"), 422)
    keep("page submit", page.post(submit_third, form_data(edit.content.decode())), 302)
    keep("workspace after submit", page.get(reverse("workspace", args=[slug])))
    fourth = Assignment.objects.get(annotator=rater, status=Assignment.Status.ASSIGNED)
    keep(
        "htmx skip, nothing left",
        page.post(reverse("assignment_skip", args=[slug, fourth.pk]), {"reason": "unsure"}, HTTP_HX_REQUEST="true"),
    )
    keep("history", page.get(reverse("annotation_history", args=[slug])))
    keep("project page", page.get(reverse("project_detail", args=[slug])))
    listed = keep("api annotations", api.get(reverse("api_annotations", args=[slug]))).json()
    assert listed["results"] and all(row["assignment"] for row in listed["results"])
    annotation = Annotation.objects.filter(rater=rater.username).first()
    keep("api annotation", api.get(reverse("api_annotation", args=[annotation.pk])))
    keep("api project", api.get(reverse("api_project", args=[slug])))
    return bodies


class KindContractTests:
    @pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
    def test_every_payload_field_is_either_shown_or_hidden_with_a_reason(self, kind):
        assert kind.undeclared_payload_fields() == []
        leaves = list(schema_leaves(kind.payload_schema))
        for path in (*kind.rater_fields, *kind.hidden_fields):
            assert any(covers(path, leaf) for leaf in leaves), f"{kind.name}: {path} names no payload field"
        assert all(reason.strip() for reason in kind.hidden_fields.values())
        assert not set(kind.rater_fields) & set(kind.hidden_fields)

    @pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
    def test_the_rater_payload_keeps_the_shown_fields_and_drops_the_hidden(self, kind):
        payload, markers = marked_payload(kind, "c")
        shown = kind.rater_payload(payload)
        text = json.dumps(shown)
        assert not [m for m in markers if m in text]
        for path in kind.hidden_fields:
            if EACH not in path and "." not in path:
                assert path not in shown
        # What the form shows is all there: the example item without its hidden fields.
        assert {key: value for key, value in payload.items() if key not in kind.hidden_fields}.keys() == shown.keys()


class RaterResponsesTests:
    @pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
    def test_no_hidden_value_in_any_response_a_rater_gets(self, kind, blind_project):
        project, people, markers = blind_project(kind)
        bodies = rater_bodies(project, people["rater"])
        leaks = [(label, m) for label, body in bodies for m in markers if m in body]
        assert leaks == []

    @pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
    def test_researchers_see_the_hidden_fields_and_experts_make_gold_blind(self, kind, blind_project):
        project, people, markers = blind_project(kind)
        item = Item.objects.filter(project=project).order_by("pk").first()
        hidden = [m for m in markers if m in json.dumps(item.payload)]
        item_url = reverse("item_page", args=[project.slug, item.pk])
        adjudication_url = reverse("adjudication_item", args=[project.slug, item.pk])

        def body(who: str, url: str) -> str:
            client = Client()
            client.force_login(people[who])
            return client.get(url).content.decode()

        researcher = body("res", item_url)
        assert [m for m in hidden if m not in researcher] == [] and "For researchers only" in researcher
        for url in (item_url, adjudication_url):
            seen = body("exp", url)
            assert [m for m in hidden if m in seen] == [], url
            assert "For researchers only" not in seen
        assert "Blind adjudication" in body("exp", adjudication_url)
        # A project may show them to its experts on purpose: then both pages list them.
        project_update(project=project, adjudicators_see_hidden=True)
        for url in (item_url, adjudication_url):
            seen = body("exp", url)
            assert [m for m in hidden if m not in seen] == [], url
            assert "For researchers only" in seen and "Blind adjudication" not in seen


class DemoCopaTests:
    """The study-integrity issue's must-hold, on the shipped demo's CoPA project."""

    WORDS = ("accepted", "top-voted", "top_voted", "top voted")

    def test_the_annotators_pages_and_api_never_name_the_response_source_or_pair(self):
        demo_load()
        project = Project.objects.get(slug="demo-copa")
        rater = project.memberships.filter(role=Role.ANNOTATOR).order_by("user__username").first().user
        pairs = set(Item.objects.filter(project=project).values_list("payload__pair_id", flat=True))
        external_ids = set(Item.objects.filter(project=project).values_list("external_id", flat=True))
        assert pairs and None not in pairs
        page, api = Client(), APIClient()
        page.force_login(rater)
        api.force_authenticate(rater)
        bodies = []
        workspace = page.get(reverse("workspace", args=[project.slug]))
        bodies.append(workspace.content.decode())
        held = api.post(reverse("api_assignment_next", args=[project.slug]))
        bodies.append(held.content.decode())
        assignment = held.json()["id"]
        value = project.task_kind.example_value()
        submit = reverse("api_assignment_submit", args=[assignment])
        bodies.append(api.post(submit, {"value": value}, format="json").content.decode())
        bodies.append(page.get(reverse("annotation_edit", args=[project.slug, assignment])).content.decode())
        bodies.append(page.get(reverse("workspace", args=[project.slug])).content.decode())
        bodies.append(page.get(reverse("annotation_history", args=[project.slug])).content.decode())
        bodies.append(api.get(reverse("api_annotations", args=[project.slug])).content.decode())
        found = [
            word for body in bodies for word in (*self.WORDS, *pairs, *external_ids) if word.lower() in body.lower()
        ]
        assert found == []


# -- revealing a hidden field on purpose --------------------------------------------------------------


@pytest.fixture
def copa(blind_project):
    return blind_project(next(kind for kind in KINDS if kind.name == "copa_likert"))


class RevealTests:
    def test_raters_are_blind_by_default_and_only_hidden_fields_can_be_revealed(self, copa):
        project, _, _ = copa
        assert project.revealed_fields == []
        for fields in (["question"], ["bogus"], "response_source"):
            with pytest.raises(ValidationError) as refused:
                project_update(project=project, revealed_fields=fields)
            assert "revealed_fields" in refused.value.message_dict
        project.refresh_from_db()
        assert (project.revealed_fields, project.reveal_log) == ([], [])
        with pytest.raises(ValidationError) as refused:
            project_update(project=project, revealed_fields=["bogus"])
        assert refused.value.message_dict["revealed_fields"] == [
            REVEAL_UNKNOWN.format(fields="bogus", allowed=", ".join(project.task_kind.hidden_fields))
        ]

    def test_a_revealed_field_reaches_the_rater_and_nothing_else_does(self, copa):
        project, people, markers = copa
        api = APIClient()
        api.force_authenticate(people["res"])
        url = reverse("api_project", args=[project.slug])
        refused = api.patch(url, {"revealed_fields": ["pair_id", "question"]}, format="json")
        assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "revealed_fields"
        assert api.patch(url, {"revealed_fields": ["response_source"]}, format="json").json()["revealed_fields"] == [
            "response_source"
        ]
        rater = APIClient()
        rater.force_authenticate(people["rater"])
        payload = rater.post(reverse("api_assignment_next", args=[project.slug])).json()["item"]["payload"]
        item = Item.objects.get(project=project, assignments__annotator=people["rater"])
        assert payload["response_source"] == item.payload["response_source"]
        assert not [m for m in markers if m in json.dumps(payload) and m != item.payload["response_source"]]
        page = Client()
        page.force_login(people["rater"])
        body = page.get(reverse("workspace", args=[project.slug])).content.decode()
        assert "Shown on purpose by this project" in body and item.payload["response_source"] in body
        assert item.payload["pair_id"] not in body

    def test_the_settings_page_and_the_command_set_it(self, copa):
        project, people, _ = copa
        call_command("project_settings", project.slug, "--reveal", "pair_id", "--reveal", "response_source")
        project.refresh_from_db()
        assert project.revealed_fields == ["pair_id", "response_source"]
        call_command("project_settings", project.slug, "--reveal-none")
        project.refresh_from_db()
        assert project.revealed_fields == [] and [e["fields"] for e in project.reveal_log] == [
            ["pair_id", "response_source"],
            [],
        ]
        client = Client()
        client.force_login(people["res"])
        url = reverse("project_settings", args=[project.slug])
        form = client.get(url)
        assert 'name="revealed_fields" value="response_source"' in form.content.decode()
        data = {key: value for key, value in form.context["form"].initial.items() if value is not None}
        data.update(kind=project.kind, revealed_fields=["meta"], adjudication="default")
        assert client.post(url, data).status_code == 302
        project.refresh_from_db()
        assert project.revealed_fields == ["meta"] and not project.adjudicators_see_hidden
        call_command("project_settings", project.slug, "--adjudicators-see-hidden")
        project.refresh_from_db()
        assert project.adjudicators_see_hidden and project.reveal_log[-1]["adjudicators_see_hidden"] is True
        assert project.reveal_log[-1]["fields"] == ["meta"]  # each entry is the whole state from its time on
        api = APIClient()
        api.force_authenticate(people["res"])
        answer = api.patch(
            reverse("api_project", args=[project.slug]), {"adjudicators_see_hidden": False}, format="json"
        )
        assert answer.json()["adjudicators_see_hidden"] is False
        assert [e.get("adjudicators_see_hidden") for e in Project.objects.get(pk=project.pk).reveal_log][-2:] == [
            True,
            False,
        ]

    def test_the_report_says_when_raters_saw_a_hidden_field(self, copa):
        project, people, _ = copa
        api = APIClient()
        api.force_authenticate(people["rater"])
        kind = project.task_kind

        def answer_one():
            held = api.post(reverse("api_assignment_next", args=[project.slug])).json()
            submit = reverse("api_assignment_submit", args=[held["id"]])
            assert api.post(submit, {"value": kind.example_value()}, format="json").status_code == 201

        answer_one()
        blind = build_report(project=project, parameters=ReportParameters(bootstrap=0))
        assert not [n for n in blind.table("dimensions").notes if n.startswith("Blinding")]
        project = project_update(project=project, revealed_fields=["response_source"])
        answer_one()
        answer_one()
        notes = build_report(project=project, parameters=ReportParameters(bootstrap=0)).table("dimensions").notes
        seen = [n for n in notes if n.startswith("Blinding")]
        assert len(seen) == 1 and "raters saw response_source" in seen[0] and "on 2 of 3 answers" in seen[0]
        assert "to now" in seen[0]
