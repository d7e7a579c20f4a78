"""Gold values with provenance: the expert's decision, else a known answer, else the raters' majority.

A majority is gold only once the item has the raters it needs (the project's overlap k, or the
``min_raters`` rule a researcher set): one person's answer is not a majority, so until then the item
is "waiting for raters (n of k)". An expert's decision is gold whatever the number of raters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from annotation.kinds import TaskKind

ADJUDICATED, KNOWN_ANSWER, MAJORITY = "adjudicated", "known_answer", "majority"
NO_RATERS = "no ratings yet"
NO_MAJORITY = "no majority among the raters (a tie or a split): an expert decides"
WAITING_FOR_RATERS = "waiting for raters ({n} of {k})"


@dataclass(frozen=True)
class Decision:
    """An expert's adjudication of one item."""

    value: dict
    expert: str
    decided_at: datetime
    note: str = ""


@dataclass(frozen=True)
class Gold:
    """The gold value of one item, or why there is none yet, with where it came from."""

    value: dict | None
    source: str | None
    raters: dict[str, dict] = field(default_factory=dict)
    agreement: float | None = None  # share of raters whose decision matches the gold
    decision: Decision | None = None
    missing_reason: str | None = None
    #: Fewer raters than a majority needs: the item waits for people, not for an expert.
    waiting_for_raters: bool = False

    @property
    def ready(self) -> bool:
        return self.value is not None

    def provenance(self) -> dict:
        return {
            "source": self.source,
            "raters": self.raters,
            "agreement": self.agreement,
            "adjudicator": self.decision.expert if self.decision else None,
            "adjudicated_at": self.decision.decided_at.isoformat() if self.decision else None,
            "adjudication_note": self.decision.note if self.decision else None,
        }


def item_gold(
    *,
    kind: TaskKind,
    values: Mapping[str, dict],
    decision: Decision | None = None,
    known_answer: dict | None = None,
    required_raters: int = 1,
) -> Gold:
    """Gold for one item from its raters' latest values (rater → value).

    A majority counts only from ``required_raters`` raters on (the project's overlap); with fewer,
    the item has no gold yet and says how many raters it has of how many it needs.
    """
    raters = dict(values)
    if decision is None and known_answer is None and len(raters) < required_raters:
        waiting = WAITING_FOR_RATERS.format(n=len(raters), k=required_raters)
        return Gold(None, None, raters, missing_reason=waiting if raters else NO_RATERS, waiting_for_raters=True)
    keys = [kind.decision_key(v) for v in raters.values()]  # once per value: exports call this a million times
    if decision is not None:
        value, source = decision.value, ADJUDICATED
    elif known_answer is not None:
        value, source = known_answer, KNOWN_ANSWER
    else:
        value, source = kind.consensus(list(raters.values()), keys=keys), MAJORITY
    if value is None:
        return Gold(None, None, raters, missing_reason=NO_MAJORITY if raters else NO_RATERS)
    key = kind.decision_key(value)
    agreement = sum(k == key for k in keys) / len(keys) if keys else None
    return Gold(value, source, raters, agreement, decision)
