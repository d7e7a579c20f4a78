"""Adjudication rules, gold decisions, the MCQ builder and the export writers (no database)."""

import json
from datetime import UTC, datetime

import pandas as pd
import pytest

from annotation.kinds import get_kind
from validation.adjudication import LLM_DIFFERS, NOT_UNANIMOUS, AdjudicationRules, item_disagreements
from validation.exports import WRITERS
from validation.goldset import ADJUDICATED, KNOWN_ANSWER, MAJORITY, NO_MAJORITY, Decision, item_gold
from validation.mcq import MAX_OPTIONS, LabelStatement, mcq_instances

COPA = get_kind("copa_likert")
RATIONALE = get_kind("rationale_inspection")
LABELS = get_kind("label_contextualization")


def copa(**changes):
    return {"scores": {**COPA.example_value()["scores"], **changes}}


class RulesTests:
    def test_kind_defaults_and_overrides(self):
        assert AdjudicationRules.from_json(None, kind=COPA) == AdjudicationRules(unanimous=False, ordinal_distance=2)
        assert AdjudicationRules.from_json(None, kind=RATIONALE) == AdjudicationRules(unanimous=True)
        assert AdjudicationRules.from_json({"unanimous": True}, kind=COPA).unanimous

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"unanimus": True}, "unknown adjudication rule"),
            ({"ordinal_distance": 0}, "≥ 1"),
            ({"unanimous": 1}, "true or false"),
        ],
    )
    def test_bad_rules_are_named(self, data, message):
        with pytest.raises(ValueError, match=message):
            AdjudicationRules.from_json(data, kind=COPA)

    def test_copa_one_point_apart_is_fine_two_points_is_not(self):
        rules = AdjudicationRules.from_json(None, kind=COPA)
        payload = COPA.example_payload()
        near = {"a": copa(CT=1), "b": copa(CT=2)}
        assert item_disagreements(kind=COPA, payload=payload, values=near, rules=rules) == []
        far = {"a": copa(CT=0), "b": copa(CT=2), "c": copa(CT=1)}
        assert item_disagreements(kind=COPA, payload=payload, values=far, rules=rules) == [
            "CT: ratings differ by 2 (from 0 to 2)"
        ]

    def test_binary_labels_not_unanimous_and_free_text_ignored(self):
        rules = AdjudicationRules.from_json(None, kind=RATIONALE)
        payload = RATIONALE.example_payload()
        same = {"a": {"verdict": 1, "note": "fine"}, "b": {"verdict": 1, "note": "looks right"}}
        assert item_disagreements(kind=RATIONALE, payload=payload, values=same, rules=rules) == []
        split = {"a": {"verdict": 1}, "b": {"verdict": 0, "failure_categories": ["theoretical_error"]}}
        assert item_disagreements(kind=RATIONALE, payload=payload, values=split, rules=rules) == [NOT_UNANIMOUS]

    def test_human_majority_against_the_llm(self):
        rules = AdjudicationRules(unanimous=False, llm_majority=True)
        payload = RATIONALE.example_payload()
        people = {
            "a": {"verdict": 1},
            "b": {"verdict": 1},
            "c": {"verdict": 0, "failure_categories": ["theoretical_error"]},
        }
        found = item_disagreements(
            kind=RATIONALE,
            payload=payload,
            values=people,
            rules=rules,
            judge_value={"verdict": 0, "failure_categories": ["theoretical_error"]},
        )
        assert found == [LLM_DIFFERS]
        agrees = item_disagreements(
            kind=RATIONALE, payload=payload, values=people, rules=rules, judge_value={"verdict": 1}
        )
        assert agrees == []

    def test_one_rating_is_no_majority_to_hold_against_the_llm(self):
        rules = AdjudicationRules(unanimous=False, llm_majority=True)
        payload = RATIONALE.example_payload()
        judge = {"verdict": 0, "failure_categories": ["theoretical_error"]}
        one = item_disagreements(
            kind=RATIONALE, payload=payload, values={"a": {"verdict": 1}}, rules=rules, judge_value=judge
        )
        assert one == []
        two = {"a": {"verdict": 1}, "b": {"verdict": 1}}
        assert item_disagreements(kind=RATIONALE, payload=payload, values=two, rules=rules, judge_value=judge) == [
            LLM_DIFFERS
        ]


