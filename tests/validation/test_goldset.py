"""Disagreements reach the expert queue; gold carries provenance; exports stream and round-trip."""

import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import annotation_submit, membership_add, project_update
from annotation.synthetic import synthetic_records, write_jsonl
from validation.goldset import adjudication_queue, gold_records, gold_summary
from validation.models import Adjudication
from validation.services import adjudication_record

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


def scores(**changes):
    return {"scores": {**COPA.example_value()["scores"], **changes}}


@pytest.fixture
def rated(make_project, make_user, tmp_path):
    """Four CoPA items rated by three people: agreement, a one-point spread, a two-point spread, a split."""
    project = make_project("copa_likert", slug="rated", overlap=3)
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 4)))
    people = [make_user(f"r{i}") for i in range(3)]
    expert = make_user("expert")
    membership_add(project=project, user=expert, role=Role.EXPERT)
    plans = [
        [scores(), scores(), scores()],
        [scores(CT=1), scores(CT=2), scores(CT=1)],
        [scores(CT=0), scores(CT=2), scores(CT=0)],
        [scores(MS=0), scores(MS=1), scores(MS=2)],
    ]
    items = list(project.items.order_by("external_id"))
    for item, values in zip(items, plans, strict=True):
        for user, value in zip(people, values, strict=True):
            annotation_submit(item=item, user=user, value=value)
    return project, items, expert


class QueueTests:
    def test_two_point_spreads_and_splits_wait_for_an_expert(self, rated):
        project, items, _ = rated
        queue = adjudication_queue(project=project)
        assert [s.item.external_id for s in queue] == [items[2].external_id, items[3].external_id]
        assert queue[0].reasons == ["CT: ratings differ by 2 (from 0 to 2)"]
        summary = gold_summary(project=project)
        assert (summary.items, summary.ready, summary.majority, summary.waiting_for_expert) == (4, 3, 3, 2)

    def test_decision_becomes_gold_with_provenance(self, rated):
        project, items, expert = rated
        adjudication_record(project=project, item=items[3], expert=expert, value=scores(MS=1), note="middle ground")
        records = {r["id"]: r for r in gold_records(project=project, shape="benchmark")}
        decided = records[items[3].external_id]
        assert decided["MS"] == 1 and decided["provenance"]["source"] == "adjudicated"
        assert decided["provenance"]["adjudicator"] == "expert" and decided["provenance"]["agreement"] == pytest.approx(
            1 / 3
        )
        assert set(decided["provenance"]["raters"]) == {"r0", "r1", "r2"}
        assert len(adjudication_queue(project=project)) == 1

    def test_gold_exports_say_whether_the_expert_saw_the_hidden_fields(self, rated):
        project, items, expert = rated
        adjudication_record(project=project, item=items[3], expert=expert, value=scores(MS=1))
        project = project_update(project=project, adjudicators_see_hidden=True)
        adjudication_record(project=project, item=items[2], expert=expert, value=scores(MS=2))
        records = {r["id"]: r["provenance"] for r in gold_records(project=project, shape="benchmark")}
        assert records[items[3].external_id]["adjudicator_saw_hidden_fields"] is False
        assert records[items[2].external_id]["adjudicator_saw_hidden_fields"] is True
        assert records[items[0].external_id]["adjudicator_saw_hidden_fields"] is None  # majority: no expert
        assert [entry["adjudicators_see_hidden"] for entry in project.reveal_log] == [True]

    def test_invalid_decision_stores_nothing(self, rated):
        project, items, expert = rated
        from annotation.errors import ValidationFailed

        with pytest.raises(ValidationFailed):
            adjudication_record(project=project, item=items[3], expert=expert, value=scores(MS=5))
        assert not Adjudication.objects.exists()


