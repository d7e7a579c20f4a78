"""Prompts: versioned template files under ``judges/prompts/`` and the code that fills and reads them.

Each template is two files, ``NAME.vN.txt`` (``[system]`` and ``[user]`` sections with ``$slots``)
and ``NAME.vN.schema.json`` (the JSON schema of the model's answer, sent as structured output). A
:class:`Prompt` builds one :class:`JudgeRequest` per item and reads the answer back: JSON, then the
output schema, then the task kind's own value checks. Anything that fails raises
:class:`JudgeOutputInvalid` with a reason a researcher can read; it is never turned into a score.

Judge prompts turn an item into a value of its task kind (a suggestion). Generator prompts
(``role = "generator"``) produce item data instead, such as IPQA candidate intents or a CoPA
profile; they render and validate the same way, but cannot be a project's judge. Baseline methods
(``judges.baselines``) implement the same interface without a model.

The registry below lists every prompt. A changed template is a new file with the next version, so a
stored suggestion's prompt always names the exact text it came from.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, ClassVar

import fastjsonschema
from jsonschema import Draft202012Validator

from annotation.kinds import get_kind
from annotation.kinds.base import describe_schema_error, field_path
from annotation.kinds.copa_likert import FACTORS, SCALE
from annotation.kinds.rationale_inspection import FAIL, FAILURE_CATEGORIES, PASS
from judges.errors import JudgeOutputInvalid

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
LLM_BACKENDS = ("openai", "vllm")
LETTERS = "ABCDEFGHIJ"
#: The paper's prompting slot for the IntentGrasp baselines (paper 002, Appendix B.1).
MCQ_PROMPTING = {
    "da": "",
    "cot": "Let's think step by step.",
    "ia": "Let's analyze the intent of the question and then answer.",
}
#: Option orders the paper evaluates (paper 002, Appendix B.3).
MCQ_SHUFFLE_SEEDS = (7, 42, 365)
SHOWN_SCHEMA_ERRORS = 3

NOT_JSON = "not valid JSON: {msg} at char {pos}"
NOT_AN_OBJECT = "the answer must be a JSON object, got {type}"


@dataclass(frozen=True)
class JudgeRequest:
    """One call for one item: what is sent (messages, schema) and what reading the answer needs."""

    item_id: int
    payload: dict
    prompt_sha256: str
    schema: dict
    messages: list[dict] | None = None
    #: Prompt-specific facts needed to read the answer (e.g. the shuffled option order).
    state: Any = None
    #: The seed a baseline draws from; None for model calls (the judge's seed goes to the model).
    seed: int | None = None


def sha256_json(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@cache
def _validators(schema_json: str) -> tuple[Any, Draft202012Validator]:
    """A compiled validator (fast path) and a full one (messages), cached per distinct schema."""
    schema = json.loads(schema_json)
    return fastjsonschema.compile(schema), Draft202012Validator(schema)


def schema_problems(data: Any, schema: dict) -> list[str]:
    fast, full = _validators(json.dumps(schema, sort_keys=True))
    try:
        fast(data)
        return []
    except fastjsonschema.JsonSchemaException:
        pass
    errors = sorted(full.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    # jsonschema reports a missing field once per field; the message already names them all.
    return list(dict.fromkeys(f"{field_path(e.absolute_path) or 'answer'}: {describe_schema_error(e)}" for e in errors))


class Prompt:
    """Base of every prompt and baseline method: build a request per item, read its answer.

    Subclasses set ``kind`` (the task kind whose items they read), ``role`` and ``backends``, and
    implement :meth:`build` and :meth:`to_value`.
    """

    kind: ClassVar[str]
    role: ClassVar[str] = "judge"
    backends: ClassVar[tuple[str, ...]] = LLM_BACKENDS
    title: ClassVar[str] = ""
    #: Where the prompt comes from (paper, section, figure).
    source: ClassVar[str] = ""

    def __init__(self, name: str, version: int) -> None:
        self.name = name
        self.version = version

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key}>"

    @property
    def key(self) -> str:
        return f"{self.name}.v{self.version}"

    @property
    def is_judge(self) -> bool:
        return self.role == "judge"

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        raise NotImplementedError("subclasses of Prompt must provide build()")

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        """Map a schema-valid answer to the task kind's value (generators return the answer)."""
        raise NotImplementedError("subclasses of Prompt must provide to_value()")

    def parse(self, text: str, request: JudgeRequest) -> dict:
        """The value in ``text``, or JudgeOutputInvalid saying exactly what is wrong with it."""
        try:
            output = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JudgeOutputInvalid(NOT_JSON.format(msg=exc.msg, pos=exc.pos)) from None
        if not isinstance(output, dict):
            raise JudgeOutputInvalid(NOT_AN_OBJECT.format(type=type(output).__name__))
        problems = schema_problems(output, request.schema)
        if not problems:
            value = self.to_value(output, request)
            if self.is_judge:
                problems = [str(e) for e in get_kind(self.kind).check_value(value, payload=request.payload)]
        if problems:
            more = f" (and {len(problems) - SHOWN_SCHEMA_ERRORS} more)" if len(problems) > SHOWN_SCHEMA_ERRORS else ""
            raise JudgeOutputInvalid("; ".join(problems[:SHOWN_SCHEMA_ERRORS]) + more)
        return value


