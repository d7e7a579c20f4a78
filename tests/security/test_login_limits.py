"""Sign-in limits: django-axes locks a username from one client after repeated failures (form and API alike);
DRF throttles the token endpoint per client."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse
from rest_framework.test import APIClient

from config.auth import LOCKED_OUT

pytestmark = pytest.mark.django_db
PASSWORD = "right-password-1"


@pytest.fixture
def alice(make_user):
    return make_user("alice", PASSWORD)


def sign_in(client, username: str, password: str, **extra):
    return client.post(reverse("login"), {"username": username, "password": password}, **extra)


def get_token(client: APIClient, username: str, password: str, **extra):
    return client.post(reverse("api_token"), {"username": username, "password": password}, format="json", **extra)


class LoginFormLockoutTests:
    def test_right_password_is_refused_after_the_failure_limit(self, client, alice):
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            assert sign_in(client, "alice", "wrong").status_code == 200  # the form again, with its error
        assert sign_in(client, "alice", "wrong").status_code == 429  # the failure that reaches the limit
        response = sign_in(client, "alice", PASSWORD)
        assert response.status_code == 429 and LOCKED_OUT in response.content.decode()
        assert "_auth_user_id" not in client.session

    def test_sixty_wrong_passwords_then_the_right_one_does_not_sign_in(self, client, alice):
        for _ in range(60):
            sign_in(client, "alice", "wrong")
        assert sign_in(client, "alice", PASSWORD).status_code == 429
        assert "_auth_user_id" not in client.session

    def test_fewer_failures_than_the_limit_still_sign_in(self, client, alice):
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            sign_in(client, "alice", "wrong")
        assert sign_in(client, "alice", PASSWORD).status_code == 302
        assert client.session["_auth_user_id"] == str(alice.pk)

    def test_lockout_is_per_username_and_client_address(self, client, alice, make_user):
        make_user("bob", PASSWORD)
        for _ in range(settings.AXES_FAILURE_LIMIT):
            sign_in(client, "alice", "wrong", REMOTE_ADDR="10.0.0.1")
        assert sign_in(client, "alice", PASSWORD, REMOTE_ADDR="10.0.0.1").status_code == 429
        # Another person at that address, and alice from elsewhere, are not locked out.
        assert sign_in(client, "bob", PASSWORD, REMOTE_ADDR="10.0.0.1").status_code == 302
        client.logout()
        assert sign_in(client, "alice", PASSWORD, REMOTE_ADDR="10.0.0.2").status_code == 302

    def test_a_forged_forwarded_for_header_does_not_escape_the_lockout(self, client, alice):
        for i in range(settings.AXES_FAILURE_LIMIT):
            sign_in(client, "alice", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
        assert sign_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.99").status_code == 429

    def test_behind_a_declared_proxy_the_forwarded_address_is_the_client(self, client, alice, settings):
        settings.CONCORD_PROXY_COUNT = 1
        for _ in range(settings.AXES_FAILURE_LIMIT):
            sign_in(client, "alice", "wrong", HTTP_X_FORWARDED_FOR="198.51.100.7")
        assert sign_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7").status_code == 429
        assert sign_in(client, "alice", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 302


class TokenEndpointLockoutTests:
    def test_token_endpoint_refuses_the_right_password_after_the_failure_limit(self, alice):
        client = APIClient()
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            assert get_token(client, "alice", "wrong").status_code == 400
        assert get_token(client, "alice", "wrong").status_code == 429
        response = get_token(client, "alice", PASSWORD)
        assert response.status_code == 429 and response.json()["code"] == "locked_out"
        assert "token" not in response.json() and int(response["Retry-After"]) > 0

    def test_failures_on_the_form_count_for_the_token_endpoint(self, client, alice):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            sign_in(client, "alice", "wrong")
        assert get_token(APIClient(), "alice", PASSWORD).status_code == 429


class ThrottleTests:
    def test_token_endpoint_is_throttled_per_client(self, alice):
        client = APIClient()
        limit = int(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["token"].split("/")[0])
        # Requests without a password are refused before any password check; the throttle counts them all.
        statuses = [client.post(reverse("api_token"), {"username": "alice"}).status_code for _ in range(limit)]
        assert set(statuses) == {400}
        response = client.post(reverse("api_token"), {"username": "alice"})
        assert response.status_code == 429 and "throttled" in response.json()["detail"]
        other = APIClient(REMOTE_ADDR="10.9.9.9")
        assert get_token(other, "alice", PASSWORD).status_code == 200
