"""``copa_eval``: CoPA's Table 3 (and Table 4's factor ablation) from a project's validated data.

Reads a ``copa_likert`` project's pairs (items sharing a ``pair_id``, one with ``response_source``
``accepted`` and one ``top-voted``), each evaluator's scores of both answers, and computes
``validation.evaluations.copa`` over them (CoPA, paper 001, §5.2). An evaluator is a judge run (the
factor-grounded prompt, the Direct / CoT / Random-factor variants of ``judges.kinds.copa_likert.prompts``, or a
lexical baseline) or people's gold (``--people``).

The lexical baselines (``copa_jaccard``, ``copa_inclusion``) store 0/1/2 scores by thresholding an
overlap; the paper compares the overlap itself ("these two metrics are not normalized"). So for a
baseline run the score of an answer is its raw overlap with the profile (the mean over the six
profile texts of ``judges.baselines.OVERLAP``), on the answers the run covered, and only Accuracy is
reported. Run the command on a project whose profiles were built from the current CIPD question for
Table A4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from annotation.kinds.copa_likert import FACTORS
from annotation.models import Item, Project
from judges.baselines import OVERLAP
from judges.kinds.copa_likert.baselines import CopaOverlap
from judges.kinds.copa_likert.prompts import FACTOR_GROUNDED
from judges.prompting import get_prompt
from judges.selectors import suggestion_values
from validation.evaluations.base import (
    EvaluatedRun,
    Evaluation,
    check_bootstrap,
    check_kind,
    check_runs,
    current_versions,
    evaluated_runs,
    inputs_digest,
    statistic_json,
)
from validation.evaluations.copa import PreferenceResult, factor_ablation, normalised_score, preference
from validation.goldset import project_items_state
from validation.reports import Cell, Row, Table

__all__ = ["ACCEPTED", "TOP_VOTED", "CopaEvalParameters", "copa_evaluation", "copa_pairs"]

ACCEPTED, TOP_VOTED = "accepted", "top-voted"
PEOPLE_LABEL = "People (gold)"
NO_EVALUATOR = "choose at least one judge run or people's gold"
NOT_FACTOR_GROUNDED = "not factor-grounded: its six scores are not the distilled factors"
CODES = tuple(FACTORS)


@dataclass(frozen=True, kw_only=True)
class CopaEvalParameters:
    """What besides the data changes ``copa_eval``'s numbers (a snapshot stores it)."""

    runs: tuple[int, ...] = ()
    people: bool = False
    bootstrap: int = 1000
    seed: int = 0
    confidence_level: float = 0.95

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": "copa_eval",
            "runs": list(self.runs),
            "people": self.people,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> CopaEvalParameters:
        return cls(
            runs=tuple(data["runs"]),
            people=data["people"],
            bootstrap=data["bootstrap"],
            seed=data["seed"],
            confidence_level=data["confidence_level"],
        )


@dataclass(frozen=True)
class CopaPair:
    pair_id: str
    accepted: int  # item ids
    top: int


@dataclass(frozen=True)
class PairSet:
    pairs: tuple[CopaPair, ...]
    #: pair ids with a side missing or given twice: not pairs, named in the notes.
    incomplete: tuple[str, ...]
    payloads: dict[int, dict]
    external_ids: dict[int, str]


def copa_pairs(project: Project) -> PairSet:
    """The project's accepted/top-voted pairs, by ``pair_id``, in pair-id order."""
    sides: dict[str, dict[str, list[int]]] = {}
    payloads: dict[int, dict] = {}
    external_ids: dict[int, str] = {}
    rows = Item.objects.filter(project=project).order_by("pk").values_list("pk", "external_id", "payload")
    for pk, external_id, payload in rows.iterator(chunk_size=2000):
        pair_id, source = payload.get("pair_id"), payload.get("response_source")
        if not pair_id or source not in (ACCEPTED, TOP_VOTED):
            continue
        sides.setdefault(pair_id, {ACCEPTED: [], TOP_VOTED: []})[source].append(pk)
        payloads[pk], external_ids[pk] = payload, external_id
    pairs, incomplete = [], []
    for pair_id in sorted(sides):
        accepted, top = sides[pair_id][ACCEPTED], sides[pair_id][TOP_VOTED]
        if len(accepted) == 1 and len(top) == 1:
            pairs.append(CopaPair(pair_id, accepted[0], top[0]))
        else:
            incomplete.append(pair_id)
    return PairSet(tuple(pairs), tuple(incomplete), payloads, external_ids)