@dataclass(frozen=True)
class Template:
    system: string.Template
    user: string.Template

    @classmethod
    def read(cls, path: Path) -> Template:
        """``# comment`` lines first, then ``[system]`` and ``[user]`` sections."""
        sections: dict[str, list[str]] = {}
        current = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if current is None and (line.startswith("#") or not line.strip()):
                continue
            if line.strip() in ("[system]", "[user]"):
                current = line.strip()[1:-1]
                sections[current] = []
            elif current is None:
                raise ValueError(f"{path.name}: text before the [system] section")
            else:
                sections[current].append(line)
        if set(sections) != {"system", "user"}:
            raise ValueError(f"{path.name}: needs exactly a [system] and a [user] section")
        return cls(*(string.Template("\n".join(sections[part]).strip()) for part in ("system", "user")))


class TemplatePrompt(Prompt):
    """A prompt read from ``judges/prompts/``: fill the slots, send the schema, read the answer."""

    #: Fixed slot values (e.g. the IntentGrasp prompting slot).
    slots: dict[str, str]

    def __init__(self, name: str, version: int, *, template: str = "", slots: dict | None = None) -> None:
        super().__init__(name, version)
        self.template_name = template or name
        self.slots = dict(slots or {})

    @property
    def template_path(self) -> Path:
        return PROMPTS_DIR / f"{self.template_name}.v{self.version}.txt"

    @property
    def schema_path(self) -> Path:
        return PROMPTS_DIR / f"{self.template_name}.v{self.version}.schema.json"

    @cached_property
    def template(self) -> Template:
        return Template.read(self.template_path)

    @cached_property
    def base_schema(self) -> dict:
        return json.loads(self.schema_path.read_text(encoding="utf-8"))

    def request_state(self, payload: dict, *, seed: int | None, external_id: str) -> Any:
        return None

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        raise NotImplementedError("subclasses of TemplatePrompt must provide context()")

    def output_schema(self, payload: dict, state: Any) -> dict:
        return self.base_schema

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return output

    def render(self, payload: dict, state: Any = None) -> list[dict]:
        slots = {**self.slots, **self.context(payload, state)}
        return [
            {"role": "system", "content": self.template.system.substitute(slots)},
            {"role": "user", "content": self.template.user.substitute(slots).strip()},
        ]

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        state = self.request_state(payload, seed=seed, external_id=external_id)
        messages = self.render(payload, state)
        schema = self.output_schema(payload, state)
        return JudgeRequest(
            item_id=item_id,
            payload=payload,
            prompt_sha256=sha256_json({"messages": messages, "schema": schema}),
            schema=schema,
            messages=messages,
            state=state,
        )


