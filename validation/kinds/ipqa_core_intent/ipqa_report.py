"""``ipqa_eval``: an IPQA project's predicted core intents scored against its gold (IPQA, §2.1).

Inputs: the IPQA project (gold core intents), a predictions file (``validation.kinds.ipqa_core_intent.ipqa_pairs``)
and a judge run over the ``ipqa_eval_match`` project that ``ipqa_eval_pairs`` filled from the same
predictions: the LLM matcher's (or a baseline's) match / no match for every (predicted, gold) pair.
Per item the one-to-one matching with the most matched pairs gives precision, recall and F1; overall
their macro averages over items with bootstrap intervals (``validation.kinds.ipqa_core_intent.ipqa_eval``).

An item enters only when every one of its pairs has an answer in the run. Left out, and counted: items
of the file without gold or without a gold core intent, items where a pair failed in the run, items
where a pair has no answer (not built into the match project, or not judged yet). An item with an empty
``predicted_intents`` list enters with all three scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotation.models import Item, Project
from judges.models import JudgeRun
from judges.selectors import failed_suggestions, suggestion_values
from validation.evaluations.base import (
    Evaluation,
    WrongKind,
    check_bootstrap,
    check_kind,
    current_versions,
    inputs_digest,
    statistic_json,
)
from validation.kinds.ipqa_core_intent.ipqa_eval import MEASURES, ItemScore, MacroScores, item_score, macro_scores
from validation.kinds.ipqa_core_intent.ipqa_pairs import MATCH_KIND, SOURCE_KIND, gold_core_intents, pair_external_id
from validation.reports import Cell, Row, Table, UnknownJudgeRun
from validation.reports.build import judge_info

__all__ = ["LEFT_OUT_REASONS", "IpqaEvalParameters", "ipqa_evaluation"]

UNKNOWN_RUN = "no judge run {run_id}"
NOT_A_MATCH_RUN = "run {run_id} is a run over {slug} ({kind}); ipqa_eval reads a run over an ipqa_eval_match project"
NOT_IN_PROJECT = "not an item of the project"
PAIR_FAILED, PAIR_UNJUDGED = "a pair failed in the run", "a pair has no answer in the run"
#: Why an item of the predictions file is left out, in the order the JSON counts them.
LEFT_OUT_REASONS = ("no gold yet", "the gold has no core intent", PAIR_FAILED, PAIR_UNJUDGED)
COUNT_KEYS = dict(
    zip(LEFT_OUT_REASONS, ("no_gold", "no_gold_core_intent", "pair_failed", "pair_unjudged"), strict=True)
)
TITLES = {"precision": "Precision", "recall": "Recall", "f1": "F1"}


@dataclass(frozen=True, kw_only=True)
class IpqaEvalParameters:
    """What besides the data changes ``ipqa_eval``'s numbers: the run, the bootstrap, and the predictions
    scored (external id → predicted intents, as ``read_predictions`` reads a file), which a snapshot
    stores so that a check scores the same predictions again."""

    run: int
    bootstrap: int = 1000
    seed: int = 0
    confidence_level: float = 0.95
    predictions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": "ipqa_eval",
            "run": self.run,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
            "predictions": {external_id: list(intents) for external_id, intents in self.predictions.items()},
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> IpqaEvalParameters:
        return cls(
            run=data["run"],
            bootstrap=data["bootstrap"],
            seed=data["seed"],
            confidence_level=data["confidence_level"],
            predictions={external_id: tuple(intents) for external_id, intents in data["predictions"].items()},
        )


def _match_run(run_id: int) -> tuple[JudgeRun, Project]:
    run = JudgeRun.objects.select_related("project", "judge").filter(pk=run_id).first()
    if run is None:
        raise UnknownJudgeRun(UNKNOWN_RUN.format(run_id=run_id))
    if run.project.kind != MATCH_KIND:
        raise WrongKind(NOT_A_MATCH_RUN.format(run_id=run_id, slug=run.project.slug, kind=run.project.kind))
    return run, run.project


def _pair_answers(run: JudgeRun, match_project: Project) -> tuple[dict[str, bool], set[str]]:
    """external id → the run's match decision; and the external ids whose answer failed."""
    ids = dict(Item.objects.filter(project=match_project).values_list("pk", "external_id"))
    decided = {
        ids[item_id]: bool(value["match"]) for item_id, value in suggestion_values(run_id=run.pk) if item_id in ids
    }
    failed = {ids[i] for i in failed_suggestions(run=run).values_list("item_id", flat=True) if i in ids}
    return decided, failed - set(decided)


