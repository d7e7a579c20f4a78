"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025, §3 and Algorithm 1): pure functions.

May a model's labels replace people's? Leave one annotator out at a time. On every unit that
annotator rated, compare how well the excluded annotator and the model each align with the
remaining annotators: the model *wins* the unit when its alignment is at least the annotator's,
the annotator wins when theirs is at least the model's (a tie is a win for both). Per annotator, a
one-sided one-sample t-test of (annotator wins − model wins) against ε (``scipy.stats.ttest_1samp``,
``alternative="less"``): rejecting says the annotator is not better than the model by ε. The
Benjamini–Yekutieli procedure at q over the annotators tested
(``statsmodels.stats.multitest.multipletests(method="fdr_by")``) decides the rejections. The
*winning rate* is rejections / annotators tested (the model passes at ≥ 0.5); the *advantage
probability* is the mean over annotators of the model's win share.

Alignment (the paper's two scoring functions): ``accuracy``, the share of the remaining annotators
with the same label, and ``neg_rmse``, minus the root mean squared difference to them; ``auto``
takes accuracy for nominal dimensions and neg_rmse for ordinal and interval ones.

The unit is an item × dimension: the test runs per dimension and *pooled* over all dimensions (as
the paper pools SummEval's four criteria), every unit aligned by its own dimension's metric. A unit
counts when at least ``min_raters`` annotators rated it and the model labelled it (a model's failed
line is an unlabelled unit); an annotator with fewer than ``min_items`` such units is skipped and
counted. Defaults are the authors' reference code's: ε = 0.2, q = 0.05, 2 annotators, 30 units.

References
----------
Calderon, N., Reichart, R., & Dror, R. (2025). The Alternative Annotator Test for LLM-as-a-Judge:
How to Statistically Justify Replacing Human Annotators with LLMs. ACL 2025, 16051–16081.
Benjamini, Y., & Yekutieli, D. (2001). The control of the false discovery rate in multiple testing
under dependency. Annals of Statistics 29(4), 1165–1188.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.stats.multitest import multipletests

__all__ = [
    "DEFAULT_EPSILON",
    "DEFAULT_MIN_ITEMS",
    "DEFAULT_MIN_RATERS",
    "DEFAULT_Q",
    "EPSILON_GUIDANCE",
    "METRICS",
    "POOLED",
    "SCOPES",
    "AltTestBlock",
    "AltTestOptions",
    "RaterTest",
    "RunTest",
    "ScopeTest",
    "alt_test",
    "alt_test_records",
    "by_rejections",
    "metric_for_level",
    "rank_runs",
    "scope_test",
]

Metric = Literal["auto", "accuracy", "neg_rmse"]
Scope = Literal["pooled", "dimension", "both"]
METRICS: tuple[str, ...] = get_args(Metric)
SCOPES: tuple[str, ...] = get_args(Scope)
POOLED = "pooled"
DEFAULT_EPSILON = 0.2
DEFAULT_Q = 0.05
DEFAULT_MIN_RATERS = 2
DEFAULT_MIN_ITEMS = 30
#: The paper's guidance for ε, by who the annotators are (§3.3; the reference code's docstring).
EPSILON_GUIDANCE = {"crowd workers": 0.1, "skilled annotators": 0.15, "experts": 0.2}
TTEST_METHOD = "one-sided one-sample t-test (scipy.stats.ttest_1samp, alternative='less')"
BY_METHOD = "Benjamini-Yekutieli (statsmodels multipletests, fdr_by)"

BAD_EPSILON = "epsilon must be a number from 0 to 1; got {value!r}"
BAD_Q = "q must be a number above 0 and below 1; got {value!r}"
BAD_METRIC = f"metric must be one of {', '.join(METRICS)}; got {{value!r}}"
BAD_SCOPE = f"scope must be one of {', '.join(SCOPES)}; got {{value!r}}"
BAD_MIN = "{name} must be an integer from {low} to {high}; got {value!r}"
NUMBERS_NEEDED = "neg_rmse aligns numbers; dimension {dimension!r} holds labels (use accuracy)"
NO_RATER_TESTED = "no annotator rated {min_items} or more units with {min_raters} or more annotators and the model"
CONSTANT_DIFFERENCES = "the t-test is undefined: every unit gave the same difference, or there is a single unit"
#: Caps of the options: the paper's test needs nothing beyond them.
MAX_MIN_RATERS = 100
MAX_MIN_ITEMS = 100_000


def metric_for_level(level: str) -> str:
    """``auto``'s choice: accuracy for nominal dimensions, neg_rmse for ordinal and interval ones."""
    return "accuracy" if level == "nominal" else "neg_rmse"


@dataclass(frozen=True, kw_only=True)
class AltTestOptions:
    """The test's options; ``check()`` raises ValueError naming a bad one."""

    epsilon: float = DEFAULT_EPSILON
    q: float = DEFAULT_Q
    metric: Metric = "auto"
    scope: Scope = "both"
    min_raters: int = DEFAULT_MIN_RATERS
    min_items: int = DEFAULT_MIN_ITEMS

    def check(self) -> None:
        if not _number(self.epsilon) or not 0 <= self.epsilon <= 1:
            raise ValueError(BAD_EPSILON.format(value=self.epsilon))
        if not _number(self.q) or not 0 < self.q < 1:
            raise ValueError(BAD_Q.format(value=self.q))
        if self.metric not in METRICS:
            raise ValueError(BAD_METRIC.format(value=self.metric))
        if self.scope not in SCOPES:
            raise ValueError(BAD_SCOPE.format(value=self.scope))
        for name, value, low, high in (
            ("min_raters", self.min_raters, 2, MAX_MIN_RATERS),
            ("min_items", self.min_items, 1, MAX_MIN_ITEMS),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise ValueError(BAD_MIN.format(name=name, low=low, high=high, value=value))

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> AltTestOptions:
        """The options from a mapping holding (at least) their six keys, as ``to_json_dict`` gives them."""
        return cls(**{name: data[name] for name in ("epsilon", "q", "metric", "scope", "min_raters", "min_items")})

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "q": self.q,
            "metric": self.metric,
            "scope": self.scope,
            "min_raters": self.min_raters,
            "min_items": self.min_items,
        }


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class AltTestBlock:
    """One dimension's labels: people as units × annotators, each model as a vector over the units.

    Values are numbers with NaN for a missing label, or objects (strings) with None for one.
    """

    name: str
    level: str
    people: npt.NDArray[Any]
    models: Mapping[str, npt.NDArray[Any]]


@dataclass(frozen=True, kw_only=True)
class RaterTest:
    """One excluded annotator: the units compared, the p-value, the BY decision, the model's win share."""

    rater: str
    n: int
    p_value: float | None
    rejected: bool
    model_win_share: float
    method: str = TTEST_METHOD
    reason: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data = {
            "rater": self.rater,
            "n": self.n,
            "p_value": self.p_value,
            "rejected": self.rejected,
            "model_win_share": self.model_win_share,
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, kw_only=True)
class ScopeTest:
    """The test on one scope (pooled, or one dimension) for one model.

    ``winning_rate`` and ``advantage_probability`` are None, with ``reason``, when no annotator was
    tested; ``skipped`` names the annotators under the unit minimum with their unit counts.
    """

    scope: str
    metric: str
    n_units: int
    winning_rate: float | None
    advantage_probability: float | None
    passed: bool
    raters: tuple[RaterTest, ...]
    skipped: tuple[tuple[str, int], ...] = ()
    method: str = BY_METHOD
    reason: str | None = None

    def to_json_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "scope": self.scope,
            "metric": self.metric,
            "n_units": self.n_units,
            "winning_rate": self.winning_rate,
            "advantage_probability": self.advantage_probability,
            "passed": self.passed,
            "raters": [r.to_json_dict() for r in self.raters],
            "skipped": [{"rater": name, "n": n} for name, n in self.skipped],
        }
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass(frozen=True, kw_only=True)
class RunTest:
    """One model (a run): its scopes, pooled first, and its rank among the runs (1 = best)."""

    run: str
    scopes: tuple[ScopeTest, ...]
    rank: int = 1

    def scope(self, name: str) -> ScopeTest:
        return next(s for s in self.scopes if s.scope == name)


def by_rejections(p_values: Sequence[float | None], q: float) -> npt.NDArray[np.bool_]:
    """Which hypotheses Benjamini–Yekutieli rejects at false discovery rate ``q``.

    ``statsmodels.stats.multitest.multipletests(method="fdr_by")``; an undefined p-value (None or
    NaN) counts among the m hypotheses and is never rejected, as in the authors' code.
    """
    if not len(p_values):
        return np.zeros(0, dtype=bool)
    p = np.asarray([1.0 if v is None or math.isnan(v) else v for v in p_values], dtype=float)
    rejected = multipletests(p, alpha=q, method="fdr_by")[0]
    return np.asarray(rejected, dtype=bool) & np.asarray([v is not None and not math.isnan(v) for v in p_values])


def _coded(block: AltTestBlock) -> tuple[npt.NDArray[np.float64], dict[str, npt.NDArray[np.float64]], bool]:
    """People and models as floats with NaN for missing; labels become shared integer codes."""
    arrays = [block.people, *block.models.values()]
    if all(a.dtype != object for a in arrays):
        return (
            block.people.astype(float),
            {name: m.astype(float) for name, m in block.models.items()},
            True,
        )
    codes: dict[Any, int] = {}
    out = []
    for array in arrays:
        flat = array.ravel()
        coded = np.full(flat.shape, np.nan)
        for i, value in enumerate(flat):
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            coded[i] = codes.setdefault(value, len(codes))
        out.append(coded.reshape(array.shape))
    return out[0], dict(zip(block.models, out[1:], strict=True)), False


def _wins(
    people: npt.NDArray[np.float64],
    model: npt.NDArray[np.float64],
    metric: str,
    min_raters: int,
) -> list[tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]]:
    """Per annotator: (model wins, annotator wins) on each unit they rated that the test keeps."""
    present = ~np.isnan(people)
    counts = present.sum(axis=1)
    kept = (counts >= min_raters) & ~np.isnan(model)
    out = []
    for j in range(people.shape[1]):
        rows = np.flatnonzero(kept & present[:, j])
        others = present[rows].copy()
        others[:, j] = False
        n_others = others.sum(axis=1)
        block = people[rows]
        own = block[:, j : j + 1]
        guess = model[rows, None]
        if metric == "accuracy":
            # Shares of the same denominator: comparing counts is comparing the accuracies exactly.
            human_score = ((block == own) & others).sum(axis=1)
            model_score = ((block == guess) & others).sum(axis=1)
        else:
            # -RMSE ranks as -(mean squared error) does; squares' sums avoid the root's rounding.
            human_score = -np.where(others, (block - own) ** 2, 0.0).sum(axis=1) / n_others
            model_score = -np.where(others, (block - guess) ** 2, 0.0).sum(axis=1) / n_others
        out.append((model_score >= human_score, human_score >= model_score))
    return out


