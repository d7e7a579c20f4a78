"""``mcq_eval``: IntentGrasp model evaluation from an ``intent_mcq`` project (paper 002, §4, App. A-B).

Each judge run is one evaluation session: the no-shuffle run (a judge without a seed keeps the
item's option order) and the shuffles 7, 42 and 365 (a judge with that seed shows the options in
an order drawn from the seed and the item alone, ``judges.kinds.intent_mcq.prompts.IntentGraspMcq``).
Per run the F1 with parse failures left out and scored 0 (an answer the released scorer can partly read gets its
partial credit in the scored-0 way); over runs the mean and the standard deviation, sample (ddof 1,
Table 8's All Set block) or population (ddof 0, Table 8's Gem Set block, Tables 9 and 2) as asked,
with the 2-sigma error bars of §4.1 as a table and a figure; the random-guess baseline beside them
(App. A.3); breakdowns by source dataset, domain (Table 10), text form, label type, annotation style and
sensitivity (Table 11) and dataset year (Figure 4); and the human baseline both ways: measured (people
answering the same questions, scored against the key) and estimated from the source datasets'
reported agreement (App. A.2, ``validation.kinds.intent_mcq.human_scores``).

A run is scored on the instances it covers (an answer or a failure): a run over a uniform subset
leaves the others out of both ways, and says its n. The groups of the breakdowns are read as
``validation.kinds.intent_mcq.mcq_runs`` says (``meta.annotation`` etc. as ``build_mcq`` copies them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.kinds.intent_mcq import instance_f1
from annotation.latest import latest_annotations
from annotation.models import Project
from judges.models import JudgeRun
from validation.agreement import AgreementResult, random_guess_f1
from validation.evaluations.base import (
    Evaluation,
    check_kind,
    check_runs,
    current_versions,
    evaluated_runs,
    inputs_digest,
)
from validation.kinds.intent_mcq.human_scores import HumanScoreTable, default_human_scores
from validation.kinds.intent_mcq.mcq_eval import (
    STD_DDOF,
    UNKNOWN_STD,
    RunF1,
    Spread,
    average_over_models,
    estimated_human_f1,
    run_f1,
    spread_over_runs,
)
from validation.kinds.intent_mcq.mcq_runs import FACETS, McqInstance, RunScores, mcq_instances_of, run_scores
from validation.reports import Cell, Figure, Row, Table
from validation.reports.render import latex_escape

__all__ = ["McqEvalParameters", "mcq_evaluation"]

NO_RUN = "choose at least one judge run"
#: How tables name each standard deviation over runs.
STD_WORDS = {"sample": "sample std (ddof 1)", "population": "population std (ddof 0)"}
NO_PEOPLE = "no person has answered these questions"
WAYS = ("failures_left_out", "failures_scored_zero")


@dataclass(frozen=True, kw_only=True)
class McqEvalParameters:
    """What besides the data changes ``mcq_eval``'s numbers; the human-score table travels with it."""

    runs: tuple[int, ...] = ()
    human_scores: HumanScoreTable | None = None
    #: ``sample`` (ddof 1) or ``population`` (ddof 0): the std over runs (``STD_DDOF``).
    std: str = "sample"

    def __post_init__(self) -> None:
        if self.std not in STD_DDOF:
            raise ValueError(UNKNOWN_STD.format(name=self.std))

    @property
    def ddof(self) -> int:
        return STD_DDOF[self.std]

    @property
    def scores(self) -> HumanScoreTable:
        return self.human_scores or default_human_scores()

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": "mcq_eval",
            "runs": list(self.runs),
            "std": self.std,
            "human_scores_source": self.scores.source,
            "human_scores": self.scores.to_json(),
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> McqEvalParameters:
        table = HumanScoreTable.from_json(data["human_scores"], source=data["human_scores_source"])
        # Snapshots frozen before the choice existed used the sample std.
        return cls(runs=tuple(data["runs"]), human_scores=table, std=data.get("std", "sample"))


