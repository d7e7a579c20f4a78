"""Aggregating one question's answers with a model of the annotators, beside the majority vote.

Pure functions over a long ``task, worker, label`` frame (crowd-kit's input shape); every model is
crowd-kit's (Toloka, Apache-2.0), fitted with the parameters recorded in :data:`METHOD_PARAMETERS`:

- ``majority``: ``MajorityVote``; its probability is the share of votes for the label. A tie has no
  majority (Concord sends ties to an expert), so the label is null there.
- ``dawid_skene``: ``DawidSkene`` (Dawid & Skene 1979); competence is the accuracy implied by the
  worker's confusion matrix ``errors_`` (P(answer = truth), weighted by the class priors ``priors_``),
  and the matrix itself is kept.
- ``mace``: ``MACE`` (Hovy et al. 2013); competence is the posterior probability of knowing the answer
  (``spamming_[:, 1]``) and spamming its complement (``spamming_[:, 0]``).
- ``glad``: ``GLAD`` (Whitehill et al. 2009); competence is the ability ``alphas_`` (a log-odds scale,
  not a probability).
- ``wawa``: ``Wawa``; competence is the accuracy against the majority (``skills_``).

The models treat the values of a question as unordered classes: an ordinal 0/1/2 scale is three
classes whose order none of them uses. Competence intervals are percentile bootstraps over items:
each resample draws items with replacement (``validation.agreement.bootstrap.resamples``) and the
model is fitted again on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from crowdkit.aggregation import GLAD, MACE, DawidSkene, MajorityVote, Wawa

from validation.agreement.bootstrap import bootstrap_iv, percentile_interval, resamples
from validation.agreement.results import BootstrapSettings, ConfidenceInterval

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "METHOD_PARAMETERS",
    "AnnotatorCompetence",
    "FittedModel",
    "QuestionAggregation",
    "aggregate_question",
    "check_method",
    "fit_model",
]

METHODS = ("majority", "dawid_skene", "mace", "glad", "wawa")
METHOD_LABELS = {
    "majority": "Majority vote",
    "dawid_skene": "Dawid–Skene",
    "mace": "MACE",
    "glad": "GLAD",
    "wawa": "Wawa (worker-weighted vote)",
}
#: Each model's crowd-kit parameters besides the seed: crowd-kit's defaults, except MACE's restarts.
#: With an integer ``random_state`` every MACE restart starts from the same draw, so ten restarts
#: give exactly what one gives, at ten times the cost (a test holds it).
METHOD_PARAMETERS: Mapping[str, Mapping[str, Any]] = {
    "majority": {},
    "dawid_skene": {"n_iter": 100, "tol": 1e-5},
    "mace": {"n_restarts": 1, "n_iter": 50, "method": "vb", "smoothing": 0.1, "alpha": 0.5, "beta": 0.5},
    "glad": {"n_iter": 100, "tol": 1e-5},
    "wawa": {},
}
COMPETENCE = {
    "majority": "accuracy against the majority vote (crowd-kit MajorityVote.skills_)",
    "dawid_skene": "accuracy from the confusion matrix: Σ_k prior_k · P(answer k | truth k) (DawidSkene.errors_)",
    "mace": "probability of knowing the answer, 1 − spamming (MACE.spamming_)",
    "glad": "ability α, log-odds scale (GLAD.alphas_)",
    "wawa": "accuracy against the majority vote (crowd-kit Wawa.skills_)",
}
UNKNOWN_METHOD = "unknown aggregation method {method!r}; choose {known}"
NO_ANSWERS = "no answers to aggregate"
ONE_ANNOTATOR = "one annotator: a model of annotators needs at least two"


@dataclass(frozen=True, kw_only=True)
class FittedModel:
    """A crowd-kit model's outputs on one frame: labels and posteriors by task, competence by worker."""

    labels: pd.Series
    probas: pd.DataFrame
    competence: pd.Series
    spamming: pd.Series | None = None
    #: Dawid–Skene's confusion matrices: (worker, observed label) rows, true label columns.
    errors: pd.DataFrame | None = None


@dataclass(frozen=True, kw_only=True)
class AnnotatorCompetence:
    """One annotator's (or, when asked, one run's) competence under a method."""

    rater: str
    competence: float | None
    confidence_interval: ConfidenceInterval | None
    n_items: int
    spamming: float | None = None
    spamming_interval: ConfidenceInterval | None = None
    #: Dawid–Skene: P(answer = column | truth = row), rows and columns in ``QuestionAggregation.classes``.
    confusion: tuple[tuple[float, ...], ...] | None = None
    n_resamples: int | None = None


