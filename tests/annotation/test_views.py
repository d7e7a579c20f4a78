"""Pages: sign-in, each person's projects and progress, the researcher's import with progress."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.assignments import assignment_claim_next, assignment_submit
from annotation.kinds import get_kind
from annotation.models import ImportJob, Item, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


def jsonl(records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


@pytest.fixture
def team(make_project, make_user):
    project = make_project("copa_likert", title="CoPA pilot", overlap=2)
    people = {name: make_user(name) for name in ("res", "ann1", "ann2", "outsider")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann1"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["ann2"], role=Role.ANNOTATOR)
    return project, people


class AuthTests:
    def test_pages_need_sign_in(self, client, team):
        project, _ = team
        for url in (reverse("home"), reverse("project_detail", args=[project.slug])):
            response = client.get(url)
            assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    def test_sign_in_and_out(self, client, team):
        response = client.post(reverse("login"), {"username": "ann1", "password": "pw-for-tests-1"}, follow=True)
        assert response.status_code == 200 and b"Signed in as <strong>ann1</strong>" in response.content
        client.post(reverse("logout"))
        assert client.get(reverse("home")).status_code == 302

    def test_wrong_password_says_so(self, client, team):
        response = client.post(reverse("login"), {"username": "ann1", "password": "nope"})
        assert b"didn't match" in response.content

    def test_a_deactivated_account_is_signed_out_on_its_next_request(self, client, team):
        _, people = team
        client.force_login(people["ann1"])
        assert client.get(reverse("home")).status_code == 200
        type(people["ann1"]).objects.filter(pk=people["ann1"].pk).update(is_active=False)
        response = client.get(reverse("home"))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    def test_a_password_change_ends_other_sessions(self, client, team):
        _, people = team
        client.force_login(people["ann1"])
        people["ann1"].set_password("a-new-password-2")
        people["ann1"].save()
        assert client.get(reverse("home")).status_code == 302


class HomeTests:
    def test_annotator_sees_their_projects_and_progress(self, client, team):
        project, people = team
        for record in synthetic_records(COPA, 4):
            external_id = record.pop("external_id")
            Item.objects.create(project=project, external_id=external_id, payload=record)
        held = assignment_claim_next(project=project, user=people["ann1"])
        assignment_submit(assignment=held, value=COPA.example_value())
        client.force_login(people["ann1"])
        rows = client.get(reverse("home")).context["rows"]
        assert [(r.project.slug, r.roles, r.my_done, r.my_target, r.items_complete) for r in rows] == [
            ("copa-likert", ("annotator",), 1, 4, 0)
        ]

    def test_outsider_sees_no_project_and_cannot_open_one(self, client, team):
        project, people = team
        client.force_login(people["outsider"])
        assert b"not a member of any project" in client.get(reverse("home")).content
        assert client.get(reverse("project_detail", args=[project.slug])).status_code == 403


class ImportPageTests:
    def upload(self, client, project, name, content, **headers):
        url = reverse("import_upload", args=[project.slug])
        data = {"target": "items", "file": SimpleUploadedFile(name, content)}
        return client.post(url, data, **headers)

    def test_researcher_upload_imports_and_reports(self, client, team, django_capture_on_commit_callbacks):
        project, people = team
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            response = self.upload(
                client, project, "items.jsonl", jsonl(synthetic_records(COPA, 30)), HTTP_HX_REQUEST="true"
            )
        assert response.status_code == 200
        job = ImportJob.objects.get()
        assert (job.status, job.rows_imported, job.filename) == ("done", 30, "items.jsonl")
        status = client.get(reverse("import_status", args=[project.slug, job.pk]), HTTP_HX_REQUEST="true")
        assert b"30 imported" in status.content and b"hx-trigger" not in status.content

    def test_rejected_file_lists_lines_and_imports_nothing(self, client, team, django_capture_on_commit_callbacks):
        project, people = team
        client.force_login(people["res"])
        records = list(synthetic_records(COPA, 5))
        records[3]["question"] = ""
        with django_capture_on_commit_callbacks(execute=True):
            self.upload(client, project, "items.jsonl", jsonl(records))
        job = ImportJob.objects.get()
        assert job.status == "rejected" and job.errors == ["line 4, field question: must not be empty"]
        page = client.get(reverse("project_detail", args=[project.slug]))
        assert b"line 4, field question: must not be empty" in page.content
        assert Item.objects.count() == 0

    def test_running_job_polls_and_shows_progress(self, client, team):
        project, people = team
        job = ImportJob.objects.create(project=project, target="items", filename="big.jsonl", size_bytes=1000)
        from django.core.cache import cache

        from annotation.selectors import import_progress_key

        job.status = "running"
        job.save(update_fields=["status"])
        cache.set(import_progress_key(job.pk), {"bytes": 250, "records": 77})
        client.force_login(people["res"])
        response = client.get(reverse("import_status", args=[project.slug, job.pk]), HTTP_HX_REQUEST="true")
        assert b'hx-trigger="every 1s"' in response.content
        assert b'value="25"' in response.content and b"77 records read" in response.content

    def test_unsupported_type_is_refused_before_storing(self, client, team):
        project, people = team
        client.force_login(people["res"])
        response = self.upload(client, project, "items.xlsx", b"x", HTTP_HX_REQUEST="true")
        assert b"unsupported file type" in response.content and response["HX-Retarget"] == "#import-form"
        assert ImportJob.objects.count() == 0
        assert self.upload(client, project, "items.xlsx", b"x").status_code == 400

    def test_annotators_cannot_import(self, client, team):
        project, people = team
        client.force_login(people["ann1"])
        assert self.upload(client, project, "items.jsonl", b"{}").status_code == 403
        page = client.get(reverse("project_detail", args=[project.slug]))
        assert b"Upload and import" not in page.content
