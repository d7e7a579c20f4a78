"""The Content-Security-Policy header is django-csp's, built once (config/csp.py): the same header
on every response, following the settings when they change, and a nonce still honoured."""

from __future__ import annotations

import pytest
from csp.constants import HEADER, NONCE
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory

from config.csp import CSPMiddleware

pytestmark = pytest.mark.django_db


def answered(request=None, *, nonce: bool = False) -> HttpResponse:
    request = request or RequestFactory().get("/")
    middleware = CSPMiddleware(lambda r: HttpResponse("x"))
    middleware.process_request(request)
    if nonce:
        request.nonce_used = str(request.csp_nonce)
    return middleware.process_response(request, HttpResponse("x"))


class CspHeaderTests:
    def test_pages_carry_the_policy_django_csp_builds(self, client):
        response = client.get("/accounts/login/")
        assert response[HEADER] == build_policy() and "script-src 'self'" in response[HEADER]

    def test_a_changed_setting_changes_the_header(self, settings):
        before = answered()[HEADER]
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
        assert before != answered()[HEADER] == "default-src 'none'"

    def test_a_nonce_asked_for_is_in_the_header(self, settings):
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}
        request = RequestFactory().get("/")
        response = answered(request, nonce=True)
        assert f"'nonce-{request.nonce_used}'" in response[HEADER]
