"""API tokens: obtained with a username and password, hashed at rest, expiring, revocable, dropped with the password."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.hashers import make_password
from django.urls import reverse
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.errors import BAD_CREDENTIALS
from accounts.services import api_token_create
from annotation.models import Role
from annotation.services import membership_add

pytestmark = pytest.mark.django_db
PASSWORD = "right-password-1"


@pytest.fixture
def alice(make_user):
    return make_user("alice", PASSWORD)


#: A request with a bad token: 401 with the `Token` challenge (token authentication comes first).
REFUSED = 401


def authed(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


class ObtainTests:
    @pytest.mark.parametrize("fmt", ["json", "multipart"])
    def test_token_from_username_and_password_works_as_token_header(self, alice, fmt):
        response = APIClient().post(reverse("api_token"), {"username": "alice", "password": PASSWORD}, format=fmt)
        assert response.status_code == 200 and set(response.json()) == {"token", "expiry"}
        assert authed(response.json()["token"]).get("/api/projects/").status_code == 200

    def test_wrong_password_answers_400_as_before(self, alice):
        response = APIClient().post(reverse("api_token"), {"username": "alice", "password": "nope"}, format="json")
        assert response.status_code == 400
        assert response.json() == {"code": "bad_credentials", "detail": BAD_CREDENTIALS, "errors": []}
        assert not AuthToken.objects.exists()

    def test_a_stale_token_header_does_not_block_getting_a_new_token(self, alice):
        response = authed("0" * 64).post(reverse("api_token"), {"username": "alice", "password": PASSWORD})
        assert response.status_code == 200

    def test_overlong_password_is_400(self, alice):
        response = APIClient().post(reverse("api_token"), {"username": "alice", "password": "x" * 2000}, format="json")
        assert response.status_code == 400 and [e["field"] for e in response.json()["errors"]] == ["password"]


class StorageAndExpiryTests:
    def test_only_a_digest_of_the_token_is_stored(self, alice):
        _, key = api_token_create(user=alice)
        row = AuthToken.objects.get(user=alice)
        assert key not in (row.digest, row.token_key) and len(row.digest) == 128

    def test_tokens_expire_after_the_configured_time(self, alice, settings):
        settings.REST_KNOX = {**settings.REST_KNOX, "TOKEN_TTL": timedelta(days=2)}
        token, _ = api_token_create(user=alice)
        assert timedelta(days=2) - timedelta(minutes=1) < token.expiry - timezone.now() <= timedelta(days=2)

    def test_an_expired_token_is_refused(self, alice):
        token, key = api_token_create(user=alice)
        AuthToken.objects.filter(digest=token.digest).update(expiry=timezone.now() - timedelta(seconds=1))
        assert authed(key).get("/api/projects/").status_code == REFUSED

    def test_a_token_with_the_right_key_and_a_wrong_secret_is_refused(self, alice):
        _, key = api_token_create(user=alice)
        forged = key[:-4] + ("0000" if key[-4:] != "0000" else "1111")  # the stored key is the first 15 characters
        assert authed(forged).get("/api/projects/").status_code == REFUSED
        assert authed(key).get("/api/projects/").status_code == 200

    def test_the_token_of_a_deactivated_account_is_refused(self, alice):
        _, key = api_token_create(user=alice)
        type(alice).objects.filter(pk=alice.pk).update(is_active=False)
        assert authed(key).get("/api/projects/").status_code == REFUSED

    def test_each_token_answers_as_its_own_user(self, alice, make_user, make_project):
        project = make_project("copa_likert")
        membership_add(project=project, user=alice, role=Role.ANNOTATOR)
        bob = make_user("bob", PASSWORD)

        def slugs(user) -> list[str]:
            body = authed(api_token_create(user=user)[1]).get("/api/projects/").json()
            return [row["slug"] for row in body["results"]]

        assert project.slug in slugs(alice) and project.slug not in slugs(bob)

    def test_tokens_beyond_the_per_user_cap_replace_the_oldest(self, alice, settings):
        settings.CONCORD_API_TOKENS_PER_USER = 2
        _, first = api_token_create(user=alice)
        keys = [api_token_create(user=alice)[1] for _ in range(2)]
        assert AuthToken.objects.filter(user=alice).count() == 2
        assert authed(first).get("/api/projects/").status_code == REFUSED
        assert all(authed(key).get("/api/projects/").status_code == 200 for key in keys)


class RevokeTests:
    def test_delete_revokes_the_token_it_is_sent_with(self, alice):
        _, kept = api_token_create(user=alice)
        _, key = api_token_create(user=alice)
        assert authed(key).delete(reverse("api_token")).status_code == 204
        assert authed(key).get("/api/projects/").status_code == REFUSED
        assert authed(kept).get("/api/projects/").status_code == 200

    def test_a_revoked_token_is_401_with_the_token_challenge(self, alice):
        _, key = api_token_create(user=alice)
        authed(key).delete(reverse("api_token"))
        response = authed(key).get("/api/projects/")
        assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
        assert response.json()["code"] == "authentication_failed"

    def test_delete_without_a_token_is_refused(self):
        assert APIClient().delete(reverse("api_token")).status_code == 401  # with the `Token` challenge


class PasswordChangeTests:
    def test_set_password_drops_every_token_of_the_user(self, alice, make_user):
        _, key = api_token_create(user=alice)
        bob = make_user("bob")
        _, bobs = api_token_create(user=bob)
        alice.set_password("another-password-2")
        alice.save()
        assert authed(key).get("/api/projects/").status_code == REFUSED
        assert not AuthToken.objects.filter(user=alice).exists()
        assert authed(bobs).get("/api/projects/").status_code == 200

    def test_a_hash_written_directly_also_drops_the_tokens(self, alice):
        api_token_create(user=alice)
        alice.password = make_password("written-directly-3")
        alice.save()
        assert not AuthToken.objects.filter(user=alice).exists()

    def test_saving_other_fields_keeps_the_tokens(self, alice):
        api_token_create(user=alice)
        alice.email = "alice@example.org"
        alice.save()
        alice.last_login = timezone.now()
        alice.save(update_fields=["last_login"])
        assert AuthToken.objects.filter(user=alice).count() == 1

    def test_the_password_change_page_drops_the_tokens_and_keeps_this_session(self, client, alice):
        _, key = api_token_create(user=alice)
        client.force_login(alice)
        body = {"old_password": PASSWORD, "new_password1": "fresh-passphrase-9", "new_password2": "fresh-passphrase-9"}
        response = client.post(reverse("password_change"), body)
        assert response.status_code == 302 and response["Location"] == reverse("password_change_done")
        assert authed(key).get("/api/projects/").status_code == REFUSED
        assert client.get(reverse("profile")).status_code == 200

    def test_the_password_change_page_ends_other_sessions(self, client, alice):
        other = type(client)()
        other.force_login(alice)
        client.force_login(alice)
        body = {"old_password": PASSWORD, "new_password1": "fresh-passphrase-9", "new_password2": "fresh-passphrase-9"}
        client.post(reverse("password_change"), body)
        assert other.get(reverse("profile")).status_code == 302