@dataclass(frozen=True)
class _Scored:
    external_id: str
    score: ItemScore


def _percent(result: Any) -> Cell:
    return Cell.of(result, format="percent")


def _table(macro: MacroScores, counts: dict[str, int], label: str, interval: str) -> Table:
    left_out = ", ".join(f"{reason}: {counts[key]}" for reason, key in COUNT_KEYS.items())
    return Table(
        key="ipqa_eval",
        title="IPQA-Eval: core intent identification",
        caption=(
            f"Macro precision, recall and F1 (%) of predicted against gold core intents over {macro.n_items} items; "
            f"matches decided by {label}. {interval}."
        ),
        columns=("Measure", "Macro over items"),
        latex_columns=("Measure", "Macro over items"),
        rows=tuple(Row(TITLES[m], (_percent(getattr(macro, m)),)) for m in MEASURES),
        notes=(
            "Per item, the one-to-one matching of predicted to gold core intents with the most matched pairs: "
            "P = matched / predicted, R = matched / gold, F1 = 2PR / (P + R) (IPQA §2.1, S_intent).",
            f"Items of the predictions file left out: {left_out}.",
        ),
    )


#: Question complexity (IPQA §1: performance falls as questions grow more complex), by item.
COMPLEXITY = (("expressed_intents", "expressed intents"), ("core_intents", "core intents"))


def _by_complexity(
    scored: list[_Scored], complexity: dict[str, dict[str, int]], parameters: IpqaEvalParameters
) -> dict[str, list[tuple[int, MacroScores]]]:
    """Macro scores over the items with each number of gold expressed / core intents."""
    found = {}
    for key, _ in COMPLEXITY:
        groups: dict[int, list[ItemScore]] = {}
        for s in scored:
            groups.setdefault(complexity[s.external_id][key], []).append(s.score)
        found[key] = [
            (
                n,
                macro_scores(
                    groups[n],
                    bootstrap=parameters.bootstrap,
                    seed=parameters.seed,
                    confidence_level=parameters.confidence_level,
                ),
            )
            for n in sorted(groups)
        ]
    return found


def _complexity_table(by: dict[str, list[tuple[int, MacroScores]]], interval: str) -> Table:
    rows = []
    for key, words in COMPLEXITY:
        for position, (n, macro) in enumerate(by[key]):
            rows.append(
                Row(
                    f"{n} {words}",
                    (Cell.count(macro.n_items), *(_percent(getattr(macro, m)) for m in MEASURES)),
                    rule_above=position == 0 and key != COMPLEXITY[0][0],
                )
            )
    return Table(
        key="ipqa_eval_by_complexity",
        title="IPQA-Eval by question complexity",
        caption=(
            "Macro precision, recall and F1 (%) over the items with each number of intents the gold judges "
            f"expressed, then each number of gold core intents. {interval}."
        ),
        columns=("Complexity", "Items", *(TITLES[m] for m in MEASURES)),
        latex_columns=("Complexity", "Items", *(TITLES[m] for m in MEASURES)),
        rows=tuple(rows),
    )


