"""The rating contract of every task kind: its dimensions, their levels, and the ratings in a value."""

from __future__ import annotations

import pytest

from annotation.kinds import all_kinds, get_kind
from annotation.kinds.base import TaskKind
from annotation.kinds.intent_mcq import instance_f1

LEVELS = {"nominal", "ordinal", "interval"}


@pytest.mark.parametrize("kind", all_kinds(), ids=lambda k: k.name)
class ContractTests:
    def test_dimensions_have_levels_and_the_example_rates_on_them(self, kind):
        assert kind.rating_dimensions and {d.level for d in kind.rating_dimensions} <= LEVELS
        names = {d.name for d in kind.rating_dimensions}
        payload = kind.example_payload() if kind.ratings_need_payload else None
        for suffix, dimension, rating in kind.value_ratings(kind.example_value(), payload):
            assert dimension in names and isinstance(suffix, str)
            assert not isinstance(rating, bool) and isinstance(rating, int | float | str)

    def test_batched_columns_equal_the_loop_over_value_ratings(self, kind):
        values = [kind.example_value()] * 3
        payloads = [kind.example_payload() if kind.ratings_need_payload else None] * 3
        fast = kind.ratings_columns(values, payloads)
        loop = TaskKind.ratings_columns(kind, values, payloads)
        as_lists = lambda cols: {n: (list(c.rows), list(c.values), c.suffixes) for n, c in cols.items()}  # noqa: E731
        assert as_lists(fast) == as_lists(loop)

    def test_rating_paths_point_at_the_values_ratings(self, kind):
        """What the database reads at a kind's paths is each dimension's rating of the whole item."""
        if not kind.rating_paths:
            pytest.skip("the kind's values are decoded to be rated")
        assert set(kind.rating_paths) == {d.name for d in kind.rating_dimensions}
        assert not kind.ratings_need_payload
        value = kind.example_value()
        for suffix, dimension, rating in kind.value_ratings(value, None):
            found = value
            for key in kind.rating_paths[dimension]:
                found = found[key]
            assert suffix == "" and found == rating and isinstance(found, int | float)

    def test_the_report_builder_is_importable(self, kind):
        from validation.reports import report_builder

        assert report_builder(kind).kind is kind


class KindRatingsTests:
    def test_copa_rates_six_ordinal_factors_on_the_item(self):
        kind = get_kind("copa_likert")
        assert [d.name for d in kind.rating_dimensions] == ["CT", "SA", "SC", "CLM", "MS", "AMR"]
        assert {d.level for d in kind.rating_dimensions} == {"ordinal"}
        assert kind.rating_dimensions[0].categories == (0, 1, 2)
        ratings = list(kind.value_ratings(kind.example_value(), None))
        assert ratings[0] == ("", "CT", 1) and len(ratings) == 6

    def test_ipqa_unit_is_the_candidate_intent_and_labels_are_0_1(self):
        kind = get_kind("ipqa_core_intent")
        ratings = list(kind.value_ratings(kind.example_value(), None))
        assert ("To find someone to feed the starter", "core", 0) in ratings
        assert ("To find someone to feed the starter", "expressed", 1) in ratings
        assert kind.rating_dimensions[0].category_label(1) == "yes"

    def test_rationale_verdict_and_each_failure_category(self):
        kind = get_kind("rationale_inspection")
        ratings = dict((d, r) for _, d, r in kind.value_ratings(kind.example_value(), None))
        assert ratings == {
            "verdict": 0,
            "hallucination_or_contradiction": 0,
            "theoretical_error": 0,
            "inappropriate_application": 1,
        }
        passed = dict((d, r) for _, d, r in kind.value_ratings({"verdict": 1}, None))
        assert passed["verdict"] == 1 and passed["theoretical_error"] == 0

    def test_label_contextualization_rates_reviews_and_drafts_statements(self):
        kind = get_kind("label_contextualization")
        review = {"action": "review", "statement": "To use data.", "author": "ann", "verdict": "accept"}
        assert list(kind.value_ratings(review, None)) == [("To use data.", "review_verdict", "accept")]
        assert list(kind.value_ratings(kind.example_value(), None)) == []
        assert kind.draft_text(kind.example_value()) == "To use data, methods, etc., from the cited paper."
        assert kind.draft_text(review) is None

    @pytest.mark.parametrize(
        ("chosen", "answers", "f1"),
        [([0], [0], 1.0), ([1], [0], 0.0), ([0, 1], [0], 2 / 3), ([0], [0, 2], 2 / 3), ([0, 1], [1, 2], 0.5)],
    )
    def test_mcq_f1_against_the_key(self, chosen, answers, f1):
        assert instance_f1(chosen, answers) == pytest.approx(f1)
        kind = get_kind("intent_mcq")
        payload = {**kind.example_payload(), "answers": answers}
        assert list(kind.value_ratings({"chosen": chosen}, payload)) == [("", "f1", pytest.approx(f1))]
