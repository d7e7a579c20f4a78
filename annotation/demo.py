"""Demo data: one project per task kind, items from ``fixtures/demo/``, and a user per role.

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
from annotation.kinds.copa_likert import FACTORS, SCALE
from annotation.kinds.rationale_inspection import FAILURE_CATEGORIES
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


# -- guidelines (Markdown), from the rubrics of the three papers ----------------------------------

IPQA_GUIDELINES = """\
# IPQA: core-intent verification

Read the user's question, the narrative around it and the answer the user **selected**. The
user's earlier questions are shown for context.

For each candidate intent, decide two things:

1. **Expressed**: does the user state this intent in the question or the narrative? Judge only
   what is written, not what the user might also want.
2. **Core**: does the selected answer address this intent? An intent can be core only if it is
   expressed.

A *core intent* is an intent the user expressed that the selected answer addresses. Users
satisfice: the answer they chose shows which of their intents they put first.

If the user expressed an intent that no candidate covers, write it under *missing intent*.
"""


def _copa_guidelines() -> str:
    factors = "\n".join(f"- **{name} ({code})**: {definition}" for code, (name, definition) in FACTORS.items())
    scale = "\n".join(f"- **{score}** {text}" for score, text in SCALE.items())
    return f"""\
# CoPA: six-factor rating

Read the user's cognitive profile, their question and the candidate response. Score how well the
response fits **this user** on each factor.

{factors}

Scale:

{scale}

If uncertain between two scores, choose the more conservative one. Judge each sample only on the
material given; do not look the thread up.
"""


def _rationale_guidelines() -> str:
    categories = "\n".join(f"- `{code}`: {text}" for code, text in FAILURE_CATEGORIES.items())
    return f"""\
# Rationale inspection (experts)

The context shows a question, the answer the user accepted, the other answers and the user's
recent history. The rationale explains, with a theory, why the user accepted that answer.

- **Pass (1)** when the rationale is logically coherent and theoretically sound: a real, relevant
  theory supports the inferred motive, and nothing in it is factually wrong.
- **Fail (0)** otherwise, naming every reason that applies:

{categories}

Check the history before passing a claim about the user: a rationale that contradicts it fails.
"""


LABEL_GUIDELINES = """\
# IntentGrasp: label contextualization

Rewrite the terse dataset label as an **intent statement**: a clause saying what the speaker or
writer intends, readable without knowing the dataset.

- It starts with **"To "** and ends with **a period**.
- It covers what the label covers, and no more: use the examples and the other labels of the
  dataset to find the boundary.
- Example: ACL-ARC `Uses` → "To use data, methods, etc., from the cited paper."

If the label cannot be stated as an intent (it names a topic, or is a catch-all), flag it and
say why. When reviewing someone else's statement, accept it or ask for a revision with a note.
"""

MCQ_GUIDELINES = """\
# IntentGrasp: multiple choice

Read the context (a query, a dialogue or a passage) and choose **every** option that states the
intent behind it. Usually one option is right, but several may be.

Answer from the context alone. Your choices are scored by F1 against the dataset's labels.
"""


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


# One of each exposure mode, so the anchoring comparison has something to show.
PROJECTS: tuple[DemoProjectSpec, ...] = (
    DemoProjectSpec(
        slug="demo-ipqa",
        kind="ipqa_core_intent",
        title="Demo: IPQA core intents (Stack Exchange)",
        fixture="ipqa_core_intent.jsonl",
        guidelines=IPQA_GUIDELINES,
        overlap=2,
        suggestion_exposure=SuggestionExposure.SHOWN,
        seed=7,
    ),
    DemoProjectSpec(
        slug="demo-copa",
        kind="copa_likert",
        title="Demo: CoPA six-factor ratings (Stack Exchange)",
        fixture="copa_likert.jsonl",
        guidelines=_copa_guidelines(),
        overlap=3,
        suggestion_exposure=SuggestionExposure.RANDOMISED,
        suggestion_probability=0.5,
        seed=42,
    ),
    DemoProjectSpec(
        slug="demo-rationale",
        kind="rationale_inspection",
        title="Demo: rationale inspection (Stack Exchange)",
        fixture="rationale_inspection.jsonl",
        guidelines=_rationale_guidelines(),
        overlap=2,
        seed=365,
    ),
    DemoProjectSpec(
        slug="demo-labels",
        kind="label_contextualization",
        title="Demo: IntentGrasp label contextualization",
        fixture="label_contextualization.jsonl",
        guidelines=LABEL_GUIDELINES,
        overlap=2,
        seed=7,
    ),
    DemoProjectSpec(
        slug="demo-mcq",
        kind="intent_mcq",
        title="Demo: IntentGrasp multiple choice (SNIPS, SciCite)",
        fixture="intent_mcq.jsonl",
        guidelines=MCQ_GUIDELINES,
        overlap=3,
        seed=42,
    ),
)

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
