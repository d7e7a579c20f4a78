"""Request bodies are bounded per route before anything reads them: a sign-in request is small, an import
is large, everything else modest; refusals are JSON 413s on the API and Concord's page elsewhere."""

from __future__ import annotations

import io
import json
import tracemalloc
from wsgiref.util import setup_testing_defaults

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.test.client import ClientHandler
from django.urls import get_resolver, reverse

from accounts.services import api_token_create
from annotation.models import ImportJob, Item
from config.request_limits import (
    BAD_LENGTH,
    BODY_LIMITS,
    DEFAULT_LIMIT,
    LENGTH_REQUIRED,
    UPLOAD_FORM_MARGIN,
    body_limit,
)
from tests.api.conftest import client_for
from tests.security.test_input_limits import copa_record, team  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db
MiB = 1024 * 1024


class CountingBody(io.BytesIO):
    """A request body that remembers how many of its bytes anything read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size: int | None = -1) -> bytes:
        chunk = super().readline(size)
        self.bytes_read += len(chunk)
        return chunk


def send(path: str, body: bytes, *, content_type: str = "application/json", **meta) -> tuple[object, CountingBody]:
    """The request as a WSGI server hands it to Django (CSRF checks on), with a body that counts its reads."""
    stream = CountingBody(body)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": stream,
        **meta,
    }
    setup_testing_defaults(environ)
    return ClientHandler(enforce_csrf_checks=True)(environ), stream


def huge_token_request(size: int) -> bytes:
    padding = "x" * (size - 60)
    return json.dumps({"username": "alice", "password": "secret", "pad": [padding]}).encode()


class RequestBodyLimitTests:
    def test_a_big_token_request_is_refused_before_anything_reads_or_parses_it(self):
        body = huge_token_request(10 * MiB)
        send("/api/token/", huge_token_request(8 * 1024))  # the first request loads the URL configuration
        tracemalloc.start()
        try:
            response, stream = send("/api/token/", body)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert response.status_code == 413
        assert response["Content-Type"] == "application/json"
        answer = json.loads(response.content)
        assert answer["code"] == "too_large" and "CONCORD_SIGN_IN_MAX_BYTES" in answer["detail"]
        # Nothing read the body, so nothing parsed it, and no sign-in was attempted.
        assert stream.bytes_read == 0
        assert not AccessAttempt.objects.exists()
        # The whole request cost far less memory than the body it was sent (parsing it cost ~70 times more).
        assert peak < MiB

    def test_a_token_request_of_ordinary_size_still_gets_its_answer(self, make_user):
        make_user("alice", password="a-long-passphrase")
        body = json.dumps({"username": "alice", "password": "a-long-passphrase"}).encode()
        response, stream = send("/api/token/", body)
        assert response.status_code == 200 and "token" in json.loads(response.content)
        assert stream.bytes_read == len(body)

    def test_the_sign_in_cap_is_a_setting(self, settings):
        settings.CONCORD_SIGN_IN_MAX_BYTES = 100
        body = json.dumps({"username": "alice", "password": "p" * 100}).encode()
        response, stream = send("/api/token/", body)
        assert response.status_code == 413 and stream.bytes_read == 0

    def test_an_ordinary_api_endpoint_refuses_a_body_over_the_default_cap(self, team, settings):  # noqa: F811
        _, people = team
        settings.CONCORD_REQUEST_MAX_BYTES = 2000
        response = client_for(people["res"]).patch("/api/projects/main/", {"guidelines": "g" * 3000}, format="json")
        assert response.status_code == 413
        assert response.json()["code"] == "too_large" and DEFAULT_LIMIT.setting in response.json()["detail"]

    def test_a_bulk_import_takes_more_than_the_default_cap_and_django_s_old_10_mib(self, team, settings):  # noqa: F811
        _, people = team
        settings.CONCORD_MAX_RECORD_BYTES = 2 * MiB
        long_text = "word " * (MiB // 5)
        records = [copa_record(f"i{n}", response=long_text) for n in range(11)]
        body = json.dumps({"records": records})
        assert len(body) > 10 * MiB > django_settings.CONCORD_REQUEST_MAX_BYTES
        response = client_for(people["res"]).post("/api/projects/main/items/", body, content_type="application/json")
        assert response.status_code == 201, response.content[:500]
        assert Item.objects.count() == 11

    def test_a_bulk_import_over_the_import_cap_is_a_json_413_and_stores_nothing(self, team, settings):  # noqa: F811
        _, people = team
        settings.CONCORD_IMPORT_MAX_BYTES = 1000
        body = {"records": [copa_record(f"i{n}") for n in range(10)]}
        response = client_for(people["res"]).post("/api/projects/main/items/", body, format="json")
        assert response.status_code == 413 and "CONCORD_IMPORT_MAX_BYTES" in response.json()["detail"]
        assert not Item.objects.exists()

    @pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
    def test_a_sign_in_form_post_over_its_cap_gets_concord_s_page(self, path):
        response = Client().post(path, {"username": "alice", "password": "p" * 5000})
        assert response.status_code == 413
        page = response.content.decode()
        assert "What you sent is too large" in page and "CONCORD_SIGN_IN_MAX_BYTES" in page
        assert response["Content-Type"].startswith("text/html")

    def test_an_upload_far_past_its_cap_is_refused_before_the_form_reads_it(self, team, settings):  # noqa: F811
        project, people = team
        settings.CONCORD_IMPORT_MAX_BYTES = 1000
        client = Client()
        client.force_login(people["res"])
        content = b'{"external_id": "i0"}\n' * (UPLOAD_FORM_MARGIN // 10)
        response = client.post(
            reverse("import_upload", args=[project.slug]),
            {"target": "items", "file": SimpleUploadedFile("items.jsonl", content)},
        )
        assert response.status_code == 413 and "What you sent is too large" in response.content.decode()
        assert not ImportJob.objects.exists()

    def test_a_chunked_body_is_refused_unread(self):
        response, stream = send("/api/token/", b'{"username": "a"}', HTTP_TRANSFER_ENCODING="chunked")
        assert response.status_code == 411 and json.loads(response.content)["detail"] == LENGTH_REQUIRED
        assert stream.bytes_read == 0

    def test_a_content_length_that_is_not_a_size_is_a_400(self):
        response, stream = send("/api/token/", b"{}", CONTENT_LENGTH="ten")
        assert response.status_code == 400 and json.loads(response.content)["detail"] == BAD_LENGTH
        assert stream.bytes_read == 0

    def test_every_declared_route_exists_and_every_cap_is_a_setting(self):
        def is_route(name: str) -> bool:
            namespace, _, base = name.rpartition(":")
            resolver = get_resolver()
            if namespace:
                resolver = resolver.namespace_dict[namespace][1]
            return base in resolver.reverse_dict

        assert [name for name in BODY_LIMITS if not is_route(name)] == []
        for name in [*BODY_LIMITS, "no-such-route"]:
            limit, setting = body_limit(name)
            assert limit >= getattr(django_settings, setting) > 0

    def test_unlisted_routes_get_the_default_cap(self):
        assert body_limit("api_assignment_submit") == (django_settings.CONCORD_REQUEST_MAX_BYTES, DEFAULT_LIMIT.setting)
        assert body_limit("api_token")[0] == 4096 < django_settings.CONCORD_REQUEST_MAX_BYTES
        assert body_limit("api_items")[0] == django_settings.CONCORD_IMPORT_MAX_BYTES


class LargeBodySenderTests:
    """A route's large cap is for those who may post there: anyone else's body over the default cap is
    refused before a byte of it is read (signed out, another project's member, another role)."""

    BODY = b"x" * 5000

    @pytest.fixture
    def small_default(self, settings):
        settings.CONCORD_REQUEST_MAX_BYTES = 1000  # the import cap stays 256 MiB

    def cookie(self, user) -> str:
        client = Client()
        client.force_login(user)
        return f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}"

    @pytest.mark.parametrize(
        "path", ["/p/main/import/", "/p/main/judges/runs/import/", "/api/projects/main/runs/import/"]
    )
    def test_a_signed_out_body_is_refused_unread(self, team, small_default, path):  # noqa: F811
        response, stream = send(path, self.BODY, content_type="multipart/form-data; boundary=b")
        assert response.status_code == 413 and stream.bytes_read == 0
        assert DEFAULT_LIMIT.setting in response.content.decode()

    @pytest.mark.parametrize("who", ["ann1", "expert", "stranger"])
    def test_a_member_without_the_role_is_refused_unread(self, team, small_default, who):  # noqa: F811
        _, people = team
        for path in ("/p/main/import/", "/p/main/judges/runs/import/"):
            response, stream = send(
                path, self.BODY, content_type="multipart/form-data; boundary=b", HTTP_COOKIE=self.cookie(people[who])
            )
            assert response.status_code == 413 and stream.bytes_read == 0, path

    def test_another_project_s_token_is_refused_unread(self, team, small_default, make_user):  # noqa: F811
        _, key = api_token_create(user=make_user("outsider"))
        response, stream = send(
            "/api/projects/main/runs/import/", self.BODY, content_type="multipart/form-data; boundary=b",
            HTTP_AUTHORIZATION=f"Token {key}",
        )  # fmt: skip
        assert response.status_code == 413 and stream.bytes_read == 0

    def test_the_researcher_s_body_is_read(self, team, small_default):  # noqa: F811
        _, people = team
        _, key = api_token_create(user=people["res"])
        response, stream = send(
            "/api/projects/main/runs/import/", self.BODY, content_type="multipart/form-data; boundary=b",
            HTTP_AUTHORIZATION=f"Token {key}",
        )  # fmt: skip
        assert response.status_code == 400 and stream.bytes_read > 0  # read, and refused for what it says
        page, stream = send(
            "/p/main/import/", self.BODY, content_type="multipart/form-data; boundary=b",
            HTTP_COOKIE=self.cookie(people["res"]),
        )  # fmt: skip
        assert page.status_code != 413
