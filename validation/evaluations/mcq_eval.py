"""IntentGrasp model evaluation as the paper reports it (paper 002, §4.1, Appendix A.2, A.3, B.3).

Pure functions over per-instance F1 arrays:

- :func:`run_f1`: one run's F1, the per-instance F1 2|C∩A|/(|C|+|A|) averaged over instances (§4.1:
  "we calculate the F1 score for each instance ... which could be single or multiple"). An instance
  the model gave no readable answer for is reported both ways: left out of the mean, and scored 0
  as the released scorer does (a prediction that cannot be extracted matches nothing).
- :func:`spread_over_runs`: the mean and the sample standard deviation (ddof = 1) over runs with
  different option orders (§4.1, App. B.3: no shuffle and shuffles with seeds 7, 42 and 365). Table 8
  is this: Llama3-70B's 42.69, 44.08, 44.36, 44.55 give 43.92 (0.84); 0.84 is the sample std.
- :func:`estimated_human_f1`: App. A.2's human baseline, each source dataset's reported human score
  or inter-annotator agreement weighted by its number of instances, datasets with no reported score
  left out (Table 6's scores and "# All" counts give the paper's 81.1%, its "# Gem" counts 83.3%).
- The random-guess baseline Σ(v/u)·2/(1+v)/N is ``validation.agreement.random_guess_f1`` (App. A.3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from validation.agreement import AgreementResult

__all__ = [
    "NO_ANSWERS",
    "NO_SCORED_DATASET",
    "ONE_RUN",
    "RunF1",
    "Spread",
    "estimated_human_f1",
    "run_f1",
    "spread_over_runs",
]

NO_ANSWERS = "no instance has a readable answer"
NO_INSTANCES = "no instances"
ONE_RUN = "a standard deviation over runs needs at least two runs"
NO_RUNS = "no runs"
NO_SCORED_DATASET = "no dataset of these instances has a reported human score"

LEFT_OUT = "mean per-instance F1 over answered instances (failures left out)"
SCORED_ZERO = "mean per-instance F1 over all instances, failures scored 0 (as the released scorer)"


@dataclass(frozen=True, kw_only=True)
class RunF1:
    """One run's F1 over a set of instances, with parse failures left out and scored 0."""

    failures_left_out: AgreementResult
    failures_scored_zero: AgreementResult
    n_instances: int
    n_answered: int

    @property
    def n_unanswered(self) -> int:
        return self.n_instances - self.n_answered


@dataclass(frozen=True, kw_only=True)
class Spread:
    """Mean and sample standard deviation of a statistic over runs (None with a reason when undefined)."""

    mean: float | None
    std: float | None
    n_runs: int
    reason: str | None = None


def run_f1(f1: npt.ArrayLike) -> RunF1:
    """A run's F1: ``f1`` holds each instance's F1, NaN where the run has no readable answer.

    Parameters
    ----------
    f1 : array_like, shape (n_instances,)

    Returns
    -------
    RunF1
        ``failures_left_out`` averages the answered instances; ``failures_scored_zero`` counts the
        others as 0, i.e. divides the same sum by every instance.
    """
    values = np.asarray(f1, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"f1 must be 1-D (one value per instance); got {values.ndim} dimensions")
    answered = ~np.isnan(values)
    n, k = len(values), int(answered.sum())
    if np.any((values[answered] < 0) | (values[answered] > 1)):
        raise ValueError("per-instance F1 lies in [0, 1]")
    total = float(values[answered].sum())
    left_out = (
        AgreementResult(statistic=total / k, n_units=k, method=LEFT_OUT)
        if k
        else AgreementResult(statistic=None, n_units=0, method=LEFT_OUT, reason=NO_ANSWERS if n else NO_INSTANCES)
    )
    zero = (
        AgreementResult(statistic=total / n, n_units=n, method=SCORED_ZERO)
        if n
        else AgreementResult(statistic=None, n_units=0, method=SCORED_ZERO, reason=NO_INSTANCES)
    )
    return RunF1(failures_left_out=left_out, failures_scored_zero=zero, n_instances=n, n_answered=k)


def spread_over_runs(values: Sequence[float | None]) -> Spread:
    """Mean and sample standard deviation (``numpy.std`` with ddof=1) of one statistic over runs.

    Runs where the statistic is undefined (None) are left out. IntentGrasp reports "Avg.(Std)" over
    the no-shuffle run and the three shuffles (paper 002, Table 8) and 2-sigma error bars (§4.1).
    """
    defined = np.asarray([v for v in values if v is not None], dtype=float)
    if not len(defined):
        return Spread(mean=None, std=None, n_runs=0, reason=NO_RUNS)
    mean = float(defined.mean())
    if len(defined) < 2:
        return Spread(mean=mean, std=None, n_runs=1, reason=ONE_RUN)
    return Spread(mean=mean, std=float(np.std(defined, ddof=1)), n_runs=len(defined))


def estimated_human_f1(counts: Mapping[str, int], scores: Mapping[str, float | None]) -> AgreementResult:
    """The human baseline estimated from source datasets (IntentGrasp, paper 002, Appendix A.2).

    Parameters
    ----------
    counts : mapping of dataset to int
        Instances of each source dataset in the evaluated set.
    scores : mapping of dataset to float or None
        Each dataset's reported human score or inter-annotator agreement in [0, 1]; None (or absent)
        where the dataset reports none.

    Returns
    -------
    AgreementResult
        Σ_d n_d s_d / Σ_d n_d over the datasets with a score; ``n_units`` is Σ_d n_d, the instances
        the estimate covers.
    """
    method = "source datasets' reported human scores weighted by instance count (IntentGrasp App. A.2)"
    weighted = total = 0
    for dataset, n in counts.items():
        if n < 0:
            raise ValueError(f"{dataset}: instance count {n} is negative")
        score = scores.get(dataset)
        if score is None:
            continue
        if not 0 <= score <= 1:
            raise ValueError(f"{dataset}: human score {score} is not in [0, 1]")
        weighted += n * score
        total += n
    if not total:
        return AgreementResult(statistic=None, n_units=0, method=method, reason=NO_SCORED_DATASET)
    return AgreementResult(statistic=weighted / total, n_units=total, method=method)
