"""A judge of a project's own design: its messages are the design's prompt with each shown field's text
in its placeholder (hidden fields never sent), its structured-output schema is the value schema the
design gives, and its answers are checked by that design's rules (an out-of-scale answer fails, with
the reason, and is never a score)."""

from __future__ import annotations

import copy
import json

import pytest

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.synthetic import write_jsonl
from judges.models import Suggestion
from tests.annotation.test_designs import LESIONS
from tests.judges.unit.test_run_judge_command import run_judge
from tests.support.fake_server import Reply

PROMPTED = {
    **LESIONS,
    "judge_prompt": {"system": "You grade radiology reports.", "user": "Report:\n$report\n\nGive:\n$questions"},
}


@pytest.fixture
def lesions(make_project, tmp_path):
    project = make_project("rating", slug="lesions", design=PROMPTED)
    items = [
        {"external_id": f"r{n}", "fields": {"report": f"Report #{n}#."}, "meta": {"model": "secret-m"}}
        for n in range(3)
    ]
    import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", items))
    return project


@pytest.mark.django_db(transaction=True)
def test_a_designed_judge_sends_the_design_s_prompt_and_schema(lesions, llm_server):
    llm_server.script = (
        lambda r: Reply.json({"ratings": {"grade": 9}})
        if "#0#" in r.text
        else Reply.json({"ratings": {"grade": 4, "fit": 1}})
    )
    result, _ = run_judge(lesions.slug, "--backend", "openai", "--model", "m", "--wait")
    assert result["prompt"] == "rating_design.v1" and (result["ok"], result["failed"]) == (2, 1)
    kind = lesions.task_kind
    for request in llm_server.requests:
        assert request.schema == kind.value_schema  # from the project's design, not the kind's example
        assert request.messages[0]["content"] == "You grade radiology reports."
        assert "Report #" in request.text and "ratings.grade (Grade): a whole number from 1 to 6" in request.text
        assert "secret-m" not in json.dumps(request.body)  # the hidden part of the item is never sent
    failed = Suggestion.objects.get(status="failed")
    assert "must be at most 6" in failed.failure_reason and failed.value is None


class JudgePromptCheckTests:
    def test_a_placeholder_that_names_no_shown_field_is_refused_at_its_path(self):
        design = copy.deepcopy(PROMPTED)
        design["judge_prompt"]["user"] = "Read $summary and $report"
        assert [f"{e.field}: {e.message}" for e in get_kind("rating").check_design(design)] == [
            "judge_prompt.user: unknown placeholder $summary (use a shown field's name, $fields for all of them, "
            "or $questions)"
        ]

    @pytest.mark.django_db
    def test_the_prompt_may_change_after_answers_but_the_form_may_not(self, make_project, make_user, tmp_path):
        from annotation.services import annotation_submit, project_update

        project = make_project("rating", design=PROMPTED)
        import_items(
            project=project, path=write_jsonl(tmp_path / "i.jsonl", [{"external_id": "a", "fields": {"report": "R"}}])
        )
        annotation_submit(item=project.items.get(), user=make_user("ann"), value={"ratings": {"grade": 2}})
        changed = {**PROMPTED, "judge_prompt": {"user": "$fields\n$questions"}}
        assert project_update(project=project, design=changed).design == changed
