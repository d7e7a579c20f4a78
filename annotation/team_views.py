"""The Team page: a project's members with roles, progress and last activity, and the researcher's
controls to add (one person, or a CSV), change roles, pause, remove; and the invitation link page.

Thin: check access, call annotation.member_services or annotation.members, render. One-time secrets
(an invitation link, a temporary password) are shown in the response that created them, never
stored in clear and never cached.

An invitation link is ``/invite/#<token>``: the token sits in the fragment, which no browser sends,
so it is in no access log and no Referer. A small script posts it to ``/invite/open/``, which keeps
only its hash in the session and answers with the token-less ``/invite/`` page (Referrer-Policy
same-origin, the site's default, so the form's POST carries a real Origin and passes CSRF)."""

from __future__ import annotations

import contextlib

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate, get_user_model, login, password_validation
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_http_methods

from annotation import member_services as team
from annotation.access import require_project_role
from annotation.errors import ConcordError, ValidationFailed
from annotation.member_csv import members_from_csv
from annotation.members import project_members, project_own_accounts
from annotation.models import Membership, Project, Role
from annotation.post_redirect import post_only, shown_once_forget, shown_once_keep, shown_once_take

User = get_user_model()

NOT_A_RESEARCHER = "Only the project's researchers manage its team."
ACCOUNT_LABELS = [
    (team.NO_NEW_ACCOUNTS, "Only existing accounts"),
    (team.INVITE, f"Create missing accounts with an invitation link (expires in {team.INVITATION_DAYS} days)"),
    (team.TEMPORARY_PASSWORD, "Create missing accounts with a temporary password"),
]


class AddMemberForm(forms.Form):
    username = forms.CharField(max_length=team.MAX_USERNAME, required=False, label="Username")
    email = forms.EmailField(max_length=team.MAX_EMAIL, required=False, label="E-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)
    accounts = forms.ChoiceField(choices=ACCOUNT_LABELS, initial=team.NO_NEW_ACCOUNTS, label="New people")


class UploadMembersForm(forms.Form):
    file = forms.FileField(label="CSV file (username,email,role)")
    accounts = forms.ChoiceField(choices=ACCOUNT_LABELS, initial=team.NO_NEW_ACCOUNTS, label="New people")


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=Role.choices, widget=forms.CheckboxSelectMultiple)


class AcceptForm(forms.Form):
    password1 = forms.CharField(
        label="New password",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        max_length=128,
        strip=False,
        help_text=password_validation.password_validators_help_text_html(),
    )
    password2 = forms.CharField(label="The same again", widget=forms.PasswordInput, max_length=128, strip=False)

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        return data


#: The session key remembering the researcher's last "New people" choice, so the next add starts from it.
ACCOUNTS_CHOICE_SESSION_KEY = "concord_team_accounts"
#: The shown-once name of the rows just added (links and temporary passwords among them).
ADDED_ONCE = "team_added"


def _render_team(request: HttpRequest, project: Project, *, status: int = 200, **extra) -> HttpResponse:
    accounts = request.session.get(ACCOUNTS_CHOICE_SESSION_KEY, team.NO_NEW_ACCOUNTS)
    context = {
        "project": project,
        "members": project_members(project=project),
        "add_form": AddMemberForm(initial={"accounts": accounts}),
        "upload_form": UploadMembersForm(initial={"accounts": accounts}),
        "roles": Role.choices,
        "max_rows": team.MAX_ROWS,
        "invitation_days": team.INVITATION_DAYS,
        "consent_required": settings.CONCORD_MEMBER_CONSENT,
        **project_own_accounts(project=project),
        **extra,
    }
    response = render(request, "annotation/team.html", context, status=status)
    if extra.get("added"):
        add_never_cache_headers(response)  # the page holds one-time links or passwords
    return response


#: The session key holding the hash of the invitation link being answered (never the token itself).
INVITATION_SESSION_KEY = "concord_invitation_sha256"


def invitation_link(token: str) -> str:
    """The link a person opens: the token in the fragment, out of every log and Referer; the site's
    configured address (CONCORD_SITE_URL), never the request's Host header."""
    return settings.CONCORD_SITE_URL + reverse("invitation") + "#" + token


def _added_rows(request: HttpRequest, added: list[team.MemberAdded]) -> list[dict]:
    return [
        {
            "entered": entry.entered,
            "role": entry.role,
            "outcome": entry.outcome,
            "temporary_password": entry.temporary_password,
            "link": invitation_link(entry.invitation_token) if entry.invitation_token else "",
        }
        for entry in added
    ]