# -- formatting helpers ---------------------------------------------------------------------------


def bullets(lines: Iterable[str], empty: str = "(none)") -> str:
    text = "\n".join(f"- {line}" for line in lines if line)
    return text or empty


def numbered(lines: Iterable[str]) -> str:
    return "\n".join(f"{n}. {line}" for n, line in enumerate(lines, start=1))


def factor_rubric() -> str:
    return "\n".join(f"- {code} ({name}): {definition}" for code, (name, definition) in FACTORS.items())


def likert_scale() -> str:
    return "\n".join(f"- {score} = {text}" for score, text in SCALE.items())


def earlier_questions(profile: list[dict], limit: int = 50) -> str:
    """The user's earlier questions, newest last, with what they wrote and chose (IPQA user profile)."""
    lines = []
    for entry in profile[-limit:]:
        line = f"Q: {entry['question']}"
        if entry.get("narrative"):
            line += f" | Narrative: {entry['narrative']}"
        if entry.get("selected_answer"):
            line += f" | Selected answer: {entry['selected_answer']}"
        lines.append(line)
    return bullets(lines)


def with_schema_changes(schema: dict, **properties: Any) -> dict:
    """A copy of a top-level object schema with some properties replaced (None drops one)."""
    changed = json.loads(json.dumps(schema))
    for name, spec in properties.items():
        if spec is None:
            changed["properties"].pop(name, None)
            changed["required"] = [r for r in changed["required"] if r != name]
        else:
            changed["properties"][name] = spec
    return changed


# -- judge prompts: item → value of its kind --------------------------------------------------------


class CopaLikertEvaluation(TemplatePrompt):
    kind = "copa_likert"
    title = "CoPA six-factor Likert evaluation"
    source = "CoPA (paper 001), §4.1 Evaluation Metric, Figure A4; rubric of Appendix F"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        profile = payload["profile"]
        return {
            "factors": factor_rubric(),
            "scale": likert_scale(),
            "profile": "\n".join(f"- {code} ({FACTORS[code][0]}): {profile[code]}" for code in FACTORS),
            "question": payload["question"],
            "response": payload["response"],
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return {"scores": {code: output["scores"][code] for code in FACTORS}}


def ipqa_question(payload: dict) -> dict[str, str]:
    """What every IPQA prompt shows of the user: earlier questions, the question and its narrative."""
    return {
        "profile": earlier_questions(payload.get("user_profile", [])),
        "question": payload["question"],
        "narrative": payload.get("narrative") or "(none)",
    }


class IpqaCoreIntentValidation(TemplatePrompt):
    kind = "ipqa_core_intent"
    title = "IPQA core-intent validation"
    source = "IPQA (paper 000), §2.3 quality control: expressed and core per candidate intent"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            **ipqa_question(payload),
            "selected_answer": payload["selected_answer"],
            "candidates": numbered(payload["candidate_intents"]),
        }

    def output_schema(self, payload: dict, state: Any) -> dict:
        # One judgement per candidate, by number: the model never retypes (and never alters) an intent.
        count = len(payload["candidate_intents"])
        judgements = json.loads(json.dumps(self.base_schema["properties"]["judgements"]))
        judgements.update(minItems=count, maxItems=count)
        judgements["items"]["properties"]["intent_number"] = {"type": "integer", "enum": list(range(1, count + 1))}
        return with_schema_changes(self.base_schema, judgements=judgements)

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        candidates = request.payload["candidate_intents"]
        return {
            "intents": [
                {"intent": candidates[j["intent_number"] - 1], "expressed": j["expressed"], "core": j["core"]}
                for j in output["judgements"]
            ]
        }


