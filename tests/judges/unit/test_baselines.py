"""Baselines: deterministic, documented, in the kind's value schema, and labelled "baseline"."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from annotation.kinds import get_kind
from annotation.kinds.copa_likert import FACTORS
from judges.baselines import inclusion, jaccard, label_words, words
from judges.errors import JudgeOutputInvalid
from judges.models import Suggestion
from judges.prompting import all_prompts, get_prompt
from judges.selectors import suggestion_for_display
from tests.judges.conftest import add_items, make_judge, run_now

#: Every kind that has a baseline method (judges/kinds/<kind>/baselines.py), in registry order.
BASELINE_KINDS = list(dict.fromkeys(p.kind for p in all_prompts() if p.baseline and p.is_judge))


def compute(name: str, payload: dict, *, seed: int = 42, external_id: str = "x") -> dict:
    prompt = get_prompt(name)
    request = prompt.build(item_id=1, payload=payload, external_id=external_id, seed=seed)
    value = prompt.compute(request)
    assert get_kind(prompt.kind).check_value(value, payload=payload) == []
    return value


class OverlapTests:
    def test_words_drop_case_punctuation_and_function_words(self):
        assert words("The Build is failing, TWICE!") == {"build", "failing", "twice"}

    def test_jaccard_and_inclusion(self):
        assert jaccard("short stepwise answers", "stepwise answers please") == pytest.approx(2 / 4)
        # Inclusion: the share of the reference's words found in the other text.
        assert inclusion("short stepwise answers", "stepwise answers please") == pytest.approx(2 / 3)
        assert jaccard("", "") == inclusion("", "anything") == 0.0

    def test_label_words(self):
        assert label_words("CompareOrContrast") == "compare or contrast"
        assert label_words("book_flight") == "book flight"
        assert label_words("Uses") == "uses"


class CopaBaselineTests:
    def test_overlap_maps_to_mismatch_partial_and_full(self):
        payload = copy.deepcopy(get_kind("copa_likert").example_payload())
        payload["response"] = "primary sources stepwise short answers why fix works"
        payload["profile"] = {
            "CT": "primary sources cited",  # inclusion 2/3, jaccard 2/9
            "SA": "debugging failing build work",  # no overlap
            "SC": "python packaging knowledge strong",  # no overlap
            "CLM": "short stepwise answers",  # inclusion 1
            "MS": "fix works explained",  # inclusion 2/3
            "AMR": "frustrated pressure",  # none
        }
        assert compute("copa_inclusion", payload)["scores"] == {"CT": 2, "SA": 0, "SC": 0, "CLM": 2, "MS": 2, "AMR": 0}
        jac = compute("copa_jaccard", payload)["scores"]
        assert jac["CT"] == 2 and jac["SA"] == 0 and set(jac) == set(FACTORS)

    def test_history_variant_compares_the_response_with_the_user_s_history(self):
        payload = copy.deepcopy(get_kind("copa_likert").example_payload())
        payload["response"] = "stepwise fix for the failing build"  # R = {stepwise, fix, failing, build}
        payload["history"] = ["Why is my build failing?", "I prefer stepwise answers."]
        # H = {build, failing, prefer, stepwise, answers}: R ∩ H has 3 words, R ∪ H 6.
        jaccard_prompt, inclusion_prompt = get_prompt("copa_history_jaccard"), get_prompt("copa_history_inclusion")
        assert jaccard_prompt.raw_overlap(payload) == pytest.approx(3 / 6)
        assert inclusion_prompt.raw_overlap(payload) == pytest.approx(3 / 4)  # of the response's words
        assert compute("copa_history_jaccard", payload)["scores"] == dict.fromkeys(FACTORS, 2)
        # The profile variant keeps its own name and reads the profile texts, not the history.
        profile_only = get_prompt("copa_jaccard").raw_overlap(payload)
        assert profile_only == pytest.approx(
            sum(jaccard(payload["profile"][code], payload["response"]) for code in FACTORS) / 6
        )
        with pytest.raises(JudgeOutputInvalid, match="no user history"):
            inclusion_prompt.raw_overlap({**payload, "history": []})


class IpqaBaselineTests:
    def test_expressed_from_question_and_narrative_core_from_the_selected_answer(self):
        payload = {
            "question": "How do I keep my sourdough starter alive while travelling?",
            "narrative": "Nobody can feed it for me.",
            "selected_answer": "Dry the starter on parchment; dried starter keeps alive for months.",
            "candidate_intents": ["To keep the starter alive", "To feed the starter while away", "To buy new yeast"],
        }
        value = compute("ipqa_inclusion", payload)
        assert value["intents"] == [
            {"intent": "To keep the starter alive", "expressed": True, "core": True},
            {"intent": "To feed the starter while away", "expressed": True, "core": False},
            {"intent": "To buy new yeast", "expressed": False, "core": False},
        ]
        compute("ipqa_jaccard", payload)


class McqBaselineTests:
    payload = get_kind("intent_mcq").example_payload()

    def test_random_guess_picks_one_option_reproducibly_per_seed_and_item(self):
        first = compute("mcq_random_guess", self.payload, seed=7, external_id="a")
        assert first == compute("mcq_random_guess", self.payload, seed=7, external_id="a")
        picks = Counter(
            compute("mcq_random_guess", self.payload, seed=7, external_id=f"item-{n}")["chosen"][0] for n in range(400)
        )
        assert set(picks) == {0, 1, 2, 3} and min(picks.values()) > 60  # about uniform over the 4 options
        other_seed = [compute("mcq_random_guess", self.payload, seed=42, external_id=f"item-{n}") for n in range(20)]
        same_seed = [compute("mcq_random_guess", self.payload, seed=7, external_id=f"item-{n}") for n in range(20)]
        assert other_seed != same_seed


class LabelBaselineTests:
    def test_a_plain_draft_from_the_label(self):
        payload = {**get_kind("label_contextualization").example_payload(), "label": "CompareOrContrast"}
        assert compute("label_plain_draft", payload) == {"action": "write", "statement": "To compare or contrast."}


@pytest.mark.django_db
class BaselineRunTests:
    @pytest.mark.parametrize("kind", BASELINE_KINDS)
    def test_a_baseline_run_needs_no_model_and_is_labelled_baseline(self, make_project, kind):
        project = make_project(kind)
        add_items(project, 7)
        judge = make_judge(kind, "baseline")
        assert (judge.model, judge.endpoint, judge.backend_label, judge.is_baseline) == ("", "", "baseline", True)
        run = run_now(judge, project)
        assert (run.status, run.ok_count, run.failed_count) == ("completed", 7, 0)
        for suggestion in Suggestion.objects.filter(run=run).select_related("item"):
            assert project.task_kind.check_value(suggestion.value, payload=suggestion.item.payload) == []
            assert suggestion.tokens_in is None and suggestion.is_baseline
        shown = suggestion_for_display(item=project.items.first())
        assert shown.run.judge.backend == "baseline"

    def test_an_item_without_history_fails_with_the_reason_never_a_score(self, make_project):
        project = make_project("copa_likert")
        with_history, without = add_items(project, 2)
        with_history.payload = {**with_history.payload, "history": ["an earlier question"]}
        with_history.save(update_fields=["payload"])
        run = run_now(make_judge(project, "baseline", prompt="copa_history_jaccard"), project)
        assert (run.ok_count, run.failed_count) == (1, 1)
        failed = Suggestion.objects.get(run=run, status="failed")
        assert failed.item_id == without.pk and failed.value is None and "no user history" in failed.failure_reason

    def test_the_same_baseline_configuration_is_one_judge(self):
        assert make_judge("intent_mcq", "baseline", model="ignored") == make_judge("intent_mcq", "baseline")
        assert make_judge("intent_mcq", "baseline", seed=7) != make_judge("intent_mcq", "baseline", seed=42)
