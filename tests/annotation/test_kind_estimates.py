"""How each kind turns a value into the numbers estimates average (the kind contract, found by name)."""

import numpy as np
import pytest

from annotation.kinds import all_kinds, get_kind


class KindEstimateTests:
    def test_copa_adds_the_overall_score_s_as_the_sum_over_twelve(self):
        copa = get_kind("copa_likert")
        value = {"scores": {"CT": 1, "SA": 2, "SC": 2, "CLM": 2, "MS": 0, "AMR": 1}}
        assert [name for name, _ in copa.estimate_dimensions()][-1] == "S"
        assert copa.estimate_numbers(value, None)["S"] == pytest.approx(8 / 12)

    def test_ipqa_gives_the_share_of_intents_per_item(self):
        ipqa = get_kind("ipqa_core_intent")
        numbers = ipqa.estimate_numbers(ipqa.example_value(), None)
        assert numbers == {"expressed": 1.0, "core": 0.5}

    def test_binary_categories_are_zero_one_and_accept_counts_as_one(self):
        rationale = get_kind("rationale_inspection")
        assert rationale.estimate_numbers({"verdict": 1, "failure_categories": []}, None)["verdict"] == 1.0
        labels = get_kind("label_contextualization")
        review = {"action": "review", "statement": "To use data.", "author": "a", "verdict": "accept"}
        assert labels.estimate_numbers(review, None) == {"review_verdict": 1.0}

    @pytest.mark.parametrize("kind", [k.name for k in all_kinds()])
    def test_the_columns_agree_with_one_value_at_a_time(self, kind):
        task = get_kind(kind)
        value, payload = task.example_value(), task.example_payload()
        payload = payload if task.ratings_need_payload else None
        columns = task.estimate_columns([value, value], [payload, payload])
        for name, number in task.estimate_numbers(value, payload).items():
            assert np.allclose(columns[name], number)
