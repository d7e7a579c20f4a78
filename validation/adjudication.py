"""Which items need an expert: disagreement rules, applied to raters' latest values.

Rules work on what every kind already declares (its decision key, its rating dimensions and their
levels), so a new kind gets adjudication without new code here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from annotation.kinds import TaskKind
from validation.aggregation.methods import METHODS

NOT_UNANIMOUS = "raters are not unanimous"
LLM_DIFFERS = "the human majority differs from the LLM evaluator"
ORDINAL_GAP = "{dimension}: ratings differ by {gap} (from {low} to {high})"
SINGLE_RATER = "only one rater so far"
POSTERIOR_BELOW = "{method} posterior {p:.2f} is below {threshold:g}"
BAD_POSTERIOR = "posterior_below must be a number in (0, 1], or null"
BAD_POSTERIOR_METHOD = "posterior_method must be one of {known}"


@dataclass(frozen=True)
class AdjudicationRules:
    """``unanimous``: any difference between raters' decisions; ``ordinal_distance``: an ordinal
    dimension whose ratings are at least this far apart; ``llm_majority``: the human majority
    disagrees with the chosen judge run (so the judge itself is audited); ``min_raters``: how many
    raters an item needs before their majority is gold (null: the project's overlap k);
    ``posterior_below``: the item's lowest posterior under ``posterior_method`` (a crowd-kit model of
    the people, ``validation.aggregation``) is below this probability, so a doubtful label goes to an
    expert."""

    unanimous: bool = True
    ordinal_distance: int | None = None
    llm_majority: bool = False
    min_raters: int | None = None
    posterior_below: float | None = None
    posterior_method: str = "dawid_skene"

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None, *, kind: TaskKind) -> AdjudicationRules:
        merged = {**kind.default_adjudication_rules, **(data or {})}
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(merged) - known)
        if unknown:
            raise ValueError(f"unknown adjudication rule(s) {unknown}; known: {sorted(known)}")
        for name in ("ordinal_distance", "min_raters"):
            number = merged.get(name)
            if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
                raise ValueError(f"{name} must be a whole number ≥ 1, or null")
        for flag in ("unanimous", "llm_majority"):
            if flag in merged and not isinstance(merged[flag], bool):
                raise ValueError(f"{flag} must be true or false")
        posterior = merged.get("posterior_below")
        if posterior is not None and (
            isinstance(posterior, bool) or not isinstance(posterior, int | float) or not 0 < posterior <= 1
        ):
            raise ValueError(BAD_POSTERIOR)
        if merged.get("posterior_method", "dawid_skene") not in METHODS:
            raise ValueError(BAD_POSTERIOR_METHOD.format(known=", ".join(METHODS)))
        return cls(**merged)


def item_disagreements(
    *,
    kind: TaskKind,
    payload: dict,
    values: Mapping[str, dict],
    rules: AdjudicationRules,
    judge_value: dict | None = None,
    posterior: float | None = None,
) -> list[str]:
    """Why this item needs an expert (empty when it does not). ``values`` maps rater → latest value;
    ``posterior`` is the item's lowest posterior under ``rules.posterior_method`` (None: not fitted)."""
    reasons: list[str] = []
    people = list(values.values())
    if len(people) >= 2:
        if rules.unanimous and len({kind.decision_key(v) for v in people}) > 1:
            reasons.append(NOT_UNANIMOUS)
        if rules.ordinal_distance is not None:
            reasons.extend(_ordinal_gaps(kind, payload, people, rules.ordinal_distance))
    # A majority needs two raters at least: one rating differing from the judge is no majority yet.
    if rules.llm_majority and judge_value is not None and len(people) >= 2:
        majority = kind.consensus(people)
        if majority is not None and kind.decision_key(majority) != kind.decision_key(judge_value):
            reasons.append(LLM_DIFFERS)
    if rules.posterior_below is not None and posterior is not None and posterior < rules.posterior_below:
        reasons.append(
            POSTERIOR_BELOW.format(method=rules.posterior_method, p=posterior, threshold=rules.posterior_below)
        )
    return reasons


def required_raters(rules: AdjudicationRules, *, overlap: int) -> int:
    """Raters an item needs before their majority is gold: the researcher's rule, else the overlap k."""
    return rules.min_raters if rules.min_raters is not None else overlap


def _ordinal_gaps(kind: TaskKind, payload: dict, people: list[dict], distance: int) -> list[str]:
    ordinal = {d.name for d in kind.rating_dimensions if d.level in ("ordinal", "interval")}
    ratings: dict[tuple[str, str], list[float]] = {}
    for value in people:
        for suffix, dimension, rating in kind.value_ratings(value, payload):
            if dimension in ordinal and rating is not None:
                ratings.setdefault((dimension, suffix), []).append(float(rating))
    reasons = []
    for (dimension, suffix), found in ratings.items():
        gap = max(found) - min(found)
        if gap >= distance:
            name = f"{dimension} ({suffix})" if suffix else dimension
            reasons.append(
                ORDINAL_GAP.format(dimension=name, gap=f"{gap:g}", low=f"{min(found):g}", high=f"{max(found):g}")
            )
    return reasons
