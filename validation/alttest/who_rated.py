"""Beside the replace test: agreement by who rated, and the calibration of a run's confidence.

Agreement by who rated, per dimension, as Krippendorff's alpha at the dimension's level (through
``validation.agreement.joint_agreement``, so every interval is the shared percentile bootstrap over
units):

- *people with people*: alpha among all the people;
- *a run with people (leave-one-out)*: for each person, alpha among the people with the run in that
  person's place. Beside the people's alpha it shows whether the model sits inside the people's
  spread: a run that rates like one more person leaves alpha where it is;
- *runs with each other*: alpha between every two runs.

Calibration, where a run's lines carry ``score`` (the model's confidence in its answer, 0-1): on
every unit (item x dimension) with a people's majority (a strict plurality; ties are left out and
counted), the run is right when its label is the majority's. The reliability diagram bins the
scores in 10 equal bins (``scipy.stats.binned_statistic``); the expected calibration error is the
bins' |accuracy - mean confidence| weighted by their shares of the units (Guo et al. 2017, eq. 3);
the Brier score is the mean squared difference between score and rightness (Brier 1950).

References
----------
Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural
networks. ICML 2017.
Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. Monthly Weather
Review 78(1), 1-3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from validation.agreement import AgreementResult, DimensionInput, joint_agreement

__all__ = [
    "BINS",
    "Calibration",
    "ReliabilityBin",
    "RunInPlace",
    "WhoRated",
    "calibration",
    "people_majority",
    "who_rated",
]

BINS = 10
CALIBRATION_METHOD = "10 equal-width bins of the score (scipy.stats.binned_statistic); ECE (Guo et al. 2017); Brier"
NO_SCORED_UNITS = "no unit has both a score from the run and a people's majority"
NEEDS_TWO_PEOPLE = "needs at least 2 people"


@dataclass(frozen=True, kw_only=True)
class RunInPlace:
    """A run in one person's place among the people: alpha of that rater set."""

    run: str
    replaced: str
    alpha: AgreementResult


@dataclass(frozen=True, kw_only=True)
class WhoRated:
    """One dimension's agreement by who rated."""

    dimension: str
    level: str
    people: AgreementResult
    runs_in_place: tuple[RunInPlace, ...]
    run_pairs: tuple[tuple[str, str, AgreementResult], ...]


def who_rated(
    people: Mapping[str, npt.NDArray[Any]],
    levels: Mapping[str, str],
    runs: Mapping[str, Mapping[str, npt.NDArray[Any]]],
    raters: Sequence[str],
    *,
    bootstrap: int,
    seed: int,
    confidence_level: float = 0.95,
) -> list[WhoRated]:
    """Agreement by who rated on every dimension.

    Parameters
    ----------
    people : mapping of dimension to array (units x people)
    levels : mapping of dimension to level
    runs : mapping of run to (mapping of dimension to array over the units)
    raters : the people's names, in column order
    bootstrap, seed, confidence_level : as for ``validation.agreement.joint_agreement``
    """
    n_people = len(raters)
    columns = [f"c{j}" for j in range(max(n_people, 2))]
    together: dict[str, DimensionInput] = {}
    for name, matrix in people.items():
        if n_people < 2:
            continue
        together[f"{name}\x1f"] = DimensionInput(ratings=matrix, level=levels[name])  # type: ignore[arg-type]
        for run, values in runs.items():
            for j, person in enumerate(raters):
                swapped = matrix.copy()
                swapped[:, j] = values[name]
                together[f"{name}\x1f{run}\x1f{person}"] = DimensionInput(
                    ratings=swapped,
                    level=levels[name],  # type: ignore[arg-type]
                )
    joint = (
        joint_agreement(
            together, raters=columns[:n_people], bootstrap=bootstrap, seed=seed, confidence_level=confidence_level
        ).dimensions
        if together
        else {}
    )
    pairs: dict[str, DimensionInput] = {}
    for name in people:
        for a, b in combinations(runs, 2):
            stacked = np.column_stack([runs[a][name], runs[b][name]])
            pairs[f"{name}\x1f{a}\x1f{b}"] = DimensionInput(ratings=stacked, level=levels[name])  # type: ignore[arg-type]
    paired = (
        joint_agreement(
            pairs, raters=["a", "b"], bootstrap=bootstrap, seed=seed, confidence_level=confidence_level
        ).dimensions
        if pairs
        else {}
    )
    out = []
    for name in people:
        if n_people < 2:
            missing = AgreementResult(statistic=None, n_units=0, method="Krippendorff's alpha", reason=NEEDS_TWO_PEOPLE)
            out.append(WhoRated(dimension=name, level=levels[name], people=missing, runs_in_place=(), run_pairs=()))
            continue
        out.append(
            WhoRated(
                dimension=name,
                level=levels[name],
                people=joint[f"{name}\x1f"].krippendorff_alpha,
                runs_in_place=tuple(
                    RunInPlace(run=run, replaced=person, alpha=joint[f"{name}\x1f{run}\x1f{person}"].krippendorff_alpha)
                    for run in runs
                    for person in raters
                ),
                run_pairs=tuple(
                    (a, b, paired[f"{name}\x1f{a}\x1f{b}"].krippendorff_alpha) for a, b in combinations(runs, 2)
                ),
            )
        )
    return out


