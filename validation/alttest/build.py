"""``alt_test``: may a run's labels replace the people's? The Alternative Annotator Test on a project.

Reads the people's latest ratings and each chosen run's as one more rater (``project_ratings``;
a failed line is no rating, so an item the run did not label), per dimension the kind declares
(``TaskKind.rating_dimensions``, whatever the kind), and computes:

- the test (``validation.alttest.statistics``), pooled and per dimension, the runs ranked;
- agreement by who rated and, for runs whose lines carry ``score``, calibration
  (``validation.alttest.who_rated``);

as an ``Evaluation`` (``validation.evaluations.base``): the command's JSON, the tables for Markdown,
LaTeX and CSV, the reliability diagram, and what a snapshot freezes and ``--check`` recomputes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from annotation.models import Project
from judges.models import JudgeRun, Suggestion
from validation.agreement import AgreementResult
from validation.agreement.bootstrap import bootstrap_iv
from validation.alttest.statistics import (
    POOLED,
    AltTestBlock,
    AltTestOptions,
    RunTest,
    ScopeTest,
    alt_test,
)
from validation.alttest.who_rated import Calibration, WhoRated, calibration, people_majority, who_rated
from validation.evaluations.base import (
    MAX_BOOTSTRAP,
    Evaluation,
    check_runs,
    current_versions,
    evaluated_runs,
)
from validation.ratings import JUDGE_PREFIX, RatingSet, judge_rater_name, project_ratings
from validation.reports import Cell, Figure, Row, Table
from validation.reports.replacement import EPSILON_MEANING, alt_test_table, rate_cell

__all__ = ["NAME", "AltTestParameters", "alt_test_evaluation", "verdict_sentence"]

NAME = "alt_test"
TITLE = "Alternative Annotator Test"
NO_RUN = "choose at least one judge run"
NO_DIMENSIONS = "the project's kind declares no rating dimensions"


@dataclass(frozen=True, kw_only=True)
class AltTestParameters:
    """What besides the data changes the numbers (a snapshot stores it)."""

    runs: tuple[int, ...]
    options: AltTestOptions = AltTestOptions()
    bootstrap: int = 1000
    seed: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": NAME,
            "runs": list(self.runs),
            **self.options.to_json_dict(),
            "bootstrap": self.bootstrap,
            "seed": self.seed,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> AltTestParameters:
        return cls(
            runs=tuple(data["runs"]),
            options=AltTestOptions.from_json_dict(data),
            bootstrap=data["bootstrap"],
            seed=data["seed"],
        )

    def check(self) -> None:
        """The caps, as a ValueError (exit code 1, a 400, a form error)."""
        if not self.runs:
            raise ValueError(NO_RUN)
        check_runs(self.runs)
        self.options.check()
        bootstrap_iv(self.bootstrap, self.seed, 0.95)
        if self.bootstrap > MAX_BOOTSTRAP:
            raise ValueError(f"at most {MAX_BOOTSTRAP} bootstrap resamples; got {self.bootstrap}")


def _run_scores(run_id: int, unit_items: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The run's ``score`` per unit (its item's newest OK answer), NaN where it gave none."""
    run = JudgeRun.objects.get(pk=run_id)
    rows = (
        Suggestion.objects.filter(judge_id=run.judge_id, item__project_id=run.project_id, status=Suggestion.Status.OK)
        .order_by("item_id", "-updated_at", "-id")
        .values_list("item_id", "score")
    )
    scores: dict[int, float | None] = {}
    for item_id, score in rows.iterator(chunk_size=5000):
        scores.setdefault(item_id, score)
    return np.asarray([scores.get(int(item)) for item in unit_items], dtype=float)  # None becomes NaN


def _model_name(run: JudgeRun) -> str:
    return run.judge.model or run.judge.name