class LabelStatementDraft(TemplatePrompt):
    kind = "label_contextualization"
    title = "IntentGrasp label statement draft"
    source = "IntentGrasp (paper 002), §3 Stage 2: intent label contextualization"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "dataset": payload["dataset"],
            "domain": payload["domain"],
            "label": payload["label"],
            "guideline": payload.get("guideline") or "(none given)",
            "examples": bullets(payload.get("examples", [])[:10]),
            "other_labels": ", ".join(payload.get("other_labels", [])) or "(none)",
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        if output["action"] == "cannot_contextualize":
            return {"action": "cannot_contextualize", "reason": output["reason"]}
        return {"action": "write", "statement": output["statement"]}


class IntentGraspMcq(TemplatePrompt):
    """The IntentGrasp evaluation prompt with its prompting slot (DA, CoT or IA).

    With a seed, the options are shown in an order drawn from (seed, item id) and the chosen letters
    are mapped back to the item's own option numbers; without one, they keep the item's order.
    """

    kind = "intent_mcq"
    title = "IntentGrasp multiple choice"
    source = "IntentGrasp (paper 002), Appendix B.1, Figure 6(a); option shuffles of Appendix B.3"

    def __init__(self, name: str, version: int, *, variant: str) -> None:
        super().__init__(name, version, template="intentgrasp_mcq", slots={"prompting": MCQ_PROMPTING[variant]})
        self.variant = variant
        self.title = f"IntentGrasp multiple choice, {variant.upper()}"

    def request_state(self, payload: dict, *, seed: int | None, external_id: str) -> list[int]:
        order = list(range(len(payload["options"])))
        if seed is not None:
            # Seeded by item, not by position in a batch: a chunked, resumed run shows the same orders.
            random.Random(f"{seed}:{external_id}").shuffle(order)
        return order

    def context(self, payload: dict, state: list[int]) -> dict[str, str]:
        options = payload["options"]
        reasoning = '"reasoning": "...", ' if self.variant != "da" else ""
        return {
            "context": payload["context"],
            "question": payload["question"],
            "options": "\n".join(f"{LETTERS[shown]}. {options[original]}" for shown, original in enumerate(state)),
            "answer_format": "{" + reasoning + '"answer": ["A", ...]}',
        }

    def output_schema(self, payload: dict, state: list[int]) -> dict:
        answer = json.loads(json.dumps(self.base_schema["properties"]["answer"]))
        answer["items"]["enum"] = list(LETTERS[: len(state)])
        changes: dict[str, Any] = {"answer": answer}
        if self.variant == "da":
            # Direct answer: no reasoning field, so structured output does not invite a chain of thought.
            changes["reasoning"] = None
        return with_schema_changes(self.base_schema, **changes)

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        order = request.state
        return {"chosen": sorted({order[LETTERS.index(letter)] for letter in output["answer"]})}


class RationaleInspectionVerdict(TemplatePrompt):
    kind = "rationale_inspection"
    title = "CoPA rationale inspection verdict"
    source = "CoPA (paper 001), Appendix B.1 manual inspection criteria"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        context, rationale = payload["context"], payload["rationale"]
        return {
            "history": bullets(context.get("history", [])),
            "question": context["question"],
            "accepted_answer": context["accepted_answer"],
            "other_answers": bullets(context.get("other_answers", [])),
            "rationales": "\n".join(
                f"{n}. Reason: {r['reason']} | Theory: {r['theory']} | Explanation: {r['explanation']}"
                for n, r in enumerate(rationale["rationales"], start=1)
            ),
            "global_explanation": rationale["global_explanation"],
            "factors": ", ".join(f"{k}: {v}" if v else k for k, v in rationale.get("factors", {}).items()) or "(none)",
            "categories": "\n".join(f"- {code}: {text}" for code, text in FAILURE_CATEGORIES.items()),
        }

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        verdict = PASS if output["verdict"] == "pass" else FAIL
        value = {"verdict": verdict, "failure_categories": output["failure_categories"]}
        if output["note"]:
            value["note"] = output["note"]
        return value


# -- generator prompts: data → item data ------------------------------------------------------------


