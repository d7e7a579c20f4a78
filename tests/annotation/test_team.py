"""The team: adding people (existing, invited, with a temporary password, from a CSV), roles, pausing,
removing; the Team page and the add_members command; who may do any of it."""

import json
from io import StringIO

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import member_services as team
from annotation.assignments import MemberPaused, assignment_claim_next, assignment_submit
from annotation.errors import ValidationFailed
from annotation.member_csv import members_from_csv
from annotation.members import project_members
from annotation.models import Annotation, Assignment, Invitation, Item, Membership, Role
from annotation.selectors import annotator_progress
from annotation.services import membership_add
from tests.annotation.team_support import COPA, PASSPHRASE, User, add_items, csv_bytes, forget_sizes, open_link

pytestmark = pytest.mark.django_db


class AddTests:
    def test_researcher_adds_an_existing_account_by_username_or_email(self, study):
        project, people = study
        team.members_add(
            project=project,
            actor=people["res"],
            specs=[team.MemberSpec(username="outsider", role=Role.ANNOTATOR), team.MemberSpec(email="NEW@example.org")],
        )
        roles = set(Membership.objects.filter(project=project).values_list("user__username", "role"))
        assert {("outsider", "annotator"), ("newcomer", "annotator")} <= roles

    def test_unknown_username_is_refused_unless_accounts_are_created(self, study):
        project, people = study
        with pytest.raises(ValidationFailed) as refused:
            team.members_add(project=project, actor=people["res"], specs=[team.MemberSpec(username="ghost")])
        assert refused.value.errors[0].field == "username"
        assert not User.objects.filter(username="ghost").exists()

    def test_temporary_password_account_can_sign_in_with_it(self, study, client):
        project, people = study
        (added,) = team.members_add(
            project=project,
            actor=people["res"],
            specs=[team.MemberSpec(username="fresh", email="fresh@example.org")],
            accounts=team.TEMPORARY_PASSWORD,
        )
        assert added.created and len(added.temporary_password) >= 12
        user = User.objects.get(username="fresh")
        assert user.check_password(added.temporary_password) and not user.is_staff and not user.is_superuser
        assert client.login(username="fresh", password=added.temporary_password)

    def test_a_researcher_cannot_make_anyone_staff(self, study):
        project, people = study
        with pytest.raises(ValidationFailed) as refused:
            team.members_add(
                project=project, actor=people["res"], specs=[team.MemberSpec(username="outsider", role="staff")]
            )
        assert refused.value.errors[0].field == "role" and refused.value.errors[0].message == team.UNKNOWN_ROLE
        assert not User.objects.get(username="outsider").is_staff

    def test_only_researchers_and_superusers_manage_the_team(self, study):
        project, people = study
        for name in ("exp", "ann", "outsider", "staffish"):
            with pytest.raises(PermissionDenied):
                team.members_add(project=project, actor=people[name], specs=[team.MemberSpec(username="outsider")])
        team.members_add(project=project, actor=people["staff"], specs=[team.MemberSpec(username="outsider")])
        assert Membership.objects.filter(project=project, user=people["outsider"]).exists()


class CsvTests:
    def test_bulk_add_creates_invited_accounts_and_adds_roles(self, study):
        project, people = study
        specs = members_from_csv(
            csv_bytes(
                "username,email,role",
                "outsider,,expert",
                "alice,alice@example.org,annotator",
                ",new@example.org,annotator",
            )
        )
        added = team.members_add(project=project, actor=people["res"], specs=specs, accounts=team.INVITE)
        assert [(a.username, a.role, a.created) for a in added] == [
            ("outsider", "expert", False),
            ("alice", "annotator", True),
            ("newcomer", "annotator", False),
        ]
        alice = User.objects.get(username="alice")
        assert not alice.is_active and not alice.has_usable_password() and added[1].invitation_token
        assert Invitation.objects.get(user=alice).token_sha256 != added[1].invitation_token  # only a hash is kept

    def test_bad_lines_name_line_and_field_and_nothing_is_added(self, study):
        project, people = study
        specs = members_from_csv(
            csv_bytes(
                "username,email,role",
                "outsider,,annotator",
                "newuser,not-an-email,annotator",
                "outsider,,boss",
                "outsider,,annotator",
            )
        )
        with pytest.raises(ValidationFailed) as refused:
            team.members_add(project=project, actor=people["res"], specs=specs, accounts=team.INVITE)
        found = {(e.line, e.field) for e in refused.value.errors}
        assert found == {(3, "email"), (4, "role"), (5, "username")}
        assert not Membership.objects.filter(project=project, user=people["outsider"]).exists()
        assert not User.objects.filter(username="newuser").exists()

    def test_header_size_and_row_caps_are_enforced(self, study):
        with pytest.raises(ValidationFailed) as refused:
            members_from_csv(csv_bytes("user,mail", "a,b"))
        assert refused.value.errors[0].line == 1
        rows = [f"u{n},,annotator" for n in range(team.MAX_ROWS + 1)]
        with pytest.raises(ValidationFailed) as refused:
            members_from_csv(csv_bytes("username,email,role", *rows))
        assert refused.value.errors[0].message == team.TOO_MANY_ROWS.format(limit=team.MAX_ROWS)
        with pytest.raises(ValidationFailed):
            members_from_csv(b"username,email,role\n" + b"x" * team.MAX_CSV_BYTES)
        with pytest.raises(ValidationFailed) as refused:
            members_from_csv(b"username,email,role\n\xff\xfe,,annotator\n")
        assert refused.value.errors[0].message == team.NOT_UTF8