def ipqa_evaluation(*, project: Project, parameters: IpqaEvalParameters) -> Evaluation:
    """``ipqa_eval``'s numbers and table for an ``ipqa_core_intent`` project.

    Raises
    ------
    WrongKind
        The project is not an IPQA project, or the run is not over an ``ipqa_eval_match`` project.
    UnknownJudgeRun
        No such run.
    ValueError
        Too many bootstrap resamples, or a bad seed or level.
    """
    check_kind(project, expected=SOURCE_KIND, evaluation="ipqa_eval")
    check_bootstrap(parameters.bootstrap)
    predictions = parameters.predictions
    run, match_project = _match_run(parameters.run)
    info = judge_info(match_project, run.pk)
    decided, failed = _pair_answers(run, match_project)
    gold = gold_core_intents(project=project)
    counts = dict.fromkeys(COUNT_KEYS.values(), 0)
    scored: list[_Scored] = []
    complexity: dict[str, dict[str, int]] = {}
    left_out: list[dict[str, str]] = []
    pairs_read: list[list[Any]] = []
    for external_id, predicted in predictions.items():
        entry = gold.get(external_id)
        reason = NOT_IN_PROJECT if entry is None else entry.missing
        if reason is None and entry is not None:
            ids = [[pair_external_id(external_id, p, g) for g in entry.core_intents] for p in predicted]
            flat = [pair for row in ids for pair in row]
            if any(pair in failed for pair in flat):
                reason = PAIR_FAILED
            elif any(pair not in decided for pair in flat):
                reason = PAIR_UNJUDGED
        if reason is not None:
            if reason in COUNT_KEYS:
                counts[COUNT_KEYS[reason]] += 1
            left_out.append({"external_id": external_id, "reason": reason})
            continue
        assert entry is not None  # else the reason is NOT_IN_PROJECT
        matrix = np.array([[decided[pair] for pair in row] for row in ids], dtype=bool).reshape(
            len(predicted), len(entry.core_intents)
        )
        scored.append(_Scored(external_id, item_score(matrix)))
        complexity[external_id] = {"expressed_intents": entry.n_expressed, "core_intents": len(entry.core_intents)}
        pairs_read.append([external_id, list(predicted), list(entry.core_intents), matrix.astype(int).tolist()])
    by_complexity = _by_complexity(scored, complexity, parameters)
    macro = macro_scores(
        [s.score for s in scored],
        bootstrap=parameters.bootstrap,
        seed=parameters.seed,
        confidence_level=parameters.confidence_level,
    )
    result = {
        "project": project.slug,
        "match_project": match_project.slug,
        "run": {
            "run": run.pk,
            "label": info.label,
            "prompt": run.judge.prompt_key,
            "is_baseline": run.judge.is_baseline,
        },
        "bootstrap": {
            "n_resamples": parameters.bootstrap,
            "seed": parameters.seed,
            "confidence_level": parameters.confidence_level,
        },
        "counts": {"predicted_items": len(predictions), "evaluated": macro.n_items, **counts},
        "macro": {m: statistic_json(getattr(macro, m)) for m in MEASURES},
        "by_complexity": {
            key: [
                {"n": n, "n_items": group.n_items, **{m: statistic_json(getattr(group, m)) for m in MEASURES}}
                for n, group in groups
            ]
            for key, groups in by_complexity.items()
        },
        "items": [
            {
                "external_id": s.external_id,
                "n_predicted": s.score.n_predicted,
                "n_gold": s.score.n_gold,
                "n_expressed": complexity[s.external_id]["expressed_intents"],
                "matched": s.score.matched,
                "matching": [list(pair) for pair in s.score.matching],
                "precision": s.score.precision,
                "recall": s.score.recall,
                "f1": s.score.f1,
            }
            for s in scored
        ],
        "left_out": left_out,
    }
    interval = (
        f"{round(parameters.confidence_level * 100)}% percentile bootstrap intervals over items "
        f"({parameters.bootstrap} resamples, seed {parameters.seed})"
        if parameters.bootstrap
        else "No confidence intervals (bootstrap off)"
    )
    noun = "baseline" if run.judge.is_baseline else "LLM matcher"
    return Evaluation(
        name="ipqa_eval",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        shown_parameters={
            **{k: v for k, v in parameters.to_json_dict().items() if k != "predictions"},
            "predicted_items": len(predictions),
            "predictions_sha256": inputs_digest(parameters.to_json_dict()["predictions"]),
        },
        inputs_sha256=inputs_digest({"scored": pairs_read, "left_out": left_out, "complexity": complexity}),
        library_versions=current_versions(),
        result=result,
        tables=(
            _table(macro, counts, f"the {noun} {info.label}", interval),
            _complexity_table(by_complexity, interval),
        ),
        judge_label=info.label,
    )
