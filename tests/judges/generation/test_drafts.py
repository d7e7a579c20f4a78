"""A generated item's drafted statement reaches annotators only as the kind's suggestion, under the
project's exposure setting, and draft acceptance counts it (issue: label contextualization drafts)."""

from __future__ import annotations

import pytest

from annotation.assignments import assignment_claim_next
from annotation.models import Item, Role, SuggestionExposure
from annotation.selectors import visible_suggestion
from annotation.services import annotation_submit, membership_add
from judges.models import JudgeRun, Suggestion
from tests.judges.generation.conftest import LABELS, run_now
from tests.support.fake_server import Reply
from validation.reports import ReportParameters, build_report

pytestmark = pytest.mark.django_db

STATEMENT = "To play music."


def generate(make_project, llm_server, **options):
    llm_server.script = lambda r: Reply.json({"action": "write", "statement": STATEMENT, "reason": ""})
    project = make_project("label_contextualization", **options)
    generation = run_now(project=project, step="label_statement", path=LABELS, backend="openai")
    return project, generation


class GeneratedDraftSuggestionTests:
    def test_each_new_item_gets_its_draft_as_a_suggestion_of_the_models_judge(self, make_project, llm_server):
        project, generation = generate(make_project, llm_server)
        run = JudgeRun.objects.get(project=project)
        assert run.provenance == {"generation_run": generation.pk} and run.status == "completed"
        assert (run.judge.backend, run.judge.model, run.judge.prompt_key) == (
            "openai",
            "test-model",
            "intentgrasp_label_statement.v1",
        )
        values = list(Suggestion.objects.filter(run=run).values_list("status", "value"))
        assert len(values) == 10 == Item.objects.filter(project=project).count()
        assert set(map(str, values)) == {str(("ok", {"action": "write", "statement": STATEMENT}))}

    @pytest.mark.parametrize(
        ("exposure", "shown"), [(SuggestionExposure.SHOWN, True), (SuggestionExposure.HIDDEN, False)]
    )
    def test_the_annotator_sees_the_draft_only_where_the_project_shows_suggestions(
        self, make_project, make_user, llm_server, exposure, shown
    ):
        project, _ = generate(make_project, llm_server, suggestion_exposure=exposure)
        annotator = make_user("ann")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        assignment = assignment_claim_next(project=project, user=annotator)
        suggestion = visible_suggestion(assignment=assignment)
        if shown:
            assert suggestion.value == {"action": "write", "statement": STATEMENT}
        else:
            assert suggestion is None

    def test_draft_acceptance_counts_the_generated_drafts(self, make_project, make_user, llm_server):
        project, _ = generate(make_project, llm_server, suggestion_exposure=SuggestionExposure.SHOWN)
        annotator = make_user("ann")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        kept, edited = Item.objects.filter(project=project).order_by("pk")[:2]
        annotation_submit(item=kept, user=annotator, value={"action": "write", "statement": STATEMENT})
        annotation_submit(item=edited, user=annotator, value={"action": "write", "statement": "To play some music."})
        report = build_report(project=project, parameters=ReportParameters())
        rows = report.table("draft_acceptance").to_json_dict()["rows"]
        assert rows, "the generated drafts must be counted"
        first = rows[0]
        assert "test-model" in first["label"] and first["cells"][0]["value"] == 2
        assert first["cells"][1]["value"] == pytest.approx(0.5)  # one of the two kept unchanged
