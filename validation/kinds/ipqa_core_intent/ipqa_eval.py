"""IPQA-Eval: predicted core intents against gold core intents (IPQA, paper 000, §2.1).

IPQA §2.1 states the task: a system predicts core intents Î_c = M(q, P_u) for a user's question, and
the evaluation framework IPQA-Eval compares them with the gold core intents I_c to give an intent
identification score, S_intent = IPQA-Eval(Î_c, I_c), using an LLM evaluator that decides whether a
predicted intent matches a gold one (§1: its meta-evaluation agrees strongly with human judgement).
The section that defines the score's formula is not in the text at hand, so the score here is stated
in full and is ours:

- Per item, the matcher's decisions form a bipartite graph between predicted and gold intents (an
  edge where it said "match"). A one-to-one matching with the most pairs is taken
  (:func:`maximum_matching`, ``scipy.optimize.linear_sum_assignment`` on the 0/1 match matrix), so one
  gold intent is never credited twice and one prediction never covers two gold intents.
- With m matched pairs: precision m / |Î_c|, recall m / |I_c|, F1 = 2PR / (P + R) = 2m / (|Î_c| + |I_c|)
  (0 when m = 0). An item with no predicted intent scores 0 on all three.
- Overall: the macro average over items of each, with a percentile bootstrap interval over items (one
  seeded draw of items per resample shared by the three; ``validation.agreement.bootstrap``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from validation.agreement import AgreementResult, BootstrapSettings, ConfidenceInterval
from validation.agreement.bootstrap import bootstrap_iv, percentile_interval, resamples

__all__ = [
    "NO_ITEMS",
    "ItemScore",
    "MacroScores",
    "item_score",
    "macro_scores",
    "maximum_matching",
]

NO_ITEMS = "no item has every (predicted, gold) pair judged"
MEASURES = ("precision", "recall", "f1")
METHODS = {
    "precision": "mean over items of matched / predicted core intents (IPQA-Eval, one-to-one matching)",
    "recall": "mean over items of matched / gold core intents (IPQA-Eval, one-to-one matching)",
    "f1": "mean over items of 2PR/(P+R) = 2 matched / (predicted + gold) (IPQA-Eval, one-to-one matching)",
}


def maximum_matching(matches: npt.ArrayLike) -> list[tuple[int, int]]:
    """A one-to-one matching with the most pairs, as (predicted index, gold index) pairs in predicted order.

    Parameters
    ----------
    matches : array_like of bool, shape (n_predicted, n_gold)
        True where the matcher said the predicted intent matches the gold one.

    Notes
    -----
    ``linear_sum_assignment(..., maximize=True)`` on the 0/1 matrix gives an assignment of the largest
    total, i.e. the largest number of matched pairs; assigned cells that are 0 are no match and dropped.
    """
    array = np.asarray(matches, dtype=bool)
    if array.ndim != 2:
        raise ValueError(f"matches must be 2-D (predicted x gold); got shape {array.shape}")
    if not array.size:
        return []
    rows, columns = linear_sum_assignment(array.astype(float), maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, columns, strict=True) if array[r, c]]


@dataclass(frozen=True, kw_only=True)
class ItemScore:
    """One item's scores: the matching and precision, recall and F1 from it."""

    n_predicted: int
    n_gold: int
    matching: tuple[tuple[int, int], ...]
    precision: float
    recall: float
    f1: float

    @property
    def matched(self) -> int:
        return len(self.matching)


def item_score(matches: npt.ArrayLike) -> ItemScore:
    """Precision, recall and F1 of one item from its (predicted x gold) match matrix.

    A matrix with no predicted row scores 0 (nothing was identified); one with no gold column is refused
    (recall would be undefined: such items are left out before scoring).
    """
    array = np.asarray(matches, dtype=bool)
    if array.ndim != 2:
        raise ValueError(f"matches must be 2-D (predicted x gold); got shape {array.shape}")
    n_predicted, n_gold = array.shape
    if not n_gold:
        raise ValueError("an item needs at least one gold core intent")
    matching = tuple(maximum_matching(array))
    m = len(matching)
    precision = m / n_predicted if n_predicted else 0.0
    recall = m / n_gold
    f1 = 2 * m / (n_predicted + n_gold)
    return ItemScore(
        n_predicted=n_predicted, n_gold=n_gold, matching=matching, precision=precision, recall=recall, f1=f1
    )


@dataclass(frozen=True, kw_only=True)
class MacroScores:
    """Macro precision, recall and F1 over items, each with its bootstrap interval."""

    precision: AgreementResult
    recall: AgreementResult
    f1: AgreementResult
    n_items: int
    bootstrap: BootstrapSettings | None = None


def macro_scores(
    scores: list[ItemScore], *, bootstrap: int = 0, seed: int = 0, confidence_level: float = 0.95
) -> MacroScores:
    """The mean of each item's precision, recall and F1, with percentile bootstrap intervals over items.

    Every resample draws items with replacement once and averages the three columns on that draw.
    No item gives None statistics with ``NO_ITEMS`` as the reason.
    """
    bootstrap_iv(bootstrap, seed, confidence_level)
    n = len(scores)
    if not n:
        empty: dict[str, Any] = {
            m: AgreementResult(statistic=None, n_units=0, method=METHODS[m], reason=NO_ITEMS) for m in MEASURES
        }
        return MacroScores(**empty, n_items=0)
    columns = np.array([[getattr(s, m) for m in MEASURES] for s in scores], dtype=float)
    settings: BootstrapSettings | None = None
    intervals: list[ConfidenceInterval | None] = [None] * len(MEASURES)
    if bootstrap:
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        draws = np.array(list(resamples(lambda rows: columns[rows].mean(axis=0), n, bootstrap, seed)))
        intervals = [percentile_interval(list(draws[:, j]), settings) for j in range(len(MEASURES))]
    means = columns.mean(axis=0)
    results = {
        m: AgreementResult(
            statistic=float(means[j]),
            confidence_interval=intervals[j],
            n_units=n,
            method=METHODS[m],
            n_resamples=bootstrap if settings else None,
        )
        for j, m in enumerate(MEASURES)
    }
    return MacroScores(**results, n_items=n, bootstrap=settings)
