"""The demo loader: five projects from the committed fixtures, users per role, safe to rerun."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.demo import DEMO_PASSWORD, FIXTURES_DIR, PROJECTS, USERS, DemoConflict, demo_load
from annotation.kinds import all_kinds, get_kind
from annotation.models import Item, Membership, Project, Role, SuggestionExposure
from annotation.services import project_create

STACKEXCHANGE_KINDS = ("ipqa_core_intent", "copa_likert", "rationale_inspection")


def fixture_records(kind: str) -> list[dict]:
    with (FIXTURES_DIR / f"{kind}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def counts() -> tuple[int, ...]:
    return (
        Project.objects.count(),
        Item.objects.count(),
        get_user_model().objects.count(),
        Membership.objects.count(),
    )


class DemoFixtureTests:
    """The committed item files are valid imports on their own (no database needed)."""

    @pytest.mark.parametrize("spec", PROJECTS, ids=lambda s: s.kind)
    def test_every_record_validates_against_its_kind(self, spec):
        kind = get_kind(spec.kind)
        records = fixture_records(spec.kind)
        assert 10 <= len(records) <= 30
        ids = [r["external_id"] for r in records]
        assert len(ids) == len(set(ids))
        for record in records:
            payload = {k: v for k, v in record.items() if k not in ("external_id", "gold")}
            assert kind.check_payload(payload) == [], record["external_id"]

    @pytest.mark.parametrize("spec", PROJECTS, ids=lambda s: s.kind)
    def test_qualification_answers_are_valid_values(self, spec):
        kind = get_kind(spec.kind)
        golds = [r for r in fixture_records(spec.kind) if "gold" in r]
        assert 1 <= len(golds) <= 2
        for record in golds:
            payload = {k: v for k, v in record.items() if k not in ("external_id", "gold")}
            assert kind.check_value(record["gold"], payload=payload) == [], record["external_id"]

    @pytest.mark.parametrize("kind", STACKEXCHANGE_KINDS)
    def test_stackexchange_items_keep_attribution(self, kind):
        for record in fixture_records(kind):
            meta = record["meta"]
            for field in ("site", "url", "question_id", "owner", "license"):
                assert meta.get(field), (record["external_id"], field)
            assert meta["license"].startswith("CC BY-SA")
            # Every post whose text the item shows is credited, with its own licence.
            assert meta["posts"] and all(p["url"] and p["license"].startswith("CC BY-SA") for p in meta["posts"])

    @pytest.mark.parametrize("kind", ("label_contextualization", "intent_mcq"))
    def test_intent_label_items_keep_source_and_licence(self, kind):
        for record in fixture_records(kind):
            assert record["meta"]["source"] and record["meta"]["license"], record["external_id"]

    def test_hand_written_parts_are_marked(self):
        for kind in STACKEXCHANGE_KINDS:
            assert all(r["meta"]["demo_content"] == "hand-written for the demo" for r in fixture_records(kind))
        assert all("by hand" in r["meta"]["demo_content"] for r in fixture_records("intent_mcq"))

    def test_no_text_has_a_bullet_on_a_line_of_its_own(self):
        """Lists the HTML stripping flattened read as lists ("- It is…"), not as stray "-" lines."""

        def texts(value):
            if isinstance(value, str):
                yield value
            elif isinstance(value, dict | list):
                for inner in value.values() if isinstance(value, dict) else value:
                    yield from texts(inner)

        for path in FIXTURES_DIR.glob("*.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                stray = [t for t in texts(json.loads(line)) if any(row.strip() in {"-", "*"} for row in t.splitlines())]
                assert not stray, (path.name, stray[0][:200])

    def test_fixtures_stay_small(self):
        assert sum(path.stat().st_size for path in FIXTURES_DIR.glob("*.jsonl")) < 1_000_000


@pytest.mark.django_db
class DemoLoadTests:
    def test_creates_one_project_per_kind_with_items(self):
        summary = demo_load()
        projects = Project.objects.all()
        # A demo project is optional (TaskKind.demo_project); every kind that declares one gets it.
        assert sorted(p.kind for p in projects) == sorted(kind.name for kind in all_kinds() if kind.demo_project)
        for project in projects:
            assert project.items.count() == len(fixture_records(project.kind))
            assert project.items.filter(gold_value__isnull=False).exists()
            assert project.guidelines.strip()
        assert {p.slug for p in summary.projects} == {spec.slug for spec in PROJECTS}

    def test_one_project_shows_suggestions_and_one_randomises_them(self):
        demo_load()
        exposures = sorted(Project.objects.values_list("suggestion_exposure", flat=True))
        assert exposures.count(SuggestionExposure.SHOWN) == 1
        assert exposures.count(SuggestionExposure.RANDOMISED) == 1
        assert exposures.count(SuggestionExposure.HIDDEN) == len(exposures) - 2  # every other kind

    def test_users_hold_their_role_on_every_project(self):
        demo_load()
        User = get_user_model()
        for username, role in USERS:
            user = User.objects.get(username=username)
            assert user.check_password(DEMO_PASSWORD)
            assert set(Membership.objects.filter(user=user, role=role).values_list("project__slug", flat=True)) == {
                spec.slug for spec in PROJECTS
            }
        assert Membership.objects.filter(role=Role.ANNOTATOR).count() == 3 * len(PROJECTS)

    def test_qualification_items_hold_valid_values(self):
        demo_load()
        for item in Item.objects.filter(gold_value__isnull=False).select_related("project"):
            assert item.project.task_kind.check_value(item.gold_value, payload=item.payload) == []

    def test_running_twice_changes_nothing(self):
        demo_load()
        before = counts()
        summary = demo_load()
        assert counts() == before
        assert not any(p.created or p.imported for p in summary.projects)
        assert not any(login.created for login in summary.logins)

    def test_rerun_keeps_a_changed_password(self):
        demo_load()
        user = get_user_model().objects.get(username="annotator1")
        user.set_password("changed-by-its-owner")
        user.save()
        demo_load()
        user.refresh_from_db()
        assert user.check_password("changed-by-its-owner")

    def test_fills_an_existing_empty_demo_project(self):
        project_create(slug="demo-mcq", kind="intent_mcq")
        summary = demo_load()
        mcq = next(p for p in summary.projects if p.slug == "demo-mcq")
        assert not mcq.created and mcq.imported == len(fixture_records("intent_mcq"))

    def test_slug_taken_by_another_kind_is_a_conflict(self):
        project_create(slug="demo-mcq", kind="copa_likert")
        with pytest.raises(DemoConflict):
            demo_load()
        assert Project.objects.count() == 1  # nothing half-created

    def test_command_prints_projects_and_logins(self):
        out = StringIO()
        call_command("demo", stdout=out)
        text = out.getvalue()
        for spec in PROJECTS:
            assert spec.slug in text
        for username, _ in USERS:
            assert username in text
        assert DEMO_PASSWORD in text