def _measured_human(project: Project, instances: list[McqInstance]) -> tuple[AgreementResult, list[list]]:
    """People's F1 against the key, the mean over every person's latest answer (the report's number),
    and the answers it averages as (external id, rater, F1) for the inputs digest."""
    answers = {instance.pk: (instance.external_id, list(instance.answers)) for instance in instances}
    scored: list[list] = []
    rows = latest_annotations(project=project).values_list("item_id", "rater", "value").iterator(chunk_size=5000)
    for item_id, rater, value in rows:
        if item_id in answers:
            external_id, key = answers[item_id]
            scored.append([external_id, rater, instance_f1(value["chosen"], key)])
    scored.sort()
    method = "mean F1 of people's latest answers against the key"
    if not scored:
        return AgreementResult(statistic=None, n_units=0, method=method, reason=NO_PEOPLE), scored
    n_items = len({external_id for external_id, _, _ in scored})
    statistic = float(np.mean([f1 for _, _, f1 in scored]))
    return AgreementResult(statistic=statistic, n_units=n_items, method=method), scored


def _spread_json(spread: Spread) -> dict[str, Any]:
    bar = spread.error_bar
    data: dict[str, Any] = {
        "mean": spread.mean,
        "std": spread.std,
        "ddof": spread.ddof,
        "two_sigma": spread.two_sigma,
        "error_bar": None if bar is None else list(bar),
        "n_runs": spread.n_runs,
    }
    if spread.reason:
        data["reason"] = spread.reason
    return data


def _f1_json(result: RunF1) -> dict[str, Any]:
    return {way: getattr(result, way).statistic for way in WAYS}


def _over_runs(results: Sequence[RunF1], ddof: int) -> dict[str, Spread]:
    return {way: spread_over_runs([getattr(r, way).statistic for r in results], ddof=ddof) for way in WAYS}


def _scored(run: RunScores, rows: Any = None) -> RunF1:
    """The run's F1 over ``rows`` (every instance by default) that it covers: an instance the run never
    saw (a subset run, a run not finished) is in neither column, not a failure scored 0."""
    mask = run.covered.copy()
    if rows is not None:
        mask &= np.isin(np.arange(len(mask)), rows)
    return run_f1(run.f1[mask], failure_credit=run.credit[mask])


def _baseline(instances: Sequence[McqInstance]) -> AgreementResult:
    return random_guess_f1([len(i.answers) for i in instances], [i.n_options for i in instances])


@dataclass(frozen=True)
class _GroupResult:
    group: str
    n_instances: int
    random_guess: AgreementResult
    runs: list[RunF1]
    over_runs: dict[str, Spread]


def _breakdown(facet: str, instances: list[McqInstance], runs: list[RunScores], ddof: int) -> list[_GroupResult]:
    members: dict[str, list[int]] = {}
    for index, instance in enumerate(instances):
        members.setdefault(instance.groups[facet], []).append(index)
    results = []
    for group in sorted(members):
        rows = np.asarray(members[group])
        per_run = [_scored(r, rows) for r in runs]
        results.append(
            _GroupResult(group, len(rows), _baseline([instances[i] for i in rows]), per_run, _over_runs(per_run, ddof))
        )
    return results


def _percent(result: AgreementResult) -> Cell:
    return Cell.of(result, format="percent")


def _spread_cells(spread: Spread) -> tuple[Cell, Cell]:
    return (
        Cell(value=spread.mean, format="percent", note=None if spread.mean is not None else spread.reason),
        Cell(value=spread.std, format="percent", note=None if spread.std is not None else spread.reason),
    )


