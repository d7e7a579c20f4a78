"""Every refused request says what blocked it: Concord's own page for a failed CSRF check, 400, 403 and
404 (never Django's bare page), JSON on the API, and one log line for a refusal instead of a traceback."""

from __future__ import annotations

import io
import logging

import pytest
from django.test import Client
from django.urls import reverse

from annotation.access import NOT_A_MEMBER
from annotation.models import Role
from annotation.services import membership_add
from config.error_views import API_NOT_FOUND
from config.log_filters import ClientErrorWithoutTraceback

pytestmark = pytest.mark.django_db
#: Django's own pages, which must never be what a person sees.
DJANGO_CSRF_PAGE = "CSRF verification failed. Request aborted."
DJANGO_BARE_PAGE = "<h1>Forbidden (403)</h1>"


@pytest.fixture
def member_and_stranger(make_project, make_user):
    project = make_project("copa_likert", slug="main")
    researcher, stranger = make_user("res"), make_user("stranger")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    return project, researcher, stranger


def csrf_client(user=None) -> Client:
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


class CsrfFailurePageTests:
    def test_a_form_without_its_token_gets_concord_s_page_with_the_reason(self, member_and_stranger):
        _, researcher, _ = member_and_stranger
        response = csrf_client(researcher).post(reverse("logout"))
        page = response.content.decode()
        assert response.status_code == 403
        assert "This form could not be sent" in page and "reload the page and send the form again" in page
        assert "Reason: CSRF cookie not set." in page
        assert DJANGO_CSRF_PAGE not in page and DJANGO_BARE_PAGE not in page

    def test_a_form_posted_with_origin_null_names_the_origin_check(self, client):
        client = csrf_client()
        client.get(reverse("login"))  # the page sets the CSRF cookie
        token = client.cookies["csrftoken"].value
        response = client.post(
            reverse("login"), {"username": "a", "password": "b", "csrfmiddlewaretoken": token}, HTTP_ORIGIN="null"
        )
        page = response.content.decode()
        assert response.status_code == 403
        assert "Origin checking failed - null does not match any trusted origins." in page
        assert f'href="{reverse("login")}"' in page  # a way on for someone not signed in

    def test_the_api_answers_a_csrf_failure_in_json(self, member_and_stranger):
        _, researcher, _ = member_and_stranger
        response = csrf_client(researcher).post("/api/projects/", {"slug": "x", "kind": "copa_likert"})
        assert response.status_code == 403 and response["Content-Type"] == "application/json"
        assert response.json()["detail"].startswith("CSRF Failed")


class ErrorPageTests:
    def test_a_non_member_gets_concord_s_403_with_the_reason(self, client, member_and_stranger):
        project, _, stranger = member_and_stranger
        client.force_login(stranger)
        response = client.get(reverse("project_detail", args=[project.slug]))
        page = response.content.decode()
        assert response.status_code == 403
        assert "You cannot open this page" in page and NOT_A_MEMBER.capitalize()[:40] in page
        assert 'href="/"' in page and DJANGO_BARE_PAGE not in page

    def test_an_unknown_page_gets_concord_s_404_and_an_unknown_api_path_json(self, client):
        page = client.get("/no/such/page/")
        assert page.status_code == 404 and "Page not found" in page.content.decode()
        api = client.get("/api/no-such-endpoint/")
        assert api.status_code == 404 and api["Content-Type"] == "application/json"
        assert api.json() == {"code": "not_found", "detail": API_NOT_FOUND, "errors": []}

    def test_a_request_for_an_unknown_host_gets_concord_s_400(self, client):
        response = client.get("/", HTTP_HOST="attacker.test")
        assert response.status_code == 400
        assert "Concord could not understand that request" in response.content.decode()
        assert client.get("/api/projects/", HTTP_HOST="attacker.test")["Content-Type"] == "application/json"


