"""Writes for a project's team: add people (existing accounts, new ones with an invitation link or a
temporary password, a CSV of them), change roles, pause, remove, accept an invitation.

Only the project's researchers and superusers manage its team; the services check it themselves
(``actor``), so a request crafted past the page is refused the same way. ``actor=None`` is the
operator at the command line. Nothing here ever grants Django's staff or superuser flags, and roles
are the project's three. Every batch is atomic: one bad line and nothing is added.

Account invitations (a link that sets an account's password) exist only for an account that a
project's invitation created (``ProvisionedAccount.invitable``), that has never signed in nor had a
password, and only from that project: an existing account, a deactivated one included, is never made
invitable by adding it to a project. Any password set or sign-in ends every open account link. With
``CONCORD_MEMBER_CONSENT`` on, a researcher adding an existing account sends a join invitation the
person accepts while signed in, instead of adding them. Nothing a researcher is told about an account
goes beyond what they entered and "added" / "invitation sent".
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.hashers import make_password
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils import timezone

from annotation.assignments import assignments_release_held
from annotation.errors import ConcordError, ErrorCollector, FieldError, ValidationFailed
from annotation.models import Invitation, Membership, Project, ProvisionedAccount, Role
from annotation.selectors import project_size_changed

User = get_user_model()

#: Caps (docs/cli.md, "add_members"): rows in one CSV, its size, and each cell.
MAX_ROWS = 1000
#: New accounts with a temporary password in one request: each password is hashed (slow on purpose), and
#: that happens before the write transaction, but one request should still answer in seconds.
MAX_TEMPORARY_PASSWORDS = 10
MAX_CSV_BYTES = 256 * 1024
MAX_USERNAME = 150
MAX_EMAIL = 254
INVITATION_DAYS = 7
#: Longest link token looked up (ours are 43 characters).
TOKEN_MAX_CHARS = 100
CSV_COLUMNS = ("username", "email", "role")

#: How accounts that do not exist yet are treated.
NO_NEW_ACCOUNTS, INVITE, TEMPORARY_PASSWORD = "none", "invite", "password"
ACCOUNT_CHOICES = (NO_NEW_ACCOUNTS, INVITE, TEMPORARY_PASSWORD)

NOT_A_MANAGER = "only the project's researchers can manage its team"
UNKNOWN_ROLE = "must be one of " + ", ".join(Role.values)
NO_SUCH_USER = "no account called {name!r}; choose to create new accounts to add new people"
#: One answer whether no account or several have the e-mail (which of the two is not the researcher's to know).
NO_SINGLE_EMAIL = "no single account has this e-mail; give the username"
NAME_OR_EMAIL = "give a username or an e-mail"
BAD_USERNAME = "letters, digits and @ . + - _ only, at most 150 characters"
NAME_TAKEN_CASE = "this username is taken (usernames may not differ only in capitals)"
NAME_TAKEN = "this username was taken meanwhile; nobody was added, try again"
TOO_MANY_PASSWORDS = "at most {limit} new accounts with a temporary password per request"
NOT_INVITABLE = (
    "no invitation link for this account: links exist only for accounts this project's invitation "
    "created that have never signed in"
)
JOIN_SIGN_IN = "sign in as the invited account to answer this invitation"
JOIN_WRONG_ACCOUNT = "this invitation is for another account: sign out and sign in as the invited one"
BAD_EMAIL = "not a valid e-mail address"
DUPLICATE_LINE = "the same person and role as line {line}"
TOO_LONG = "at most {limit} characters"
TOO_MANY_ROWS = "at most {limit} rows per file"
FILE_TOO_LARGE = "the file is larger than {limit:,} bytes"
NOT_UTF8 = "the file is not UTF-8 text"
BAD_HEADER = "the first line must name the columns username,email,role (got {got})"
BAD_ROW_WIDTH = "expected 3 cells (username,email,role), got {n}"
EMPTY_FILE = "the file has no members"
LAST_RESEARCHER = "the project needs at least one researcher: add another before removing this one"
NOT_A_MEMBER = "{name!r} is not a member of this project"
NO_ROLES = "give at least one role"
UNKNOWN_ACCOUNTS_CHOICE = "must be one of " + ", ".join(ACCOUNT_CHOICES)
INVITATION_INVALID = "this invitation link is not valid: it was used already, withdrawn, or mistyped"
INVITATION_EXPIRED = "this invitation link has expired; ask the researcher for a new one"
INVITATION_MAIL_SUBJECT = "Invitation to {project} on Concord"
INVITATION_MAIL_BODY = (
    "A researcher of the project {project} on Concord invites you to join it as {role}.\n\n"
    "Open this link, sign in and choose whether to join (it works once, for {days} days):\n{link}\n\n"
    "If you do not want to join, ignore this message."
)

#: What adding one person did, as the researcher is told it (nothing about the account beyond it).
ADDED, INVITATION_SENT, ALREADY = "added", "invitation_sent", "already"
RELEASED = "released: the member was {action}"


class InvitationInvalid(ConcordError):
    code = "invitation_invalid"


class NotInvitable(ConcordError):
    code = "not_invitable"
    http_status = 409


class LastResearcher(ConcordError):
    code = "last_researcher"
    http_status = 409


@dataclass(frozen=True)
class MemberSpec:
    """One person to add: by username, or by e-mail for an existing account; ``line`` for errors."""

    username: str = ""
    email: str = ""
    role: str = Role.ANNOTATOR
    line: int | None = None


@dataclass(frozen=True)
class MemberAdded:
    username: str
    role: str
    #: A new account was created for them.
    created: bool
    #: They had this role already (nothing changed).
    already: bool
    #: Shown once, never stored in clear: the link's token, or the temporary password.
    invitation_token: str = ""
    temporary_password: str = ""
    #: What the researcher entered to name the person (their username, or the e-mail).
    entered: str = ""
    #: ADDED, INVITATION_SENT (an account link or, with consent required, a join invitation) or ALREADY.
    outcome: str = ADDED


def can_manage_team(*, project: Project, user: Any) -> bool:
    if user is None:
        return True
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(project=project, user=user, role=Role.RESEARCHER).exists()


def _require_manager(project: Project, actor: Any) -> None:
    if not can_manage_team(project=project, user=actor):
        raise PermissionDenied(NOT_A_MANAGER)


# -- adding people -------------------------------------------------------------------------------


@dataclass
class _Resolved:
    spec: MemberSpec
    user: Any | None  # None: a new account


def _resolve(specs: list[MemberSpec], accounts: str, errors: ErrorCollector) -> list[_Resolved]:
    """Match each spec to an account (or plan a new one); every problem named by line and field.
    Three queries however many lines: names, e-mails, and names that differ only in capitals."""
    names = {s.username for s in specs if s.username}
    emails = {s.email.lower() for s in specs if s.email and not s.username}
    by_name = {u.username: u for u in User.objects.filter(username__in=names)}
    by_email: dict[str, list] = {}
    if emails:
        for account in User.objects.alias(folded=Lower("email")).filter(folded__in=emails):
            by_email.setdefault(account.email.lower(), []).append(account)
    unknown = {name.lower() for name in names - set(by_name)}
    folded: set[str] = set()
    if unknown and accounts != NO_NEW_ACCOUNTS:
        for other in User.objects.alias(folded=Lower("username")).filter(folded__in=unknown):
            folded.add(other.username.lower())
    seen: dict[tuple[str, str], int | None] = {}
    resolved = []
    for spec in specs:
        problems = _spec_problems(spec, accounts)
        user = None
        if not problems and spec.username:
            # An e-mail given with an existing username is not compared with the account's: the answer
            # would tell the researcher the account's address.
            user = by_name.get(spec.username)
            if user is not None:
                pass
            elif accounts == NO_NEW_ACCOUNTS:
                problems.append(FieldError("username", NO_SUCH_USER.format(name=spec.username)))
            elif spec.username.lower() in folded:
                problems.append(FieldError("username", NAME_TAKEN_CASE))
        elif not problems:
            matches = by_email.get(spec.email.lower(), [])
            if len(matches) != 1:
                problems.append(FieldError("email", NO_SINGLE_EMAIL))
            else:
                user = matches[0]
        if not problems:
            key = (user.username if user is not None else spec.username, spec.role)
            if key in seen:
                problems.append(FieldError("username", DUPLICATE_LINE.format(line=seen[key])))
            seen.setdefault(key, spec.line)
        errors.extend(problems, line=spec.line)
        resolved.append(_Resolved(spec, user))
    return resolved


def _spec_problems(spec: MemberSpec, accounts: str) -> list[FieldError]:
    problems = []
    if spec.role not in Role.values:
        problems.append(FieldError("role", UNKNOWN_ROLE))
    if not spec.username and not spec.email:
        problems.append(FieldError("username", NAME_OR_EMAIL))
    if len(spec.username) > MAX_USERNAME:
        problems.append(FieldError("username", TOO_LONG.format(limit=MAX_USERNAME)))
    elif spec.username:
        try:
            User.username_validator(spec.username)
        except ValidationError:
            problems.append(FieldError("username", BAD_USERNAME))
    if len(spec.email) > MAX_EMAIL:
        problems.append(FieldError("email", TOO_LONG.format(limit=MAX_EMAIL)))
    elif spec.email:
        try:
            validate_email(spec.email)
        except ValidationError:
            problems.append(FieldError("email", BAD_EMAIL))
    if accounts not in ACCOUNT_CHOICES:
        problems.append(FieldError("accounts", UNKNOWN_ACCOUNTS_CHOICE))
    return problems


def members_add(
    *,
    project: Project,
    actor: Any,
    specs: Iterable[MemberSpec],
    accounts: str = NO_NEW_ACCOUNTS,
    invitation_url: Callable[[str], str] | None = None,
) -> list[MemberAdded]:
    """Add every person in ``specs`` with their role, or (on any bad line) nobody.

    ``accounts`` says what happens to a username no account has: ``none`` refuses the line,
    ``invite`` creates the account unable to sign in until its invitation link is used
    (``INVITATION_DAYS``), ``password`` creates it with a temporary password that must be changed at
    first sign-in (at most ``MAX_TEMPORARY_PASSWORDS`` per request, hashed before the write
    transaction opens so that nobody else's writes wait on them). Links and passwords come back once,
    in the result, and are never stored in clear.

    With ``CONCORD_MEMBER_CONSENT`` on, an existing account that is not yet a member is sent a join
    invitation instead (e-mailed to it when ``invitation_url`` turns a token into a link and the account
    has an address); the operator at the command line (``actor=None``) still adds directly.
    """
    _require_manager(project, actor)
    specs = list(specs)
    if len(specs) > MAX_ROWS:
        raise ValidationFailed([FieldError("", TOO_MANY_ROWS.format(limit=MAX_ROWS))])
    errors = ErrorCollector()
    resolved = _resolve(specs, accounts, errors)
    if errors:
        raise ValidationFailed(errors.errors, total=errors.total)
    if not resolved:
        raise ValidationFailed([FieldError("", EMPTY_FILE)])
    new_names = {entry.spec.username.lower() for entry in resolved if entry.user is None}
    passwords: dict[str, tuple[str, str]] = {}
    if accounts == TEMPORARY_PASSWORD and new_names:
        if len(new_names) > MAX_TEMPORARY_PASSWORDS:
            raise ValidationFailed([FieldError("accounts", TOO_MANY_PASSWORDS.format(limit=MAX_TEMPORARY_PASSWORDS))])
        for name in sorted(new_names):
            password = secrets.token_urlsafe(12)
            passwords[name] = (password, make_password(password))
    try:
        with transaction.atomic():
            return _members_write(project, actor, resolved, accounts, passwords, invitation_url)
    except IntegrityError:
        # A name created by someone else between the checks above and the write.
        raise ValidationFailed([FieldError("username", NAME_TAKEN)]) from None


def _members_write(
    project: Project,
    actor: Any,
    resolved: list[_Resolved],
    accounts: str,
    passwords: dict[str, tuple[str, str]],
    invitation_url: Callable[[str], str] | None,
) -> list[MemberAdded]:
    consent = settings.CONCORD_MEMBER_CONSENT and actor is not None
    created: dict[str, tuple[Any, str, str]] = {}
    for entry in resolved:
        key = entry.spec.username.lower()
        if entry.user is None and key not in created:
            # One new account per name, however many roles the file gives it.
            created[key] = _create_account(project, actor, entry.spec, accounts, passwords.get(key))
    users = {id(entry): entry.user or created[entry.spec.username.lower()][0] for entry in resolved}
    existing = Membership.objects.filter(project=project, user__in=list(users.values()))
    have = set(existing.values_list("user_id", "role"))
    members = {user_id for user_id, _ in have}
    paused = set(existing.filter(paused=True).values_list("user_id", flat=True))
    results, new_rows = [], []
    for entry in resolved:
        user, role = users[id(entry)], entry.spec.role
        token, password = ("", "") if entry.user is not None else created[entry.spec.username.lower()][1:]
        if entry.user is not None and _reinvitable(project, user):
            # This project's own invitee, removed earlier (its link withdrawn) and added again: a new link.
            token = invitation_create(project=project, user=user, actor=actor)
        outcome = INVITATION_SENT if token else ADDED
        if (user.pk, role) in have:
            outcome = ALREADY
        elif consent and entry.user is not None and user.pk not in members and not token:
            token = _join_invitation_create(project, user, role, actor, invitation_url)
            outcome = INVITATION_SENT
        else:
            have.add((user.pk, role))
            # A paused member stays paused in every role.
            new_rows.append(Membership(project=project, user=user, role=role, paused=user.pk in paused))
        results.append(
            MemberAdded(
                username=user.username,
                role=role,
                created=entry.user is None,
                already=outcome == ALREADY,
                invitation_token=token,
                temporary_password=password,
                entered=entry.spec.username or entry.spec.email,
                outcome=outcome,
            )
        )
    Membership.objects.bulk_create(new_rows)
    project_size_changed(project_id=project.pk)
    return results


def _create_account(
    project: Project, actor: Any, spec: MemberSpec, accounts: str, password: tuple[str, str] | None
) -> tuple[Any, str, str]:
    """A new account: (user, invitation token, temporary password), one of the two set.
    ``password`` is the temporary password and its hash, made before the transaction."""
    user = User(username=spec.username, email=spec.email)
    if accounts == TEMPORARY_PASSWORD and password is not None:
        user.password = password[1]
        user.save()
        ProvisionedAccount.objects.create(user=user, project=project, must_change_password=True)
        return user, "", password[0]
    user.set_unusable_password()
    user.is_active = False  # signs in once the invitation is accepted
    user.save()
    ProvisionedAccount.objects.create(user=user, project=project, invitable=True)
    return user, invitation_create(project=project, user=user, actor=actor), ""


def _reinvitable(project: Project, user: Any) -> bool:
    if user.is_active or not account_invitable(project=project, user=user):
        return False
    return not Invitation.objects.filter(project=project, user=user, joins_as="", accepted_at__isnull=True).exists()


def account_invitable(*, project: Project, user: Any) -> bool:
    """Whether ``project`` may send ``user`` an account link: an account this project's invitation created
    that has never signed in nor had a password. Never a deactivated or an existing account."""
    if user.last_login is not None or user.has_usable_password():
        return False
    return ProvisionedAccount.objects.filter(user=user, project=project, invitable=True).exists()


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, _token_hash(token)


def _actor_or_none(actor: Any) -> Any:
    return actor if actor is not None and actor.is_authenticated else None


@transaction.atomic
def invitation_create(*, project: Project, user: Any, actor: Any) -> str:
    """A new single-use link token for ``user`` (earlier open links of theirs for the project stop working).
    NotInvitable unless ``account_invitable``."""
    _require_manager(project, actor)
    if not account_invitable(project=project, user=user):
        raise NotInvitable(NOT_INVITABLE)
    Invitation.objects.filter(project=project, user=user, joins_as="", accepted_at__isnull=True).delete()
    token, digest = _new_token()
    Invitation.objects.create(
        project=project,
        user=user,
        token_sha256=digest,
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        created_by=_actor_or_none(actor),
    )
    return token


def _join_invitation_create(
    project: Project, user: Any, role: str, actor: Any, invitation_url: Callable[[str], str] | None
) -> str:
    Invitation.objects.filter(project=project, user=user, joins_as=role, accepted_at__isnull=True).delete()
    token, digest = _new_token()
    Invitation.objects.create(
        project=project,
        user=user,
        joins_as=role,
        token_sha256=digest,
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        created_by=_actor_or_none(actor),
    )
    if invitation_url is not None and user.email:
        message = INVITATION_MAIL_BODY.format(
            project=project.title, role=Role(role).label, days=INVITATION_DAYS, link=invitation_url(token)
        )
        subject = INVITATION_MAIL_SUBJECT.format(project=project.title)
        transaction.on_commit(lambda: send_mail(subject, message, None, [user.email], fail_silently=True))
    return token


def account_invitations_end(*, user: Any) -> int:
    """End every open account link of ``user`` and its right to new ones (it got a password or signed in).
    Join invitations stay: they ask a signed-in account for consent. Returns how many links ended."""
    ended, _ = Invitation.objects.filter(user=user, joins_as="", accepted_at__isnull=True).delete()
    ProvisionedAccount.objects.filter(user=user, invitable=True).update(invitable=False)
    return ended


def account_reset_activates(*, user: Any) -> None:
    """A password reset of an invited account that has not signed in yet activates it, as its link would."""
    if user.is_active or user.last_login is not None:
        return
    if ProvisionedAccount.objects.filter(user=user, invitable=True).exists():
        user.is_active = True
        User.objects.filter(pk=user.pk).update(is_active=True)


def password_change_required(*, user: Any) -> bool:
    """The account still has the temporary password it was made with."""
    return ProvisionedAccount.objects.filter(user=user, must_change_password=True).exists()


def password_change_done(*, user: Any) -> None:
    ProvisionedAccount.objects.filter(user=user, must_change_password=True).update(must_change_password=False)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_token_hash(token: str) -> str:
    """What is stored of a link's token (and what a page keeps in the session between two requests)."""
    if not token or len(token) > TOKEN_MAX_CHARS:
        raise InvitationInvalid(INVITATION_INVALID)
    return _token_hash(token)


def invitation_for_hash(*, token_sha256: str) -> Invitation:
    """The open invitation behind a link's token hash, or InvitationInvalid (unknown, used, expired, or
    an account link to an account no longer invitable)."""
    invitation = (
        Invitation.objects.select_related("user", "project")
        .filter(token_sha256=token_sha256, accepted_at__isnull=True)
        .first()
    )
    if invitation is None:
        raise InvitationInvalid(INVITATION_INVALID)
    if invitation.expires_at <= timezone.now():
        raise InvitationInvalid(INVITATION_EXPIRED)
    if not invitation.joins_as and not account_invitable(project=invitation.project, user=invitation.user):
        raise InvitationInvalid(INVITATION_INVALID)
    return invitation


def _open_invitation_locked(token_sha256: str) -> Invitation:
    invitation = invitation_for_hash(token_sha256=token_sha256)
    invitation = Invitation.objects.select_for_update().select_related("user", "project").get(pk=invitation.pk)
    if invitation.accepted_at is not None:
        raise InvitationInvalid(INVITATION_INVALID)
    return invitation


@transaction.atomic
def invitation_accept(*, token_sha256: str, password: str) -> Any:
    """Set the invited account's password (checked by the site's password rules) and let it sign in.
    The link, and every other open link of the account, then stops working."""
    invitation = _open_invitation_locked(token_sha256)
    if invitation.joins_as:
        raise InvitationInvalid(INVITATION_INVALID)
    user = invitation.user
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        raise ValidationFailed([FieldError("password", message) for message in exc.messages]) from None
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    user.set_password(password)
    user.is_active = True
    user.save(update_fields=["password", "is_active"])
    account_invitations_end(user=user)
    return user


@transaction.atomic
def invitation_join(*, token_sha256: str, user: Any) -> Invitation:
    """The signed-in ``user`` agrees to join the project of a join invitation addressed to them."""
    invitation = _open_invitation_locked(token_sha256)
    if not invitation.joins_as:
        raise InvitationInvalid(INVITATION_INVALID)
    if not user.is_authenticated:
        raise PermissionDenied(JOIN_SIGN_IN)
    if invitation.user_id != user.pk:
        raise PermissionDenied(JOIN_WRONG_ACCOUNT)
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    project = invitation.project
    paused = Membership.objects.filter(project=project, user=user, paused=True).exists()
    Membership.objects.get_or_create(project=project, user=user, role=invitation.joins_as, defaults={"paused": paused})
    project_size_changed(project_id=project.pk)
    return invitation


# -- changing, pausing, removing -----------------------------------------------------------------


def _member_rows(project: Project, user: Any):
    rows = Membership.objects.select_for_update().filter(project=project, user=user)
    if not rows.exists():
        raise ValidationFailed([FieldError("username", NOT_A_MEMBER.format(name=user.username))])
    return rows


def _keeps_a_researcher(project: Project, user: Any, *, keeps_role: bool) -> None:
    if keeps_role:
        return
    others = Membership.objects.filter(project=project, role=Role.RESEARCHER).exclude(user=user)
    is_researcher = Membership.objects.filter(project=project, role=Role.RESEARCHER, user=user).exists()
    if is_researcher and not others.exists():
        raise LastResearcher(LAST_RESEARCHER)


@transaction.atomic
def member_set_roles(*, project: Project, actor: Any, user: Any, roles: Iterable[str]) -> list[str]:
    """Give the member exactly these roles (adding and dropping as needed); pause state is kept."""
    _require_manager(project, actor)
    roles = list(dict.fromkeys(roles))
    problems = [FieldError("roles", UNKNOWN_ROLE) for role in roles if role not in Role.values][:1]
    if not roles:
        problems.append(FieldError("roles", NO_ROLES))
    if problems:
        raise ValidationFailed(problems)
    current = _member_rows(project, user)
    paused = current.filter(paused=True).exists()
    _keeps_a_researcher(project, user, keeps_role=Role.RESEARCHER in roles)
    current.exclude(role__in=roles).delete()
    have = set(current.values_list("role", flat=True))
    Membership.objects.bulk_create(
        [Membership(project=project, user=user, role=role, paused=paused) for role in roles if role not in have]
    )
    project_size_changed(project_id=project.pk)
    return roles


@transaction.atomic
def member_pause(*, project: Project, actor: Any, user: Any, paused: bool = True) -> int:
    """Pause (or resume) a member: no new items while paused; their answers stay, and the items they
    hold go back to the pool for others. Returns how many items were released."""
    _require_manager(project, actor)
    _member_rows(project, user).update(paused=paused)
    if not paused:
        return 0
    return assignments_release_held(project=project, user=user, reason=RELEASED.format(action="paused"))


@transaction.atomic
def member_remove(*, project: Project, actor: Any, user: Any) -> int:
    """Remove a member in every role: their answers stay, the items they hold are released, their
    open invitation to the project is withdrawn. Returns how many items were released."""
    _require_manager(project, actor)
    rows = _member_rows(project, user)
    _keeps_a_researcher(project, user, keeps_role=False)
    rows.delete()
    Invitation.objects.filter(project=project, user=user, accepted_at__isnull=True).delete()
    project_size_changed(project_id=project.pk)
    return assignments_release_held(project=project, user=user, reason=RELEASED.format(action="removed"))


@transaction.atomic
def member_update(
    *, project: Project, actor: Any, user: Any, roles: Iterable[str] | None = None, paused: bool | None = None
) -> int:
    """Change a member's roles and/or pause state in one step (all or nothing). Returns items released."""
    if roles is not None:
        member_set_roles(project=project, actor=actor, user=user, roles=roles)
    if paused is not None:
        return member_pause(project=project, actor=actor, user=user, paused=paused)
    _require_manager(project, actor)
    return 0
