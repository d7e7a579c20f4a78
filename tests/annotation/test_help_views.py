"""The help pages: the docs the app's pages point to, opened in the app (a web user has no checkout)."""

import pytest
from django.urls import reverse

from annotation.help_views import HELP_PAGES
from annotation.models import Role
from annotation.services import membership_add

pytestmark = pytest.mark.django_db


class HelpPageTests:
    def test_every_help_page_shows_its_document_to_anyone_signed_in(self, client, make_user):
        client.force_login(make_user("ann"))
        index = client.get(reverse("help")).content.decode()
        assert 'href="/api/docs/"' in index
        for name, (_, title) in HELP_PAGES.items():
            assert reverse("help_page", args=[name]) in index
            page = client.get(reverse("help_page", args=[name]))
            assert page.status_code == 200 and f"<h1>{title}</h1>" in page.content.decode()
        assert "Judge runs" in client.get(reverse("help_page", args=["formats"])).content.decode()

    def test_only_the_named_documents_are_served(self, client, make_user):
        client.force_login(make_user("ann"))
        for name in ("deployment", "build_formats", "README", "..", "formats.md"):
            assert client.get(f"/help/{name}/").status_code == 404, name

    def test_links_between_documents_open_their_help_pages(self, client, make_user):
        """docs/cli.md links formats.md and gpu-workers.md: the first opens its help page, the second
        (not served) is left as words, so no link on a help page leads to a 404."""
        client.force_login(make_user("ann"))
        html = client.get(reverse("help_page", args=["cli"])).content.decode()
        assert 'href="formats.md' not in html and f'href="{reverse("help_page", args=["formats"])}' in html
        assert 'href="gpu-workers.md' not in html

    def test_signed_out_visitors_are_sent_to_sign_in(self, client):
        response = client.get(reverse("help_page", args=["formats"]))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    def test_the_pages_link_the_help_where_they_named_a_file(self, client, make_project, make_user):
        project = make_project("copa_likert")
        researcher = make_user("res")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        client.force_login(researcher)
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert "docs/formats.md" not in page and reverse("help_page", args=["formats"]) in page
        judges = client.get(reverse("project_judges", args=[project.slug])).content.decode()
        assert "docs/formats.md" not in judges and reverse("help_page", args=["formats"]) in judges
        assert 'href="/api/docs/"' in client.get(reverse("profile")).content.decode()
