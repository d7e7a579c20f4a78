"""Gold built with a method, the "posterior below P" adjudication rule and the flip filter."""

import json

import pytest

from annotation.models import Item
from tests.validation.conftest import run_command
from validation.adjudication import AdjudicationRules
from validation.goldset import adjudication_lists, gold_records
from validation.item_panels import flipped

FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.usefixtures("keep_test_connection")]


def aggregation(capsys, project, method: str = "dawid_skene") -> dict:
    code, out, _ = run_command(capsys, "aggregate", project.slug, "--method", method)
    assert code == 0
    return json.loads(out)


def labels_by_item(result: dict) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for row in result["items"]:
        found.setdefault(row["external_id"], {})[row["dimension"]] = row["label"]
    return found


class GoldByMethodTests:
    def test_each_record_names_the_method_and_holds_a_value_with_its_labels(self, capsys, panel):
        project, _ = panel
        project.adjudication_rules = {"unanimous": False}
        project.save(update_fields=["adjudication_rules"])
        labels = labels_by_item(aggregation(capsys, project))
        records = list(gold_records(project=project, shape="benchmark", method="dawid_skene"))
        assert records and all(r["provenance"]["method"] == "dawid_skene" for r in records)
        by_model = [r for r in records if r["provenance"]["source"] == "dawid_skene"]
        assert by_model
        for record in by_model:
            assert record["provenance"]["probability"] is not None
            assert {factor: record[factor] for factor in FACTORS} == labels[record["id"]]
        # Today's rule stays the default, and says so.
        assert {r["provenance"]["method"] for r in gold_records(project=project, shape="benchmark")} == {"majority"}

    def test_export_command_records_the_method(self, capsys, panel, tmp_path):
        project, _ = panel
        target = tmp_path / "gold.jsonl"
        code, out, _ = run_command(
            capsys, "export_gold", project.slug, "--format", "jsonl", "-o", str(target), "--shape", "benchmark",
            "--method", "wawa",
        )  # fmt: skip
        assert code == 0 and json.loads(out)["method"] == "wawa"
        lines = [json.loads(line) for line in target.read_text().splitlines()]
        assert lines and {line["provenance"]["method"] for line in lines} == {"wawa"}
        assert (
            run_command(capsys, "export_gold", project.slug, "--format", "jsonl", "-o", str(target), "--method", "em")[
                0
            ]
            == 2
        )


class PosteriorRuleTests:
    def test_items_with_a_doubtful_label_go_to_the_expert_queue(self, capsys, panel):
        project, _ = panel
        result = aggregation(capsys, project)
        lowest: dict[str, float] = {}
        for row in result["items"]:
            lowest[row["external_id"]] = min(lowest.get(row["external_id"], 1.0), row["probability"])
        project.adjudication_rules = {"unanimous": False, "posterior_below": 0.9}
        project.save(update_fields=["adjudication_rules"])
        queue, _ = adjudication_lists(project=project, limit=1000)
        doubtful = {external_id for external_id, p in lowest.items() if p < 0.9}
        # Items without a majority wait for an expert anyway; the rule adds the doubtful ones, with its reason.
        routed = {s.item.external_id for s in queue if any("dawid_skene posterior" in r for r in s.reasons)}
        assert doubtful and routed == doubtful
        assert doubtful <= {state.item.external_id for state in queue}

    @pytest.mark.parametrize("bad", [0, 1.5, True, "0.5"])
    def test_a_bad_threshold_is_refused_by_the_rules_themselves(self, panel, bad):
        project, _ = panel
        with pytest.raises(ValueError, match="posterior_below"):
            AdjudicationRules.from_json({"posterior_below": bad}, kind=project.task_kind)

    def test_an_unknown_method_is_refused(self, panel):
        project, _ = panel
        with pytest.raises(ValueError, match="posterior_method"):
            AdjudicationRules.from_json({"posterior_below": 0.5, "posterior_method": "em"}, kind=project.task_kind)


class FlipFilterTests:
    def test_the_browser_filter_keeps_the_items_dawid_skene_flips(self, capsys, panel):
        project, _ = panel
        result = aggregation(capsys, project)
        expected = {row["external_id"] for row in result["items"] if row["flipped"]}
        items = list(Item.objects.filter(project=project))
        assert expected
        assert {item.external_id for item in items if item.pk in flipped(project=project, items=items)} == expected


class GoldApiTests:
    def test_the_gold_download_takes_a_method_and_refuses_an_unknown_one(self, panel, make_user):
        from annotation.models import Role
        from annotation.services import membership_add
        from tests.api.conftest import client_for

        project, _ = panel
        researcher = make_user("res")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        client = client_for(researcher)
        response = client.get(f"/api/projects/{project.slug}/gold/?shape=benchmark&method=dawid_skene")
        lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        assert response.status_code == 200 and {line["provenance"]["method"] for line in lines} == {"dawid_skene"}
        refused = client.get(f"/api/projects/{project.slug}/gold/?method=em")
        assert refused.status_code == 400 and "method" in refused.content.decode()