@dataclass(frozen=True)
class _Evaluator:
    label: str
    run_id: int | None
    #: Per-factor scores by item id (six numbers), or None for an evaluator with one raw score.
    scores: dict[int, tuple[float, ...]]
    normalised: bool
    factor_grounded: bool


def _scores_of(values: dict[int, dict]) -> dict[int, tuple[float, ...]]:
    return {item_id: tuple(float(value["scores"][code]) for code in CODES) for item_id, value in values.items()}


def _run_evaluator(run: EvaluatedRun, pairs: PairSet) -> _Evaluator:
    wanted = set(pairs.payloads)
    values = {item_id: value for item_id, value in suggestion_values(run_id=run.run_id) if item_id in wanted}
    prompt = get_prompt(run.prompt_key) if run.is_baseline else None
    if isinstance(prompt, CopaOverlap):
        overlap = OVERLAP[prompt.measure]
        raw = {
            item_id: (
                float(
                    np.mean(
                        [
                            overlap(pairs.payloads[item_id]["profile"][c], pairs.payloads[item_id]["response"])
                            for c in CODES
                        ]
                    )
                ),
            )
            for item_id in values
        }
        return _Evaluator(run.label, run.run_id, raw, normalised=False, factor_grounded=False)
    grounded = run.prompt_name in FACTOR_GROUNDED
    return _Evaluator(run.label, run.run_id, _scores_of(values), normalised=True, factor_grounded=grounded)


def _people_evaluator(project: Project, pairs: PairSet) -> _Evaluator:
    wanted = set(pairs.payloads)
    values = {
        state.item.pk: state.gold.value
        for state in project_items_state(project=project, with_reasons=False)
        if state.gold.ready and state.item.pk in wanted
    }
    return _Evaluator(PEOPLE_LABEL, None, _scores_of(values), normalised=True, factor_grounded=True)


def _side(evaluator: _Evaluator, items: list[int], width: int) -> npt.NDArray[np.float64]:
    missing = (np.nan,) * width
    return np.asarray([evaluator.scores.get(item, missing) for item in items], dtype=float).reshape(len(items), width)


@dataclass(frozen=True)
class _Outcome:
    evaluator: _Evaluator
    overall: PreferenceResult
    ablation: dict[str, PreferenceResult]


def _evaluate(evaluator: _Evaluator, pairs: PairSet, parameters: CopaEvalParameters) -> _Outcome:
    width = len(CODES) if evaluator.normalised else 1
    accepted = _side(evaluator, [p.accepted for p in pairs.pairs], width)
    top = _side(evaluator, [p.top for p in pairs.pairs], width)
    options = {
        "bootstrap": parameters.bootstrap,
        "seed": parameters.seed,
        "confidence_level": parameters.confidence_level,
    }
    if not evaluator.normalised:
        overall = preference(accepted[:, 0], top[:, 0], normalised=False, **options)
        return _Outcome(evaluator, overall, {})
    overall = preference(normalised_score(accepted), normalised_score(top), **options)
    ablation = factor_ablation(accepted, top, factors=CODES, **options) if evaluator.factor_grounded else {}
    return _Outcome(evaluator, overall, ablation)


def _preference_json(result: PreferenceResult) -> dict[str, Any]:
    return {
        "accuracy": statistic_json(result.accuracy),
        "tie_rate": statistic_json(result.tie_rate),
        "margin": statistic_json(result.margin),
    }


def _outcome_json(outcome: _Outcome) -> dict[str, Any]:
    return {
        "label": outcome.evaluator.label,
        "run": outcome.evaluator.run_id,
        "n_pairs": outcome.overall.n_pairs,
        "excluded_pairs": outcome.overall.excluded_pairs,
        **_preference_json(outcome.overall),
        "ablation": {code: _preference_json(result) for code, result in outcome.ablation.items()},
    }


def _interval_words(parameters: CopaEvalParameters) -> str:
    if not parameters.bootstrap:
        return "No confidence intervals (bootstrap off)."
    return (
        f"{round(parameters.confidence_level * 100)}% percentile bootstrap intervals over pairs "
        f"({parameters.bootstrap} resamples, seed {parameters.seed})."
    )


def _cells(result: PreferenceResult) -> tuple[Cell, ...]:
    return (
        Cell.of(result.accuracy, format="percent"),
        Cell.of(result.tie_rate, format="percent"),
        Cell.of(result.margin),
    )


METRIC_COLUMNS = ("Acc ↑", "Tie ↓", "Margin ↑")
METRIC_LATEX = (r"Acc $\uparrow$", r"Tie $\downarrow$", r"Mar.\ $\uparrow$")