class PauseAndRemoveTests:
    def test_pausing_releases_held_items_keeps_answers_and_stops_claims(self, study):
        project, people = study
        item_done, item_held = add_items(project, 2)
        ann = people["ann"]
        first = assignment_claim_next(project=project, user=ann)
        assignment_submit(assignment=first, value=COPA.example_value())
        held = assignment_claim_next(project=project, user=ann)
        assert Item.objects.get(pk=held.item_id).assigned_count == 1
        released = team.member_pause(project=project, actor=people["res"], user=ann)
        assert released == 1
        item = Item.objects.get(pk=held.item_id)
        assert item.assigned_count == 0 and item.is_open
        assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.SKIPPED
        assert Annotation.objects.filter(rater="ann").count() == 1
        with pytest.raises(MemberPaused):
            assignment_claim_next(project=project, user=ann)
        team.member_pause(project=project, actor=people["res"], user=ann, paused=False)
        assert assignment_claim_next(project=project, user=ann) is None  # both items were had; none left for them

    def test_a_paused_member_who_never_claimed_is_refused_too(self, study):
        project, people = study
        add_items(project, 1)
        team.member_pause(project=project, actor=people["res"], user=people["exp"])
        with pytest.raises(MemberPaused):
            assignment_claim_next(project=project, user=people["exp"])

    def test_paused_annotator_crafting_a_workspace_request_gets_403(self, study, client):
        project, people = study
        add_items(project, 3)
        team.member_pause(project=project, actor=people["res"], user=people["ann"])
        client.force_login(people["ann"])
        response = client.get(reverse("workspace", args=[project.slug]))
        assert response.status_code == 403
        assert not Assignment.objects.filter(annotator=people["ann"]).exists()

    def test_removing_keeps_answers_and_gives_items_back(self, study):
        project, people = study
        add_items(project, 2)
        ann = people["ann"]
        assignment_submit(assignment=assignment_claim_next(project=project, user=ann), value=COPA.example_value())
        held = assignment_claim_next(project=project, user=ann)
        assert team.member_remove(project=project, actor=people["res"], user=ann) == 1
        assert not Membership.objects.filter(project=project, user=ann).exists()
        assert Annotation.objects.filter(rater="ann").count() == 1
        assert Item.objects.get(pk=held.item_id).is_open

    def test_the_last_researcher_cannot_be_removed_or_demoted(self, study):
        project, people = study
        with pytest.raises(team.LastResearcher):
            team.member_remove(project=project, actor=people["res"], user=people["res"])
        with pytest.raises(team.LastResearcher):
            team.member_set_roles(project=project, actor=people["res"], user=people["res"], roles=[Role.EXPERT])
        assert Membership.objects.filter(project=project, role=Role.RESEARCHER).count() == 1

    def test_roles_are_replaced_and_pause_survives(self, study):
        project, people = study
        team.member_pause(project=project, actor=people["res"], user=people["ann"])
        team.member_set_roles(
            project=project, actor=people["res"], user=people["ann"], roles=[Role.EXPERT, Role.ANNOTATOR]
        )
        rows = Membership.objects.filter(project=project, user=people["ann"])
        assert set(rows.values_list("role", flat=True)) == {"expert", "annotator"}
        assert all(rows.values_list("paused", flat=True))


