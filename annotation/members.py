"""Reads for a project's team: who belongs, in which roles, how far along, when last active."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Max
from django.utils import timezone

from annotation.member_services import MAX_USERNAME
from annotation.models import Assignment, Invitation, Membership, Project, ProvisionedAccount, Role
from annotation.selectors import annotator_quota, member_share, team_availability

User = get_user_model()

ROLE_ORDER = {role: n for n, role in enumerate(Role.values)}


@dataclass(frozen=True)
class MemberRow:
    user_id: int
    username: str
    email: str
    roles: tuple[str, ...]
    paused: bool
    #: The account waits for its invitation to be accepted (it cannot sign in yet).
    invited_until: datetime | None
    is_active: bool
    submitted: int
    skipped: int
    holding: int
    #: The member's quota (annotation.selectors; 0 for researchers only).
    target: int
    last_activity: datetime | None

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.submitted / self.target)) if self.target else 0

    @property
    def annotates(self) -> bool:
        return bool({Role.ANNOTATOR, Role.EXPERT} & set(self.roles))

    @property
    def state(self) -> str:
        if self.invited_until is not None:
            return "invited"
        if not self.is_active:
            return "inactive"
        return "paused" if self.paused else "active"


def project_members(*, project: Project, username: str | None = None) -> list[MemberRow]:
    """The project's members (or the one called ``username``), by username: three queries however many.

    Progress is submitted items against the member's quota, as annotation.selectors.annotator_progress
    defines it (the workspace's number), computed for everyone in the same few queries; last activity
    is the latest item they were served, submitted or skipped.
    """
    memberships = Membership.objects.filter(project=project)
    if username is not None:
        memberships = memberships.filter(user__username=username)
    people: dict[int, dict] = {}
    for user_id, name, email, active, role, paused in memberships.order_by("user__username").values_list(
        "user_id", "user__username", "user__email", "user__is_active", "role", "paused"
    ):
        person = people.setdefault(
            user_id, {"username": name, "email": email, "active": active, "roles": [], "paused": False}
        )
        person["roles"].append(role)
        person["paused"] = person["paused"] or paused
    if not people:
        return []
    work: dict[tuple[int, str], tuple[int, datetime | None, datetime | None]] = {}
    for user_id, status, n, done_at, opened_at in (
        Assignment.objects.filter(project=project, annotator_id__in=list(people))
        .order_by()
        .values("annotator_id", "status")
        .annotate(n=Count("pk"), done_at=Max("completed_at"), opened_at=Max("opened_at"))
        .values_list("annotator_id", "status", "n", "done_at", "opened_at")
    ):
        work[(user_id, status)] = (n, done_at, opened_at)
    invited = dict(
        Invitation.objects.filter(
            project=project,
            user_id__in=list(people),
            joins_as="",  # account links only: a join invitation goes to someone not yet a member
            accepted_at__isnull=True,
            expires_at__gt=timezone.now(),
        ).values_list("user_id", "expires_at")
    )
    team = team_availability(project=project)
    rows = []
    for user_id, person in people.items():
        counts = {status: work.get((user_id, status), (0, None, None)) for status in Assignment.Status.values}
        moments = [moment for _, done_at, opened_at in counts.values() for moment in (done_at, opened_at) if moment]
        roles = tuple(sorted(person["roles"], key=ROLE_ORDER.__getitem__))
        # The quota as annotation.selectors.annotator_progress defines it, for everyone at once.
        done, held = counts[Assignment.Status.SUBMITTED][0], counts[Assignment.Status.ASSIGNED][0]
        quota = annotator_quota(
            share=member_share(project=project, size=team.size, roles=roles),
            done=done,
            available=team.available(user_id=user_id, held=held),
        )
        rows.append(
            MemberRow(
                user_id=user_id,
                username=person["username"],
                email=person["email"],
                roles=roles,
                paused=person["paused"],
                invited_until=invited.get(user_id) if not person["active"] else None,
                is_active=person["active"],
                submitted=done,
                skipped=counts[Assignment.Status.SKIPPED][0],
                holding=held,
                target=quota if {Role.ANNOTATOR, Role.EXPERT} & set(roles) else 0,
                last_activity=max(moments) if moments else None,
            )
        )
    return rows


def project_member(*, project: Project, username: str) -> MemberRow | None:
    found = project_members(project=project, username=username)
    return found[0] if found else None


def project_member_user(*, project: Project, username: str) -> Any | None:
    """The account of the project's member called ``username``, or None."""
    if not username or len(username) > MAX_USERNAME:
        return None
    return User.objects.filter(username=username, memberships__project=project).distinct().first()


def project_own_accounts(*, project: Project) -> dict[str, set[int]]:
    """Ids of the accounts this project made (``own_accounts``: the e-mail shown is the one its researcher
    typed) and of those that may still get an account link (``invitable``)."""
    own, invitable = set(), set()
    rows = ProvisionedAccount.objects.filter(project=project).values_list(
        "user_id", "invitable", "user__is_active", "user__last_login"
    )
    for user_id, can_invite, active, last_login in rows:
        own.add(user_id)
        if can_invite and not active and last_login is None:
            invitable.add(user_id)
    return {"own_accounts": own, "invitable": invitable}
