"""Baselines from the papers: no model, deterministic, and always labelled "baseline".

This module holds what the methods share: :class:`BaselinePrompt` and the lexical measures. Each
kind's methods are in its folder, ``judges/kinds/<kind>/baselines.py`` (listed in ``PROMPTS``).

Overlap works on lower-case word sets without common English function words. Jaccard is
|A ∩ B| / |A ∪ B|; the inclusion coefficient is the share of the reference's words (profile text,
intent) that the other text contains, |R ∩ T| / |R|.
"""

from __future__ import annotations

import re

from annotation.kinds import get_kind
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

    baseline = True

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