def people_majority(matrix: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]]:
    """Each unit's strict plurality label among the people (None where there is none), and where
    that is because of a tie."""
    present = np.vectorize(_present, otypes=[bool])(matrix) if matrix.dtype == object else ~np.isnan(matrix)
    out = np.full(len(matrix), None, dtype=object)
    if not present.any():
        return out, np.zeros(len(matrix), dtype=bool)
    labels, codes = np.unique(matrix[present], return_inverse=True)
    counts = np.zeros((len(matrix), len(labels)), dtype=np.int64)
    np.add.at(counts, (np.nonzero(present)[0], codes), 1)
    top = counts.max(axis=1)
    n_top = (counts == top[:, None]).sum(axis=1)
    single = (top > 0) & (n_top == 1)
    out[single] = labels[counts[single].argmax(axis=1)]
    return out, (top > 0) & (n_top > 1)


@dataclass(frozen=True, kw_only=True)
class ReliabilityBin:
    """One bin of the reliability diagram: scores in [low, high)."""

    low: float
    high: float
    n: int
    confidence: float | None
    accuracy: float | None


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """A run's confidence against the people's majority."""

    run: str
    scope: str
    n_units: int
    n_ties: int
    ece: float | None
    brier: float | None
    bins: tuple[ReliabilityBin, ...]
    method: str = CALIBRATION_METHOD
    reason: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = {
            "run": self.run,
            "scope": self.scope,
            "n_units": self.n_units,
            "n_ties": self.n_ties,
            "ece": self.ece,
            "brier": self.brier,
            "bins": [
                {"low": b.low, "high": b.high, "n": b.n, "confidence": b.confidence, "accuracy": b.accuracy}
                for b in self.bins
            ],
        }
        if self.reason:
            data["reason"] = self.reason
        return data


def calibration(
    run: str,
    scope: str,
    labels: npt.NDArray[Any],
    scores: npt.NDArray[np.float64],
    majority: npt.NDArray[Any],
    tied: npt.NDArray[np.bool_],
) -> Calibration:
    """ECE, Brier score and the 10-bin reliability diagram of ``scores`` against ``majority``.

    ``labels`` is the run's label per unit (None or NaN: none), ``scores`` its confidence (NaN: none),
    ``majority`` the people's (None: none) and ``tied`` where a tie is why (counted in ``n_ties``
    where the run answered).
    """
    answered = np.asarray([_present(v) for v in labels]) & ~np.isnan(scores)
    has_majority = np.asarray([m is not None for m in majority])
    n_ties = int((answered & tied).sum())
    used = answered & has_majority
    edges = np.linspace(0.0, 1.0, BINS + 1)
    if not used.any():
        empty = tuple(
            ReliabilityBin(low=float(edges[k]), high=float(edges[k + 1]), n=0, confidence=None, accuracy=None)
            for k in range(BINS)
        )
        return Calibration(
            run=run, scope=scope, n_units=0, n_ties=n_ties, ece=None, brier=None, bins=empty, reason=NO_SCORED_UNITS
        )
    right = np.asarray([labels[i] == majority[i] for i in np.flatnonzero(used)], dtype=float)
    score = scores[used]
    # The last bin is closed, as binned_statistic's is: a score of 1 falls in [0.9, 1].
    counts = stats.binned_statistic(score, right, statistic="count", bins=edges).statistic
    accuracy = stats.binned_statistic(score, right, statistic="mean", bins=edges).statistic
    confidence = stats.binned_statistic(score, score, statistic="mean", bins=edges).statistic
    filled = counts > 0
    ece = float(np.sum(counts[filled] / counts.sum() * np.abs(accuracy[filled] - confidence[filled])))
    bins = tuple(
        ReliabilityBin(
            low=float(edges[k]),
            high=float(edges[k + 1]),
            n=int(counts[k]),
            confidence=float(confidence[k]) if filled[k] else None,
            accuracy=float(accuracy[k]) if filled[k] else None,
        )
        for k in range(BINS)
    )
    return Calibration(
        run=run,
        scope=scope,
        n_units=int(used.sum()),
        n_ties=n_ties,
        ece=ece,
        brier=float(np.mean((score - right) ** 2)),
        bins=bins,
    )


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))
