"""On the embedded SQLite a long import holds the write lock; a bystander whose request waits past the
lock timeout is answered 503 with Retry-After (JSON on the API, Concord's page elsewhere), never a 500,
and nothing of their request is stored."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection
from django.urls import reverse
from knox.models import AuthToken

from config.error_views import BUSY
from tests.api.conftest import client_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the write lock is SQLite's"),
]


@contextmanager
def another_writer_holds_the_lock() -> Iterator[None]:
    """Another connection (an import) holding SQLite's write lock; this process waits 0.2 s for it."""
    connection.close()
    options = connection.settings_dict["OPTIONS"]
    before = options.get("timeout")
    options["timeout"] = 0.2
    holder = sqlite3.connect(connection.settings_dict["NAME"], timeout=1)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.rollback()
        holder.close()
        connection.close()
        options["timeout"] = before


def test_a_token_request_waiting_on_an_import_is_a_503_with_retry_after(make_user, settings):
    make_user("alice", "a-long-passphrase-1")
    with another_writer_holds_the_lock():
        response = client_for().post("/api/token/", {"username": "alice", "password": "a-long-passphrase-1"})
    assert response.status_code == 503 and response["Retry-After"] == str(settings.CONCORD_BUSY_RETRY_SECONDS)
    assert response.json()["code"] == "busy" and response.json()["detail"] == BUSY.format(
        seconds=settings.CONCORD_BUSY_RETRY_SECONDS
    )
    assert not AuthToken.objects.exists()


def test_a_page_write_waiting_on_an_import_is_a_503_page(client, make_user):
    client.force_login(make_user("res"))
    client.get(reverse("profile"))  # the session is written before the lock
    with another_writer_holds_the_lock():
        response = client.post(reverse("token_create"))
    assert response.status_code == 503 and response.has_header("Retry-After")
    assert "Please try again shortly" in response.content.decode()
    assert not AuthToken.objects.exists()
