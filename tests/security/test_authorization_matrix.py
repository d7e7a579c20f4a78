"""The authorization matrix, generated from the URL configuration: every route × every kind of
caller (anonymous, annotator, expert, another project's researcher, a paused annotator, a removed
member, staff without a membership), GET and POST.

The policy it holds: nobody gets a 5xx; someone who is not a member of the project a route names
(anonymous, another project's researcher, a removed member, staff) reads and changes nothing of it
(never a 2xx, and a redirect only to the sign-in page); an annotator, paused or not, reaches only
the routes a rater needs (RATER_ROUTES); an expert nothing that only researchers may do
(RESEARCHER_ROUTES). A route added without a place in this policy fails ``test_every_route_is_placed``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

from annotation.member_services import member_pause, member_remove
from annotation.models import Annotation, Assignment, ImportJob, Item, Role
from annotation.services import membership_add
from judges.run_files import judge_run_import
from tests.api.conftest import client_for
from tests.judges.conftest import add_items
from validation.reports.tables import ReportParameters
from validation.services import report_snapshot_create

pytestmark = pytest.mark.django_db

PERSONAS = ("anonymous", "annotator", "expert", "other_researcher", "paused", "removed", "staff")
OUTSIDERS = ("anonymous", "other_researcher", "removed", "staff")
#: Routes about no project: sign-in, accounts, help, the API's own description, the admin site.
NOT_PROJECT_ROUTES = {
    "home", "login", "logout", "favicon", "help", "help_page", "my_pace", "profile", "token_create",
    "tokens_revoke_all", "token_revoke", "password_change", "password_change_done", "password_reset",
    "password_reset_done", "password_reset_open", "password_reset_confirm", "password_reset_complete",
    "invitation", "invitation_open", "invitation_accept", "api_token", "api_schema", "api_docs", "api_projects",
    "project_new", "project_new_preview", "project_new_design_preview",
}  # fmt: skip
#: What an annotator (paused or not) may reach in their project with a 2xx: the rest is 3xx/4xx for them.
RATER_ROUTES = {
    "project_detail", "workspace", "assignment_submit", "assignment_skip", "annotation_edit", "annotation_history",
    "annotation_undo", "assignment_unskip", "api_project", "api_annotations", "api_annotation",
    "api_assignment_next", "api_assignment_submit", "api_assignment_skip",
}  # fmt: skip
#: Routes only a project's researchers reach (an expert gets no 2xx there).
RESEARCHER_ROUTES = {
    "import_upload", "import_status", "project_settings", "project_settings_preview", "project_archive", "team",
    "team_add", "team_upload", "member_roles", "member_pause", "member_remove", "member_invite", "validation_sample",
    "judge_new", "judge_run_launch", "judge_run_import", "generate_items", "judge_run_cancel", "judge_run_resume",
    "generation_run_cancel", "generation_run_resume", "api_validation_sample", "api_members", "api_member",
    "api_run_import", "api_run_cancel", "api_run_resume", "api_generation_run_cancel", "api_generation_run_resume",
    "release", "release_download", "api_release", "api_release_settings", "api_sample_draw_discard",
    "validation_sample_discard",
}  # fmt: skip
SIGN_IN = "/accounts/login/"


def routes() -> list[tuple[str, str]]:
    """Every named route outside the admin site, as (name, pattern)."""

    def walk(patterns, prefix: str = ""):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, prefix + str(entry.pattern))
            elif isinstance(entry, URLPattern) and entry.name:
                yield entry.name, prefix + str(entry.pattern)

    found = walk(get_resolver().url_patterns)
    return sorted({(name, route) for name, route in found if not route.startswith("admin/")})


@dataclass
class World:
    values: dict[str, str]
    users: dict[str, object]

    def path(self, route: str) -> str:
        return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: self.values[m.group(1)], route)


@pytest.fixture
def world(make_project, make_user, tmp_path) -> World:
    project, other = make_project("copa_likert", slug="main"), make_project("copa_likert", slug="other")
    add_items(project, 4)
    users = {name: make_user(name) for name in ("researcher", *PERSONAS[1:])}
    for name, role in (("researcher", Role.RESEARCHER), ("annotator", Role.ANNOTATOR), ("expert", Role.EXPERT),
                       ("paused", Role.ANNOTATOR), ("removed", Role.ANNOTATOR)):  # fmt: skip
        membership_add(project=project, user=users[name], role=role)
    membership_add(project=other, user=users["other_researcher"], role=Role.RESEARCHER)
    get_user_model().objects.filter(pk=users["staff"].pk).update(is_staff=True)
    # The removed member answered an item before being removed: the answer stays, unreadable to them.
    client = client_for(users["removed"])
    claimed = client.post("/api/projects/main/assignments/next/").json()
    value = project.task_kind.example_value()
    assert client.post(f"/api/assignments/{claimed['id']}/submit/", {"value": value}, format="json").status_code < 300
    client_for(users["annotator"]).post("/api/projects/main/assignments/next/")
    member_remove(project=project, actor=users["researcher"], user=users["removed"])
    member_pause(project=project, actor=users["researcher"], user=users["paused"])
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"external_id": "item-00000", "value": value}) + "\n", encoding="utf-8")
    run = judge_run_import(project=project, path=path, model="m").run
    job = ImportJob.objects.create(project=project, target="items", filename="i.jsonl", status="completed")
    snapshot = report_snapshot_create(project=project, parameters=ReportParameters(bootstrap=0))
    values = {
        "slug": "main", "assignment_id": str(Assignment.objects.filter(annotator=users["removed"]).first().pk),
        "annotation_id": str(Annotation.objects.get(rater="removed").pk), "run_id": str(run.pk),
        "job_id": str(job.pk), "item_id": str(Item.objects.filter(project=project).first().pk),
        "user_id": str(users["annotator"].pk), "snapshot_id": str(snapshot.pk), "name": "copa", "fmt": "csv",
        "username": "annotator", "number": "1", "token": "not-a-token", "uidb64": "MQ", "digest": "0" * 64,
    }  # fmt: skip
    return World(values=values, users=users)


def route_name(path: str) -> str:
    try:
        return resolve(path).url_name or path
    except Resolver404:
        return path  # a static file


def answers(world: World) -> dict[tuple[str, str, str], tuple[int, str, str]]:
    """(route, method, persona) → (status, redirect target, route reached): a redirect other than to the
    sign-in page is followed (a POST-only route sends a GET to its page), and the status is that of the
    page reached."""
    table = {}
    for persona in PERSONAS:
        client = Client()
        if persona != "anonymous":
            client.force_login(world.users[persona])
        for name, route in routes():
            path = world.path(route)
            for method in ("get", "post"):
                data = {"file": SimpleUploadedFile("x.jsonl", b"")} if method == "post" else None
                response = getattr(client, method)(path, data)
                hops = 0
                while 300 <= response.status_code < 400 and not response["Location"].startswith(SIGN_IN) and hops < 3:
                    response, hops = client.get(response["Location"]), hops + 1
                reached = route_name(response.request["PATH_INFO"]) if hops else name
                table[(name, method, persona)] = (response.status_code, response.get("Location", ""), reached)
    return table


def test_every_route_is_placed():
    names = {name for name, _ in routes()}
    project_routes = names - NOT_PROJECT_ROUTES
    assert project_routes >= RATER_ROUTES and project_routes >= RESEARCHER_ROUTES
    unplaced = {name for name, route in routes() if name not in NOT_PROJECT_ROUTES and "<" not in route}
    assert unplaced == set(), "every project route names its project or an object of it"


def test_the_matrix(world):
    table = answers(world)
    failures = []
    for (name, method, persona), (status, location, reached) in sorted(table.items()):
        where = f"{method.upper()} {name} as {persona}: {status} {location} (reached {reached})"
        if status >= 500:
            failures.append(where)
        if name in NOT_PROJECT_ROUTES:
            continue
        if persona in OUTSIDERS and (status < 300 or (status < 400 and not location.startswith(SIGN_IN))):
            failures.append(where)
        if persona in ("annotator", "paused") and reached not in RATER_ROUTES and status < 300:
            failures.append(where)
        if persona == "expert" and reached in RESEARCHER_ROUTES and status < 300:
            failures.append(where)
    assert failures == [], "\n".join(failures)