def scope_test(
    scope: str,
    metric: str,
    wins: Sequence[tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]],
    raters: Sequence[str],
    n_units: int,
    options: AltTestOptions,
) -> ScopeTest:
    """The t-tests, the BY step, the winning rate and the advantage probability from the win indicators."""
    tested: list[tuple[str, int, float | None, float, str | None]] = []
    skipped = []
    for name, (model_wins, human_wins) in zip(raters, wins, strict=True):
        n = len(model_wins)
        if n < options.min_items:
            skipped.append((name, n))
            continue
        differences = human_wins.astype(float) - model_wins.astype(float)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # Nearly constant differences make scipy warn of precision loss; the p-value is still its.
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(stats.ttest_1samp(differences, options.epsilon, alternative="less").pvalue)
        reason = CONSTANT_DIFFERENCES if math.isnan(p) else None
        tested.append((name, n, None if reason else p, float(np.mean(model_wins)), reason))
    if not tested:
        reason = NO_RATER_TESTED.format(min_items=options.min_items, min_raters=options.min_raters)
        return ScopeTest(
            scope=scope,
            metric=metric,
            n_units=n_units,
            winning_rate=None,
            advantage_probability=None,
            passed=False,
            raters=(),
            skipped=tuple(skipped),
            reason=reason,
        )
    rejected = by_rejections([t[2] for t in tested], options.q)
    results = tuple(
        RaterTest(rater=name, n=n, p_value=p, rejected=bool(r), model_win_share=share, reason=reason)
        for (name, n, p, share, reason), r in zip(tested, rejected, strict=True)
    )
    winning_rate = float(rejected.sum() / len(tested))
    return ScopeTest(
        scope=scope,
        metric=metric,
        n_units=n_units,
        winning_rate=winning_rate,
        advantage_probability=float(np.mean([r.model_win_share for r in results])),
        passed=winning_rate >= 0.5,
        raters=results,
        skipped=tuple(skipped),
    )


