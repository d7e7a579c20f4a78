"""Passwords: a temporary password is changed before anything else (pages redirect, the API answers 403),
every chosen password passes the site's rules, and a reset reaches invited accounts but never a
deactivated one, with its secret kept out of every requested address."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.errors import PASSWORD_CHANGE_REQUIRED, PASSWORD_CHANGE_REQUIRED_CODE
from annotation import member_services as team
from annotation.models import ProvisionedAccount, Role
from annotation.services import membership_add
from tests.accounts.test_pages import open_reset_link

pytestmark = pytest.mark.django_db
User = get_user_model()
NEW_PASSWORD = "my-own-passphrase-9"


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", slug="study")
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    return project, researcher


def add(study, username: str, accounts: str, email: str = "") -> team.MemberAdded:
    project, researcher = study
    (added,) = team.members_add(
        project=project, actor=researcher, specs=[team.MemberSpec(username=username, email=email)], accounts=accounts
    )
    return added


class TemporaryPasswordTests:
    def sign_in(self, client, study) -> team.MemberAdded:
        added = add(study, "temporary", team.TEMPORARY_PASSWORD)
        response = client.post(reverse("login"), {"username": "temporary", "password": added.temporary_password})
        assert response.status_code == 302
        return added

    def test_every_page_sends_the_account_to_the_password_change_first(self, client, study):
        self.sign_in(client, study)
        for name, args in (("home", []), ("profile", []), ("project_detail", ["study"]), ("workspace", ["study"])):
            response = client.get(reverse(name, args=args))
            assert response.status_code == 302 and response["Location"] == reverse("password_change"), name
        page = client.get(reverse("password_change"))
        assert page.status_code == 200 and PASSWORD_CHANGE_REQUIRED in page.content.decode()
        assert client.post(reverse("token_create")).status_code == 302  # no token for it either

    def test_the_api_answers_a_clear_403_until_the_change(self, client, study):
        added = self.sign_in(client, study)
        response = client.get("/api/projects/")
        assert response.status_code == 403 and response.json() == {
            "code": PASSWORD_CHANGE_REQUIRED_CODE,
            "detail": PASSWORD_CHANGE_REQUIRED,
            "errors": [],
        }
        token = APIClient().post("/api/token/", {"username": "temporary", "password": added.temporary_password})
        assert token.status_code == 403 and token.json()["code"] == PASSWORD_CHANGE_REQUIRED_CODE

    def test_after_the_change_everything_opens(self, client, study):
        added = self.sign_in(client, study)
        changed = client.post(
            reverse("password_change"),
            {"old_password": added.temporary_password, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        )
        assert changed.status_code == 302
        assert client.get(reverse("home")).status_code == 200
        assert client.get("/api/projects/").status_code == 200
        assert not ProvisionedAccount.objects.get(user__username="temporary").must_change_password
        token = APIClient().post("/api/token/", {"username": "temporary", "password": NEW_PASSWORD})
        assert token.status_code == 200

    def test_the_change_refuses_weak_passwords(self, client, study):
        added = self.sign_in(client, study)
        for weak in ("temporary1", "1234567890", "short-1", "password12"):
            response = client.post(
                reverse("password_change"),
                {"old_password": added.temporary_password, "new_password1": weak, "new_password2": weak},
            )
            assert response.status_code == 200, weak  # the form again, with the reason
        assert User.objects.get(username="temporary").check_password(added.temporary_password)
        assert client.get(reverse("home"))["Location"] == reverse("password_change")

    def test_more_temporary_passwords_than_the_cap_are_refused_and_nothing_is_stored(self, study):
        project, researcher = study
        specs = [team.MemberSpec(username=f"t{n}") for n in range(team.MAX_TEMPORARY_PASSWORDS + 1)]
        with pytest.raises(team.ValidationFailed) as refused:
            team.members_add(project=project, actor=researcher, specs=specs, accounts=team.TEMPORARY_PASSWORD)
        assert refused.value.errors[0].message == team.TOO_MANY_PASSWORDS.format(limit=team.MAX_TEMPORARY_PASSWORDS)
        assert not User.objects.filter(username__regex=r"^t[0-9]+$").exists()


class PasswordRuleTests:
    def test_a_password_like_the_username_or_digits_only_is_refused_everywhere(self, client, make_user):
        user = make_user("margaret", "old-passphrase-5")
        user.email = "margaret@example.org"
        user.save()
        client.force_login(user)
        for weak in ("margaret12", "12345678901", "abc", "qwertyuiop"):
            response = client.post(
                reverse("password_change"),
                {"old_password": "old-passphrase-5", "new_password1": weak, "new_password2": weak},
            )
            assert response.status_code == 200, weak
        client.logout()
        client.post(reverse("password_reset"), {"email": "margaret@example.org"})
        form = open_reset_link(client, mail.outbox[0].body)
        refused = client.post(
            form.redirect_chain[-1][0], {"new_password1": "margaret12", "new_password2": "margaret12"}
        )
        assert refused.status_code == 200
        assert User.objects.get(username="margaret").check_password("old-passphrase-5")


class ResetTests:
    def test_an_invited_account_resets_its_way_in(self, client, study):
        added = add(study, "invitee", team.INVITE, email="invitee@example.org")
        client.post(reverse("password_reset"), {"email": "invitee@example.org"})
        assert len(mail.outbox) == 1
        form = open_reset_link(client, mail.outbox[0].body)
        done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
        assert done.status_code == 302
        invitee = User.objects.get(username="invitee")
        assert invitee.is_active and client.login(username="invitee", password=NEW_PASSWORD)
        # Its invitation link ended with it.
        assert client.post(reverse("invitation_open"), {"token": added.invitation_token}).status_code == 404

    def test_a_deactivated_account_gets_no_reset(self, client, make_user):
        user = make_user("gone", "old-passphrase-5")
        User.objects.filter(pk=user.pk).update(email="gone@example.org", is_active=False)
        response = client.post(reverse("password_reset"), {"email": "gone@example.org"})
        assert response.status_code == 302 and mail.outbox == []

    def test_the_reset_secret_is_never_in_a_requested_address(self, client, make_user):
        user = make_user("alice", "old-passphrase-5")
        user.email = "alice@example.org"
        user.save()
        client.post(reverse("password_reset"), {"email": "alice@example.org"})
        body = mail.outbox[0].body
        link = next(line for line in body.splitlines() if "/accounts/password/reset/" in line)
        path, _, secret = link.partition("#")
        assert path.endswith(reverse("password_reset_open")) and secret.count("/") == 1
        form = open_reset_link(client, body)
        for address, _ in form.redirect_chain:
            assert secret.split("/")[1] not in address
        assert client.post(reverse("password_reset_open"), {"token": "MQ/not-a-token"}).status_code == 404
