"""``copa_eval``: CoPA's Table 3 (and Table 4's factor ablation) from a project's validated data.

Reads a ``copa_likert`` project's pairs (items sharing a ``pair_id``, one with ``response_source``
``accepted`` and one ``top-voted``), each evaluator's scores of both answers, and computes
``validation.kinds.copa_likert.copa`` over them (CoPA, paper 001, §5.2). An evaluator is a judge run (the
factor-grounded prompt, the Direct / CoT / Random-factor variants of ``judges.kinds.copa_likert.prompts``, or a
lexical baseline) or people's gold (``--people``).

The lexical baselines (``copa_history_jaccard``, ``copa_history_inclusion``: the response against
the user's history, as the paper uses them after Su et al. 2025; ``copa_jaccard``, ``copa_inclusion``:
against the factor-profile texts) store 0/1/2 scores by thresholding an overlap; the paper compares
the overlap itself ("these two metrics are not normalized"). So for a baseline run the score of an
answer is its raw overlap (``CopaOverlap.raw_overlap``, formulas in
``judges.kinds.copa_likert.baselines``), on the answers the run covered, and only Accuracy is
reported. Run the command on a project whose profiles were built from the current CIPD question for
Table A4.

Beyond Tables 3 and 4, per factor-scoring evaluator: Table 6 (the mean normalised score S per
response source or method and category, with Avg. the mean over the named category columns, as
the paper's over its four: a "(none)" column is left out of it), Tables A6–A9 (the mean s_k / 2
per factor, one table per category), Figure 5 (Spearman's
rho between the factors over every response it scored, as a table and a heat map); and Tables 3
and 4 per category. A response's category is its payload's ``meta.category`` (for CoPA: Engineering
& Tools, Science & Theory, Lifestyle & Society, Leisure & Fandom), "(none)" without one; a pair's is
its accepted answer's. Table 6 reads every scored item, not only the pairs, so model responses
(``response_source`` a method's name) enter it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from annotation.kinds.copa_likert import FACTORS
from annotation.models import Item, Project
from judges.errors import JudgeOutputInvalid
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
from validation.goldset import project_items_state
from validation.kinds.copa_likert.copa import (
    FactorCorrelations,
    GroupMeans,
    PreferenceResult,
    factor_ablation,
    factor_correlations,
    group_score_means,
    normalised_score,
    preference,
)
from validation.reports import Cell, Figure, Row, Table
from validation.reports.render import latex_escape

__all__ = ["ACCEPTED", "TOP_VOTED", "CopaEvalParameters", "copa_evaluation", "copa_pairs"]

ACCEPTED, TOP_VOTED = "accepted", "top-voted"
PEOPLE_LABEL = "People (gold)"
NO_EVALUATOR = "choose at least one judge run or people's gold"
NOT_FACTOR_GROUNDED = "not factor-grounded: its six scores are not the distilled factors"
CODES = tuple(FACTORS)
NONE = "(none)"


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
    #: Every item (paired or not): its response source and category (``meta.category``).
    responses: dict[int, tuple[str, str]]

    def category_of(self, pair: CopaPair) -> str:
        return self.responses[pair.accepted][1]

    @property
    def categories(self) -> list[str]:
        return sorted({category for _, category in self.responses.values()})


def copa_pairs(project: Project) -> PairSet:
    """The project's accepted/top-voted pairs, by ``pair_id``, in pair-id order."""
    sides: dict[str, dict[str, list[int]]] = {}
    payloads: dict[int, dict] = {}
    external_ids: dict[int, str] = {}
    responses: dict[int, tuple[str, str]] = {}
    rows = Item.objects.filter(project=project).order_by("pk").values_list("pk", "external_id", "payload")
    for pk, external_id, payload in rows.iterator(chunk_size=2000):
        pair_id, source = payload.get("pair_id"), payload.get("response_source")
        category = (payload.get("meta") or {}).get("category")
        responses[pk] = (str(source), str(category) if category not in (None, "") else NONE)
        external_ids[pk] = external_id
        if not pair_id or source not in (ACCEPTED, TOP_VOTED):
            continue
        sides.setdefault(pair_id, {ACCEPTED: [], TOP_VOTED: []})[source].append(pk)
        payloads[pk] = payload
    pairs, incomplete = [], []
    for pair_id in sorted(sides):
        accepted, top = sides[pair_id][ACCEPTED], sides[pair_id][TOP_VOTED]
        if len(accepted) == 1 and len(top) == 1:
            pairs.append(CopaPair(pair_id, accepted[0], top[0]))
        else:
            incomplete.append(pair_id)
    return PairSet(tuple(pairs), tuple(incomplete), payloads, external_ids, responses)


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
    values = dict(suggestion_values(run_id=run.run_id))
    prompt = get_prompt(run.prompt_key) if run.is_baseline else None
    if isinstance(prompt, CopaOverlap):
        raw: dict[int, tuple[float, ...]] = {}
        for item_id in values:
            if item_id in pairs.payloads:
                try:
                    raw[item_id] = (float(prompt.raw_overlap(pairs.payloads[item_id])),)
                except JudgeOutputInvalid:
                    continue  # the method cannot score this answer (no history): no score, as a failure
        return _Evaluator(run.label, run.run_id, raw, normalised=False, factor_grounded=False)
    grounded = run.prompt_name in FACTOR_GROUNDED
    return _Evaluator(run.label, run.run_id, _scores_of(values), normalised=True, factor_grounded=grounded)