def alt_test(
    blocks: Sequence[AltTestBlock], raters: Sequence[str], *, options: AltTestOptions | None = None
) -> list[RunTest]:
    """The test for every model in the blocks, per scope, the runs ranked by advantage probability.

    Parameters
    ----------
    blocks : sequence of AltTestBlock
        One per dimension, all with the same annotator columns (``raters``) and the same models.
    raters : sequence of str
        The annotators' names, in the column order of every block's ``people``.
    options : AltTestOptions
        ε, q, metric, scope and the minimums (the reference code's defaults when None).

    Returns
    -------
    list of RunTest
        In rank order: by the pooled advantage probability, highest first (undefined last, then by
        the order given). Each run's scopes: ``pooled`` first (scope pooled or both), then each
        dimension in the blocks' order (scope dimension or both).
    """
    options = options or AltTestOptions()
    options.check()
    models = list(blocks[0].models) if blocks else []
    coded = [_coded(block) for block in blocks]
    for block, (_, _, numeric) in zip(blocks, coded, strict=True):
        metric = metric_for_level(block.level) if options.metric == "auto" else options.metric
        if metric == "neg_rmse" and not numeric:
            raise ValueError(NUMBERS_NEEDED.format(dimension=block.name))
    runs = []
    for model in models:
        per_block = []
        for block, (people, model_values, _) in zip(blocks, coded, strict=True):
            metric = metric_for_level(block.level) if options.metric == "auto" else options.metric
            values = model_values[model]
            kept = (~np.isnan(people)).sum(axis=1) >= options.min_raters
            n_units = int((kept & ~np.isnan(values)).sum())
            per_block.append((block.name, metric, _wins(people, values, metric, options.min_raters), n_units))
        metrics = {metric for _, metric, _, _ in per_block}
        pooled_wins = [
            (
                np.concatenate([wins[j][0] for _, _, wins, _ in per_block]),
                np.concatenate([wins[j][1] for _, _, wins, _ in per_block]),
            )
            for j in range(len(raters))
        ]
        pooled = scope_test(
            POOLED,
            metrics.pop() if len(metrics) == 1 else "auto",
            pooled_wins,
            raters,
            sum(n for *_, n in per_block),
            options,
        )
        scopes = [pooled] if options.scope in ("pooled", "both") else []
        if options.scope in ("dimension", "both"):
            scopes += [scope_test(name, metric, wins, raters, n, options) for name, metric, wins, n in per_block]
        runs.append((model, pooled.advantage_probability, scopes))
    return rank_runs(runs)