def _tables(
    instances: list[McqInstance],
    runs: list[RunScores],
    results: list[RunF1],
    over: dict[str, Spread],
    baseline: AgreementResult,
    measured: AgreementResult,
    estimated: AgreementResult,
    breakdowns: dict[str, list[_GroupResult]],
    scores: HumanScoreTable,
    std: str,
) -> list[Table]:
    std_words = STD_WORDS[std]
    rows = [
        Row(
            r.label,
            (
                Cell.count(result.n_instances),
                Cell.count(result.n_answered),
                Cell.count(result.n_unanswered),
                _percent(result.failures_left_out),
                _percent(result.failures_scored_zero),
            ),
        )
        for r, result in zip(runs, results, strict=True)
    ]
    left_mean, left_std = _spread_cells(over["failures_left_out"])
    zero_mean, zero_std = _spread_cells(over["failures_scored_zero"])
    blank = (Cell(), Cell(), Cell())
    rows.append(Row("Mean over runs", (*blank, left_mean, zero_mean), summary=True))
    rows.append(Row(f"{std_words.capitalize()} over runs", (*blank, left_std, zero_std)))
    two_sigma = {way: Cell(value=over[way].two_sigma, format="percent", note=over[way].reason) for way in WAYS}
    rows.append(Row("2-sigma error bar (±)", (*blank, two_sigma[WAYS[0]], two_sigma[WAYS[1]])))
    rows.append(
        Row(
            "Random guess (expected)",
            (Cell.count(baseline.n_units), Cell(), Cell(), _percent(baseline), _percent(baseline)),
            rule_above=True,
        )
    )
    rows.append(Row("Human, measured (people vs the key)", (*blank, _percent(measured), _percent(measured))))
    rows.append(Row(f"Human, estimated ({scores.source})", (*blank, _percent(estimated), _percent(estimated))))
    notes = (
        "F1 per instance is 2|C∩A| / (|C| + |A|), averaged over instances (IntentGrasp §4.1). A run's failures are "
        "instances without a readable answer: left out in one column, scored 0 in the other (as the released "
        "scorer does; an answer mixing valid and invalid letters gets its partial credit there, valid letters "
        "scored and invalid ones wrong, letters compared lower-cased as that scorer does). A run is scored on the "
        "instances it covers (Instances): one run on a subset (App. B.1's uniform subsets) leaves the others out.",
        "Random guess: one option at random, expected F1 mean of (v/u)·2/(1+v) (App. A.3). Estimated human "
        f"baseline: reported human scores weighted by instance count over the {estimated.n_units} instances "
        "whose dataset reports one (App. A.2).",
    )
    tables = [
        Table(
            key="mcq_runs",
            title="IntentGrasp evaluation by run (IntentGrasp Table 8)",
            caption=(
                f"F1 (%) per run on the instances it covers (of {len(instances)}), the mean, {std_words} and "
                f"2-sigma error bar over {len(runs)} runs, and the baselines."
            ),
            columns=("Run", "Instances", "Answered", "Failed", "F1 (failures left out)", "F1 (failures scored 0)"),
            latex_columns=("Run", "$n$", "Answered", "Failed", "F1 (left out)", "F1 (scored 0)"),
            rows=tuple(rows),
            notes=notes,
        )
    ]
    for facet, title, source in FACETS:
        group_rows = []
        for group in breakdowns[facet]:
            left = _spread_cells(group.over_runs["failures_left_out"])
            zero = _spread_cells(group.over_runs["failures_scored_zero"])
            group_rows.append(
                Row(group.group, (Cell.count(group.n_instances), _percent(group.random_guess), *left, *zero))
            )
        tables.append(
            Table(
                key=f"mcq_by_{facet}",
                title=f"IntentGrasp evaluation by {title} (IntentGrasp {source})",
                caption=f"Mean and {std_words} of F1 (%) over {len(runs)} runs per {title}, beside the random guess.",
                columns=("Group", "Instances", "Random guess", "F1 left out", "Std", "F1 scored 0", "Std"),
                latex_columns=("Group", "$n$", "Random", "F1 (left out)", "Std", "F1 (scored 0)", "Std"),
                rows=tuple(group_rows),
            )
        )
    tables.append(_error_bar_table(over, breakdowns["domain"], len(instances), len(runs), std_words))
    return tables


