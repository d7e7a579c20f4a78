"""Gold values with provenance: the expert's decision, else a known answer, else the raters' majority."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from annotation.kinds import TaskKind

ADJUDICATED, KNOWN_ANSWER, MAJORITY = "adjudicated", "known_answer", "majority"
NO_RATERS = "no ratings yet"
NO_MAJORITY = "no majority among the raters (a tie or a split): an expert decides"


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
    *, kind: TaskKind, values: Mapping[str, dict], decision: Decision | None = None, known_answer: dict | None = None
) -> Gold:
    """Gold for one item from its raters' latest values (rater → value)."""
    raters = dict(values)
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