def alt_test_evaluation(*, project: Project, parameters: AltTestParameters) -> Evaluation:
    """The test, agreement by who rated and calibration for the chosen runs of the project."""
    parameters.check()
    runs = evaluated_runs(project, parameters.runs)  # UnknownJudgeRun for another project's or kind's run
    dimensions = project.task_kind.rating_dimensions
    if not dimensions:
        raise ValueError(NO_DIMENSIONS)
    ratings = project_ratings(project=project, judge_run_ids=parameters.runs)
    people = tuple(r for r in ratings.raters if not r.startswith(JUDGE_PREFIX))
    raters = {run.run_id: judge_rater_name(run.run_id) for run in runs}
    blocks = [
        AltTestBlock(
            name=d.name,
            level=d.level,
            people=ratings.matrix(d.name, people),
            models={str(run_id): ratings.matrix(d.name, [rater])[:, 0] for run_id, rater in raters.items()},
        )
        for d in dimensions
    ]
    tests = alt_test(blocks, people, options=parameters.options)
    agreement = who_rated(
        {b.name: b.people for b in blocks},
        {b.name: b.level for b in blocks},
        {str(run_id): {b.name: b.models[str(run_id)] for b in blocks} for run_id in raters},
        people,
        bootstrap=parameters.bootstrap,
        seed=parameters.seed,
    )
    scores = {run_id: _run_scores(run_id, ratings.unit_items) for run_id in raters}
    calibrations = _calibrations(blocks, scores)
    models = {run.pk: _model_name(run) for run in JudgeRun.objects.select_related("judge").filter(pk__in=raters)}
    labels = {run.run_id: run.label for run in runs}
    named = {run_id: f"{model} (run {run_id})" for run_id, model in models.items()}
    result = {
        "project": project.slug,
        "epsilon": parameters.options.epsilon,
        "q": parameters.options.q,
        "metric": parameters.options.metric,
        "scope": parameters.options.scope,
        "min_raters": parameters.options.min_raters,
        "min_items": parameters.options.min_items,
        "people": list(people),
        "runs": [
            {
                "run": int(test.run),
                "model": models[int(test.run)],
                "label": labels[int(test.run)],
                "rank": test.rank,
                "scopes": [s.to_json_dict() for s in test.scopes],
                "verdict": verdict_sentence(models[int(test.run)], test, parameters.options.epsilon),
            }
            for test in tests
        ],
        "agreement_by_who_rated": [_who_rated_json(w) for w in agreement],
        "calibration": [{**c.to_json_dict(), "run": int(c.run)} for c in calibrations],
        "epsilon_meaning": EPSILON_MEANING,
    }
    return Evaluation(
        name=NAME,
        project=project.slug,
        title=TITLE,
        parameters=parameters.to_json_dict(),
        inputs_sha256=_digest(ratings, scores),
        library_versions=current_versions(),
        result=result,
        tables=(
            alt_test_table(tests, named, parameters.options.epsilon),
            _rater_table(tests, named),
            _who_rated_table(agreement, named),
            _calibration_table(calibrations, named),
        ),
        figures=tuple(_reliability_figure(c, named) for c in calibrations if c.scope == POOLED and c.n_units),
    )


def _digest(ratings: RatingSet, scores: dict[int, npt.NDArray[np.float64]]) -> str:
    sha = hashlib.sha256(ratings.digest().encode())
    for run_id, values in scores.items():
        # The run's rater name, not its id, stands in the ratings' digest; scores follow it in order.
        sha.update(judge_rater_name(run_id).encode())
        sha.update(np.nan_to_num(values, nan=-1.0).tobytes())
    return sha.hexdigest()


def _calibrations(blocks: list[AltTestBlock], scores: dict[int, npt.NDArray[np.float64]]) -> list[Calibration]:
    """Per run with any score: pooled over the dimensions, then per dimension."""
    scored = {run_id: score for run_id, score in scores.items() if not np.isnan(score).all()}
    majorities = {b.name: people_majority(b.people) for b in blocks} if scored else {}
    out = []
    for run_id, score in scored.items():
        per = [(b.name, b.models[str(run_id)], score, *majorities[b.name]) for b in blocks]
        pooled = tuple(np.concatenate([p[i] for p in per]) for i in range(1, 5))
        out.append(calibration(str(run_id), POOLED, *pooled))
        out += [calibration(str(run_id), name, labels, s, majority, tied) for name, labels, s, majority, tied in per]
    return out


def verdict_sentence(model: str, test: RunTest, epsilon: float) -> str:
    """The decision in words, per dimension (pooled when only it was asked): "gpt-4o may replace the
    annotators on coherence (won against 3 of 3), not on relevance (1 of 3), at ε = 0.2."."""
    scopes = [s for s in test.scopes if s.scope != POOLED] or list(test.scopes)

    def won(s: ScopeTest, words: str) -> str:
        if s.winning_rate is None:
            return f"{s.scope} (not tested: {s.reason})"
        return f"{s.scope} ({words}{sum(r.rejected for r in s.raters)} of {len(s.raters)})"

    passed = [won(s, "won against " if i == 0 else "") for i, s in enumerate(x for x in scopes if x.passed)]
    failed = [won(s, "" if passed else "won against ") for s in scopes if not s.passed]
    if passed and failed:
        text = f"{model} may replace the annotators on {', '.join(passed)}, not on {', '.join(failed)}"
    elif passed:
        text = f"{model} may replace the annotators on {', '.join(passed)}"
    else:
        text = f"{model} may not replace the annotators on {', '.join(failed)}"
    return f"{text}, at ε = {epsilon:g}."


def _who_rated_json(entry: WhoRated) -> dict[str, Any]:
    return {
        "dimension": entry.dimension,
        "level": entry.level,
        "people": _alpha_json(entry.people),
        "runs_in_place": [
            {"run": int(r.run), "replaced": r.replaced, "alpha": _alpha_json(r.alpha)} for r in entry.runs_in_place
        ],
        "run_pairs": [{"runs": [int(a), int(b)], "alpha": _alpha_json(alpha)} for a, b, alpha in entry.run_pairs],
    }