def _error_bar_groups(over: dict[str, Spread], domains: list[_GroupResult], n: int) -> list[tuple[str, int, dict]]:
    return [("All instances", n, over), *((g.group, g.n_instances, g.over_runs) for g in domains)]


def _error_bar_table(
    over: dict[str, Spread], domains: list[_GroupResult], n: int, n_runs: int, std_words: str
) -> Table:
    rows = []
    for group, size, spreads in _error_bar_groups(over, domains, n):
        cells: list[Cell] = [Cell.count(size)]
        for way in reversed(WAYS):  # the paper's number (failures scored 0) first
            spread = spreads[way]
            bar = spread.error_bar
            cells += [
                Cell(value=spread.mean, format="percent", note=None if spread.mean is not None else spread.reason),
                Cell(value=spread.two_sigma, format="percent", note=spread.reason),
                Cell(value=None if bar is None else bar[0], format="percent"),
                Cell(value=None if bar is None else bar[1], format="percent"),
            ]
        rows.append(Row(group, tuple(cells), summary=group == "All instances"))
    return Table(
        key="mcq_error_bars",
        title="IntentGrasp 2-sigma error bars (IntentGrasp §4.1, Figures 2, 5, 7)",
        caption=(
            f"Mean F1 (%) over {n_runs} runs ± 2 × the {std_words}, over all instances and per domain; "
            "the bar runs from Low to High."
        ),
        columns=(
            "Group",
            "Instances",
            "F1 scored 0",
            "2σ",
            "Low",
            "High",
            "F1 left out",
            "2σ",
            "Low",
            "High",
        ),
        latex_columns=(
            "Group",
            "$n$",
            "F1 (scored 0)",
            r"$2\sigma$",
            "Low",
            "High",
            "F1 (left out)",
            r"$2\sigma$",
            "Low",
            "High",
        ),
        rows=tuple(rows),
    )


def _error_bar_figure(over: dict[str, Spread], domains: list[_GroupResult], n: int, std_words: str) -> Figure:
    groups = _error_bar_groups(over, domains, n)
    names = {"failures_scored_zero": "F1, failures scored 0", "failures_left_out": "F1, failures left out"}
    series = []
    for way in reversed(WAYS):
        bars = [spreads[way].error_bar for _, _, spreads in groups]
        series.append(
            {
                "name": names[way],
                "values": [spreads[way].mean for _, _, spreads in groups],
                "low": [None if bar is None else bar[0] for bar in bars],
                "high": [None if bar is None else bar[1] for bar in bars],
            }
        )
    return Figure(
        key="mcq_error_bars",
        title="Mean F1 over runs with 2-sigma error bars",
        kind="bars",
        data={"groups": [group for group, _, _ in groups], "series": series, "ylabel": "F1"},
        alt=f"Bars of mean F1 over runs, all instances and per domain, with error bars of 2 × the {std_words}.",
    )


@dataclass(frozen=True)
class _Model:
    """One model's runs (its sessions) and what the paper prints for it."""

    name: str
    runs: list[int]  # positions in the evaluation's run list
    over_runs: dict[str, Spread]
    #: facet → group → way → the mean over the model's runs
    breakdowns: dict[str, dict[str, dict[str, float | None]]]


def _models(
    scored: list[RunScores],
    results: list[RunF1],
    breakdowns: dict[str, list[_GroupResult]],
    ddof: int,
) -> list[_Model]:
    """The runs grouped by model (backend, model and prompt: one judge per option order), in the order given."""
    judges = JudgeRun.objects.filter(pk__in=[r.run.run_id for r in scored]).select_related("judge")
    names = {run.pk: f"{run.judge.backend_label}, {run.judge.prompt_key}" for run in judges}
    members: dict[str, list[int]] = {}
    for position, run in enumerate(scored):
        members.setdefault(names[run.run.run_id], []).append(position)
    models = []
    for name, positions in members.items():
        over = _over_runs([results[p] for p in positions], ddof)
        by_facet = {
            facet: {
                group.group: {
                    way: spread_over_runs([getattr(group.runs[p], way).statistic for p in positions], ddof=ddof).mean
                    for way in WAYS
                }
                for group in groups
            }
            for facet, groups in breakdowns.items()
        }
        models.append(_Model(name, positions, over, by_facet))
    return models