class GoldTests:
    def test_majority_with_agreement_share(self):
        gold = item_gold(kind=COPA, values={"a": copa(), "b": copa(), "c": copa(MS=2)})
        assert (gold.value, gold.source, gold.agreement) == (copa(), MAJORITY, pytest.approx(2 / 3))

    def test_one_rater_has_no_agreement_share(self):
        decided = Decision(value=copa(MS=2), expert="e", decided_at=datetime(2026, 1, 1, tzinfo=UTC))
        gold = item_gold(kind=COPA, values={"a": copa()}, decision=decided)
        assert gold.ready and gold.agreement is None and gold.provenance()["agreement"] is None

    def test_tie_has_no_gold_and_says_why(self):
        gold = item_gold(kind=COPA, values={"a": copa(), "b": copa(MS=2)})
        assert not gold.ready and gold.missing_reason == NO_MAJORITY

    def test_expert_decision_wins_and_is_recorded(self):
        decision = Decision(value=copa(MS=1), expert="exp", decided_at=datetime(2026, 1, 2, tzinfo=UTC), note="ok")
        gold = item_gold(kind=COPA, values={"a": copa(), "b": copa()}, decision=decision)
        assert (gold.value, gold.source, gold.agreement) == (copa(MS=1), ADJUDICATED, 0.0)
        assert gold.provenance()["adjudicator"] == "exp" and gold.provenance()["adjudicated_at"].startswith(
            "2026-01-02"
        )

    def test_known_answer_is_gold_without_raters(self):
        gold = item_gold(kind=COPA, values={}, known_answer=copa())
        assert (gold.value, gold.source, gold.agreement) == (copa(), KNOWN_ANSWER, None)

    def test_label_statement_is_gold_once_accepted_and_not_revised(self):
        write = {"action": "write", "statement": "To use data."}
        accept = {"action": "review", "statement": "To use data.", "author": "w", "verdict": "accept"}
        revise = {**accept, "verdict": "revise", "note": "too vague"}
        assert LABELS.consensus([write, accept]) == {"action": "write", "statement": "To use data."}
        assert LABELS.consensus([write, accept, revise]) is None
        assert LABELS.consensus([write]) is None


class McqBuilderTests:
    def labels(self, n, dataset="D", examples=("e1", "e2")):
        # Each label its own texts: a text shared by labels is one instance with several answers.
        return [
            LabelStatement(f"l{i}", dataset, f"label{i}", f"To do thing {i}.", tuple(f"{e}-{i}" for e in examples))
            for i in range(n)
        ]

    def test_the_builder_never_offers_more_options_than_the_mcq_kind_accepts(self):
        accepted = get_kind("intent_mcq").payload_schema["properties"]["options"]["maxItems"]
        assert accepted >= MAX_OPTIONS

    def test_options_are_min_10_t_with_the_correct_one(self):
        for n, size in ((4, 4), (15, 10)):
            for record in mcq_instances(self.labels(n), seed=7):
                assert len(record["options"]) == size == len(set(record["options"]))
                correct = f"To do thing {record['meta']['label'].removeprefix('label')}."
                assert [record["options"][i] for i in record["answers"]] == [correct]
                assert (
                    get_kind("intent_mcq").check_payload({k: v for k, v in record.items() if k != "external_id"}) == []
                )

    def test_same_seed_same_file_other_seed_other_order(self):
        first = list(mcq_instances(self.labels(12), seed=42))
        assert first == list(mcq_instances(reversed(self.labels(12)), seed=42))
        assert first != list(mcq_instances(self.labels(12), seed=365))

    def test_datasets_do_not_mix_and_single_statement_datasets_are_skipped(self):
        labels = self.labels(3, "A") + self.labels(1, "B")
        records = list(mcq_instances(labels, seed=1))
        assert {r["meta"]["dataset"] for r in records} == {"A"} and len(records) == 6


class WriterTests:
    RECORDS = [
        {"id": "a", "n": 1, "score": 0.5, "ok": True, "nested": {"x": [1, 2]}, "text": 'line\nbreak, "quoted"'},
        {"id": "b", "n": 2, "score": None, "ok": False, "nested": {"x": []}, "text": "é"},
    ]

    @pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
    def test_every_format_round_trips_through_pandas(self, tmp_path, fmt):
        path = tmp_path / f"out.{fmt}"
        assert WRITERS[fmt](path, iter(self.RECORDS)) == 2
        frame = {"jsonl": lambda p: pd.read_json(p, lines=True), "csv": pd.read_csv, "parquet": pd.read_parquet}[fmt](
            path
        )
        assert list(frame["id"]) == ["a", "b"] and list(frame["n"]) == [1, 2]
        nested = frame["nested"][0]
        assert (nested if fmt == "jsonl" else json.loads(nested)) == {"x": [1, 2]}
        assert frame["text"][0] == 'line\nbreak, "quoted"'

    def test_parquet_in_several_row_groups(self, tmp_path):
        import pyarrow.parquet as pq

        from validation.exports import write_parquet

        records = ({"id": str(i), "n": i} for i in range(25))
        write_parquet(tmp_path / "x.parquet", records, batch_size=10)
        assert pq.ParquetFile(tmp_path / "x.parquet").num_row_groups == 3