def _added_redirect(request: HttpRequest, project: Project, added: list[team.MemberAdded]) -> HttpResponse:
    """Post/redirect/get: the Team page shows the rows (and their one-time secrets) once, after the redirect."""
    return shown_once_keep(
        request, redirect("team", slug=project.slug), name=ADDED_ONCE, value=_added_rows(request, added)
    )


def members_add_for(
    request: HttpRequest, project: Project, specs: list[team.MemberSpec], accounts: str
) -> list[team.MemberAdded]:
    """``members_add`` as the signed-in researcher, with links (for join invitations' mail) on this site."""
    return team.members_add(
        project=project,
        actor=request.user,
        specs=specs,
        accounts=accounts,
        invitation_url=invitation_link,
    )


@login_required
def team_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    added = shown_once_take(request, name=ADDED_ONCE)
    if not added:
        return _render_team(request, project)
    return shown_once_forget(_render_team(request, project, added=added), name=ADDED_ONCE)


@login_required
@post_only("team", "slug")
def team_add(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = AddMemberForm(request.POST)
    if not form.is_valid():
        return _render_team(request, project, add_form=form, status=400)
    request.session[ACCOUNTS_CHOICE_SESSION_KEY] = form.cleaned_data["accounts"]
    spec = team.MemberSpec(
        username=form.cleaned_data["username"].strip(), email=form.cleaned_data["email"], role=form.cleaned_data["role"]
    )
    try:
        added = members_add_for(request, project, [spec], form.cleaned_data["accounts"])
    except ValidationFailed as exc:
        return _render_team(request, project, add_form=form, add_errors=exc.errors, status=400)
    return _added_redirect(request, project, added)


@login_required
@post_only("team", "slug")
def team_upload(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = UploadMembersForm(request.POST, request.FILES)
    if not form.is_valid():
        return _render_team(request, project, upload_form=form, status=400)
    request.session[ACCOUNTS_CHOICE_SESSION_KEY] = form.cleaned_data["accounts"]
    upload = form.cleaned_data["file"]
    if upload.size > team.MAX_CSV_BYTES:
        message = team.FILE_TOO_LARGE.format(limit=team.MAX_CSV_BYTES)
        return _render_team(request, project, upload_form=form, upload_errors=[message], status=400)
    try:
        specs = members_from_csv(upload.read(team.MAX_CSV_BYTES + 1))
        added = members_add_for(request, project, specs, form.cleaned_data["accounts"])
    except ValidationFailed as exc:
        errors = [str(e) for e in exc.errors]
        if exc.total > len(exc.errors):
            errors.append(f"... and {exc.total - len(exc.errors)} more")
        return _render_team(request, project, upload_form=form, upload_errors=errors, status=400)
    return _added_redirect(request, project, added)


def _member(project: Project, user_id: int):
    """A member of the project by user id, else 404 (a crafted id of someone outside the team)."""
    membership = Membership.objects.filter(project=project, user_id=user_id).select_related("user").first()
    if membership is None:
        raise Http404("No such member.")
    return membership.user


def _done(request: HttpRequest, project: Project, message: str) -> HttpResponse:
    messages.success(request, message)
    return redirect("team", slug=project.slug)


def _refused(request: HttpRequest, project: Project, exc: ConcordError) -> HttpResponse:
    errors = [str(e) for e in exc.errors] if isinstance(exc, ValidationFailed) else [exc.message]
    return _render_team(
        request, project, member_errors=errors, status=400 if isinstance(exc, ValidationFailed) else 409
    )


@login_required
@post_only("team", "slug")
def member_roles(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    user = _member(project, user_id)
    form = RolesForm(request.POST)
    if not form.is_valid():
        return _render_team(request, project, member_errors=[f"{user.username}: choose at least one role"], status=400)
    try:
        roles = team.member_set_roles(project=project, actor=request.user, user=user, roles=form.cleaned_data["roles"])
    except (ValidationFailed, team.LastResearcher) as exc:
        return _refused(request, project, exc)
    return _done(request, project, f"{user.username} is now {', '.join(roles)}.")


@login_required
@post_only("team", "slug")
def member_pause(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    user = _member(project, user_id)
    paused = request.POST.get("paused") != "0"
    released = team.member_pause(project=project, actor=request.user, user=user, paused=paused)
    if not paused:
        return _done(request, project, f"{user.username} is active again.")
    return _done(request, project, f"{user.username} is paused; {released} item(s) they held went back to the pool.")


@login_required
@post_only("team", "slug")
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    user = _member(project, user_id)
    try:
        released = team.member_remove(project=project, actor=request.user, user=user)
    except team.LastResearcher as exc:
        return _refused(request, project, exc)
    return _done(request, project, f"{user.username} was removed; their answers stay, {released} item(s) released.")


@login_required
@post_only("team", "slug")
def member_invite(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    """A new invitation link for a member this project invited who has not signed in yet (the old link
    stops working); refused for any other account."""
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    user = _member(project, user_id)
    try:
        token = team.invitation_create(project=project, user=user, actor=request.user)
    except team.NotInvitable as exc:
        return _render_team(request, project, member_errors=[f"{user.username}: {exc.message}"], status=409)
    entry = team.MemberAdded(
        username=user.username,
        role="",
        created=False,
        already=True,
        invitation_token=token,
        entered=user.username,
        outcome=team.INVITATION_SENT,
    )
    return _added_redirect(request, project, [entry])


def _invitation_page(request: HttpRequest, context: dict, *, status: int = 200) -> HttpResponse:
    response = render(request, "annotation/invitation_accept.html", context, status=status)
    add_never_cache_headers(response)
    return response


def _link_open_page(request: HttpRequest, *, invalid: str = "", status: int = 200) -> HttpResponse:
    context = {
        "heading": "Invitation",
        "action": reverse("invitation_open"),
        "invalid": invalid,
        "max_chars": team.TOKEN_MAX_CHARS,
    }
    response = render(request, "registration/link_open.html", context, status=status)
    add_never_cache_headers(response)
    return response


@post_only("invitation")
def invitation_open(request: HttpRequest) -> HttpResponse:
    """The link's token, posted from its fragment: its hash goes in the session, the token nowhere."""
    try:
        digest = team.invitation_token_hash(request.POST.get("token", "").strip())
        team.invitation_for_hash(token_sha256=digest)
    except team.InvitationInvalid as exc:
        return _link_open_page(request, invalid=exc.message, status=404)
    request.session[INVITATION_SESSION_KEY] = digest
    return redirect("invitation")


@require_GET
def invitation_legacy(request: HttpRequest, token: str) -> HttpResponse:
    """A link of the earlier form, ``/invite/<token>/``: its hash goes in the session, then ``/invite/``."""
    with contextlib.suppress(team.InvitationInvalid):  # too long: the page then asks for the code
        request.session[INVITATION_SESSION_KEY] = team.invitation_token_hash(token)
    response = redirect("invitation")
    response["Referrer-Policy"] = "no-referrer"  # this one address holds the token
    return response


@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest) -> HttpResponse:
    """The invitation being answered (from the session): choose the new account's password and be signed
    in, or, for a join invitation, agree to join while signed in as the invited account."""
    digest = request.session.get(INVITATION_SESSION_KEY)
    if not digest:
        return _link_open_page(request)
    try:
        found = team.invitation_for_hash(token_sha256=digest)
    except team.InvitationInvalid as exc:
        request.session.pop(INVITATION_SESSION_KEY, None)
        return _invitation_page(request, {"invalid": exc.message}, status=404)
    if found.joins_as:
        return _join(request, found, digest)
    form = AcceptForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            password = form.cleaned_data["password1"]
            try:
                user = team.invitation_accept(token_sha256=digest, password=password)
            except ValidationFailed as exc:
                for error in exc.errors:
                    form.add_error("password1", error.message)
            except team.InvitationInvalid as exc:
                return _invitation_page(request, {"invalid": exc.message}, status=404)
            else:
                request.session.pop(INVITATION_SESSION_KEY, None)
                # Sign in through the configured backends, as the sign-in form would.
                signed_in = authenticate(request, username=user.username, password=password)
                if signed_in is not None:
                    login(request, signed_in)
                messages.success(request, f"Welcome, {user.username}: your account is ready.")
                return redirect("project_detail", slug=found.project.slug)
        status = 400
    return _invitation_page(request, {"invitation": found, "form": form}, status=status)


def _join(request: HttpRequest, found, digest: str) -> HttpResponse:
    context = {"invitation": found, "join": True, "role": Role(found.joins_as).label}
    if not request.user.is_authenticated:
        context["join_problem"] = team.JOIN_SIGN_IN
        context["login_url"] = reverse("login") + "?next=" + reverse("invitation")
        return _invitation_page(request, context)
    if request.user.pk != found.user_id:
        context["join_problem"] = team.JOIN_WRONG_ACCOUNT
        return _invitation_page(request, context, status=403)
    if request.method == "POST":
        try:
            team.invitation_join(token_sha256=digest, user=request.user)
        except team.InvitationInvalid as exc:
            return _invitation_page(request, {"invalid": exc.message}, status=404)
        request.session.pop(INVITATION_SESSION_KEY, None)
        messages.success(request, f"You joined {found.project.title}.")
        return redirect("project_detail", slug=found.project.slug)
    return _invitation_page(request, context)