@dataclass(frozen=True, kw_only=True)
class QuestionAggregation:
    """One question's aggregated labels and annotators' competence under one method.

    Per item (in the order of ``tasks``): the label, its posterior (the vote share for ``majority``),
    the majority vote (None on a tie) and whether the label differs from it.
    """

    method: str
    parameters: dict[str, Any]
    seed: int
    tasks: tuple[Any, ...]
    labels: tuple[Any, ...]
    probability: npt.NDArray[np.float64]
    majority: tuple[Any, ...]
    flipped: npt.NDArray[np.bool_]
    classes: tuple[Any, ...]
    annotators: tuple[AnnotatorCompetence, ...]
    competence_method: str
    bootstrap: BootstrapSettings | None
    reason: str | None = None

    @property
    def flips(self) -> int:
        return int(self.flipped.sum())

    @property
    def ties(self) -> int:
        return sum(m is None for m in self.majority)


def check_method(method: str) -> None:
    """ValueError naming the known methods unless ``method`` is one."""
    if method not in METHODS:
        raise ValueError(UNKNOWN_METHOD.format(method=method, known=", ".join(METHODS)))


def fit_model(frame: pd.DataFrame, *, method: str, seed: int = 0) -> FittedModel:
    """Fit ``method`` (crowd-kit, :data:`METHOD_PARAMETERS`, ``seed`` where the model draws) on a
    ``task, worker, label`` frame."""
    check_method(method)
    parameters = dict(METHOD_PARAMETERS[method])
    if method == "majority":
        vote: Any = MajorityVote()  # crowd-kit types its fitted attributes Optional
        probas = vote.fit_predict_proba(frame)
        return FittedModel(labels=vote.labels_, probas=probas, competence=vote.skills_)
    if method == "wawa":
        wawa: Any = Wawa().fit(frame)
        # Wawa.predict_proba calls scikit-learn's check_is_fitted, which refuses crowd-kit's
        # estimators from scikit-learn 1.6 on; its body is this weighted vote, called the same way.
        vote = MajorityVote()
        probas = vote.fit_predict_proba(frame, skills=wawa.skills_)
        return FittedModel(labels=vote.labels_, probas=probas, competence=wawa.skills_)
    if method == "dawid_skene":
        ds: Any = DawidSkene(**parameters)
        probas = ds.fit_predict_proba(frame)
        errors = ds.errors_
        # P(answer = truth) per worker: the confusion matrix's diagonal weighted by the class priors.
        diagonal = pd.Series(
            {
                (worker, label): errors.at[(worker, label), label]
                for worker, label in errors.index
                if label in errors.columns
            }
        )
        priors = ds.priors_.reindex([label for _, label in diagonal.index]).to_numpy()
        accuracy = (diagonal * priors).groupby(level=0).sum()
        return FittedModel(labels=ds.labels_, probas=probas, competence=accuracy, errors=errors)
    if method == "mace":
        mace: Any = MACE(**parameters, random_state=seed)
        probas = mace.fit_predict_proba(frame)
        # MACE indexes workers in their order of appearance (pandas.factorize).
        workers = pd.Index(pd.factorize(frame["worker"])[1])
        knowing = pd.Series(mace.spamming_[:, 1], index=workers)
        spamming = pd.Series(mace.spamming_[:, 0], index=workers)
        return FittedModel(labels=mace.labels_, probas=probas, competence=knowing, spamming=spamming)
    glad: Any = GLAD(**parameters)
    probas = glad.fit_predict_proba(frame)
    return FittedModel(labels=glad.labels_, probas=probas, competence=glad.alphas_)