def rank_runs(runs: Sequence[tuple[str, float | None, Sequence[ScopeTest]]]) -> list[RunTest]:
    """Runs by advantage probability, highest first; undefined ones last; ties keep the given order."""
    order = sorted(range(len(runs)), key=lambda i: (runs[i][1] is None, -(runs[i][1] or 0.0), i))
    return [RunTest(run=runs[i][0], scopes=tuple(runs[i][2]), rank=rank) for rank, i in enumerate(order, start=1)]


def alt_test_records(
    people: Mapping[str, Mapping[Any, Any]],
    model: Mapping[Any, Any],
    *,
    level: str = "nominal",
    options: AltTestOptions | None = None,
) -> ScopeTest:
    """The test on the authors' data layout: ``{annotator: {unit: label}}`` and ``{unit: label}``.

    One dimension at ``level``; returns its pooled scope (the whole data set, as the paper's
    notebook computes it). Units the model did not label are left out, as failed lines are.
    """
    units = sorted({u for labels in people.values() for u in labels}, key=str)
    raters = list(people)
    index = {u: i for i, u in enumerate(units)}
    textual = any(isinstance(v, str) for labels in people.values() for v in labels.values()) or any(
        isinstance(v, str) for v in model.values()
    )
    empty: Any = None if textual else np.nan
    matrix = np.full((len(units), len(raters)), empty, dtype=object if textual else float)
    for j, name in enumerate(raters):
        for unit, value in people[name].items():
            matrix[index[unit], j] = value
    vector = np.full(len(units), empty, dtype=object if textual else float)
    for unit, value in model.items():
        if unit in index:
            vector[index[unit]] = value
    block = AltTestBlock(name="value", level=level, people=matrix, models={"model": vector})
    options = options or AltTestOptions()
    run = alt_test([block], raters, options=AltTestOptions(**{**options.to_json_dict(), "scope": "pooled"}))[0]
    return run.scopes[0]
