"""Invitations: account links that set a password, join invitations, and what a stolen or stale link
cannot do."""

import pytest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation import member_services as team
from annotation.members import project_members
from annotation.models import Invitation, Role
from annotation.services import membership_add
from tests.annotation.team_support import PASSPHRASE, User, accept, open_link

pytestmark = pytest.mark.django_db


class InvitationTests:
    def invite(self, study, username: str = "invitee", project=None) -> str:
        default_project, people = study
        (added,) = team.members_add(
            project=project or default_project,
            actor=people["res"],
            specs=[team.MemberSpec(username=username)],
            accounts=team.INVITE,
        )
        return added.invitation_token

    def test_invitee_sets_a_password_once_and_is_signed_in(self, study, client):
        token = self.invite(study)
        assert open_link(client, token)["Location"] == reverse("invitation")
        page = client.get(reverse("invitation"))
        assert page.status_code == 200 and b"invitee" in page.content and token.encode() not in page.content
        response = client.post(reverse("invitation"), {"password1": PASSPHRASE, "password2": PASSPHRASE})
        assert response.status_code == 302 and response["Location"] == reverse("project_detail", args=["study"])
        user = User.objects.get(username="invitee")
        assert user.is_active and user.check_password(PASSPHRASE)
        assert client.get(reverse("home")).status_code == 200  # signed in
        client.logout()
        again = accept(client, token, "another-passphrase-8")
        assert again.status_code == 200 and not User.objects.get(username="invitee").check_password(
            "another-passphrase-8"
        )
        assert team.INVITATION_INVALID.encode() in open_link(client, token).content.lower()

    def test_the_link_keeps_its_token_out_of_every_address(self, study, client):
        """The link's token sits in the fragment: no request line (so no access log) and no Referer holds it."""
        project, people = study
        client.force_login(people["res"])
        response = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "linked", "email": "", "role": "annotator", "accounts": "invite"},
            follow=True,
        )
        link = response.context["added"][0]["link"]
        path, _, token = link.partition("#")
        assert path.endswith(reverse("invitation")) and len(token) >= 40
        client.logout()
        page = client.get(reverse("invitation"))
        assert b"data-link-token" in page.content and b"link_token.js" in page.content
        assert open_link(client, token).status_code == 302
        accepted = client.post(reverse("invitation"), {"password1": PASSPHRASE, "password2": PASSPHRASE})
        assert accepted.status_code == 302 and User.objects.get(username="linked").is_active

    def test_the_page_lets_the_browser_send_its_origin(self, study, client):
        """Referrer-Policy no-referrer made Chromium post with Origin: null, which CSRF refuses."""
        token = self.invite(study)
        open_link(client, token)
        page = client.get(reverse("invitation"))
        assert page["Referrer-Policy"] == "same-origin"
        assert "no-store" in page["Cache-Control"]

    def test_an_earlier_link_with_the_token_in_the_path_still_works(self, study, client):
        token = self.invite(study)
        response = client.get(reverse("invitation_accept", args=[token]))
        assert response.status_code == 302 and response["Location"] == reverse("invitation")
        accepted = client.post(reverse("invitation"), {"password1": PASSPHRASE, "password2": PASSPHRASE})
        assert accepted.status_code == 302 and User.objects.get(username="invitee").is_active

    def test_an_expired_link_does_nothing(self, study, client):
        token = self.invite(study)
        Invitation.objects.update(expires_at=timezone.now())
        response = open_link(client, token)
        assert response.status_code == 404 and team.INVITATION_EXPIRED.encode() in response.content.lower()
        assert not User.objects.get(username="invitee").is_active

    def test_a_weak_password_is_refused_and_the_link_still_works(self, study, client):
        token = self.invite(study)
        for weak in ("123", "invitee12", "1234567890123", "password123"):
            response = accept(client, token, weak)
            assert response.status_code == 400, weak
            assert not User.objects.get(username="invitee").is_active
        assert client.get(reverse("invitation")).status_code == 200

    def test_an_invited_member_cannot_sign_in_before_accepting(self, study, client):
        self.invite(study)
        assert not client.login(username="invitee", password="")
        assert project_members(project=study[0], username="invitee")[0].state == "invited"

    def test_a_removed_invitee_added_again_gets_a_new_link(self, study, client):
        project, people = study
        old = self.invite(study)
        invitee = User.objects.get(username="invitee")
        team.member_remove(project=project, actor=people["res"], user=invitee)
        assert open_link(client, old).status_code == 404  # unusable after removal
        (again,) = team.members_add(project=project, actor=people["res"], specs=[team.MemberSpec(username="invitee")])
        assert again.outcome == team.INVITATION_SENT and again.invitation_token
        assert accept(client, again.invitation_token).status_code == 302
        assert User.objects.get(username="invitee").is_active

    def test_new_invitation_link_for_a_member_who_has_not_accepted(self, study, client):
        project, people = study
        old = self.invite(study)
        invitee = User.objects.get(username="invitee")
        client.force_login(people["res"])
        response = client.post(reverse("member_invite", args=[project.slug, invitee.pk]), follow=True)
        link = response.context["added"][0]["link"]
        client.logout()
        assert open_link(client, old).status_code == 404
        assert accept(client, link.partition("#")[2]).status_code == 302