class TeamPageTests:
    def test_who_may_open_the_team_page(self, study, client):
        project, people = study
        url = reverse("team", args=[project.slug])
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
        for name, expected in (
            ("outsider", 403),
            ("staffish", 403),
            ("ann", 403),
            ("exp", 403),
            ("res", 200),
            ("staff", 200),
        ):
            client.force_login(people[name])
            assert client.get(url).status_code == expected, name

    def test_team_posts_are_refused_to_everyone_but_researchers(self, study, client):
        project, people = study
        before = set(Membership.objects.values_list("user__username", "role", "paused"))
        urls = [
            reverse("team_add", args=[project.slug]),
            reverse("team_upload", args=[project.slug]),
            reverse("member_roles", args=[project.slug, people["ann"].pk]),
            reverse("member_pause", args=[project.slug, people["ann"].pk]),
            reverse("member_remove", args=[project.slug, people["ann"].pk]),
            reverse("member_invite", args=[project.slug, people["ann"].pk]),
        ]
        for url in urls:
            response = client.post(url, {"username": "outsider", "role": "expert", "roles": ["expert"]})
            assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url
        for name in ("outsider", "staffish", "ann", "exp"):
            client.force_login(people[name])
            for url in urls:
                assert client.post(url, {"username": "outsider", "role": "expert"}).status_code == 403, (name, url)
        assert set(Membership.objects.values_list("user__username", "role", "paused")) == before
        client.force_login(people["staff"])
        assert client.post(urls[3], {"paused": "1"}).status_code == 302  # superusers manage any team

    def test_annotator_crafting_team_posts_changes_nothing(self, study, client):
        project, people = study
        client.force_login(people["ann"])
        posts = [
            (reverse("team_add", args=[project.slug]), {"username": "outsider", "role": "researcher"}),
            (reverse("member_roles", args=[project.slug, people["ann"].pk]), {"roles": ["researcher"]}),
            (reverse("member_pause", args=[project.slug, people["exp"].pk]), {"paused": "1"}),
            (reverse("member_remove", args=[project.slug, people["res"].pk]), {}),
        ]
        for url, data in posts:
            assert client.post(url, data).status_code == 403, url
        assert not Membership.objects.filter(project=project, user=people["outsider"]).exists()
        assert set(Membership.objects.filter(project=project).values_list("user__username", "role", "paused")) == {
            ("res", "researcher", False),
            ("exp", "expert", False),
            ("ann", "annotator", False),
        }

    def test_page_lists_members_with_roles_progress_and_activity(self, study, client):
        project, people = study
        add_items(project, 4)
        assignment_submit(
            assignment=assignment_claim_next(project=project, user=people["ann"]), value=COPA.example_value()
        )
        client.force_login(people["res"])
        rows = {m.username: m for m in client.get(reverse("team", args=[project.slug])).context["members"]}
        assert rows["ann"].roles == ("annotator",) and rows["ann"].submitted == 1 and rows["ann"].target == 4
        assert rows["ann"].last_activity is not None and rows["exp"].last_activity is None
        assert rows["res"].target == 0

    def test_team_progress_is_the_workspace_quota_for_everyone(self, study, client, make_user):
        project, people = study
        add_items(project, 5)
        Item.objects.create(
            project=project, external_id="known", payload=COPA.example_payload(), gold_value=COPA.example_value()
        )
        extra = make_user("extra")
        membership_add(project=project, user=extra, role=Role.ANNOTATOR)
        for user in (people["ann"], people["exp"], extra, people["ann"]):
            assignment_submit(assignment=assignment_claim_next(project=project, user=user), value=COPA.example_value())
        assignment_claim_next(project=project, user=extra)  # held
        forget_sizes(project)
        for row in project_members(project=project):
            if row.annotates:
                user = User.objects.get(pk=row.user_id)
                expected = annotator_progress(project=project, user=user, roles=row.roles, cached=False)
                assert (row.submitted, row.target) == (expected.done, expected.target), row.username

    def test_add_form_shows_a_temporary_password_once(self, study, client):
        project, people = study
        client.force_login(people["res"])
        response = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "temp", "email": "", "role": "annotator", "accounts": "password"},
        )
        # Post/redirect/get: the password is on the page the redirect leads to, once, and stored nowhere in clear.
        assert response.status_code == 302 and response["Location"] == reverse("team", args=[project.slug])
        stored = str(dict(client.session.items())) + str(client.cookies)
        shown = client.get(response["Location"])
        assert shown.status_code == 200 and "no-store" in shown["Cache-Control"]
        (row,) = shown.context["added"]
        assert User.objects.get(username="temp").check_password(row["temporary_password"])
        assert row["temporary_password"].encode() in shown.content and row["temporary_password"] not in stored
        assert row["temporary_password"].encode() not in client.get(reverse("team", args=[project.slug])).content

    def test_csv_upload_with_a_bad_line_adds_nobody_and_says_where(self, study, client):
        from django.core.files.uploadedfile import SimpleUploadedFile

        project, people = study
        client.force_login(people["res"])
        upload = SimpleUploadedFile("team.csv", csv_bytes("username,email,role", "outsider,,annotator", "x,,chief"))
        response = client.post(reverse("team_upload", args=[project.slug]), {"file": upload, "accounts": "none"})
        assert response.status_code == 400
        assert b"line 3, field role" in response.content
        assert not Membership.objects.filter(project=project, user=people["outsider"]).exists()

    def test_pause_button_pauses_and_remove_button_removes(self, study, client):
        project, people = study
        client.force_login(people["res"])
        client.post(reverse("member_pause", args=[project.slug, people["ann"].pk]), {"paused": "1"})
        assert Membership.objects.get(project=project, user=people["ann"]).paused
        client.post(reverse("member_remove", args=[project.slug, people["ann"].pk]))
        assert not Membership.objects.filter(project=project, user=people["ann"]).exists()
        outsider = reverse("member_remove", args=[project.slug, people["outsider"].pk])
        assert client.post(outsider).status_code == 404

    def test_team_page_queries_do_not_grow_with_members(self, study, client, make_user):
        project, people = study
        add_items(project, 3)
        client.force_login(people["res"])
        url = reverse("team", args=[project.slug])

        def count() -> int:
            forget_sizes(project)
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            return len(queries)

        few = count()
        for n in range(8):
            user = make_user(f"extra{n}")
            membership_add(project=project, user=user, role=Role.ANNOTATOR)
            assignment_claim_next(project=project, user=user)
        assert count() == few
        assert few <= 10


