"""Baselines from the papers: no model, deterministic, and always labelled "baseline".

- ``intent_mcq``: IntentGrasp's random guess (paper 002, Appendix A.3): one option drawn uniformly,
  seeded by (judge seed, item), so a rerun guesses the same.
- ``copa_likert``: lexical overlap between each factor's profile text and the response, as in CoPA's
  Jaccard and Inclusion Coefficient rows (paper 001, Table 3, after Su et al. 2025), mapped to the
  0/1/2 scale by the fixed thresholds below.
- ``ipqa_core_intent``: the same overlaps between each candidate intent and question + narrative
  (expressed), and the selected answer (core, only when expressed).
- ``label_contextualization``: a plain draft, "To <label words>.".

Overlap works on lower-case word sets without common English function words. Jaccard is
|A ∩ B| / |A ∪ B|; the inclusion coefficient is the share of the reference's words (profile text,
intent) that the other text contains, |R ∩ T| / |R|.
"""

from __future__ import annotations

import random
import re
from typing import Any

from annotation.kinds import get_kind
from annotation.kinds.copa_likert import FACTORS
from judges.prompting import JudgeRequest, Prompt, sha256_json

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just me more most my no nor not now
    of off on once only or other our ours out over own same she should so some such than that the their
    theirs them then there these they this those through to too under until up very was we were what when
    where which while who whom why will with would you your yours
    """.split()  # noqa: SIM905 - a word list reads better as text
)
#: Overlap at or above the first bound scores 1 (Partial), at or above the second 2 (Full).
COPA_BOUNDS = {"jaccard": (0.05, 0.15), "inclusion": (0.2, 0.5)}
#: Overlap at or above this counts as "expressed" (with question + narrative) or "core" (with the answer).
IPQA_BOUND = {"jaccard": 0.1, "inclusion": 0.5}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def jaccard(a: str, b: str) -> float:
    left, right = words(a), words(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def inclusion(reference: str, text: str) -> float:
    """The share of the reference's words that ``text`` contains."""
    ref = words(reference)
    return len(ref & words(text)) / len(ref) if ref else 0.0


OVERLAP = {"jaccard": jaccard, "inclusion": inclusion}


def label_words(label: str) -> str:
    """``CompareOrContrast`` → ``compare or contrast``; ``book_flight`` → ``book flight``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", label)
    return " ".join(re.split(r"[\s_\-/]+", spaced)).strip().lower()


class BaselinePrompt(Prompt):
    """A method in place of a prompt: the "request" is the item itself, the answer is computed."""

    backends = ("baseline",)

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        seed = seed or 0
        return JudgeRequest(
            item_id=item_id,
            payload=payload,
            prompt_sha256=sha256_json({"method": self.key, "input": payload, "seed": seed}),
            schema=get_kind(self.kind).value_schema,
            state=external_id,
            seed=seed,
        )

    def compute(self, request: JudgeRequest) -> dict:
        raise NotImplementedError("subclasses of BaselinePrompt must provide compute()")

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return output


class CopaOverlap(BaselinePrompt):
    kind = "copa_likert"
    source = "CoPA (paper 001), Table 3: Jaccard and Incl. Coeff. heuristics"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version)
        self.measure = measure
        self.title = f"Baseline: lexical {measure} overlap, profile vs response"

    def compute(self, request: JudgeRequest) -> dict:
        low, high = COPA_BOUNDS[self.measure]
        overlap = OVERLAP[self.measure]
        response, profile = request.payload["response"], request.payload["profile"]
        scores = {}
        for code in FACTORS:
            score = overlap(profile[code], response)
            scores[code] = 2 if score >= high else 1 if score >= low else 0
        return {"scores": scores}


class IpqaOverlap(BaselinePrompt):
    kind = "ipqa_core_intent"
    source = "CoPA (paper 001), Table 3 heuristics applied to IPQA candidate intents"

    def __init__(self, name: str, version: int, *, measure: str) -> None:
        super().__init__(name, version)
        self.measure = measure
        self.title = f"Baseline: lexical {measure} overlap, intent vs question and answer"

    def compute(self, request: JudgeRequest) -> dict:
        payload, bound, overlap = request.payload, IPQA_BOUND[self.measure], OVERLAP[self.measure]
        stated = f"{payload['question']} {payload.get('narrative', '')}"
        judgements = []
        for intent in payload["candidate_intents"]:
            expressed = overlap(intent, stated) >= bound
            core = expressed and overlap(intent, payload["selected_answer"]) >= bound
            judgements.append({"intent": intent, "expressed": expressed, "core": core})
        return {"intents": judgements}


class McqRandomGuess(BaselinePrompt):
    kind = "intent_mcq"
    title = "Baseline: random guess (one option)"
    source = "IntentGrasp (paper 002), Appendix A.3 random-guess baseline"

    def compute(self, request: JudgeRequest) -> dict:
        rng = random.Random(f"{request.seed}:{request.state}")
        return {"chosen": [rng.randrange(len(request.payload["options"]))]}


class LabelPlainDraft(BaselinePrompt):
    kind = "label_contextualization"
    title = "Baseline: plain draft from the label"
    source = "IntentGrasp (paper 002), §3 Stage 2; the label's own words as a statement"

    def compute(self, request: JudgeRequest) -> dict[str, Any]:
        return {"action": "write", "statement": f"To {label_words(request.payload['label'])}."}


BASELINES: list[BaselinePrompt] = [
    CopaOverlap("copa_jaccard", 1, measure="jaccard"),
    CopaOverlap("copa_inclusion", 1, measure="inclusion"),
    IpqaOverlap("ipqa_jaccard", 1, measure="jaccard"),
    IpqaOverlap("ipqa_inclusion", 1, measure="inclusion"),
    McqRandomGuess("mcq_random_guess", 1),
    LabelPlainDraft("label_plain_draft", 1),
]