class InvitationTakeoverTests:
    """Crafted by hand, as an attacker holding a researcher's account would."""

    def test_a_deactivated_superuser_cannot_be_taken_over(self, study, client):
        project, people = study
        admin = User.objects.create_superuser("root", "root@example.org", "pw-for-tests-1")
        User.objects.filter(pk=admin.pk).update(is_active=False)
        admin.refresh_from_db()
        hash_before = admin.password
        client.force_login(people["res"])
        # Adding the account is allowed (an existing account) but does not make it invitable.
        added = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "root", "email": "", "role": "annotator", "accounts": "invite"},
            follow=True,
        )
        assert added.status_code == 200 and added.context["added"][0]["link"] == ""
        response = client.post(reverse("member_invite", args=[project.slug, admin.pk]))
        assert response.status_code == 409 and escape(team.NOT_INVITABLE).encode() in response.content
        with pytest.raises(team.NotInvitable):
            team.invitation_create(project=project, user=admin, actor=people["res"])
        assert not Invitation.objects.filter(user=admin).exists()
        admin.refresh_from_db()
        assert not admin.is_active and admin.password == hash_before
        assert b"New invitation link" not in client.get(reverse("team", args=[project.slug])).content

    def test_a_link_planted_before_the_rule_does_not_work(self, study, client):
        """An open link to an account no invitation made (from before this rule) is refused at use."""
        project, people = study
        admin = User.objects.create_superuser("root", "root@example.org", "pw-for-tests-1", is_active=False)
        Invitation.objects.create(
            project=project,
            user=admin,
            token_sha256=team.invitation_token_hash("planted-token"),
            expires_at=timezone.now() + timezone.timedelta(days=1),
        )
        assert open_link(client, "planted-token").status_code == 404
        client.post(reverse("invitation"), {"password1": PASSPHRASE, "password2": PASSPHRASE})
        admin.refresh_from_db()
        assert not admin.is_active and admin.check_password("pw-for-tests-1")
        with pytest.raises(team.InvitationInvalid):
            team.invitation_accept(token_sha256=team.invitation_token_hash("planted-token"), password=PASSPHRASE)

    def test_another_projects_invitee_cannot_be_taken_over(self, study, make_project, make_user, client):
        project, people = study
        other = make_project("copa_likert", slug="other")
        other_researcher = make_user("other-res")
        membership_add(project=other, user=other_researcher, role=Role.RESEARCHER)
        team.members_add(
            project=other, actor=other_researcher, specs=[team.MemberSpec(username="theirs")], accounts=team.INVITE
        )
        theirs = User.objects.get(username="theirs")
        links_before = set(Invitation.objects.values_list("token_sha256", flat=True))
        client.force_login(people["res"])
        added = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "theirs", "email": "", "role": "annotator", "accounts": "invite"},
            follow=True,
        )
        assert added.status_code == 200 and added.context["added"][0]["link"] == ""
        response = client.post(reverse("member_invite", args=[project.slug, theirs.pk]))
        assert response.status_code == 409
        api = client.post(
            f"/api/projects/{project.slug}/members/",
            {"username": "theirs", "role": "expert", "accounts": "invite"},
            content_type="application/json",
        )
        assert api.status_code == 201 and api.json()["invitation_url"] == ""
        assert set(Invitation.objects.values_list("token_sha256", flat=True)) == links_before
        assert not User.objects.get(username="theirs").is_active

    def test_activation_ends_every_other_open_link(self, study, client):
        project, people = study
        token = InvitationTests().invite(study)
        invitee = User.objects.get(username="invitee")
        # A second link of the same account (a second project of the same researcher made none: the
        # project's own link is replaced, so plant a second open one as an older copy would be).
        Invitation.objects.create(
            project=project,
            user=invitee,
            token_sha256=team.invitation_token_hash("second-link"),
            expires_at=timezone.now() + timezone.timedelta(days=1),
        )
        assert accept(client, token).status_code == 302
        assert not Invitation.objects.filter(user=invitee, accepted_at__isnull=True).exists()
        client.logout()
        assert open_link(client, "second-link").status_code == 404
        with pytest.raises(team.NotInvitable):
            team.invitation_create(project=project, user=invitee, actor=people["res"])

    def test_any_sign_in_ends_open_links(self, study, client):
        project, people = study
        token = InvitationTests().invite(study)
        invitee = User.objects.get(username="invitee")
        invitee.set_password(PASSPHRASE)
        invitee.is_active = True
        invitee.save()  # e.g. an administrator set a password
        assert not Invitation.objects.filter(user=invitee, accepted_at__isnull=True).exists()
        assert open_link(client, token).status_code == 404