def _majority(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """The majority label per task (None on a tie) and the share of votes for the most voted label."""
    shares = MajorityVote().fit_predict_proba(frame)
    top = shares.max(axis=1)
    tied = shares.eq(top, axis=0).sum(axis=1) > 1
    labels = shares.idxmax(axis=1).astype(object)
    labels[tied] = None
    return labels, top


def aggregate_question(
    frame: pd.DataFrame,
    *,
    method: str,
    seed: int = 0,
    bootstrap: int = 0,
    confidence_level: float = 0.95,
) -> QuestionAggregation:
    """Aggregate one question's answers (a ``task, worker, label`` frame, one row per answer).

    Returns the method's label and posterior per task (tasks in sorted order), the majority vote and
    the flips against it, and each worker's competence with a percentile interval from ``bootstrap``
    resamples of the tasks (``seed``), the model fitted again on each.
    """
    check_method(method)
    bootstrap_iv(bootstrap, seed, confidence_level)
    parameters = {**METHOD_PARAMETERS[method], **({"random_state": seed} if method == "mace" else {})}
    settings = (
        BootstrapSettings(n_resamples=bootstrap, seed=seed, confidence_level=confidence_level) if bootstrap else None
    )
    frame = frame[["task", "worker", "label"]].reset_index(drop=True)
    workers = sorted(pd.unique(frame["worker"]))
    empty = {"probability": np.zeros(0), "flipped": np.zeros(0, dtype=bool)}
    if frame.empty or len(workers) < 2:
        return QuestionAggregation(
            method=method, parameters=parameters, seed=seed, tasks=(), labels=(), majority=(), classes=(),
            annotators=tuple(AnnotatorCompetence(rater=w, competence=None, confidence_interval=None, n_items=int(
                (frame["worker"] == w).sum())) for w in workers),
            competence_method=COMPETENCE[method], bootstrap=settings,
            reason=NO_ANSWERS if frame.empty else ONE_ANNOTATOR, **empty,
        )  # fmt: skip
    fitted = fit_model(frame, method=method, seed=seed)
    tasks = sorted(pd.unique(frame["task"]))
    majority, share = _majority(frame)
    majority = majority.reindex(tasks)
    if method == "majority":
        labels = majority
        probability = share.reindex(tasks).to_numpy(dtype=float)
    else:
        labels = fitted.labels.reindex(tasks)
        # Each task's posterior of its own label, read from crowd-kit's table in one indexing.
        probas = fitted.probas.reindex(tasks)
        columns = probas.columns.get_indexer(pd.Index(labels))
        probability = probas.to_numpy(dtype=float)[np.arange(len(tasks)), columns]
    majority_values = majority.to_numpy(dtype=object)
    flipped = pd.notna(majority_values) & (labels.to_numpy(dtype=object) != majority_values)
    classes = tuple(sorted(pd.unique(frame["label"]).tolist(), key=_sort_key))
    intervals = _competence_intervals(frame, method=method, seed=seed, settings=settings, workers=workers)
    counts = frame.groupby("worker")["task"].nunique()
    annotators = []
    for worker in workers:
        spam = None if fitted.spamming is None else float(fitted.spamming[worker])
        annotators.append(
            AnnotatorCompetence(
                rater=str(worker),
                competence=_number(fitted.competence.get(worker)),
                confidence_interval=intervals.get((worker, "competence")),
                n_items=int(counts[worker]),
                spamming=spam,
                spamming_interval=intervals.get((worker, "spamming")),
                confusion=_confusion(fitted.errors, worker, classes),
                n_resamples=bootstrap or None,
            )
        )
    return QuestionAggregation(
        method=method, parameters=parameters, seed=seed, tasks=tuple(tasks), labels=tuple(labels),
        probability=probability, majority=tuple(majority), flipped=flipped, classes=classes,
        annotators=tuple(annotators), competence_method=COMPETENCE[method], bootstrap=settings,
    )  # fmt: skip


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if np.isfinite(number) else None


def _confusion(
    errors: pd.DataFrame | None, worker: Any, classes: tuple[Any, ...]
) -> tuple[tuple[float, ...], ...] | None:
    """P(answer = column | truth = row) from Dawid–Skene's ``errors_`` (observed rows, true columns)."""
    if errors is None:
        return None
    block: Any = errors.xs(worker, level="worker")
    block = block.reindex(index=list(classes), columns=list(classes)).fillna(0.0)
    return tuple(tuple(float(x) for x in row) for row in block.to_numpy().T)


def _competence_intervals(
    frame: pd.DataFrame,
    *,
    method: str,
    seed: int,
    settings: BootstrapSettings | None,
    workers: list[Any],
) -> dict[tuple[Any, str], ConfidenceInterval | None]:
    """Percentile intervals of each worker's competence (and MACE's spamming) over resampled tasks."""
    if settings is None:
        return {}
    codes, uniques = pd.factorize(frame["task"], sort=True)
    rows_of = pd.Series(np.arange(len(frame))).groupby(codes).apply(np.asarray).to_dict()

    def compute(units: npt.NDArray[np.intp]) -> tuple[pd.Series, pd.Series | None]:
        # A task drawn twice enters as two tasks: the resample's position names it.
        rows = np.concatenate([rows_of[u] for u in units])
        positions = np.repeat(np.arange(len(units)), [len(rows_of[u]) for u in units])
        sample = pd.DataFrame(
            {"task": positions, "worker": frame["worker"].to_numpy()[rows], "label": frame["label"].to_numpy()[rows]}
        )
        fitted = fit_model(sample, method=method, seed=seed)
        return fitted.competence, fitted.spamming

    draws: dict[tuple[Any, str], list[float]] = {}
    for competence, spamming in resamples(compute, len(uniques), settings.n_resamples, settings.seed):
        for worker in workers:
            for key, series in (("competence", competence), ("spamming", spamming)):
                value = None if series is None else _number(series.get(worker))
                if value is not None:
                    draws.setdefault((worker, key), []).append(value)
    return {key: percentile_interval(values, settings) for key, values in draws.items()}
