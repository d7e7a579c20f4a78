"""What higher layers register with annotation (annotation.hooks, annotation.panels): annotation works alone,
and with judges and validation loaded their rules, suggestions and panels take effect."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation import hooks
from annotation.models import Membership, Project, Role
from judges.selectors import suggestion_for_display
from validation.adjudication import AdjudicationRules


def _project(**fields) -> Project:
    return Project(slug="p", title="P", kind="copa_likert", **fields)


class ProjectRulesHookTests:
    def test_validation_registers_the_check_of_adjudication_rules(self):
        assert hooks._rules_validator == AdjudicationRules.from_json
        with pytest.raises(ValidationError, match="unknown adjudication rule"):
            _project(adjudication_rules={"nonsense": 1}).clean()

    def test_without_a_registered_check_any_json_object_is_accepted(self, monkeypatch):
        monkeypatch.setattr(hooks, "_rules_validator", None)
        _project(adjudication_rules={"nonsense": 1}).clean()
        with pytest.raises(ValidationError) as refused:
            _project(adjudication_rules=[1, 2]).clean()
        assert refused.value.message_dict == {"adjudication_rules": [hooks.RULES_NOT_AN_OBJECT]}


class SuggestionHookTests:
    def test_judges_registers_the_suggestion_the_workspace_shows(self):
        assert hooks._suggestion_provider == suggestion_for_display

    def test_without_a_registered_provider_no_item_has_a_suggestion(self, monkeypatch):
        monkeypatch.setattr(hooks, "_suggestion_provider", None)
        assert hooks.suggestion_for_item(item=object()) is None


class ProjectPanelTests:
    def test_gold_readiness_is_shown_to_researchers_but_not_to_annotators(self, make_project, make_user, client):
        project = make_project()
        researcher, annotator = make_user("res"), make_user("ann")
        Membership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
        Membership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
        url = reverse("project_detail", args=[project.slug])
        client.force_login(researcher)
        assert "Gold-ready: 0 of 0 items" in client.get(url).content.decode()
        client.force_login(annotator)
        page = client.get(url).content.decode()
        assert "Gold-ready" not in page and "Items: browse" not in page
