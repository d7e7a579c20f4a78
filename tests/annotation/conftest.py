"""Fixtures the annotation tests share."""

import pytest

from annotation.models import Role
from annotation.services import membership_add
from tests.annotation.team_support import User


@pytest.fixture
def study(make_project, make_user):
    project = make_project("copa_likert", slug="study", overlap=2)
    people = {name: make_user(name) for name in ("res", "exp", "ann", "outsider", "newcomer")}
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["exp"], role=Role.EXPERT)
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    people["newcomer"].email = "new@example.org"
    people["newcomer"].save()
    people["staff"] = User.objects.create_superuser("staff", "staff@example.org", "pw-for-tests-1")
    people["staffish"] = User.objects.create_user("staffish", password="pw-for-tests-1", is_staff=True)
    return project, people
