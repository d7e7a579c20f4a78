"""The annotator's workspace: the server checks everything the form checks, and blinding holds."""

import html
import re

import pytest
from django.urls import reverse

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
SCORES = COPA.example_value()["scores"]


@pytest.fixture
def copa(make_project, make_user, tmp_path):
    project = make_project("copa_likert", overlap=2, guidelines="Read **carefully**.\n\n<script>alert(1)</script>")
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 4)))
    people = {}
    for name, role in (("ann1", Role.ANNOTATOR), ("ann2", Role.ANNOTATOR), ("res", Role.RESEARCHER)):
        people[name] = make_user(name)
        membership_add(project=project, user=people[name], role=role)
    return project, people


def open_item(client, project):
    response = client.get(reverse("workspace", args=[project.slug]))
    return response, response.context["assignment"]


def submit(client, project, assignment, data, **headers):
    url = reverse("assignment_submit", args=[project.slug, assignment.pk])
    return client.post(url, data, **headers)


class WorkspaceTests:
    def test_page_shows_item_form_guidelines_without_script(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        response, assignment = open_item(client, project)
        html = response.content.decode()
        assert assignment.item.payload["question"] in html
        assert html.count('type="radio" name="CT"') == 3
        assert "<strong>carefully</strong>" in html and "<script>alert(1)</script>" not in html

    def test_submit_stores_and_serves_the_next_item_as_a_partial(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, first = open_item(client, project)
        response = submit(client, project, first, {**SCORES, "idempotency_key": "k1"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200 and "<html" not in response.content.decode()
        assert response.context["assignment"].item_id != first.item_id
        stored = Annotation.objects.get()
        assert stored.value == {"scores": SCORES} and stored.rater == "ann1" and stored.seconds_on_item >= 0

    def test_double_submit_stores_one_version(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        submit(client, project, assignment, {**SCORES, "idempotency_key": "same"})
        submit(client, project, assignment, {**SCORES, "idempotency_key": "same"})
        assert Annotation.objects.count() == 1

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            # The page says it in the annotator's words; the API keeps the field paths (tests/api).
            ({**SCORES, "CT": "3"}, "Cognitive Trust (CT): choose one of the answers offered."),
            ({k: v for k, v in SCORES.items() if k != "MS"}, "Score Metacognitive Scaffolding (MS)."),
            ({**SCORES, "SA": "two"}, "Situational Anchoring (SA): choose one of the answers offered."),
        ],
    )
    def test_crafted_values_are_refused_with_4xx_and_nothing_stored(self, client, copa, data, message):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        response = submit(client, project, assignment, data)
        assert response.status_code == 422 and message in html.unescape(response.content.decode())
        assert not Annotation.objects.exists()

    def test_someone_elses_item_is_refused(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, theirs = open_item(client, project)
        client.force_login(people["ann2"])
        assert submit(client, project, theirs, SCORES).status_code == 404
        assert not Annotation.objects.exists()

    def test_researchers_who_do_not_annotate_get_403(self, client, copa):
        project, people = copa
        client.force_login(people["res"])
        assert client.get(reverse("workspace", args=[project.slug])).status_code == 403

    def test_skip_with_reason_serves_another_item(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        url = reverse("assignment_skip", args=[project.slug, assignment.pk])
        assert client.post(url, {"reason": ""}).status_code == 422
        response = client.post(url, {"reason": "off topic"}, HTTP_HX_REQUEST="true")
        assert response.context["assignment"].item_id != assignment.item_id
        assert Assignment.objects.get(pk=assignment.pk).skip_reason == "off topic"

    def test_edit_from_history_adds_a_version(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        submit(client, project, assignment, SCORES)
        history = client.get(reverse("annotation_history", args=[project.slug]))
        # Named by the rater's assignment: the researcher's external id never reaches a rater (blinding).
        assert f"<code>#{assignment.pk}</code>" in history.content.decode()
        edit = client.get(reverse("annotation_edit", args=[project.slug, assignment.pk]))
        page = edit.content.decode()
        # Prefilled with the latest value: exactly the six chosen points, nothing else.
        assert re.findall(r'name="(\w+)" value="(\d)" checked', page) == [(c, str(v)) for c, v in SCORES.items()]
        response = submit(client, project, assignment, {**SCORES, "CT": "2"})
        assert response.status_code == 302
        assert list(Annotation.objects.values_list("version", "value__scores__CT")) == [(1, 1), (2, 2)]

    def test_second_annotator_never_sees_the_first_ones_values(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        submit(client, project, assignment, {**SCORES, "comment": "first-annotator-secret"})
        client.force_login(people["ann2"])
        for _ in range(4):
            response, held = open_item(client, project)
            assert "first-annotator-secret" not in response.content.decode()
            assert " checked" not in response.content.decode()
            submit(client, project, held, SCORES)

    def test_progress_counts_submitted_items(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        _, assignment = open_item(client, project)
        submit(client, project, assignment, SCORES)
        response, _ = open_item(client, project)
        progress = response.context["progress"]
        assert (progress.done, progress.target) == (1, 4)  # 4 items x 2 raters / 2 annotators


class LabelReviewTests:
    def test_experts_see_statements_to_review_and_annotators_do_not(self, client, make_project, make_user, tmp_path):
        kind = get_kind("label_contextualization")
        project = make_project("label_contextualization", overlap=3)
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(kind, 1)))
        writer, peer, expert = make_user("writer"), make_user("peer"), make_user("expert")
        membership_add(project=project, user=writer, role=Role.ANNOTATOR)
        membership_add(project=project, user=peer, role=Role.ANNOTATOR)
        membership_add(project=project, user=expert, role=Role.EXPERT)
        client.force_login(writer)
        _, assignment = open_item(client, project)
        submit(client, project, assignment, {"action": "write", "statement": "To use the cited paper's data."})
        client.force_login(peer)
        assert "cited paper&#x27;s data" not in open_item(client, project)[0].content.decode()
        client.force_login(expert)
        response, held = open_item(client, project)
        assert "To use the cited paper&#x27;s data." in response.content.decode()
        review = {"action": "review", "statement": "To use the cited paper's data.", "author": "writer"}
        assert submit(client, project, held, {**review, "verdict": "revise"}).status_code == 422  # needs a note
        submit(client, project, held, {**review, "verdict": "accept"})
        assert Annotation.objects.get(rater="expert").value["verdict"] == "accept"


class ResearcherViewTests:
    def test_progress_speed_and_qualification_accuracy_per_annotator(self, client, make_project, make_user, tmp_path):
        project = make_project("copa_likert", overlap=1, qualification_rate=1.0)
        records = list(synthetic_records(COPA, 3))
        records[0]["gold"] = {"scores": SCORES}
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", iter(records)))
        ann, res = make_user("ann"), make_user("res")
        membership_add(project=project, user=ann, role=Role.ANNOTATOR)
        membership_add(project=project, user=res, role=Role.RESEARCHER)
        client.force_login(ann)
        _, first = open_item(client, project)
        assert first.item.gold_value is not None  # rate 1.0: the known-answer item comes first
        submit(client, project, first, {**SCORES, "CT": "0", "SA": "0", "MS": "2"})  # 3 of 6 factors right
        client.force_login(res)
        rows = client.get(reverse("project_detail", args=[project.slug])).context["annotators"]
        assert [(r.username, r.submitted, r.qualification_answered, r.qualification_accuracy) for r in rows] == [
            ("ann", 1, 1, 0.5)
        ]
        assert rows[0].median_seconds is not None


class UndoTests:
    def test_undo_opens_the_previous_answer(self, client, copa):
        project, people = copa
        client.force_login(people["ann1"])
        undo = reverse("annotation_undo", args=[project.slug])
        assert client.get(undo)["Location"] == reverse("workspace", args=[project.slug])  # nothing to undo yet
        _, first = open_item(client, project)
        submit(client, project, first, SCORES)
        assert client.get(undo)["Location"] == reverse("annotation_edit", args=[project.slug, first.pk])