class ExportTests:
    def test_concord_jsonl_round_trips_through_a_new_project(self, rated, make_project, tmp_path):
        project, _, _ = rated
        first = tmp_path / "gold.jsonl"
        call_command("export_gold", project.slug, "--format", "jsonl", "-o", str(first))
        copy = make_project("copa_likert", slug="copy")
        import_items(project=copy, path=first)
        second = tmp_path / "again.jsonl"
        call_command("export_gold", "copy", "--format", "jsonl", "-o", str(second))
        lines = first.read_text().splitlines()
        assert len(lines) == 3 and second.read_text().splitlines() == lines

    def test_parquet_reads_in_pandas_and_datasets(self, rated, tmp_path):
        project, _, _ = rated
        path = tmp_path / "gold.parquet"
        call_command("export_gold", project.slug, "--format", "parquet", "--shape", "benchmark", "-o", str(path))
        frame = pd.read_parquet(path)
        assert len(frame) == 3 and {"CT", "SA", "SC", "CLM", "MS", "AMR", "provenance"} <= set(frame.columns)
        from datasets import load_dataset

        loaded = load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
        assert loaded.num_rows == 3 and json.loads(loaded[0]["provenance"])["source"] == "majority"

    def test_csv_benchmark_shape(self, rated, tmp_path):
        project, _, _ = rated
        path = tmp_path / "gold.csv"
        call_command("export_gold", project.slug, "--format", "csv", "--shape", "benchmark", "-o", str(path))
        assert list(pd.read_csv(path)["CT"]) == [1, 1, 0]  # the 0/2/0 item's majority is 0

    def test_unwritable_path_exits_1_and_leaves_nothing(self, rated, tmp_path):
        project, _, _ = rated
        with pytest.raises(CommandError) as caught:
            call_command("export_gold", project.slug, "--format", "jsonl", "-o", str(tmp_path / "missing" / "x.jsonl"))
        assert caught.value.returncode == 1


class McqCommandTests:
    def test_build_mcq_from_accepted_statements_is_seeded(self, make_project, make_user, tmp_path):
        kind = get_kind("label_contextualization")
        project = make_project("label_contextualization", slug="labels")
        records = [
            {"external_id": f"l{i}", "dataset": "D", "domain": "d", "label": f"lab{i}", "examples": [f"text {i}"]}
            for i in range(4)
        ]
        import_items(project=project, path=write_jsonl(tmp_path / "l.jsonl", iter(records)))
        writer, reviewer = make_user("w"), make_user("rev")
        membership_add(project=project, user=reviewer, role=Role.EXPERT)  # only experts review
        for item in project.items.all():
            statement = f"To do {item.payload['label']}."
            annotation_submit(item=item, user=writer, value={"action": "write", "statement": statement})
            review = {"action": "review", "statement": statement, "author": "w", "verdict": "accept"}
            annotation_submit(item=item, user=reviewer, value=review)
        assert kind.consensus([{"action": "write", "statement": "To x."}]) is None
        out_a, out_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
        call_command("build_mcq", "labels", "--seed", "7", "-o", str(out_a))
        call_command("build_mcq", "labels", "--seed", "7", "-o", str(out_b))
        assert out_a.read_text() == out_b.read_text()
        instances = [json.loads(line) for line in out_a.read_text().splitlines()]
        assert len(instances) == 4 and all(len(i["options"]) == 4 for i in instances)
        mcq = make_project("intent_mcq", slug="mcq")
        assert import_items(project=mcq, path=out_a).imported == 4

    def test_build_mcq_refuses_other_kinds(self, make_project, tmp_path):
        make_project("copa_likert", slug="c")
        with pytest.raises(CommandError, match="label_contextualization") as caught:
            call_command("build_mcq", "c", "--seed", "1", "-o", str(tmp_path / "x.jsonl"))
        assert caught.value.returncode == 1


