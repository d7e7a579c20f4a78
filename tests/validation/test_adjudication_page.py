"""The adjudication page shows every rater's answer as the kind reads it (no raw JSON), side by side,
marks where they differ, and "take this answer" fills the decision form with one rater's value."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from annotation.value_grid import value_grid
from judges.models import JudgeRun, Suggestion
from judges.services import judge_get_or_create
from tests.validation.conftest import add_items, annotate, copa_value
from validation.adjudication_views import DECIDED_LAST, DECIDED_NEXT, LLM_COLUMN, TAKE_LLM
from validation.goldset import project_rules

pytestmark = pytest.mark.django_db
User = get_user_model()
COPA = get_kind("copa_likert")
MCQ = get_kind("intent_mcq")


@pytest.fixture
def expert_client(client, make_user):
    def sign_in(project):
        expert = make_user("expert")
        membership_add(project=project, user=expert, role=Role.EXPERT)
        client.force_login(expert)
        return client

    return sign_in


class ValueGridTests:
    def test_copa_grid_is_factor_by_rater_with_differing_factors_marked(self):
        a, b = copa_value(1), {"scores": {**copa_value(1)["scores"], "CT": 2}, "comment": "fine"}
        grid = value_grid(kind=COPA, payload=COPA.example_payload(), columns=[("ann1", a), ("ann2", b)])
        assert grid.columns == ("ann1", "ann2")
        rows = {row.label: row for row in grid.rows}
        assert rows["Cognitive Trust"].cells == ("1 Partial", "2 Full") and rows["Cognitive Trust"].differs
        assert not rows["Situational Anchoring"].differs and grid.n_differing == 1
        assert rows["Comment"].free_text and not rows["Comment"].differs

    def test_mcq_options_are_numbered_from_one_as_the_form_numbers_them(self):
        payload = MCQ.example_payload()
        grid = value_grid(kind=MCQ, payload=payload, columns=[("ann1", {"chosen": [0]}), ("ann2", {"chosen": [1]})])
        labels = [row.label for row in grid.rows]
        assert labels[0] == f"1. {payload['options'][0]}" and labels[1] == f"2. {payload['options'][1]}"
        assert grid.rows[0].cells == ("chosen", "—") and grid.rows[0].differs and not grid.rows[2].differs


class AdjudicationPageTests:
    def test_rater_values_render_readably_not_as_json(self, make_project, expert_client):
        project = make_project("copa_likert", slug="copa-adj", overlap=2)
        item = add_items(project, ["c1"])["c1"]
        annotate(project, item, "ann1", copa_value(0))
        annotate(project, item, "ann2", copa_value(2))
        client = expert_client(project)
        page = client.get(reverse("adjudication_item", args=[project.slug, item.pk])).content.decode()
        assert '"scores"' not in page and "{&quot;" not in page
        assert "0 Mismatch" in page and "2 Full" in page and page.count('class="differs"') == 6

    def test_mcq_page_shows_one_based_options(self, make_project, expert_client):
        project = make_project("intent_mcq", slug="mcq-adj", overlap=2)
        item = add_items(project, ["m1"])["m1"]
        annotate(project, item, "ann1", {"chosen": [0]})
        annotate(project, item, "ann2", {"chosen": [3]})
        page = expert_client(project).get(reverse("adjudication_item", args=[project.slug, item.pk])).content.decode()
        option = MCQ.example_payload()["options"][3]
        assert f"4. {option}" in page and "{&quot;chosen" not in page

    def test_take_this_answer_prefills_the_decision_form(self, make_project, expert_client):
        project = make_project("intent_mcq", slug="mcq-take", overlap=2)
        item = add_items(project, ["m1"])["m1"]
        annotate(project, item, "ann1", {"chosen": [0]})
        annotate(project, item, "ann2", {"chosen": [2]})
        client = expert_client(project)
        url = reverse("adjudication_item", args=[project.slug, item.pk])
        plain = client.get(url).content.decode()
        assert plain.count("checked") == 0 and "?take=ann2" in plain
        taken = client.get(url, {"take": "ann2"})
        assert [o["checked"] for o in taken.context["form"]["options"]] == [False, False, True, False]
        assert "Filled with <strong>ann2</strong>" in taken.content.decode()

    def test_take_of_an_unknown_rater_prefills_nothing(self, make_project, expert_client):
        project = make_project("intent_mcq", slug="mcq-unknown", overlap=2)
        item = add_items(project, ["m1"])["m1"]
        annotate(project, item, "ann1", {"chosen": [0]})
        response = expert_client(project).get(
            reverse("adjudication_item", args=[project.slug, item.pk]), {"take": "nobody"}
        )
        assert response.status_code == 200 and response.context["taken"] is None
        assert not any(o["checked"] for o in response.context["form"]["options"])


def copa_form(score: int) -> dict[str, str]:
    return {code: str(score) for code in copa_value(score)["scores"]}


class AfterDecisionTests:
    def test_recording_a_decision_opens_the_next_disputed_item(self, make_project, expert_client):
        project = make_project("copa_likert", slug="copa-next", overlap=2)
        items = add_items(project, ["d1", "agreed", "d2", "d3"])
        for name in ("d1", "d2", "d3"):
            annotate(project, items[name], "ann1", copa_value(0))
            annotate(project, items[name], "ann2", copa_value(2))
        annotate(project, items["agreed"], "ann1", copa_value(1))
        annotate(project, items["agreed"], "ann2", copa_value(1))
        client = expert_client(project)
        response = client.post(reverse("adjudication_item", args=[project.slug, items["d2"].pk]), copa_form(1))
        # After d2 comes d3 (the agreed item never waits for an expert) ...
        assert response.status_code == 302
        assert response["Location"] == reverse("adjudication_item", args=[project.slug, items["d3"].pk])
        page = client.get(response["Location"]).content.decode()
        assert DECIDED_NEXT.format(done="d2", next="d3") in page
        # ... then the queue wraps round to d1, and after the last one it is back to the list.
        response = client.post(reverse("adjudication_item", args=[project.slug, items["d3"].pk]), copa_form(1))
        assert response["Location"] == reverse("adjudication_item", args=[project.slug, items["d1"].pk])
        response = client.post(reverse("adjudication_item", args=[project.slug, items["d1"].pk]), copa_form(1))
        assert response["Location"] == reverse("adjudication_list", args=[project.slug])
        assert DECIDED_LAST.format(done="d1") in client.get(response["Location"]).content.decode()


class JudgeColumnTests:
    @pytest.fixture
    def judged(self, make_project):
        """Two raters who differ, and an LLM run on the item; the project's rules leave the judge out of
        the queue (no llm_majority), so only the page's column shows it."""
        project = make_project("copa_likert", slug="copa-judged", overlap=2)
        item = add_items(project, ["j1"])["j1"]
        annotate(project, item, "ann1", copa_value(0))
        annotate(project, item, "ann2", copa_value(2))
        judge, _ = judge_get_or_create(project=project, backend="openai", model="test-llm-7b", name="evaluator")
        run = JudgeRun.objects.create(judge=judge, project=project, status=JudgeRun.Status.COMPLETED)
        Suggestion.objects.create(
            judge=judge, run=run, item=item, prompt_sha256="a" * 64, status="ok",
            value={"scores": {**copa_value(1)["scores"], "AMR": 0}},
        )  # fmt: skip
        return project, item

    def test_the_judges_answer_stands_beside_the_raters_when_a_run_exists(self, judged, expert_client):
        project, item = judged
        assert not project_rules(project).llm_majority
        response = expert_client(project).get(reverse("adjudication_item", args=[project.slug, item.pk]))
        grid = response.context["grid"]
        assert grid.columns == ("ann1", "ann2", LLM_COLUMN)
        rows = {row.label: row.cells for row in grid.rows}
        assert rows["Affective and Motivational Resonance"] == ("0 Mismatch", "2 Full", "0 Mismatch")
        page = response.content.decode()
        assert "and the LLM evaluator's" in page and "?take=llm" in page

    def test_taking_the_judges_answer_fills_the_decision_form(self, judged, expert_client):
        project, item = judged
        response = expert_client(project).get(
            reverse("adjudication_item", args=[project.slug, item.pk]), {"take": TAKE_LLM}
        )
        assert response.context["taken"] == LLM_COLUMN
        assert {row["code"]: row["score"] for row in response.context["form"]["rows"]}["AMR"] == 0

    def test_raters_never_get_the_page_nor_the_judges_answer(self, judged, client):
        project, item = judged
        rater = User.objects.create_user("ann1", password="pw-for-tests-1")
        membership_add(project=project, user=rater, role=Role.ANNOTATOR)
        client.force_login(rater)
        response = client.get(reverse("adjudication_item", args=[project.slug, item.pk]))
        assert response.status_code == 403 and "LLM evaluator" not in response.content.decode()