def _avg_over_models_json(models: list[_Model]) -> dict[str, Any]:
    groups = {facet: sorted({g for m in models for g in m.breakdowns[facet]}) for facet, _, _ in FACETS}
    return {
        "n_models": len(models),
        "over_runs": {way: average_over_models([m.over_runs[way].mean for m in models]) for way in WAYS},
        "breakdowns": {
            facet: {
                group: {
                    way: average_over_models([m.breakdowns[facet].get(group, {}).get(way) for m in models])
                    for way in WAYS
                }
                for group in names
            }
            for facet, names in groups.items()
        },
    }


def _model_tables(models: list[_Model], std_words: str) -> list[Table]:
    """Tables 10 and 11's layout: a row per model (its mean over runs), then "Avg. over Models"."""
    if len(models) < 2:
        return []
    average = _avg_over_models_json(models)
    way = "failures_scored_zero"  # the released scorer's number, as the paper prints
    tables = []
    for facet, title, source in (("overall", "", ""), *FACETS):
        if facet == "overall":
            columns = ("Model", "Runs", "F1 (scored 0)", "Std", "2σ")
            rows = [
                Row(
                    m.name,
                    (
                        Cell.count(len(m.runs)),
                        Cell(value=m.over_runs[way].mean, format="percent"),
                        Cell(value=m.over_runs[way].std, format="percent", note=m.over_runs[way].reason),
                        Cell(value=m.over_runs[way].two_sigma, format="percent", note=m.over_runs[way].reason),
                    ),
                )
                for m in models
            ]
            rows.append(
                Row(
                    "Avg. over Models",
                    (Cell(), Cell(value=average["over_runs"][way], format="percent"), Cell(), Cell()),
                    summary=True,
                )
            )
            tables.append(
                Table(
                    key="mcq_models",
                    title="IntentGrasp evaluation by model (IntentGrasp Tables 8-10, Overall)",
                    caption=(
                        f"Each model's mean F1 (%) over its runs (failures scored 0), its {std_words} and 2σ; "
                        "Avg. over Models is the mean of the models' means."
                    ),
                    columns=columns,
                    latex_columns=("Model", "Runs", "F1 (scored 0)", "Std", r"$2\sigma$"),
                    rows=tuple(rows),
                )
            )
            continue
        groups = list(average["breakdowns"][facet])
        rows = [
            Row(m.name, tuple(Cell(value=m.breakdowns[facet].get(g, {}).get(way), format="percent") for g in groups))
            for m in models
        ]
        rows.append(
            Row(
                "Avg. over Models",
                tuple(Cell(value=average["breakdowns"][facet][g][way], format="percent") for g in groups),
                summary=True,
            )
        )
        tables.append(
            Table(
                key=f"mcq_models_by_{facet}",
                title=f"IntentGrasp evaluation by model and {title} (IntentGrasp {source})",
                caption=f"Each model's mean F1 (%) over its runs (failures scored 0) per {title}; Avg. over Models "
                "is the mean of the models' values.",
                columns=("Model", *groups),
                latex_columns=("Model", *(latex_escape(g) for g in groups)),
                rows=tuple(rows),
            )
        )
    return tables