def _people_evaluator(project: Project, pairs: PairSet) -> _Evaluator:
    wanted = set(pairs.responses)
    values: dict[int, Any] = {  # a ready gold has its value
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
    #: Table 3 and Table 4 per category of the pairs.
    by_category: dict[str, PreferenceResult]
    ablation_by_category: dict[str, dict[str, PreferenceResult]]
    #: Table 6 / A6-A9: response source → category → means; None for a lexical evaluator.
    by_source: dict[str, dict[str, GroupMeans]] | None
    correlations: FactorCorrelations | None


def _preferences(
    evaluator: _Evaluator, pairs: list[CopaPair], parameters: CopaEvalParameters
) -> tuple[PreferenceResult, dict[str, PreferenceResult]]:
    width = len(CODES) if evaluator.normalised else 1
    accepted = _side(evaluator, [p.accepted for p in pairs], width)
    top = _side(evaluator, [p.top for p in pairs], width)
    options: dict[str, Any] = {
        "bootstrap": parameters.bootstrap,
        "seed": parameters.seed,
        "confidence_level": parameters.confidence_level,
    }
    if not evaluator.normalised:
        return preference(accepted[:, 0], top[:, 0], normalised=False, **options), {}
    overall = preference(normalised_score(accepted), normalised_score(top), **options)
    ablation = factor_ablation(accepted, top, factors=CODES, **options) if evaluator.factor_grounded else {}
    return overall, ablation


def _source_order(sources: set[str]) -> list[str]:
    # The paper's rows: the accepted and the top-voted answer first, then methods by name.
    return [s for s in (ACCEPTED, TOP_VOTED) if s in sources] + sorted(sources - {ACCEPTED, TOP_VOTED})


def _evaluate(evaluator: _Evaluator, pairs: PairSet, parameters: CopaEvalParameters) -> _Outcome:
    overall, ablation = _preferences(evaluator, list(pairs.pairs), parameters)
    by_category, ablation_by_category = {}, {}
    for category in pairs.categories:
        members = [p for p in pairs.pairs if pairs.category_of(p) == category]
        if members:
            by_category[category], ablation_by_category[category] = _preferences(evaluator, members, parameters)
    if not evaluator.normalised:
        return _Outcome(evaluator, overall, ablation, by_category, {}, None, None)
    scored = sorted(item for item in evaluator.scores if item in pairs.responses)
    groups: dict[str, dict[str, list[int]]] = {}
    for item in scored:
        source, category = pairs.responses[item]
        groups.setdefault(source, {}).setdefault(category, []).append(item)
    by_source = {
        source: {
            category: group_score_means(_side(evaluator, groups[source][category], len(CODES)), factors=CODES)
            for category in pairs.categories
            if category in groups[source]
        }
        for source in _source_order(set(groups))
    }
    correlations = factor_correlations(_side(evaluator, scored, len(CODES)), factors=CODES)
    return _Outcome(evaluator, overall, ablation, by_category, ablation_by_category, by_source, correlations)


def _row_mean(means: dict[str, GroupMeans]) -> float | None:
    """Table 6's Avg.: the mean over the named category columns with a score, "(none)" left out. CoPA
    §5.4: "Table 6 presents a comparative evaluation ... across four categories", its Avg. their mean."""
    values = [m.score.statistic for c, m in means.items() if c != NONE and m.score.statistic is not None]
    return float(np.mean(values)) if values else None


def _preference_json(result: PreferenceResult) -> dict[str, Any]:
    return {
        "accuracy": statistic_json(result.accuracy),
        "tie_rate": statistic_json(result.tie_rate),
        "margin": statistic_json(result.margin),
    }


def _means_json(means: GroupMeans) -> dict[str, Any]:
    return {
        "score": means.score.statistic,
        "n": means.score.n_units,
        "factors": {code: result.statistic for code, result in means.factors.items()},
    }


def _outcome_json(outcome: _Outcome) -> dict[str, Any]:
    data: dict[str, Any] = {
        "label": outcome.evaluator.label,
        "run": outcome.evaluator.run_id,
        "n_pairs": outcome.overall.n_pairs,
        "excluded_pairs": outcome.overall.excluded_pairs,
        **_preference_json(outcome.overall),
        "ablation": {code: _preference_json(result) for code, result in outcome.ablation.items()},
        "by_category": {
            category: {
                "n_pairs": result.n_pairs,
                **_preference_json(result),
                "ablation": {
                    code: _preference_json(r) for code, r in outcome.ablation_by_category.get(category, {}).items()
                },
            }
            for category, result in outcome.by_category.items()
        },
    }
    if outcome.by_source is not None and outcome.correlations is not None:
        data["by_source"] = {
            source: {
                "categories": {category: _means_json(means) for category, means in by_category.items()},
                "avg": _row_mean(by_category),
            }
            for source, by_category in outcome.by_source.items()
        }
        correlations = outcome.correlations
        data["factor_correlations"] = {
            "factors": list(correlations.factors),
            "rho": correlations.rho,
            "n": correlations.n_units,
            **({"reason": correlations.reason} if correlations.reason else {}),
        }
    return data


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
            "Lexical baselines score each answer by its raw overlap (with the user's history, or the mean over "
            "the six profile texts for the profile variant), not normalised: Accuracy only, as in the paper."
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
    categories = pairs.categories
    tables.append(_by_category_table(outcomes, categories, parameters))
    for number, outcome in enumerate(o for o in outcomes if o.ablation):
        tables.append(_ablation_by_category_table(number + 1, outcome, categories, parameters))
    for number, outcome in enumerate(o for o in outcomes if o.by_source is not None):
        tables += _source_tables(number + 1, outcome, categories)
    return tables


def _category_columns(categories: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    plain = tuple(f"{category} {metric}" for category in categories for metric in METRIC_COLUMNS)
    latex = tuple(f"{latex_escape(category)} {metric}" for category in categories for metric in METRIC_LATEX)
    return plain, latex


def _category_cells(results: dict[str, PreferenceResult], categories: list[str]) -> tuple[Cell, ...]:
    missing = (Cell(note="no pair in this category"),) * 3
    return tuple(c for category in categories for c in (_cells(results[category]) if category in results else missing))


def _by_category_table(outcomes: list[_Outcome], categories: list[str], parameters: CopaEvalParameters) -> Table:
    plain, latex = _category_columns(categories)
    return Table(
        key="copa_table3_by_category",
        title="Comparison of evaluation methodologies by category (CoPA Tables 3 and A4)",
        caption=(
            "Accuracy, Tie (%) and Margin per category of the pairs (the accepted answer's meta.category). "
            f"{_interval_words(parameters)}"
        ),
        columns=("Evaluator", *plain),
        latex_columns=("Evaluator", *latex),
        rows=tuple(Row(o.evaluator.label, _category_cells(o.by_category, categories)) for o in outcomes),
    )


def _ablation_by_category_table(
    number: int, outcome: _Outcome, categories: list[str], parameters: CopaEvalParameters
) -> Table:
    plain, latex = _category_columns(categories)
    rows = [
        Row(
            f"w/o {code}",
            _category_cells({c: by_code[code] for c, by_code in outcome.ablation_by_category.items()}, categories),
        )
        for code in CODES
    ]
    rows.append(Row("All", _category_cells(outcome.by_category, categories), summary=True))
    return Table(
        key=f"copa_table4_{number}_by_category",
        title=f"Ablation of the factors by category: {outcome.evaluator.label} (CoPA Table 4)",
        caption=f"Each factor left out in turn (sum / 10), per category of the pairs. {_interval_words(parameters)}",
        columns=("Factors", *plain),
        latex_columns=("Factors", *latex),
        rows=tuple(rows),
    )


def _source_tables(number: int, outcome: _Outcome, categories: list[str]) -> list[Table]:
    by_source = outcome.by_source or {}
    label = outcome.evaluator.label
    none = Cell(note="no scored response of this source in this category")
    rows = []
    for source, means in by_source.items():
        cells = [Cell.of(means[c].score) if c in means else none for c in categories]
        rows.append(Row(source, (*cells, Cell(value=_row_mean(means)))))
    tables = [
        Table(
            key=f"copa_table6_{number}",
            title=f"Mean normalised score by response source and category: {label} (CoPA Table 6)",
            caption=(
                "Mean of S = sum of the six factor scores / 12 over each source's scored responses, per category; "
                f"Avg. is the mean of the named category columns, as in the paper (its four), {NONE} left out."
            ),
            columns=("Source", *categories, "Avg."),
            latex_columns=("Source", *(latex_escape(c) for c in categories), "Avg."),
            rows=tuple(rows),
        )
    ]
    names = [name for name, _ in FACTORS.values()]
    for index, category in enumerate(categories):
        factor_rows = [
            Row(source, tuple(Cell.of(means[category].factors[code]) for code in CODES))
            for source, means in by_source.items()
            if category in means
        ]
        tables.append(
            Table(
                key=f"copa_factors_{number}_{index + 1}",
                title=f"Factor-level scores, {category}: {label} (CoPA Tables A6-A9)",
                caption=(
                    f"Mean of each factor's score / 2 over the scored responses of {category}; the mean of a row's "
                    "six values is its Table 6 cell."
                ),
                columns=("Source", *names),
                latex_columns=("Source", *CODES),
                rows=tuple(factor_rows),
                notes=("Factors: " + "; ".join(f"{code} {name}" for code, (name, _) in FACTORS.items()) + ".",),
            )
        )
    tables.append(_correlation_table(number, outcome))
    return tables


def _correlation_table(number: int, outcome: _Outcome) -> Table:
    correlations = outcome.correlations
    assert correlations is not None  # a factor-scoring evaluator always has them
    note = correlations.reason or "undefined"
    rows = tuple(
        Row(
            code,
            tuple(
                Cell(value=value, n=correlations.n_units) if value is not None else Cell(note=note)
                for value in correlations.rho[i]
            ),
        )
        for i, code in enumerate(correlations.factors)
    )
    return Table(
        key=f"copa_figure5_{number}",
        title=f"Spearman correlations between the factors: {outcome.evaluator.label} (CoPA Figure 5)",
        caption=(
            f"Spearman's rho (scipy.stats.spearmanr) between every two factors' scores over the "
            f"{correlations.n_units} responses scored on all six."
        ),
        columns=("Factor", *correlations.factors),
        latex_columns=("Factor", *correlations.factors),
        rows=rows,
    )


def _correlation_figure(number: int, outcome: _Outcome) -> Figure:
    correlations = outcome.correlations
    assert correlations is not None
    return Figure(
        key=f"copa_figure5_{number}",
        title=f"Spearman correlations between the factors ({outcome.evaluator.label})",
        kind="correlation",
        data={"labels": list(correlations.factors), "values": correlations.rho},
        alt=f"Heat map of Spearman's rho between the six factors over {correlations.n_units} responses.",
    )


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
                "responses": [
                    [pairs.external_ids[item], *pairs.responses[item], list(e.scores[item])]
                    for item in sorted(e.scores)
                    if item in pairs.responses
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
        figures=tuple(
            _correlation_figure(n + 1, o) for n, o in enumerate(o for o in outcomes if o.by_source is not None)
        ),
        judge_label="; ".join(e.label for e in evaluators),
    )
