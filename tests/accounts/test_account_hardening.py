"""Account flows that someone else could exploit: the forced change refuses the temporary password
itself, no chosen password holds the username, reset and invitation links start with the configured
site address (never the request's Host header), and one address gets at most a few reset e-mails
an hour."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core import mail
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts.forms import SAME_PASSWORD
from accounts.validators import CONTAINS_USERNAME
from annotation import member_services as team
from annotation.models import ProvisionedAccount
from tests.accounts.test_passwords import add, study  # noqa: F401 (a fixture)
from tests.annotation.team_support import open_link

pytestmark = pytest.mark.django_db
User = get_user_model()
SITE = "https://concord.example.org"


class ForcedChangeTests:
    def test_the_temporary_password_is_refused_as_the_new_one(self, client, study):  # noqa: F811
        added = add(study, "temporary", team.TEMPORARY_PASSWORD)
        assert client.login(username="temporary", password=added.temporary_password)
        same = added.temporary_password
        response = client.post(
            reverse("password_change"), {"old_password": same, "new_password1": same, "new_password2": same}
        )
        assert response.status_code == 200 and SAME_PASSWORD in response.content.decode()
        assert ProvisionedAccount.objects.get(user__username="temporary").must_change_password
        assert client.get(reverse("home"))["Location"] == reverse("password_change")


class UsernameInPasswordTests:
    def test_an_invitation_refuses_the_username_written_twice(self, client, study):  # noqa: F811
        added = add(study, "marguerite", team.INVITE)
        open_link(client, added.invitation_token)
        twice = "margueritemarguerite"
        response = client.post(reverse("invitation"), {"password1": twice, "password2": twice})
        assert response.status_code == 400 and CONTAINS_USERNAME in response.content.decode()
        user = User.objects.get(username="marguerite")
        assert not user.is_active and not user.check_password(twice)

    @pytest.mark.parametrize("password", ["Marguerite-2024!", "xx-MARGUERITE-xx", "margue@example-rite"])
    def test_any_password_holding_the_username_or_mail_name_is_refused(self, password, make_user):
        user = make_user("marguerite")
        user.email = "rite@example.org"
        with pytest.raises(ValidationError) as refused:
            validate_password(password, user)
        assert CONTAINS_USERNAME in refused.value.messages

    def test_a_password_without_them_passes(self, make_user):
        user = make_user("marguerite")
        validate_password("quiet-harbour-lantern-7", user)


class SiteAddressTests:
    def test_the_reset_link_ignores_the_host_header(self, client, settings, make_user):
        settings.CONCORD_SITE_URL = SITE
        settings.ALLOWED_HOSTS = ["*"]
        user = make_user("alice")
        user.email = "alice@example.org"
        user.save()
        client.post(reverse("password_reset"), {"email": "alice@example.org"}, HTTP_HOST="evil.invalid")
        (message,) = mail.outbox
        assert f"{SITE}/accounts/password/reset/open/#" in message.body and "evil.invalid" not in message.body

    def test_an_invitation_link_ignores_the_host_header(self, client, settings, study):  # noqa: F811
        settings.CONCORD_SITE_URL = SITE
        settings.ALLOWED_HOSTS = ["*"]
        project, researcher = study
        client.force_login(researcher)
        response = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "linked", "email": "", "role": "annotator", "accounts": "invite"},
            HTTP_HOST="evil.invalid",
            follow=True,
        )
        assert response.context["added"][0]["link"].startswith(f"{SITE}/invite/#")


class ResetRateTests:
    def test_one_address_gets_at_most_the_hourly_share_of_e_mails(self, client, settings, make_user):
        settings.CONCORD_RESET_EMAILS_PER_HOUR = 3
        user = make_user("alice")
        user.email = "alice@example.org"
        user.save()
        answers = {
            client.post(reverse("password_reset"), {"email": "Alice@Example.org"})["Location"] for _ in range(15)
        }
        assert answers == {reverse("password_reset_done")} and len(mail.outbox) == 3  # the same answer each time