class Generator(TemplatePrompt):
    """Produces item data, not a suggestion; its answer is checked against its own schema only."""

    role = "generator"


class IpqaIntentGeneration(Generator):
    kind = "ipqa_core_intent"
    title = "IPQA intent generation"
    source = "IPQA (paper 000), §2.2.2 initial intent generation"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return ipqa_question(payload)


class IpqaEvalIntentMatching(Generator):
    kind = "ipqa_core_intent"
    title = "IPQA-Eval intent matching"
    source = "IPQA (paper 000), §2.5 IPQA-Eval: LLM evaluator matching predicted and gold core intents"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "question": payload["question"],
            "predicted_intent": payload["predicted_intent"],
            "gold_intent": payload["gold_intent"],
        }


class CopaProfileConstruction(Generator):
    kind = "copa_likert"
    title = "CoPA six-factor profile construction"
    source = "CoPA (paper 001), §4.1 User Profile Construction (50 recent interactions)"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        history = [
            f"Q: {h['question']}" + (f" | Accepted answer: {h['accepted_answer']}" if h.get("accepted_answer") else "")
            for h in payload["history"][-50:]
        ]
        return {"history": bullets(history), "factors": factor_rubric()}


class CopaRationaleExtraction(Generator):
    kind = "rationale_inspection"
    title = "CoPA rationale extraction"
    source = "CoPA (paper 001), §3 Rationale extraction, Figure A1; Tables A1-A3"

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        return {
            "history": bullets(payload.get("history", [])[-50:]),
            "question": payload["question"],
            "accepted_answer": payload["accepted_answer"],
            "other_answers": bullets(payload.get("other_answers", [])),
            "factors": factor_rubric(),
        }


# -- registry -----------------------------------------------------------------------------------------


@dataclass
class _Registry:
    prompts: dict[str, Prompt] = field(default_factory=dict)

    def add(self, prompt: Prompt) -> None:
        if prompt.key in self.prompts:
            raise ValueError(f"prompt {prompt.key} registered twice")
        self.prompts[prompt.key] = prompt


@cache
def _registry() -> _Registry:
    from judges.baselines import BASELINES
    from judges.copa_prompts import COPA_EVALUATORS  # CoPA §5.2 evaluator variants; they build on this module

    registry = _Registry()
    for prompt in (
        CopaLikertEvaluation("copa_likert_evaluation", 1),
        *COPA_EVALUATORS,
        IpqaCoreIntentValidation("ipqa_core_intent_validation", 1),
        LabelStatementDraft("intentgrasp_label_statement", 1),
        IntentGraspMcq("intentgrasp_mcq_da", 1, variant="da"),
        IntentGraspMcq("intentgrasp_mcq_cot", 1, variant="cot"),
        IntentGraspMcq("intentgrasp_mcq_ia", 1, variant="ia"),
        RationaleInspectionVerdict("rationale_inspection_verdict", 1),
        IpqaIntentGeneration("ipqa_intent_generation", 1),
        IpqaEvalIntentMatching("ipqa_eval_intent_matching", 1),
        CopaProfileConstruction("copa_profile_construction", 1),
        CopaRationaleExtraction("copa_rationale_extraction", 1),
        *BASELINES,
    ):
        registry.add(prompt)
    return registry


def all_prompts() -> list[Prompt]:
    return list(_registry().prompts.values())


def get_prompt(name: str) -> Prompt:
    """A prompt by ``name.vN``, or by bare name for its newest version. KeyError if there is none."""
    prompts = _registry().prompts
    if name in prompts:
        return prompts[name]
    versions = [p for p in prompts.values() if p.name == name]
    if not versions:
        raise KeyError(name)
    return max(versions, key=lambda p: p.version)


def prompts_for(*, kind: str, backend: str) -> list[Prompt]:
    """The judge prompts a judge of ``kind`` on ``backend`` may use, the default first."""
    return [p for p in all_prompts() if p.is_judge and p.kind == kind and backend in p.backends]