class AddMembersCommandTests:
    def run(self, *args) -> tuple[dict, str]:
        out, err = StringIO(), StringIO()
        call_command("add_members", *args, stdout=out, stderr=err)
        return json.loads(out.getvalue()), err.getvalue()

    def test_csv_adds_everyone_and_prints_json(self, study, tmp_path):
        project, _ = study
        path = tmp_path / "team.csv"
        path.write_bytes(csv_bytes("role,username,email", "expert,outsider,", "annotator,carol,carol@example.org"))
        result, _ = self.run(project.slug, str(path), "--accounts", "invite")
        assert result["project"] == "study"
        assert [(r["username"], r["role"], r["created"]) for r in result["added"]] == [
            ("outsider", "expert", False),
            ("carol", "annotator", True),
        ]
        assert result["added"][1]["invitation_path"].startswith("/invite/")
        assert result["added"][0]["invitation_path"] is None

    def test_one_user_by_flag(self, study):
        project, _ = study
        result, _ = self.run(project.slug, "--user", "outsider", "--role", "expert")
        assert result["added"][0]["already"] is False
        assert Membership.objects.filter(project=project, user__username="outsider", role="expert").exists()

    def test_bad_csv_exits_1_naming_line_and_field_and_adds_nobody(self, study, tmp_path):
        project, _ = study
        path = tmp_path / "team.csv"
        path.write_bytes(csv_bytes("username,email,role", "outsider,,annotator", "nobody,,annotator"))
        with pytest.raises(CommandError) as failed:
            self.run(project.slug, str(path))
        assert failed.value.returncode == 1 and "line 3, field username" in str(failed.value)
        assert not Membership.objects.filter(project=project, user__username="outsider").exists()

    def test_usage_errors_exit_2(self, study, tmp_path):
        project, _ = study
        for args in (
            (project.slug,),
            (project.slug, "f.csv", "--user", "x", "--role", "expert"),
            (project.slug, "--user", "x"),
        ):
            with pytest.raises(CommandError) as failed:
                self.run(*args)
            assert failed.value.returncode == 2, args

    def test_unknown_project_exits_1(self, study):
        with pytest.raises(CommandError) as failed:
            self.run("nope", "--user", "outsider", "--role", "expert")
        assert failed.value.returncode == 1


