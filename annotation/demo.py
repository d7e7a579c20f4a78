"""Demo data: one project per task kind, items from ``fixtures/demo/<kind>.jsonl``, and a user per role.

``demo_load`` is idempotent: a project that exists is left as it is (its items are imported only
while it has none), an account that exists keeps its password, and memberships are added only
when missing. Running it twice changes nothing. The item files are built once from the real data
by ``fixtures/build_demo_fixtures.py`` and committed, so the demo needs nothing outside the repo.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction

from annotation.errors import ConcordError
from annotation.importing import import_items
from annotation.kinds import all_kinds
from annotation.models import Item, Project, Role, SuggestionExposure
from annotation.services import membership_add, project_create

#: The password every demo account is created with. Demo databases only: never in production.
DEMO_PASSWORD = "concord-demo"
FIXTURES_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo"

SLUG_HAS_OTHER_KIND = "project {slug!r} exists with kind {found!r}, but the demo needs kind {wanted!r}"
FIXTURE_MISSING = "demo item file {path} is missing; rebuild it with fixtures/build_demo_fixtures.py"


class DemoConflict(ConcordError):
    """Something already in the database stands where the demo would put its own data."""

    code = "demo_conflict"


@dataclass(frozen=True)
class DemoProjectSpec:
    slug: str
    kind: str
    title: str
    fixture: str
    guidelines: str
    overlap: int
    suggestion_exposure: str = SuggestionExposure.HIDDEN
    suggestion_probability: float = 0.5
    seed: int = 0


def _demo_specs() -> tuple[DemoProjectSpec, ...]:
    """One project per registered kind that declares one (``TaskKind.demo_project``), items by its name.

    The kinds set one of each exposure mode, so the anchoring comparison has something to show.
    """
    return tuple(
        DemoProjectSpec(kind=kind.name, fixture=f"{kind.name}.jsonl", **kind.demo_project)
        for kind in all_kinds()
        if kind.demo_project is not None
    )


PROJECTS: tuple[DemoProjectSpec, ...] = _demo_specs()

#: (username, role on every demo project)
USERS: tuple[tuple[str, str], ...] = (
    ("researcher", Role.RESEARCHER),
    ("expert", Role.EXPERT),
    ("annotator1", Role.ANNOTATOR),
    ("annotator2", Role.ANNOTATOR),
    ("annotator3", Role.ANNOTATOR),
)


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    role: str
    #: False when the account existed before: its password was left as it was.
    created: bool


@dataclass(frozen=True)
class DemoProject:
    slug: str
    kind: str
    title: str
    items: int
    qualification_items: int
    #: Items imported by this run (0 when the project already had items).
    imported: int
    created: bool


@dataclass(frozen=True)
class DemoSummary:
    projects: tuple[DemoProject, ...]
    logins: tuple[DemoLogin, ...]


def _demo_user(*, username: str, password: str):
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user, created


def _demo_project(*, spec: DemoProjectSpec, created_by) -> tuple[Project, bool]:
    project = Project.objects.filter(slug=spec.slug).first()
    if project is not None:
        if project.kind != spec.kind:
            raise DemoConflict(SLUG_HAS_OTHER_KIND.format(slug=spec.slug, found=project.kind, wanted=spec.kind))
        return project, False
    project = project_create(
        slug=spec.slug,
        kind=spec.kind,
        title=spec.title,
        overlap=spec.overlap,
        guidelines=spec.guidelines,
        suggestion_exposure=spec.suggestion_exposure,
        suggestion_probability=spec.suggestion_probability,
        seed=spec.seed,
        created_by=created_by,
    )
    return project, True


def demo_load(*, password: str = DEMO_PASSWORD, fixtures_dir: Path | str = FIXTURES_DIR) -> DemoSummary:
    """Create the demo projects, items, users and memberships that are not there yet.

    Raises DemoConflict when a demo slug is taken by a project of another kind, and
    ImportRejected (nothing stored) when a demo item file does not validate.
    """
    fixtures_dir = Path(fixtures_dir)
    for spec in PROJECTS:
        if not (fixtures_dir / spec.fixture).is_file():
            raise DemoConflict(FIXTURE_MISSING.format(path=fixtures_dir / spec.fixture))

    with transaction.atomic():
        accounts = {username: (*_demo_user(username=username, password=password), role) for username, role in USERS}
        researcher = accounts["researcher"][0]
        # The demo researcher may start studies of their own (the New project page).
        researcher.user_permissions.add(
            Permission.objects.get(content_type__app_label="annotation", codename="add_project")
        )
        projects = []
        for spec in PROJECTS:
            project, created = _demo_project(spec=spec, created_by=researcher)
            for user, _, role in accounts.values():
                membership_add(project=project, user=user, role=role)
            imported = 0
            # Items are imported once: a project that has any keeps them as they are.
            if not Item.objects.filter(project=project).exists():
                imported = import_items(project=project, path=fixtures_dir / spec.fixture).imported
            items = Item.objects.filter(project=project)
            projects.append(
                DemoProject(
                    slug=project.slug,
                    kind=project.kind,
                    title=project.title,
                    items=items.count(),
                    qualification_items=items.filter(gold_value__isnull=False).count(),
                    imported=imported,
                    created=created,
                )
            )
    logins = tuple(
        DemoLogin(username=username, password=password, role=role, created=created)
        for username, (_, created, role) in accounts.items()
    )
    return DemoSummary(projects=tuple(projects), logins=logins)
