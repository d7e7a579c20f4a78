"""Account pages: the profile with its API tokens, password change and reset (Django's views, Concord's templates)."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.urls import reverse
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.services import api_token_create

pytestmark = pytest.mark.django_db
PASSWORD = "right-password-1"


@pytest.fixture
def alice(make_user):
    user = make_user("alice", PASSWORD)
    user.email = "alice@example.org"
    user.save()
    return user


def open_reset_link(client, body: str):
    """Open the e-mailed link as the page's script does: its fragment posted to the token-less page."""
    path, code = re.search(r"https?://[^/]+(/accounts/password/reset/open/)#(\S+)", body).groups()
    assert client.get(path).status_code == 200
    return client.post(path, {"token": code}, follow=True)


def works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/projects/").status_code == 200


class ProfileAccessTests:
    @pytest.mark.parametrize("name", ["profile", "password_change"])
    def test_anonymous_visitors_are_sent_to_sign_in(self, client, name):
        response = client.get(reverse(name))
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    def test_anonymous_post_revokes_nothing(self, client, alice):
        token, _ = api_token_create(user=alice)
        client.post(reverse("tokens_revoke_all"))
        client.post(reverse("token_revoke", args=[token.digest]))
        assert AuthToken.objects.filter(user=alice).count() == 1

    def test_the_header_links_to_the_profile(self, client, alice):
        client.force_login(alice)
        assert f'href="{reverse("profile")}"' in client.get(reverse("home")).content.decode()


class ProfileTokenTests:
    def test_created_token_is_shown_once_and_works(self, client, alice):
        client.force_login(alice)
        created = client.post(reverse("token_create"))
        # Post/redirect/get: a reload of the page that shows the key mints no second token.
        assert created.status_code == 302 and created["Location"] == reverse("profile")
        stored = str(dict(client.session.items())) + str(client.cookies)
        response = client.get(created["Location"])
        key = re.search(r'id="new-token" readonly value="([0-9a-f]+)"', response.content.decode()).group(1)
        assert works(key) and "no-store" in response["Cache-Control"] and key not in stored
        assert key not in client.get(reverse("profile")).content.decode()
        assert AuthToken.objects.filter(user=alice).count() == 1

    def test_profile_lists_only_the_users_own_tokens(self, client, alice, make_user):
        mine, _ = api_token_create(user=alice)
        theirs, _ = api_token_create(user=make_user("bob"))
        client.force_login(alice)
        html = client.get(reverse("profile")).content.decode()
        assert mine.digest in html and theirs.digest not in html
        assert mine.token_key[:8] in html

    def test_revoking_one_token_leaves_the_others(self, client, alice):
        revoked, revoked_key = api_token_create(user=alice)
        _, kept_key = api_token_create(user=alice)
        client.force_login(alice)
        response = client.post(reverse("token_revoke", args=[revoked.digest]))
        assert response.status_code == 302 and not works(revoked_key) and works(kept_key)

    def test_revoking_another_users_token_is_404_and_deletes_nothing(self, client, alice, make_user):
        theirs, key = api_token_create(user=make_user("bob"))
        client.force_login(alice)
        assert client.post(reverse("token_revoke", args=[theirs.digest])).status_code == 404
        assert works(key)

    def test_revoke_all_revokes_only_the_users_tokens(self, client, alice, make_user):
        keys = [api_token_create(user=alice)[1] for _ in range(3)]
        _, bobs = api_token_create(user=make_user("bob"))
        client.force_login(alice)
        assert client.post(reverse("tokens_revoke_all")).status_code == 302
        assert not any(works(key) for key in keys) and works(bobs)

    def test_revoking_needs_post(self, client, alice):
        """A GET revokes nothing: it goes to the profile page, where the forms are (never a blank 405)."""
        token, key = api_token_create(user=alice)
        client.force_login(alice)
        for url in (reverse("token_revoke", args=[token.digest]), reverse("tokens_revoke_all")):
            response = client.get(url)
            assert response.status_code == 302 and response["Location"] == reverse("profile")
        assert works(key)


class PasswordResetTests:
    def test_reset_mails_a_link_that_sets_a_new_password_and_drops_tokens(self, client, alice):
        _, key = api_token_create(user=alice)
        response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
        assert response.status_code == 302 and len(mail.outbox) == 1
        form = open_reset_link(client, mail.outbox[0].body)
        assert form.status_code == 200 and "Set a new password" in form.content.decode()
        done = client.post(
            form.redirect_chain[-1][0], {"new_password1": "reset-passphrase-7", "new_password2": "reset-passphrase-7"}
        )
        assert done.status_code == 302 and done["Location"] == reverse("password_reset_complete")
        assert not works(key)
        assert client.login(username="alice", password="reset-passphrase-7")

    def test_reset_for_an_unknown_address_sends_nothing_and_says_the_same(self, client, alice):
        response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
        assert response.status_code == 302 and response["Location"] == reverse("password_reset_done")
        assert mail.outbox == []

    def test_the_sign_in_page_links_to_the_reset(self, client):
        assert reverse("password_reset") in client.get(reverse("login")).content.decode()

    def test_pages_use_concords_layout(self, client, alice):
        client.force_login(alice)
        for name in ("password_change", "profile"):
            assert "concord/concord.css" in client.get(reverse(name)).content.decode()
        client.logout()
        assert "concord/concord.css" in client.get(reverse("password_reset")).content.decode()