def _tables(outcomes: list[_Outcome], pairs: PairSet, parameters: CopaEvalParameters) -> list[Table]:
    notes = [
        "S = sum of the six factor scores / 12; Accuracy = share of pairs with S_acc > S_top, Tie = share with "
        "S_acc = S_top, Margin = mean of S_acc - S_top (CoPA §5.2). Pairs where either answer has no score are "
        "left out and counted under Excluded.",
    ]
    if any(not o.evaluator.normalised for o in outcomes):
        notes.append(
            "Lexical baselines score each answer by its raw overlap with the profile (mean over the six profile "
            "texts), not normalised: Accuracy only, as in the paper."
        )
    if pairs.incomplete:
        shown = ", ".join(pairs.incomplete[:10]) + (" ..." if len(pairs.incomplete) > 10 else "")
        notes.append(
            f"{len(pairs.incomplete)} pair ids lack an accepted or a top-voted answer, or repeat one: {shown}."
        )
    rows = [
        Row(
            o.evaluator.label, (Cell.count(o.overall.n_pairs), Cell.count(o.overall.excluded_pairs), *_cells(o.overall))
        )
        for o in outcomes
    ]
    tables = [
        Table(
            key="copa_table3",
            title="Comparison of evaluation methodologies (CoPA Table 3)",
            caption=(
                f"Does the evaluator score the accepted answer above the top-voted one? {len(pairs.pairs)} pairs. "
                f"Accuracy and Tie in %, Margin on the [0, 1] score. {_interval_words(parameters)}"
            ),
            columns=("Evaluator", "Pairs", "Excluded", *METRIC_COLUMNS),
            latex_columns=("Evaluator", "Pairs", "Excl.", *METRIC_LATEX),
            rows=tuple(rows),
            notes=tuple(notes),
        )
    ]
    for number, outcome in enumerate(o for o in outcomes if o.ablation):
        ablation_rows = [Row(f"w/o {code}", _cells(result)) for code, result in outcome.ablation.items()]
        ablation_rows.append(Row("All", _cells(outcome.overall), summary=True))
        tables.append(
            Table(
                key=f"copa_table4_{number + 1}",
                title=f"Ablation of the factors: {outcome.evaluator.label} (CoPA Table 4)",
                caption=(
                    "Each factor left out in turn (the score renormalised over the other five, sum / 10); All uses "
                    f"the six. {outcome.overall.n_pairs} pairs. {_interval_words(parameters)}"
                ),
                columns=("Factors", *METRIC_COLUMNS),
                latex_columns=("Factors", *METRIC_LATEX),
                rows=tuple(ablation_rows),
                notes=("Factors: " + "; ".join(f"{code} {name}" for code, (name, _) in FACTORS.items()) + ".",),
            )
        )
    return tables


def copa_evaluation(*, project: Project, parameters: CopaEvalParameters) -> Evaluation:
    """``copa_eval``'s numbers and tables for a ``copa_likert`` project.

    Raises
    ------
    WrongKind
        For a project of another kind.
    UnknownJudgeRun
        For a run of another project or kind.
    ValueError
        Without any evaluator, or past a cap (runs, resamples).
    """
    check_kind(project, expected="copa_likert", evaluation="copa_eval")
    check_runs(parameters.runs)
    check_bootstrap(parameters.bootstrap)
    if not parameters.runs and not parameters.people:
        raise ValueError(NO_EVALUATOR)
    runs = evaluated_runs(project, parameters.runs)
    pairs = copa_pairs(project)
    evaluators = [_run_evaluator(run, pairs) for run in runs]
    if parameters.people:
        evaluators.append(_people_evaluator(project, pairs))
    outcomes = [_evaluate(e, pairs, parameters) for e in evaluators]
    inputs = {
        "pairs": [[p.pair_id, pairs.external_ids[p.accepted], pairs.external_ids[p.top]] for p in pairs.pairs],
        "incomplete": list(pairs.incomplete),
        "evaluators": [
            {
                "label": e.label,
                "run": e.run_id,
                "scores": [
                    [p.pair_id, list(e.scores.get(p.accepted, ())), list(e.scores.get(p.top, ()))] for p in pairs.pairs
                ],
            }
            for e in evaluators
        ],
    }
    return Evaluation(
        name="copa_eval",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest(inputs),
        library_versions=current_versions(),
        result={"project": project.slug, "evaluators": [_outcome_json(o) for o in outcomes]},
        tables=tuple(_tables(outcomes, pairs, parameters)),
        judge_label="; ".join(e.label for e in evaluators),
    )
