"""Prompt templates: versioned files with their output schema; answers read back or refused with a reason."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import judges.kinds
from annotation.kinds import get_kind
from judges.errors import JudgeOutputInvalid
from judges.kinds.intent_mcq.prompts import LETTERS, MCQ_PROMPTING, MCQ_SHUFFLE_SEEDS
from judges.prompting import TemplatePrompt, all_prompts, get_prompt, prompts_for, schema_problems
from tests.support.fake_server import answer_from_schema

#: Where each kind's prompt classes and template files live: judges/kinds/<kind>/.
JUDGE_KINDS_DIR = Path(judges.kinds.__file__).resolve().parent

TEMPLATES = [p for p in all_prompts() if isinstance(p, TemplatePrompt)]
JUDGE_TEMPLATES = [p for p in TEMPLATES if p.is_judge]

#: Inputs for the generator prompts, in the shape each one reads.
GENERATOR_INPUTS = {
    "ipqa_intent_generation": get_kind("ipqa_core_intent").example_payload(),
    "ipqa_eval_intent_matching": {
        "question": "How do I keep my sourdough starter alive while travelling?",
        "predicted_intent": "To keep the starter alive without feeding it",
        "gold_intent": "To preserve the starter without feeding",
    },
    "copa_profile_construction": {
        "history": [
            {"question": "Why is my build failing?", "accepted_answer": "Your lock file is stale."},
            {"question": "How do I pin a dependency?", "accepted_answer": "Use ==."},
        ]
    },
    "copa_rationale_extraction": get_kind("rationale_inspection").example_payload()["context"],
}


def sample_input(prompt) -> dict:
    return GENERATOR_INPUTS[prompt.name] if not prompt.is_judge else get_kind(prompt.kind).example_payload()


class TemplateFileTests:
    def test_every_template_is_a_versioned_pair_of_files_in_its_kind_s_folder(self):
        files = {p for pattern in ("*/*.txt", "*/*.schema.json") for p in JUDGE_KINDS_DIR.glob(pattern)}
        for prompt in TEMPLATES:
            folder = JUDGE_KINDS_DIR / prompt.kind
            assert prompt.template_path == folder / prompt.template_path.name and prompt.template_path in files
            assert prompt.schema_path == folder / prompt.schema_path.name and prompt.schema_path in files
            assert re.fullmatch(r"[a-z_]+\.v\d+\.(txt|schema\.json)", prompt.template_path.name)
        used = {p.template_path for p in TEMPLATES} | {p.schema_path for p in TEMPLATES}
        assert files == used, "every template file under judges/kinds/ belongs to a registered prompt"

    def test_the_issue_s_prompts_are_all_shipped(self):
        keys = {p.key for p in all_prompts()}
        assert {
            "ipqa_intent_generation.v1",
            "ipqa_core_intent_validation.v1",
            "ipqa_eval_intent_matching.v1",
            "copa_profile_construction.v1",
            "copa_likert_evaluation.v1",
            "copa_rationale_extraction.v1",
            "intentgrasp_label_statement.v1",
            "intentgrasp_mcq_da.v1",
            "intentgrasp_mcq_cot.v1",
            "intentgrasp_mcq_ia.v1",
        } <= keys

    @pytest.mark.parametrize("prompt", TEMPLATES, ids=lambda p: p.key)
    def test_every_schema_is_valid_and_every_slot_is_filled(self, prompt):
        Draft202012Validator.check_schema(prompt.base_schema)
        request = prompt.build(item_id=1, payload=sample_input(prompt), external_id="x", seed=42)
        Draft202012Validator.check_schema(request.schema)
        text = "\n".join(m["content"] for m in request.messages)
        assert "$" not in text and [m["role"] for m in request.messages] == ["system", "user"]
        assert prompt.title and prompt.source

    @pytest.mark.parametrize("prompt", TEMPLATES, ids=lambda p: p.key)
    def test_a_schema_valid_answer_reads_back(self, prompt):
        request = prompt.build(item_id=1, payload=sample_input(prompt), external_id="x", seed=42)
        answer = answer_from_schema(request.schema, random.Random(0))
        value = prompt.parse(json.dumps(answer), request)
        if prompt.is_judge:
            assert get_kind(prompt.kind).check_value(value, payload=request.payload) == []


class ReadingAnswersTests:
    copa = get_prompt("copa_likert_evaluation")
    payload = get_kind("copa_likert").example_payload()

    def parse(self, prompt, text, payload):
        return prompt.parse(text, prompt.build(item_id=1, payload=payload))

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ("Sure! Here are the scores", "not valid JSON: Expecting value at char 0"),
            ("[1, 2]", "the answer must be a JSON object, got list"),
            ('{"scores": {"CT": 1}}', "scores: missing required fields 'SA', 'SC', 'CLM', 'MS', 'AMR'"),
            (
                '{"scores": {"CT": 3, "SA": 1, "SC": 1, "CLM": 1, "MS": 1, "AMR": "2"}}',
                'scores.AMR: must be one of 0, 1, 2, got "2"; scores.AMR: must be of type integer, got str "2"; '
                "scores.CT: must be one of 0, 1, 2, got 3",
            ),
        ],
    )
    def test_a_bad_answer_is_refused_with_a_reason_never_scored(self, text, reason):
        with pytest.raises(JudgeOutputInvalid) as caught:
            self.parse(self.copa, text, self.payload)
        assert caught.value.message == reason

    def test_an_answer_that_breaks_the_kind_s_rules_is_refused(self):
        prompt, payload = get_prompt("ipqa_core_intent_validation"), get_kind("ipqa_core_intent").example_payload()
        core_not_expressed = {
            "judgements": [
                {"intent_number": 1, "expressed": False, "core": True},
                {"intent_number": 2, "expressed": True, "core": False},
            ]
        }
        with pytest.raises(JudgeOutputInvalid, match="an intent can be core only if it is expressed"):
            self.parse(prompt, json.dumps(core_not_expressed), payload)
        twice = {"judgements": [{"intent_number": 1, "expressed": True, "core": True}] * 2}
        with pytest.raises(JudgeOutputInvalid, match="judge every candidate intent exactly once"):
            self.parse(prompt, json.dumps(twice), payload)

    def test_ipqa_judgements_map_numbers_back_to_the_candidates(self):
        prompt, payload = get_prompt("ipqa_core_intent_validation"), get_kind("ipqa_core_intent").example_payload()
        answer = {
            "judgements": [
                {"intent_number": 2, "expressed": True, "core": False},
                {"intent_number": 1, "expressed": True, "core": True},
            ]
        }
        value = self.parse(prompt, json.dumps(answer), payload)
        assert value["intents"] == [
            {"intent": payload["candidate_intents"][1], "expressed": True, "core": False},
            {"intent": payload["candidate_intents"][0], "expressed": True, "core": True},
        ]
        schema = prompt.build(item_id=1, payload=payload).schema["properties"]["judgements"]
        assert (schema["minItems"], schema["maxItems"], schema["items"]["properties"]["intent_number"]["enum"]) == (
            2,
            2,
            [1, 2],
        )

    def test_a_label_statement_must_follow_intentgrasp_s_style(self):
        prompt, payload = (
            get_prompt("intentgrasp_label_statement"),
            get_kind("label_contextualization").example_payload(),
        )
        good = {"action": "write", "statement": "To use data, methods, etc., from the cited paper.", "reason": ""}
        assert self.parse(prompt, json.dumps(good), payload) == {"action": "write", "statement": good["statement"]}
        with pytest.raises(JudgeOutputInvalid, match="starts with 'To '"):
            self.parse(prompt, json.dumps({**good, "statement": "Uses data."}), payload)
        cannot = {"action": "cannot_contextualize", "statement": "", "reason": "Too vague."}
        assert self.parse(prompt, json.dumps(cannot), payload) == {
            "action": "cannot_contextualize",
            "reason": "Too vague.",
        }

    def test_a_rationale_verdict_maps_to_pass_or_fail(self):
        prompt, payload = get_prompt("rationale_inspection_verdict"), get_kind("rationale_inspection").example_payload()
        fail = {"verdict": "fail", "failure_categories": ["theoretical_error"], "note": "No such theory."}
        value = self.parse(prompt, json.dumps(fail), payload)
        assert value == {"verdict": 0, "failure_categories": ["theoretical_error"], "note": "No such theory."}
        with pytest.raises(JudgeOutputInvalid, match="a Pass verdict takes no failure category"):
            self.parse(prompt, json.dumps({**fail, "verdict": "pass"}), payload)

    def test_generators_check_their_own_schema(self):
        prompt = get_prompt("ipqa_intent_generation")
        request = prompt.build(item_id=0, payload=GENERATOR_INPUTS["ipqa_intent_generation"])
        assert prompt.parse('{"intents": ["To dry the starter"]}', request) == {"intents": ["To dry the starter"]}
        with pytest.raises(JudgeOutputInvalid, match="intents"):
            prompt.parse('{"intents": ["dry the starter"]}', request)


class McqTests:
    payload = get_kind("intent_mcq").example_payload()  # option 0 is the correct one

    def test_variants_fill_the_paper_s_prompting_slot(self):
        texts = {}
        for variant in ("da", "cot", "ia"):
            request = get_prompt(f"intentgrasp_mcq_{variant}").build(item_id=1, payload=self.payload, seed=None)
            texts[variant] = request.messages[1]["content"]
            assert ("reasoning" in request.schema["properties"]) is (variant != "da")
        assert texts["cot"].endswith("Let's think step by step.")
        assert texts["ia"].endswith("Let's analyze the intent of the question and then answer.")
        assert MCQ_PROMPTING["cot"] not in texts["da"] and MCQ_PROMPTING["ia"] not in texts["da"]

    def test_shuffles_by_seed_map_predictions_back_to_the_original_options(self):
        prompt = get_prompt("intentgrasp_mcq_cot")
        orders = set()
        for seed in MCQ_SHUFFLE_SEEDS:
            request = prompt.build(item_id=1, payload=self.payload, external_id="banking-17", seed=seed)
            shown = request.messages[1]["content"]
            orders.add(tuple(request.state))
            # The model picks the letter shown next to the correct option, wherever the shuffle put it.
            letter = LETTERS[request.state.index(0)]
            assert f"{letter}. {self.payload['options'][0]}" in shown
            assert request.schema["properties"]["answer"]["items"]["enum"] == list(LETTERS[:4])
            value = prompt.parse(json.dumps({"reasoning": "...", "answer": [letter]}), request)
            assert value == {"chosen": [0]}
            # The same seed and item always give the same order (a resumed run asks the same question).
            assert (
                prompt.build(item_id=9, payload=self.payload, external_id="banking-17", seed=seed).state
                == request.state
            )
        assert len(orders) == 3
        unshuffled = prompt.build(item_id=1, payload=self.payload, seed=None)
        assert unshuffled.state == [0, 1, 2, 3]

    def test_a_letter_beyond_the_options_is_refused(self):
        prompt = get_prompt("intentgrasp_mcq_da")
        request = prompt.build(item_id=1, payload=self.payload, seed=7)
        with pytest.raises(JudgeOutputInvalid, match=r"answer\[0\]: must be one of"):
            prompt.parse('{"answer": ["E"]}', request)
        assert schema_problems({"answer": []}, request.schema) == ["answer: needs at least 1 entry, got 0"]

    def test_a_partly_valid_answer_is_read_as_the_released_scorer_reads_it(self):
        prompt = get_prompt("intentgrasp_mcq_da")
        request = prompt.build(item_id=1, payload=self.payload, external_id="banking-17", seed=7)
        letter = LETTERS[request.state.index(0)]
        # The valid letter maps back through the shuffle; "E" (beyond four options) and 3 are wrong choices.
        assert prompt.partial_value(json.dumps({"answer": [letter, "E", 3, "E"]}), request) == ({"chosen": [0]}, 2)
        assert prompt.partial_value('{"answer": ["E"]}', request) is None
        assert prompt.partial_value("not json", request) is None
        with pytest.raises(NotImplementedError):
            get_prompt("copa_likert_evaluation").partial_value("{}", request)

    def test_a_lower_case_letter_is_read_as_its_option_as_the_released_scorer_does(self):
        """The released scorer lower-cases the letters it compares: a correct "a" scores 1.0, not 0."""
        from validation.kinds.intent_mcq.mcq_eval import partial_credit_f1

        prompt = get_prompt("intentgrasp_mcq_da")
        request = prompt.build(item_id=1, payload=self.payload, external_id="banking-17", seed=7)
        letter = LETTERS[request.state.index(0)]
        with pytest.raises(JudgeOutputInvalid):
            prompt.parse(json.dumps({"answer": [letter.lower()]}), request)  # a failure, read partly
        read = prompt.partial_value(json.dumps({"answer": [letter.lower()]}), request)
        assert read == ({"chosen": [0]}, 0)
        assert partial_credit_f1(read[0]["chosen"], read[1], [0]) == 1.0
        # "e" is as far beyond the four options as "E"; "a" and "A" are one choice.
        both = prompt.partial_value(json.dumps({"answer": [letter, letter.lower(), "e", "E"]}), request)
        assert both == ({"chosen": [0]}, 1)


class RegistryTests:
    def test_prompts_by_name_and_version(self):
        assert get_prompt("copa_likert_evaluation").key == "copa_likert_evaluation.v1"
        assert get_prompt("copa_likert_evaluation.v1") is get_prompt("copa_likert_evaluation")
        with pytest.raises(KeyError):
            get_prompt("copa_likert_evaluation.v9")

    def test_judges_choose_among_judge_prompts_of_their_kind_and_backend(self):
        assert [p.key for p in prompts_for(kind="intent_mcq", backend="openai")] == [
            "intentgrasp_mcq_da.v1",
            "intentgrasp_mcq_cot.v1",
            "intentgrasp_mcq_ia.v1",
        ]
        assert [p.key for p in prompts_for(kind="intent_mcq", backend="baseline")] == ["mcq_random_guess.v1"]
        assert [p.key for p in prompts_for(kind="copa_likert", backend="vllm")] == [
            "copa_likert_evaluation.v1",
            "copa_likert_direct.v1",
            "copa_likert_cot.v1",
            "copa_likert_random_factor.v1",
        ]

    def test_the_prompt_hash_follows_the_rendered_prompt(self):
        prompt, payload = get_prompt("copa_likert_evaluation"), get_kind("copa_likert").example_payload()
        first = prompt.build(item_id=1, payload=payload).prompt_sha256
        assert prompt.build(item_id=2, payload=payload).prompt_sha256 == first
        assert prompt.build(item_id=1, payload={**payload, "response": "Other."}).prompt_sha256 != first
        mcq = get_prompt("intentgrasp_mcq_da")
        mcq_payload = get_kind("intent_mcq").example_payload()
        hashes = {mcq.build(item_id=1, payload=mcq_payload, seed=s).prompt_sha256 for s in MCQ_SHUFFLE_SEEDS}
        assert len(hashes) == 3
