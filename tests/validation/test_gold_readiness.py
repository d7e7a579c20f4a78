"""A majority is gold only once an item has the project's k raters: one person's answer is not a
majority. Until then the item waits for raters everywhere gold is shown (project page, adjudication
list, exports); an expert's decision is gold whatever the number of raters."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate
from validation.goldset import (
    MAJORITY,
    NO_MAJORITY,
    WAITING_FOR_RATERS,
    adjudication_lists,
    export_gold,
    gold_records,
    gold_summary,
    item_gold,
)
from validation.services import adjudication_record

pytestmark = pytest.mark.django_db
MCQ = get_kind("intent_mcq")
RATIONALE = get_kind("rationale_inspection")
PASS, FAIL = {"verdict": 1}, {"verdict": 0, "failure_categories": ["theoretical_error"]}


@pytest.fixture
def rationale_project(make_project, make_user):
    """Ten items, two raters each wanted: seven items have both, three only the first."""
    project = make_project("rationale_inspection", slug="two-per-item", overlap=2)
    items = add_items(project, [f"r{i:02d}" for i in range(10)])
    for i, item in enumerate(items.values()):
        annotate(project, item, "ann1", PASS)
        if i < 7:
            annotate(project, item, "ann2", PASS)
    expert = make_user("expert")
    membership_add(project=project, user=expert, role=Role.EXPERT)
    return project, list(items.values()), expert


class ItemGoldTests:
    def test_one_rater_of_two_is_not_a_majority(self):
        gold = item_gold(kind=RATIONALE, values={"a": PASS}, required_raters=2)
        assert not gold.ready and gold.waiting_for_raters
        assert gold.missing_reason == WAITING_FOR_RATERS.format(n=1, k=2) == "waiting for raters (1 of 2)"

    def test_k_raters_agreeing_are_a_majority(self):
        gold = item_gold(kind=RATIONALE, values={"a": PASS, "b": PASS}, required_raters=2)
        assert (gold.value, gold.source, gold.agreement) == (PASS, MAJORITY, 1.0)

    def test_k_raters_split_still_go_to_an_expert(self):
        gold = item_gold(kind=RATIONALE, values={"a": PASS, "b": FAIL}, required_raters=2)
        assert gold.missing_reason == NO_MAJORITY and not gold.waiting_for_raters


class ProjectGoldReadinessTests:
    def test_two_per_item_project_counts_only_items_with_two_raters_as_gold_ready(self, rationale_project):
        project, _, _ = rationale_project
        summary = gold_summary(project=project)
        assert (summary.items, summary.ready, summary.majority) == (10, 7, 7)
        assert (summary.waiting_for_raters, summary.waiting_for_expert, summary.required_raters) == (3, 0, 2)

    def test_items_short_of_raters_wait_for_raters_not_for_an_expert(self, rationale_project):
        project, items, _ = rationale_project
        queue, short = adjudication_lists(project=project)
        assert queue == []
        assert [s.item.external_id for s in short] == [i.external_id for i in items[7:]]
        assert {s.gold.missing_reason for s in short} == {"waiting for raters (1 of 2)"}

    def test_export_leaves_out_items_short_of_raters(self, rationale_project, tmp_path):
        project, items, _ = rationale_project
        records = list(gold_records(project=project, shape="benchmark"))
        assert sorted(r["id"] for r in records) == sorted(i.external_id for i in items[:7])
        assert all(r["provenance"]["source"] == "majority" and len(r["provenance"]["raters"]) == 2 for r in records)
        path = tmp_path / "gold.jsonl"
        assert export_gold(project=project, fmt="jsonl", path=path) == 7

    def test_expert_decision_on_a_one_rater_item_is_gold(self, rationale_project):
        project, items, expert = rationale_project
        adjudication_record(project=project, item=items[9], expert=expert, value=FAIL)
        records = {r["id"]: r for r in gold_records(project=project, shape="benchmark")}
        assert records[items[9].external_id]["provenance"]["source"] == "adjudicated"
        assert gold_summary(project=project).waiting_for_raters == 2

    def test_researcher_rule_min_raters_overrides_the_overlap(self, rationale_project):
        project, _, _ = rationale_project
        project.adjudication_rules = {"min_raters": 1}
        project.save(update_fields=["adjudication_rules"])
        summary = gold_summary(project=project)
        assert (summary.ready, summary.waiting_for_raters) == (10, 0)

    def test_min_raters_rule_must_be_a_whole_number(self, make_project):
        with pytest.raises(ValidationError, match="min_raters must be a whole number"):
            make_project("rationale_inspection", slug="bad-rule", adjudication_rules={"min_raters": 0})

    def test_one_rater_mcq_item_is_not_exported_as_majority(self, make_project):
        project = make_project("intent_mcq", slug="mcq-k3", overlap=3)
        items = add_items(project, ["q1", "q2"])
        for rater in ("a", "b", "c"):
            annotate(project, items["q1"], rater, {"chosen": [0]})
        annotate(project, items["q2"], "a", {"chosen": [1]})
        records = list(gold_records(project=project, shape="benchmark"))
        assert [r["id"] for r in records] == ["q1"] and records[0]["provenance"]["agreement"] == 1.0


class PagesShowWaitingForRatersTests:
    def test_project_page_says_how_many_items_wait_for_raters(self, rationale_project, client):
        project, _, expert = rationale_project
        client.force_login(expert)
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert "Gold-ready: 7 of 10 items (70%)" in page and "3 waiting for raters" in page

    def test_adjudication_list_shows_waiting_for_raters_not_no_majority(self, rationale_project, client):
        project, items, expert = rationale_project
        client.force_login(expert)
        page = client.get(reverse("adjudication_list", args=[project.slug])).content.decode()
        assert "waiting for raters (1 of 2)" in page and items[9].external_id in page
        assert "a tie or a split" not in page and "Nothing waits for an expert." in page

    def test_gold_download_writes_only_ready_items(self, rationale_project, client):
        project, _, expert = rationale_project
        client.force_login(expert)
        response = client.get(reverse("gold_download", args=[project.slug]) + "?format=jsonl&shape=benchmark")
        lines = b"".join(response.streaming_content).decode().splitlines()
        assert len(lines) == 7 and {json.loads(line)["provenance"]["source"] for line in lines} == {"majority"}
