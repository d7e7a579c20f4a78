"""A large item import through the API streams to disk: a JSON Lines body is copied a block at a time,
so the request costs far less memory than its body (the JSON object form parses it whole)."""

from __future__ import annotations

import io
import json
import tracemalloc
from wsgiref.util import setup_testing_defaults

import pytest
from django.test.client import ClientHandler

from accounts.services import api_token_create
from annotation.models import Item
from tests.api.conftest import client_for
from tests.security.test_input_limits import copa_record, team  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db(transaction=True)
MiB = 1024 * 1024


def body(n: int) -> bytes:
    filler = "word " * 2000
    return "".join(json.dumps(copa_record(f"i{k}", response=filler)) + "\n" for k in range(n)).encode()


def peak_of(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class StreamedImportTests:
    def test_a_json_lines_body_imports_atomically_with_existing_from_the_query(self, team):  # noqa: F811
        _, people = team
        api = client_for(people["res"])
        answer = api.post("/api/projects/main/items/", body(3), content_type="application/x-ndjson")
        assert answer.status_code == 201 and answer.json()["imported"] == 3
        again = api.post("/api/projects/main/items/?existing=skip", body(4), content_type="application/x-ndjson")
        assert again.status_code == 201 and again.json() == {"imported": 1, "skipped": 3, "updated": 0}
        bad = api.post("/api/projects/main/items/?existing=maybe", body(1), content_type="application/x-ndjson")
        assert bad.status_code == 400 and Item.objects.count() == 4

    @pytest.mark.parametrize("form", ["jsonl", "json"])
    def test_the_memory_a_large_import_costs(self, team, form):  # noqa: F811
        """JSON Lines: under 1.5 times the body (it goes to disk a block at a time; what remains is the
        importer's batch of records); the JSON object form, parsed whole, costs over twice its body: the
        one to use for large imports is the first."""
        _, people = team
        _, key = api_token_create(user=people["res"])

        def request(payload: bytes):
            if form == "json":
                records = [json.loads(line) for line in payload.splitlines()]
                payload = json.dumps({"records": records, "existing": "skip"}).encode()
            environ = {
                "REQUEST_METHOD": "POST", "PATH_INFO": "/api/projects/main/items/", "QUERY_STRING": "existing=skip",
                "CONTENT_TYPE": "application/x-ndjson" if form == "jsonl" else "application/json",
                "CONTENT_LENGTH": str(len(payload)), "HTTP_AUTHORIZATION": f"Token {key}",
                # the server's socket: the body is never in memory whole
                "wsgi.input": io.BytesIO(payload),
            }  # fmt: skip
            setup_testing_defaults(environ)
            return environ, len(payload)

        warm, _ = request(body(2))  # the first request loads the code every request then uses
        assert ClientHandler()(warm).status_code == 201
        environ, size = request(body(800))  # about 8 MiB of records
        assert size > 7 * MiB
        answers = []
        peak = peak_of(lambda: answers.append(ClientHandler()(environ)))
        assert answers[0].status_code == 201 and Item.objects.count() == 800
        if form == "jsonl":
            assert peak < 1.5 * size, peak
        else:
            assert peak > 2 * size, peak
