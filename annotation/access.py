"""Who may open a project: one rule for pages and the API.

A project someone does not belong to answers 403 on pages (they may follow a link and should be
told why) and 404 in the API (``hide_from_outsiders``: a client learns nothing about it). With
``allowed`` roles, members without one of them get 403 with ``denied``. Superusers pass.
"""

from __future__ import annotations

from collections.abc import Collection
from collections.abc import Set as AbstractSet

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from annotation.models import Assignment, Project, Role
from annotation.selectors import project_with_roles_and_assignment

NOT_A_MEMBER = "You are not a member of this project."
NEEDS_ROLES = "only the project's {roles} may do this"
CANNOT_CREATE_PROJECTS = (
    "You may not create projects. Ask an administrator for the permission to add projects (annotation.add_project)."
)


def project_access(
    *,
    user,
    slug: str,
    allowed: AbstractSet[str] | None = None,
    denied: str = "",
    hide_from_outsiders: bool = False,
) -> tuple[Project, set[str]]:
    """The project and the user's roles in it, or Http404 / PermissionDenied."""
    project, roles, _ = project_assignment_access(
        user=user, slug=slug, allowed=allowed, denied=denied, hide_from_outsiders=hide_from_outsiders
    )
    return project, roles


def require_project_role(
    request: HttpRequest, slug: str, roles: Collection[str] | None = None, *, denied: str = "", api: bool = False
) -> tuple[Project, set[str]]:
    """The project at ``slug`` and the request user's roles in it, for a page or an API endpoint: the
    one gate every view module passes through.

    A member without one of ``roles`` (any role will do when None) gets 403 with ``denied`` (or a
    sentence naming the roles). Someone who is not a member gets 403 on a page and, with ``api``,
    404, like a project that does not exist; superusers pass.
    """
    return project_access(
        user=request.user,
        slug=slug,
        allowed=set(roles) if roles is not None else None,
        denied=denied,
        hide_from_outsiders=api,
    )


def project_assignment_access(
    *,
    user,
    slug: str,
    allowed: AbstractSet[str] | None = None,
    denied: str = "",
    hide_from_outsiders: bool = False,
    assignment_id: int | None = None,
) -> tuple[Project, set[str], Assignment | None]:
    """``project_access``, with the user's assignment ``assignment_id`` in the project (None when it
    is not theirs there) read by the same statement."""
    if not user.is_authenticated:
        raise Http404("No such project.")
    project, roles, assignment = project_with_roles_and_assignment(slug=slug, user=user, assignment_id=assignment_id)
    if project is None or (hide_from_outsiders and not roles and not user.is_superuser):
        raise Http404("No such project.")
    if user.is_superuser:
        return project, roles, assignment
    # Someone with no role here (never added, or removed since the page was opened) is told so, not
    # which roles the action needs.
    if not roles:
        raise PermissionDenied(NOT_A_MEMBER)
    if allowed is not None and not roles & allowed:
        raise PermissionDenied(denied or NEEDS_ROLES.format(roles=role_names(allowed)))
    return project, roles, assignment


def role_names(roles) -> str:
    """Roles as a person reads them: "experts or researchers" (never the enum's repr)."""
    return " or ".join(sorted(f"{Role(role).label.lower()}s" for role in roles))


def can_create_projects(user) -> bool:
    """Whether ``user`` may create projects (and so become their researcher): staff, holders of
    Django's ``annotation.add_project`` permission, or any signed-in user when the deployment turns
    on self-service creation (``CONCORD_SELF_SERVICE_PROJECTS``, off by default)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff or user.has_perm("annotation.add_project"):
        return True
    return bool(getattr(settings, "CONCORD_SELF_SERVICE_PROJECTS", False))