class PageTests:
    def test_expert_decides_from_the_queue(self, rated, client):
        project, items, expert = rated
        client.force_login(expert)
        page = client.get(reverse("adjudication_list", args=[project.slug]))
        assert items[2].external_id in page.content.decode() and page.context["summary"].waiting_for_expert == 2
        url = reverse("adjudication_item", args=[project.slug, items[2].pk])
        detail = client.get(url).content.decode()
        assert "r0" in detail and "r1" in detail and "ratings differ by 2" in detail
        bad = client.post(url, {**{k: str(v) for k, v in scores(CT=9)["scores"].items()}})
        assert bad.status_code == 422 and not Adjudication.objects.exists()
        good = client.post(url, {**{k: str(v) for k, v in scores(CT=1)["scores"].items()}, "decision_note": "ok"})
        assert good.status_code == 302 and Adjudication.objects.get().note == "ok"

    def test_annotators_cannot_adjudicate_or_download(self, rated, client, make_user):
        project, _, _ = rated
        annotator = make_user("plain")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        client.force_login(annotator)
        assert client.get(reverse("adjudication_list", args=[project.slug])).status_code == 403
        assert client.get(reverse("gold_download", args=[project.slug])).status_code == 403

    def test_download_streams_a_file(self, rated, client):
        project, _, expert = rated
        client.force_login(expert)
        response = client.get(reverse("gold_download", args=[project.slug]) + "?format=jsonl&shape=benchmark")
        body = b"".join(response.streaming_content).decode()
        assert response.status_code == 200 and len(body.splitlines()) == 3


class ConfigurationTests:
    def test_rules_are_validated_when_a_project_is_created(self, make_project, tmp_path):
        from django.core.exceptions import ValidationError

        with pytest.raises(ValidationError, match="unknown adjudication rule"):
            make_project("copa_likert", slug="bad", adjudication_rules={"unanimus": True})
        with pytest.raises(CommandError, match="ordinal_distance") as caught:
            call_command(
                "create_project", "bad2", "--kind", "copa_likert", "--adjudication-rules", '{"ordinal_distance": 0}'
            )
        assert caught.value.returncode == 1

    def test_unanimity_rule_sends_one_point_spreads_to_the_queue(self, rated):
        project, items, _ = rated
        project.adjudication_rules = {"unanimous": True}
        project.save(update_fields=["adjudication_rules"])
        assert [s.item.external_id for s in adjudication_queue(project=project)] == [i.external_id for i in items[1:]]

    def test_project_page_shows_gold_readiness(self, rated, client):
        project, _, expert = rated
        client.force_login(expert)
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert "Gold-ready: 3 of 4 items (75%)" in page and "2 waiting for an expert" in page


class CopaBenchmarkShapeTests:
    def test_an_exported_copa_benchmark_pairs_up_again_with_its_meta(self, make_project, make_user, tmp_path):
        """CoPA's evaluation pairs the accepted and the top-voted answer by pair id: the export keeps both."""
        from validation.kinds.copa_likert.copa_report import copa_pairs

        project = make_project("copa_likert", slug="copa-bench", overlap=2)
        base = COPA.example_payload()
        records = [
            {
                **base,
                "external_id": f"q{q}-{source}",
                "pair_id": f"q{q}",
                "response_source": source,
                "meta": {"category": "how-to", "response_score": q},
            }
            for q in range(3)
            for source in ("accepted", "top-voted")
        ]
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", records))
        people = [make_user(f"b{i}") for i in range(2)]
        for item in project.items.all():
            for user in people:
                annotation_submit(item=item, user=user, value=scores())
        path = tmp_path / "bench.jsonl"
        call_command("export_gold", project.slug, "--format", "jsonl", "--shape", "benchmark", "-o", str(path))
        exported = [json.loads(line) for line in path.read_text().splitlines()]
        sides: dict[str, dict[str, str]] = {}
        for record in exported:
            sides.setdefault(record["pair_id"], {})[record["response_source"]] = record["id"]
            assert record["meta"]["category"] == "how-to"
        pairs = copa_pairs(project)
        assert {
            p.pair_id: {"accepted": pairs.external_ids[p.accepted], "top-voted": pairs.external_ids[p.top]}
            for p in pairs.pairs
        } == sides
        assert len(sides) == 3
