"""How people treat LLM drafts: accepted unchanged, lightly edited, or rewritten, and by how much.

Pure functions over (draft, final text) pairs. The edit distance is Levenshtein's (insertions,
deletions and substitutions of single characters, each costing 1); the *normalised* distance divides
it by the length of the longer text, so 0 is identical and 1 shares nothing in place.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from validation.agreement import AgreementResult, BootstrapSettings, percentile_interval
from validation.agreement.bootstrap import index_batches, multiplicities

__all__ = ["CATEGORIES", "DraftAcceptance", "draft_acceptance", "levenshtein"]

CATEGORIES = ("unchanged", "lightly_edited", "rewritten")
NO_PAIRS = "no person wrote a statement for an item this judge drafted"


def levenshtein(a: str, b: str) -> int:
    """Levenshtein distance between two strings (Levenshtein 1966; Wagner & Fischer 1974).

    The Wagner-Fischer table is filled a row at a time with NumPy: substitutions and deletions come
    from the previous row, and insertions within the row are a running minimum of ``row[j] - j``
    (a cheaper insertion path to column j comes from some column k < j at cost ``row[k] + j - k``).
    """
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    columns = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1)
    previous = offsets.copy()
    current = np.empty_like(previous)
    for i, character in enumerate(a, start=1):
        current[0] = i
        np.minimum(previous[:-1] + (columns != ord(character)), previous[1:] + 1, out=current[1:])
        previous = np.minimum.accumulate(current - offsets) + offsets
    return int(previous[-1])


@dataclass(frozen=True, kw_only=True)
class DraftAcceptance:
    """What people did with one judge's drafts.

    Shares are of all (draft, final) pairs; ``distances`` and ``normalised`` hold every pair's edit
    distance, for the distribution.
    """

    n_pairs: int
    n_units: int
    light_edit: float
    shares: dict[str, AgreementResult]
    distances: tuple[int, ...]
    normalised: tuple[float, ...]
    bootstrap: BootstrapSettings | None = None

    def quantile(self, q: float) -> float | None:
        return float(np.quantile(self.distances, q)) if self.distances else None

    @property
    def mean_normalised(self) -> float | None:
        return float(np.mean(self.normalised)) if self.normalised else None


def _categories(distances: npt.NDArray[np.int64], normalised: npt.NDArray[np.float64], light: float):
    unchanged = distances == 0
    light_edits = ~unchanged & (normalised <= light)
    return {"unchanged": unchanged, "lightly_edited": light_edits, "rewritten": ~unchanged & ~light_edits}


def draft_acceptance(
    drafts: Sequence[str],
    finals: Sequence[str],
    units: Sequence[Hashable],
    *,
    light_edit: float = 0.2,
    bootstrap: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> DraftAcceptance:
    """Classify each (draft, final) pair and summarise.

    Parameters
    ----------
    drafts, finals : sequence of str
        The LLM's draft and the text the person kept, pairwise. Surrounding whitespace is ignored.
    units : sequence of hashable
        The item each pair belongs to: the bootstrap resamples items, keeping an item's pairs together.
    light_edit : float, default 0.2
        Largest normalised distance that still counts as a light edit.
    bootstrap, seed, confidence_level
        Percentile intervals for the shares, over items.

    Returns
    -------
    DraftAcceptance
    """
    if not 0 <= light_edit < 1:
        raise ValueError(f"light_edit must be in [0, 1); got {light_edit!r}")
    if not len(drafts) == len(finals) == len(units):
        raise ValueError("drafts, finals and units must have one length")
    pairs = [(d.strip(), f.strip()) for d, f in zip(drafts, finals, strict=True)]
    distances = np.array([levenshtein(d, f) for d, f in pairs], dtype=np.int64)
    lengths = np.array([max(len(d), len(f), 1) for d, f in pairs], dtype=float)
    normalised = distances / lengths if len(pairs) else np.zeros(0)
    flags = _categories(distances, normalised, light_edit)
    _, unit_index = np.unique(np.asarray([str(u) for u in units], dtype=object), return_inverse=True)
    n_units = int(unit_index.max()) + 1 if len(pairs) else 0

    def method(name: str) -> str:
        return f"share of pairs {name.replace('_', ' ')} (light edit: normalised Levenshtein <= {light_edit})"

    settings = None
    intervals: dict[str, tuple] = {}
    if bootstrap and len(pairs):
        settings = BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=float(confidence_level))
        draws: dict[str, list[npt.NDArray[np.float64]]] = {name: [] for name in CATEGORIES}
        for indices in index_batches(n_units, bootstrap, seed):
            # Each pair weighs as often as its item was drawn; integer sums, so exact.
            weights = multiplicities(indices, n_units)[:, unit_index]
            total = weights.sum(axis=1)
            for name in CATEGORIES:
                draws[name].append(weights[:, flags[name]].sum(axis=1) / total)
        intervals = {
            name: (percentile_interval(np.concatenate(values), settings), bootstrap) for name, values in draws.items()
        }

    shares = {}
    for name in CATEGORIES:
        interval, used = intervals.get(name, (None, None))
        shares[name] = AgreementResult(
            statistic=float(flags[name].mean()) if len(pairs) else None,
            n_units=n_units,
            method=method(name),
            reason=None if len(pairs) else NO_PAIRS,
            confidence_interval=interval,
            n_resamples=used,
        )
    return DraftAcceptance(
        n_pairs=len(pairs),
        n_units=n_units,
        light_edit=light_edit,
        shares=shares,
        distances=tuple(int(d) for d in distances),
        normalised=tuple(float(x) for x in normalised),
        bootstrap=settings,
    )