def mcq_evaluation(*, project: Project, parameters: McqEvalParameters) -> Evaluation:
    """``mcq_eval``'s numbers and tables for an ``intent_mcq`` project.

    Raises
    ------
    WrongKind, UnknownJudgeRun, ValueError
        As for ``copa_evaluation``.
    """
    check_kind(project, expected="intent_mcq", evaluation="mcq_eval")
    check_runs(parameters.runs)
    if not parameters.runs:
        raise ValueError(NO_RUN)
    runs = evaluated_runs(project, parameters.runs)
    instances = mcq_instances_of(project)
    scored = [run_scores(run, instances) for run in runs]
    results = [_scored(r) for r in scored]
    over = _over_runs(results, parameters.ddof)
    baseline = _baseline(instances)
    measured, people = _measured_human(project, instances)
    n_answers = len(people)
    table = parameters.scores
    counts: dict[str, int] = {}
    for instance in instances:
        counts[instance.groups["dataset"]] = counts.get(instance.groups["dataset"], 0) + 1
    estimated = estimated_human_f1(counts, {name: table.score_of(name) for name in counts})
    breakdowns = {facet: _breakdown(facet, instances, scored, parameters.ddof) for facet, _, _ in FACETS}
    models = _models(scored, results, breakdowns, parameters.ddof)
    std = parameters.std
    result = {
        "project": project.slug,
        "n_instances": len(instances),
        "std": {"name": parameters.std, "ddof": parameters.ddof},
        "random_guess": {"statistic": baseline.statistic, "n_instances": baseline.n_units},
        "human": {
            "measured": {"statistic": measured.statistic, "n_answers": n_answers, "n_instances": measured.n_units},
            "estimated": {
                "statistic": estimated.statistic,
                "n_instances": estimated.n_units,
                "source": table.source,
                "datasets": [
                    {"dataset": name, "instances": n, "score": table.score_of(name)}
                    for name, n in sorted(counts.items())
                ],
            },
        },
        "runs": [
            {
                "run": r.run.run_id,
                "label": r.label,
                "seed": r.run.seed,
                "shuffled": r.shuffled,
                "baseline": r.run.is_baseline,
                "n_instances": result.n_instances,
                "n_answered": result.n_answered,
                "parse_failures": r.parse_failures,
                "partial_credit": r.partial_credits,
                "not_covered": len(instances) - r.n_covered,
                "f1": _f1_json(result),
            }
            for r, result in zip(scored, results, strict=True)
        ],
        "over_runs": {way: _spread_json(spread) for way, spread in over.items()},
        "models": [
            {
                "model": m.name,
                "runs": [scored[p].run.run_id for p in m.runs],
                "over_runs": {way: _spread_json(spread) for way, spread in m.over_runs.items()},
                "breakdowns": m.breakdowns,
            }
            for m in models
        ],
        "avg_over_models": _avg_over_models_json(models),
        "breakdowns": {
            facet: [
                {
                    "group": g.group,
                    "n_instances": g.n_instances,
                    "random_guess": g.random_guess.statistic,
                    "runs": [{"run": r.run.run_id, **_f1_json(f)} for r, f in zip(scored, g.runs, strict=True)],
                    "over_runs": {way: _spread_json(spread) for way, spread in g.over_runs.items()},
                }
                for g in groups
            ]
            for facet, groups in breakdowns.items()
        },
    }
    inputs = {
        "instances": [[i.external_id, list(i.answers), i.n_options, i.groups] for i in instances],
        "runs": [
            [
                r.run.run_id,
                [None if np.isnan(x) else float(x) for x in r.f1],
                r.parse_failures,
                # The partial credits, when any: a changed raw answer changes the inputs too.
                *([[None if np.isnan(x) else float(x) for x in r.credit]] if r.partial_credits else []),
                # Which instances a run covers, when it leaves some out (a subset run).
                *([[bool(x) for x in r.covered]] if r.n_covered < len(instances) else []),
            ]
            for r in scored
        ],
        "people": people,
    }
    return Evaluation(
        name="mcq_eval",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest(inputs),
        library_versions=current_versions(),
        result=result,
        tables=(
            *_tables(instances, scored, results, over, baseline, measured, estimated, breakdowns, table, std),
            *_model_tables(models, STD_WORDS[std]),
        ),
        figures=(_error_bar_figure(over, breakdowns["domain"], len(instances), STD_WORDS[parameters.std]),),
        judge_label="; ".join(r.label for r in scored),
    )
