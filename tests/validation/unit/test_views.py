"""The report page, its downloads, freezing, and snapshot pages: researchers only, htmx partials."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate, copa_value
from validation import selectors
from validation.models import ReportSnapshot
from validation.reports import ReportParameters
from validation.services import report_snapshot_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, make_user):
    project = make_project("copa_likert", title="CoPA pilot")
    people = {name: make_user(name) for name in ("res", "ann")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    for i, item in enumerate(add_items(project, [f"r{i}" for i in range(10)]).values()):
        annotate(project, item, "x1", copa_value(i % 3))
        annotate(project, item, "x2", copa_value((i + i % 2) % 3))
    return project, people


def url(name: str, project, *args) -> str:
    return reverse(name, args=[project.slug, *args])


class AccessTests:
    def test_only_researchers_read_the_report(self, client, team):
        project, people = team
        assert client.get(url("report", project)).status_code == 302  # sign in first
        client.force_login(people["ann"])
        assert client.get(url("report", project)).status_code == 403
        assert client.get(url("report_download", project, "csv")).status_code == 403

    def test_the_project_page_links_to_the_report_for_researchers(self, client, team):
        project, people = team
        client.force_login(people["res"])
        assert url("report", project).encode() in client.get(url("project_detail", project)).content


class ReportPageTests:
    def test_the_page_loads_its_body_with_htmx(self, client, team):
        project, people = team
        client.force_login(people["res"])
        shell = client.get(url("report", project))
        assert shell.status_code == 200 and b'hx-trigger="load"' in shell.content and b"Table 7" not in shell.content
        body = client.get(url("report", project) + "?bootstrap=20", HTTP_HX_REQUEST="true")
        html = body.content.decode()
        assert body.status_code == 200 and "<html" not in html
        assert "CoPA scoring vs human judgement (Table 7)" in html and "Overall" in html
        assert "Inputs SHA-256" in html

    def test_the_tables_come_first_and_the_plots_after(self, client, team):
        project, people = team
        client.force_login(people["res"])
        html = client.get(url("report", project) + "?bootstrap=20", HTTP_HX_REQUEST="true").content.decode()
        assert "data:image/svg+xml" not in html and "Table 7" in html
        later = re.search(r'<div id="report-figures" hx-get="([^"]+)" hx-trigger="load"', html)
        assert later and "bootstrap=20" in later.group(1)
        figures = client.get(later.group(1).replace("&amp;", "&"), HTTP_HX_REQUEST="true")
        assert figures.status_code == 200 and b"data:image/svg+xml;base64," in figures.content
        assert b"Table 7" not in figures.content and b'id="report-figures"' in figures.content

    def test_the_plots_part_is_for_researchers_only(self, client, team):
        project, people = team
        client.force_login(people["ann"])
        assert client.get(url("report_figures", project)).status_code == 403

    def test_the_same_request_again_reads_the_cached_report_until_an_answer_changes_it(self, client, team, monkeypatch):
        project, people = team
        client.force_login(people["res"])
        built = []
        original = selectors.build_report
        monkeypatch.setattr(selectors, "build_report", lambda **kw: built.append(kw) or original(**kw))
        for _ in range(2):
            client.get(url("report", project) + "?bootstrap=15", HTTP_HX_REQUEST="true")
        assert len(built) == 1
        item = project.items.first()
        annotate(project, item, "x9", copa_value(2))
        html = client.get(url("report", project) + "?bootstrap=15", HTTP_HX_REQUEST="true").content.decode()
        assert len(built) == 2 and "from 3 people" in html

    def test_without_javascript_the_report_renders_in_one_request(self, client, team):
        project, people = team
        client.force_login(people["res"])
        page = client.get(url("report", project) + "?bootstrap=10&now=1")
        assert page.status_code == 200 and b"Table 7" in page.content and b"<html" in page.content

    def test_bad_parameters_are_shown_not_computed(self, client, team):
        project, people = team
        client.force_login(people["res"])
        body = client.get(url("report", project) + "?bootstrap=-1", HTTP_HX_REQUEST="true")
        assert body.status_code == 200 and b"Fix the parameters" in body.content

    @pytest.mark.parametrize(("fmt", "needle"), [("latex", r"\toprule"), ("md", "### "), ("csv", "table,row,column")])
    def test_downloads(self, client, team, fmt, needle):
        project, people = team
        client.force_login(people["res"])
        response = client.get(url("report_download", project, fmt) + "?bootstrap=5")
        assert response.status_code == 200 and needle in response.content.decode()
        assert response["Content-Disposition"].startswith('attachment; filename="copa-likert-agreement.')


class SnapshotPageTests:
    def test_freeze_from_the_page_then_read_and_check_the_snapshot(self, client, team):
        project, people = team
        client.force_login(people["res"])
        response = client.post(url("report_freeze", project), {"bootstrap": "5", "seed": "2", "title": "draft 1"})
        snapshot = ReportSnapshot.objects.get()
        assert response.status_code == 302 and response["Location"] == url("report_snapshot", project, snapshot.pk)
        assert snapshot.parameters["bootstrap"] == 5 and snapshot.parameters["seed"] == 2
        assert snapshot.title == "draft 1" and snapshot.created_by == people["res"]
        page = client.get(url("report_snapshot", project, snapshot.pk)).content.decode()
        assert snapshot.inputs_sha256 in page and "Table 7" in page
        checked = client.post(url("report_snapshot_check", project, snapshot.pk), HTTP_HX_REQUEST="true")
        assert b"numbers identical" in checked.content and b"<html" not in checked.content
        download = client.get(url("report_snapshot_download", project, snapshot.pk, "latex"))
        assert download.content.decode() == snapshot.latex

    def test_htmx_freeze_redirects_the_page(self, client, team):
        project, people = team
        client.force_login(people["res"])
        response = client.post(url("report_freeze", project), {"bootstrap": "5"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200 and response["HX-Redirect"].endswith("/")

    def test_snapshots_of_other_projects_are_not_found(self, client, team, make_project):
        project, people = team
        other = make_project("copa_likert", slug="other")
        snapshot = report_snapshot_create(project=other, parameters=ReportParameters(bootstrap=0))
        client.force_login(people["res"])
        assert client.get(url("report_snapshot", project, snapshot.pk)).status_code == 404