def _alpha_json(result: AgreementResult) -> dict[str, Any]:
    interval = result.confidence_interval
    data: dict[str, Any] = {
        "statistic": result.statistic,
        "ci": None if interval is None else [interval.low, interval.high],
        "n_units": result.n_units,
        "method": result.method,
    }
    if result.statistic is None:
        data["reason"] = result.reason
    return data


def _rater_table(tests: list[RunTest], models: dict[int, str]) -> Table:
    rows: list[Row] = []
    for test in tests:
        for scope in test.scopes:
            for rater in scope.raters:
                rows.append(
                    Row(
                        f"{models[int(test.run)]} · {scope.scope} · {rater.rater}",
                        (
                            Cell.count(rater.n),
                            Cell(value=rater.p_value) if rater.p_value is not None else Cell(note=rater.reason),
                            Cell.text("yes" if rater.rejected else "no"),
                            Cell(value=rater.model_win_share),
                        ),
                    )
                )
            for name, n in scope.skipped:
                rows.append(
                    Row(
                        f"{models[int(test.run)]} · {scope.scope} · {name}",
                        (Cell.count(n), Cell(note="skipped: under the unit minimum"), Cell.text("—"), Cell()),
                    )
                )
    return Table(
        key="alt_test_raters",
        title="Per annotator left out",
        caption="Units compared, one-sided t-test p-value, BY rejection (the model won), the model's win share.",
        columns=("Run · scope · annotator", "Units", "p-value", "Rejected", "Model win share"),
        latex_columns=("Run · scope · annotator", "$n$", "$p$", "Rejected", "Win share"),
        rows=tuple(rows),
    )


def _who_rated_table(agreement: list[WhoRated], models: dict[int, str]) -> Table:
    rows: list[Row] = []
    for entry in agreement:
        rows.append(Row(f"{entry.dimension} · people with people", (Cell.of(entry.people),), rule_above=bool(rows)))
        for r in entry.runs_in_place:
            label = f"{entry.dimension} · {models[int(r.run)]} in place of {r.replaced}"
            rows.append(Row(label, (Cell.of(r.alpha),)))
        for a, b, alpha in entry.run_pairs:
            rows.append(Row(f"{entry.dimension} · run {a} with run {b}", (Cell.of(alpha),)))
    return Table(
        key="agreement_by_who_rated",
        title="Agreement by who rated",
        caption=(
            "Krippendorff's alpha at each dimension's level, with bootstrap intervals: among the people; with each "
            "run in one person's place (leave-one-out), where a run rating like one more person leaves alpha "
            "where the people's is; between runs."
        ),
        columns=("Dimension · raters", "Krippendorff's alpha"),
        latex_columns=("Dimension · raters", r"$\alpha$"),
        rows=tuple(rows),
    )


def _calibration_table(calibrations: list[Calibration], models: dict[int, str]) -> Table:
    rows = tuple(
        Row(
            f"{models[int(c.run)]} · {c.scope}",
            (
                Cell.count(c.n_units),
                Cell.count(c.n_ties),
                rate_cell(c.ece, c.reason),
                rate_cell(c.brier, c.reason),
            ),
            summary=c.scope == POOLED,
        )
        for c in calibrations
    )
    return Table(
        key="calibration",
        title="Calibration of the runs' scores",
        caption=(
            "Where a run's lines carry a score: expected calibration error (10 bins) and Brier score of the score "
            "against whether the run's label is the people's majority (ties left out and counted)."
        ),
        columns=("Run · scope", "Units", "Ties", "ECE", "Brier"),
        latex_columns=("Run · scope", "$n$", "Ties", "ECE", "Brier"),
        rows=rows,
        notes=() if rows else ("No chosen run's lines carry a score.",),
    )


def _reliability_figure(c: Calibration, models: dict[int, str]) -> Figure:
    filled = [b for b in c.bins if b.n]
    return Figure(
        key=f"reliability-{c.run}",
        title=f"Reliability diagram: {models[int(c.run)]}",
        kind="lines",
        data={
            "series": [
                {"name": "Run", "x": [b.confidence for b in filled], "y": [b.accuracy for b in filled]},
                {"name": "Perfect calibration", "x": [0.0, 1.0], "y": [0.0, 1.0]},
            ],
            "xlabel": "score (mean per bin)",
            "ylabel": "share agreeing with the people's majority",
            "xscale": "linear",
        },
        alt=(
            f"Reliability diagram of run {c.run}: per score bin (10 bins) the share of {c.n_units} units where the "
            f"run agrees with the people's majority against the mean score; ECE {c.ece:.3f}."
        ),
    )
