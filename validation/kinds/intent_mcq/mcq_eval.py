"""IntentGrasp model evaluation as the paper reports it (paper 002, §4.1, Appendix A.2, A.3, B.3).

Pure functions over per-instance F1 arrays:

- :func:`run_f1`: one run's F1, the per-instance F1 2|C∩A|/(|C|+|A|) averaged over instances (§4.1:
  "we calculate the F1 score for each instance ... which could be single or multiple"). An instance
  the model gave no readable answer for is reported both ways: left out of the mean, and scored 0
  as the released scorer does (a prediction that cannot be extracted matches nothing). An answer the
  released scorer can partly read (valid letters beside invalid ones) gets its partial credit in the
  scored-0 way only (:func:`partial_credit_f1`); it stays a failure in the other.
- :func:`spread_over_runs`: the mean and the standard deviation over runs with different option
  orders (§4.1, App. B.3: no shuffle and shuffles with seeds 7, 42 and 365), with its 2-sigma error
  bar (Figures 2, 5, 7). The paper uses two standard deviations: Table 8's All Set block the sample
  std (ddof = 1: Llama3-70B's 42.69, 44.08, 44.36, 44.55 give 43.92 (0.84)), Table 8's Gem Set
  block, Table 9 and Table 2 the population std (ddof = 0: Llama3-70B's Gem Set 0.00, 5.95, 5.17,
  5.26 give 4.10 (2.38); Table 2 prints Qwen3-4B's All Set 38.14 (±0.99) from Table 8's runs, whose
  sample std is 1.14). ``STD_DDOF`` names both.
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
    "STD_DDOF",
    "RunF1",
    "Spread",
    "average_over_models",
    "estimated_human_f1",
    "partial_credit_f1",
    "run_f1",
    "spread_over_runs",
]

NO_ANSWERS = "no instance has a readable answer"
NO_INSTANCES = "no instances"
ONE_RUN = "a standard deviation over runs needs at least two runs"
NO_RUNS = "no runs"
NO_SCORED_DATASET = "no dataset of these instances has a reported human score"
UNKNOWN_STD = "unknown standard deviation {name!r}; use sample (ddof 1) or population (ddof 0)"

#: The standard deviations over runs the paper prints, by name: ``sample`` (Table 8's All Set block)
#: and ``population`` (Table 8's Gem Set block, Table 9, Table 2).
STD_DDOF = {"sample": 1, "population": 0}

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
    """Mean and standard deviation (with ``ddof``) of a statistic over runs (None with a reason when
    undefined), and the 2-sigma error bar mean ± 2·std the paper draws (§4.1, Figures 2, 5, 7)."""

    mean: float | None
    std: float | None
    n_runs: int
    ddof: int = 1
    reason: str | None = None

    @property
    def two_sigma(self) -> float | None:
        return None if self.std is None else 2 * self.std

    @property
    def error_bar(self) -> tuple[float, float] | None:
        if self.mean is None or self.std is None:
            return None
        return (self.mean - 2 * self.std, self.mean + 2 * self.std)


def partial_credit_f1(chosen: Sequence[int], n_invalid: int, answers: Sequence[int]) -> float:
    """The released scorer's F1 of an answer mixing valid and invalid letters.

    The valid letters are scored against the key and each distinct invalid letter counts as a wrong
    choice: 2|C∩A| / (|C| + n_invalid + |A|), with C the valid choices (IntentGrasp §4.1's per-instance F1
    with the invalid letters in the prediction set).
    """
    if n_invalid < 0:
        raise ValueError("n_invalid is a count")
    chosen_set, key = set(chosen), set(answers)
    if not key:
        raise ValueError("the key has at least one answer")
    return 2 * len(chosen_set & key) / (len(chosen_set) + n_invalid + len(key))


def run_f1(f1: npt.ArrayLike, *, failure_credit: npt.ArrayLike | None = None) -> RunF1:
    """A run's F1: ``f1`` holds each instance's F1, NaN where the run has no readable answer.

    Parameters
    ----------
    f1 : array_like, shape (n_instances,)
    failure_credit : array_like, shape (n_instances,), optional
        What the scored-0 way credits an instance without a readable answer instead of 0 (the
        released scorer's partial credit, :func:`partial_credit_f1`); read only where ``f1`` is NaN,
        NaN there meaning 0.

    Returns
    -------
    RunF1
        ``failures_left_out`` averages the answered instances; ``failures_scored_zero`` counts the
        others as 0 (or their partial credit), dividing by every instance.
    """
    values = np.asarray(f1, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"f1 must be 1-D (one value per instance); got {values.ndim} dimensions")
    answered = ~np.isnan(values)
    n, k = len(values), int(answered.sum())
    if np.any((values[answered] < 0) | (values[answered] > 1)):
        raise ValueError("per-instance F1 lies in [0, 1]")
    credit = 0.0
    if failure_credit is not None:
        partial = np.asarray(failure_credit, dtype=float)
        if partial.shape != values.shape:
            raise ValueError("failure_credit has one value per instance")
        partial = np.nan_to_num(partial[~answered], nan=0.0)
        if np.any((partial < 0) | (partial > 1)):
            raise ValueError("partial credit lies in [0, 1]")
        credit = float(partial.sum())
    total = float(values[answered].sum())
    left_out = (
        AgreementResult(statistic=total / k, n_units=k, method=LEFT_OUT)
        if k
        else AgreementResult(statistic=None, n_units=0, method=LEFT_OUT, reason=NO_ANSWERS if n else NO_INSTANCES)
    )
    zero = (
        AgreementResult(statistic=(total + credit) / n, n_units=n, method=SCORED_ZERO)
        if n
        else AgreementResult(statistic=None, n_units=0, method=SCORED_ZERO, reason=NO_INSTANCES)
    )
    return RunF1(failures_left_out=left_out, failures_scored_zero=zero, n_instances=n, n_answered=k)


def spread_over_runs(values: Sequence[float | None], *, ddof: int = 1) -> Spread:
    """Mean and standard deviation (``numpy.std`` with ``ddof``) of one statistic over runs.

    Runs where the statistic is undefined (None) are left out. IntentGrasp reports "Avg.(Std)" over
    the no-shuffle run and the three shuffles (paper 002, Table 8) and 2-sigma error bars (§4.1);
    ``ddof`` 1 is the sample std (Table 8, All Set), 0 the population std (Table 8, Gem Set; Tables 9
    and 2). Either way one run has no spread: a single run's population std of 0 would read as
    "no variation over option orders", which one order cannot show.
    """
    if ddof not in STD_DDOF.values():
        raise ValueError(UNKNOWN_STD.format(name=ddof))
    defined = np.asarray([v for v in values if v is not None], dtype=float)
    if not len(defined):
        return Spread(mean=None, std=None, n_runs=0, ddof=ddof, reason=NO_RUNS)
    mean = float(defined.mean())
    if len(defined) < 2:
        return Spread(mean=mean, std=None, n_runs=1, ddof=ddof, reason=ONE_RUN)
    return Spread(mean=mean, std=float(np.std(defined, ddof=ddof)), n_runs=len(defined), ddof=ddof)


def average_over_models(means: Sequence[float | None]) -> float | None:
    """The "Avg. over Models" row (IntentGrasp Tables 10 and 11): the unweighted mean of the models'
    means over their runs, models without a value left out (None when none has one)."""
    defined = [m for m in means if m is not None]
    return float(np.mean(defined)) if defined else None


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
    weighted: float = 0
    total = 0
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