class EnumerationTests:
    """Adding by e-mail or username tells the researcher nothing beyond "added" / "invitation sent"."""

    def test_no_account_and_several_accounts_get_the_same_answer(self, study):
        project, people = study
        User.objects.create_user("twin1", "twin@example.org")
        User.objects.create_user("twin2", "twin@example.org")
        answers = []
        for email in ("twin@example.org", "nobody@example.org"):
            with pytest.raises(ValidationFailed) as refused:
                team.members_add(project=project, actor=people["res"], specs=[team.MemberSpec(email=email)])
            answers.append([(e.field, e.message) for e in refused.value.errors])
        assert answers[0] == answers[1] == [("email", team.NO_SINGLE_EMAIL)]

    def test_an_e_mail_given_with_a_username_is_not_checked_against_the_account(self, study):
        project, people = study
        (added,) = team.members_add(
            project=project,
            actor=people["res"],
            specs=[team.MemberSpec(username="newcomer", email="guess@example.org")],
        )
        assert added.outcome == team.ADDED and added.entered == "newcomer"
        assert User.objects.get(username="newcomer").email == "new@example.org"

    def test_a_case_collision_does_not_name_the_other_account(self, study):
        project, people = study
        with pytest.raises(ValidationFailed) as refused:
            team.members_add(
                project=project, actor=people["res"], specs=[team.MemberSpec(username="NEWCOMER")], accounts=team.INVITE
            )
        assert refused.value.errors[0].message == team.NAME_TAKEN_CASE
        assert "newcomer" not in refused.value.message

    def test_the_page_shows_what_was_entered_and_no_other_address(self, study, client):
        project, people = study
        client.force_login(people["res"])
        response = client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "", "email": "new@example.org", "role": "annotator", "accounts": "none"},
            follow=True,
        )
        added = response.context["added"][0]
        assert added["entered"] == "new@example.org" and added["outcome"] == team.ADDED
        # The Team page lists e-mails only of accounts this project made (the address its researcher typed).
        client.post(
            reverse("team_add", args=[project.slug]),
            {"username": "outsider", "email": "", "role": "annotator", "accounts": "none"},
        )
        User.objects.filter(username="outsider").update(email="private@example.org")
        page = client.get(reverse("team", args=[project.slug])).content.decode()
        assert "private@example.org" not in page


@pytest.mark.usefixtures("consent_required")
class ConsentTests:
    @pytest.fixture
    def consent_required(self, settings):
        settings.CONCORD_MEMBER_CONSENT = True

    def test_an_existing_account_gets_an_invitation_instead_of_being_added(
        self, study, client, mailoutbox, django_capture_on_commit_callbacks
    ):
        project, people = study
        client.force_login(people["res"])
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("team_add", args=[project.slug]),
                {"username": "", "email": "new@example.org", "role": "expert", "accounts": "none"},
                follow=True,
            )
        row = response.context["added"][0]
        assert row["outcome"] == team.INVITATION_SENT and "newcomer" not in response.content.decode()
        assert not Membership.objects.filter(project=project, user=people["newcomer"]).exists()
        assert len(mailoutbox) == 1 and mailoutbox[0].to == ["new@example.org"]
        token = row["link"].partition("#")[2]
        assert row["link"] in mailoutbox[0].body

        client.logout()
        open_link(client, token)
        page = client.get(reverse("invitation")).content.decode()
        assert "Sign in" in page and "newcomer" not in page  # nothing about the account to whoever holds the link
        client.force_login(people["newcomer"])
        assert client.post(reverse("invitation")).status_code == 302
        assert Membership.objects.filter(project=project, user=people["newcomer"], role=Role.EXPERT).exists()

    def test_another_account_cannot_accept_it(self, study, client):
        project, people = study
        (added,) = team.members_add(project=project, actor=people["res"], specs=[team.MemberSpec(username="newcomer")])
        client.force_login(people["outsider"])
        open_link(client, added.invitation_token)
        assert client.post(reverse("invitation")).status_code == 403
        assert not Membership.objects.filter(
            project=project, user__in=[people["newcomer"], people["outsider"]]
        ).exists()
        with pytest.raises(PermissionDenied):
            team.invitation_join(
                token_sha256=team.invitation_token_hash(added.invitation_token), user=people["outsider"]
            )

    def test_a_join_invitation_never_sets_a_password(self, study, client):
        project, people = study
        (added,) = team.members_add(project=project, actor=people["res"], specs=[team.MemberSpec(username="newcomer")])
        with pytest.raises(team.InvitationInvalid):
            team.invitation_accept(token_sha256=team.invitation_token_hash(added.invitation_token), password=PASSPHRASE)
        open_link(client, added.invitation_token)
        client.post(reverse("invitation"), {"password1": PASSPHRASE, "password2": PASSPHRASE})
        assert not User.objects.get(username="newcomer").check_password(PASSPHRASE)

    def test_the_operator_at_the_command_line_still_adds_directly(self, study):
        project, people = study
        (added,) = team.members_add(project=project, actor=None, specs=[team.MemberSpec(username="newcomer")])
        assert added.outcome == team.ADDED
        assert Membership.objects.filter(project=project, user=people["newcomer"]).exists()