class RefusalLogTests:
    def test_a_403_is_one_line_in_the_server_log_without_a_traceback(self, client, member_and_stranger):
        project, _, stranger = member_and_stranger
        client.force_login(stranger)
        # The console handler settings.LOGGING gives the root logger: what the server's log shows.
        (console,) = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler]
        written = io.StringIO()
        previous = console.setStream(written)
        try:
            assert client.get(reverse("project_detail", args=[project.slug])).status_code == 403
            assert client.get("/no/such/page/").status_code == 404
        finally:
            console.setStream(previous)
        log = written.getvalue()
        assert log.splitlines() == [f"Forbidden (Permission denied): /p/{project.slug}/", "Not Found: /no/such/page/"]
        assert "Traceback" not in log

    def test_a_server_error_keeps_its_traceback(self):
        try:
            raise RuntimeError("broken")
        except RuntimeError as exc:
            error = exc
        record = logging.LogRecord("django.request", logging.ERROR, "", 0, "boom", None, (RuntimeError, error, None))
        record.status_code = 500
        assert ClientErrorWithoutTraceback().filter(record) and record.exc_info is not None
        record.status_code = 403
        assert ClientErrorWithoutTraceback().filter(record) and record.exc_info is None


class DomainErrorPageTests:
    """A domain error a page lets through (ConcurrentEdit: two edits of one item at the same moment)
    answers the 4xx it declares, as the API does: a page, or the item panel's partial for htmx."""

    def refused(self, make_user, *, htmx: bool = False, path: str = "/p/main/annotate/1/submit/"):
        from django.test import RequestFactory
        from django_htmx.middleware import HtmxDetails

        from annotation.errors import ConcurrentEdit
        from annotation.services import CONCURRENT_EDIT
        from config.error_views import DomainErrorMiddleware

        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        request = RequestFactory().post(path, **headers)
        request.user, request.htmx = make_user("ann"), HtmxDetails(request)
        return DomainErrorMiddleware(lambda r: None).process_exception(request, ConcurrentEdit(CONCURRENT_EDIT))

    def test_a_page_answers_409_with_the_reason(self, make_user):
        from annotation.services import CONCURRENT_EDIT

        response = self.refused(make_user)
        page = response.content.decode()
        assert response.status_code == 409 and "<html" in page
        assert CONCURRENT_EDIT.capitalize() in page and 'data-error-code="concurrent_edit"' in page

    def test_htmx_gets_the_partial_with_the_same_status(self, make_user):
        response = self.refused(make_user, htmx=True)
        page = response.content.decode()
        assert response.status_code == 409 and "<html" not in page and 'role="alert"' in page

    def test_the_api_gets_the_one_error_shape(self, make_user):
        import json

        response = self.refused(make_user, path="/api/assignments/1/submit/")
        body = json.loads(response.content)
        assert response.status_code == 409 and body["code"] == "concurrent_edit"
        assert set(body) == {"code", "detail", "errors"}

    def test_other_exceptions_are_left_to_django(self, make_user):
        from django.test import RequestFactory

        from config.error_views import DomainErrorMiddleware

        request = RequestFactory().get("/")
        assert DomainErrorMiddleware(lambda r: None).process_exception(request, KeyError("x")) is None


class HtmxRefusalTests:
    """htmx swaps a refusal into the page's refusal box: a sentence, never a whole page inside a panel."""

    def test_a_stranger_s_htmx_write_is_refused_with_not_saved_and_no_page(self, member_and_stranger):
        project, _, stranger = member_and_stranger
        client = Client()
        client.force_login(stranger)
        response = client.post(reverse("annotation_undo", args=[project.slug]), headers={"HX-Request": "true"})
        body = response.content.decode()
        assert response.status_code == 403 and response["HX-Push-Url"] == "false"
        assert "data-refusal" in body and body.count("<p") == 1 and "<html" not in body
        assert "<strong>Not saved.</strong> You are no longer on this project" in body

    def test_an_htmx_read_of_a_missing_page_says_so_without_not_saved(self, member_and_stranger):
        _, researcher, _ = member_and_stranger
        client = Client()
        client.force_login(researcher)
        response = client.get("/p/no-such-project/report/", headers={"HX-Request": "true"})
        body = response.content.decode()
        assert response.status_code == 404 and "data-refusal" in body and "<html" not in body
        assert "Not found." in body and "Not saved" not in body
