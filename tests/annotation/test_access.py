"""require_project_role: the one gate of every page and API endpoint (403 with the reason on pages,
404 for outsiders in the API, superusers pass)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.test import RequestFactory

from annotation.access import NOT_A_MEMBER, require_project_role
from annotation.models import Role
from annotation.services import membership_add

pytestmark = pytest.mark.django_db
DENIED = "Only the project's researchers can do this."


@pytest.fixture
def team(make_project, make_user):
    project = make_project("copa_likert", slug="gate")
    people = {name: make_user(name) for name in ("res", "ann", "outsider")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    people["staff"] = get_user_model().objects.create_superuser("staff", "staff@example.org", "pw-for-tests-1")
    return project, people


def request_of(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


class RequireProjectRoleTests:
    def test_a_member_with_the_role_gets_the_project_and_their_roles(self, team):
        project, people = team
        assert require_project_role(request_of(people["res"]), "gate", {Role.RESEARCHER}) == (project, {"researcher"})
        assert require_project_role(request_of(people["ann"]), "gate")[0] == project

    def test_a_member_without_the_role_is_told_why(self, team):
        _, people = team
        for api in (False, True):
            with pytest.raises(PermissionDenied, match=DENIED):
                require_project_role(request_of(people["ann"]), "gate", {Role.RESEARCHER}, denied=DENIED, api=api)

    def test_an_outsider_is_refused_on_a_page_and_hidden_from_the_api(self, team):
        _, people = team
        with pytest.raises(PermissionDenied, match=NOT_A_MEMBER):
            require_project_role(request_of(people["outsider"]), "gate")
        with pytest.raises(Http404):
            require_project_role(request_of(people["outsider"]), "gate", api=True)
        with pytest.raises(Http404):
            require_project_role(request_of(people["res"]), "no-such-project")

    def test_a_superuser_passes_without_a_role(self, team):
        project, people = team
        assert require_project_role(request_of(people["staff"]), "gate", {Role.RESEARCHER}, api=True)[0] == project
