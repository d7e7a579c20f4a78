"""``ipqa_validation``: the people's validation of an IPQA project by question complexity (IPQA §1, §2.4).

IPQA finds that identifying core intents gets harder as questions grow more complex; this breaks the
human validation table (``validation/reports/ipqa_core_intent.py``) down the same way as IPQA-Eval's
``by_complexity`` (``validation.kinds.ipqa_core_intent.ipqa_report``): items grouped by the number of
intents their gold judges expressed, then by the number of their gold core intents (gold as
``validation.goldset`` gives it: an expert's decision, else a known answer, else the raters' majority;
``ipqa_pairs.gold_core_intents``). Items without gold yet are left out and counted.

Per group and label (expressed, core), over the group's (item, candidate intent) units: percent
agreement between the people and Krippendorff's alpha (nominal; any number of raters, missing ratings
allowed), from ``validation.agreement.joint_agreement``, with seeded bootstrap intervals over items
(each with all its intents: ``item_bootstrap``; the interval over units beside it, labelled);
with a judge run, the people's majority against the LLM (percent agreement), the judge never counted
among the people. A coefficient a group cannot define (one rater, no unit rated twice) is empty with
its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from annotation.models import Project
from validation.agreement import DimensionInput, joint_agreement
from validation.agreement.measures import KRIPPENDORFF_ALPHA, MAJORITY_PERCENT_AGREEMENT, PERCENT_AGREEMENT
from validation.agreement.results import BootstrapSettings, ConfidenceInterval
from validation.evaluations.base import (
    Evaluation,
    check_bootstrap,
    check_kind,
    current_versions,
    inputs_digest,
    statistic_json,
)
from validation.kinds.ipqa_core_intent.ipqa_pairs import NO_GOLD, SOURCE_KIND, gold_core_intents
from validation.kinds.ipqa_core_intent.ipqa_report import COMPLEXITY
from validation.kinds.ipqa_core_intent.item_bootstrap import item_resampled_intervals
from validation.ratings import JUDGE_PREFIX, project_ratings
from validation.reports import Cell, Row, Table
from validation.reports.build import judge_info

__all__ = ["IpqaValidationParameters", "ipqa_validation_evaluation"]

#: The measures per label, in table order: people's agreement, then the majority against the judge.
PEOPLE = (PERCENT_AGREEMENT, KRIPPENDORFF_ALPHA)


@dataclass(frozen=True, kw_only=True)
class IpqaValidationParameters:
    """What besides the data changes ``ipqa_validation``'s numbers."""

    judge_run: int | None = None
    bootstrap: int = 1000
    seed: int = 0
    confidence_level: float = 0.95

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": "ipqa_validation",
            "judge_run": self.judge_run,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> IpqaValidationParameters:
        return cls(
            judge_run=data["judge_run"],
            bootstrap=data["bootstrap"],
            seed=data["seed"],
            confidence_level=data["confidence_level"],
        )


def _measure_json(result: Any, over_units: Any) -> dict[str, Any] | None:
    """The statistic with its interval (people's coefficients: over items), and the interval over
    (item, intent) units beside it, labelled."""
    if result is None:
        return None
    data = statistic_json(result)
    units = None if over_units is None else over_units.confidence_interval
    data["confidence_interval_units"] = None if units is None else [units[0], units[1]]
    data["resampled"] = "items" if result is not over_units else "units"
    return data


def ipqa_validation_evaluation(*, project: Project, parameters: IpqaValidationParameters) -> Evaluation:
    """Agreement on an ``ipqa_core_intent`` project's labels per question complexity.

    Raises
    ------
    WrongKind, UnknownJudgeRun, ValueError
        Another kind of project; a run of another project or kind; too many resamples or a bad seed.
    """
    check_kind(project, expected=SOURCE_KIND, evaluation="ipqa_validation")
    check_bootstrap(parameters.bootstrap)
    judge = judge_info(project, parameters.judge_run)
    ratings = project_ratings(project=project, judge_run_id=parameters.judge_run)
    dimensions = project.task_kind.rating_dimensions
    humans = [r for r in ratings.raters if not r.startswith(JUDGE_PREFIX)]
    raters = [*humans, *([judge.rater] if judge else [])]
    matrices = {d.name: ratings.matrix(d.name, raters) for d in dimensions}
    gold = gold_core_intents(project=project)
    complexity: dict[str, dict[str, int]] = {}
    no_gold = 0
    for external_id, entry in gold.items():
        if entry.missing == NO_GOLD:
            no_gold += 1
            continue
        complexity[external_id] = {"expressed_intents": entry.n_expressed, "core_intents": len(entry.core_intents)}
    unit_items = [str(e) for e in ratings.unit_external_ids]
    groups: dict[str, list[dict[str, Any]]] = {}
    rows: list[Row] = []
    for key, words in COMPLEXITY:
        members: dict[int, list[int]] = {}
        for unit, external_id in enumerate(unit_items):
            if external_id in complexity:
                members.setdefault(complexity[external_id][key], []).append(unit)
        groups[key] = []
        for position, n in enumerate(sorted(members)):
            units = np.asarray(members[n])
            agreement = joint_agreement(
                {
                    d.name: DimensionInput(ratings=matrices[d.name][units], level=d.level, categories=d.categories)
                    for d in dimensions
                },
                raters=raters,
                reference=judge.rater if judge else None,
                reference_in_coefficients=False,
                bootstrap=parameters.bootstrap,
                seed=parameters.seed,
                confidence_level=parameters.confidence_level,
            )
            measures = {d.name: dict(agreement.dimensions[d.name].measures()) for d in dimensions}
            by_units = {d.name: dict(measures[d.name]) for d in dimensions}
            if parameters.bootstrap:
                settings = BootstrapSettings(
                    n_resamples=parameters.bootstrap, seed=parameters.seed, confidence_level=parameters.confidence_level
                )
                for d in dimensions:
                    # People's coefficients resample the items (questions), each with all its intents.
                    intervals = item_resampled_intervals(
                        matrices[d.name][units][:, : len(humans)], [unit_items[u] for u in units],
                        level=d.level, categories=d.categories, settings=settings,
                    )  # fmt: skip
                    for measure in PEOPLE:
                        found = measures[d.name].get(measure)
                        if found is not None:
                            ci = intervals[measure]
                            measures[d.name][measure] = replace(
                                found, confidence_interval=None if ci is None else ConfidenceInterval(*ci)
                            )
            wanted = (*PEOPLE, *((MAJORITY_PERCENT_AGREEMENT,) if judge else ()))
            n_items = len({unit_items[u] for u in units})
            groups[key].append(
                {
                    "n": n,
                    "n_items": n_items,
                    "n_units": len(units),
                    **{
                        d.name: {m: _measure_json(measures[d.name].get(m), by_units[d.name].get(m)) for m in wanted}
                        for d in dimensions
                    },
                }
            )
            cells = [Cell.count(n_items), Cell.count(len(units))]
            for d in dimensions:
                cells += [
                    Cell.of(measures[d.name].get(m), format="percent" if m != KRIPPENDORFF_ALPHA else "number")
                    for m in wanted
                ]
            rows.append(Row(f"{n} {words}", tuple(cells), rule_above=position == 0 and key != COMPLEXITY[0][0]))
    noun = judge.noun if judge else "LLM"
    per_label = ("% agr.", "α", *((f"% agr. vs {noun}",) if judge else ()))
    latex_per_label = (r"\% agr.", r"$\alpha$", *((rf"\% vs {noun}",) if judge else ()))
    titles = [d.title for d in dimensions]
    interval = (
        f"{round(parameters.confidence_level * 100)}% percentile bootstrap intervals ({parameters.bootstrap} "
        f"resamples, seed {parameters.seed}): the annotators' coefficients resample the items, each with all its "
        "intents (an item's intents are judged together, so resampling intents would overstate the precision; "
        "the JSON gives that interval too, as confidence_interval_units)"
        + ("; the majority against the model resamples the (item, intent) units" if judge else "")
        if parameters.bootstrap
        else "No confidence intervals (bootstrap off)"
    )
    table = Table(
        key="ipqa_validation_by_complexity",
        title="IPQA human validation by question complexity",
        caption=(
            f"Agreement between {len(humans)} annotators on each label over the (item, intent) units of the items "
            "with each number of intents the gold judges expressed, then each number of gold core intents"
            + (f"; the annotators' majority against the {noun} {judge.label}" if judge else "")
            + f". {no_gold} items without gold are left out. {interval}."
        ),
        columns=("Complexity", "Items", "Units", *(f"{t}: {m}" for t in titles for m in per_label)),
        latex_columns=("Complexity", "Items", "Units", *(f"{t}: {m}" for t in titles for m in latex_per_label)),
        rows=tuple(rows),
        notes=(
            "Percent agreement: the mean share of agreeing rater pairs per unit; alpha: Krippendorff's alpha, "
            "nominal. Complexity as IPQA-Eval's: the gold's expressed intents and core intents per item.",
        ),
    )
    result = {
        "project": project.slug,
        "judge_run": None if judge is None else {"run": judge.run_id, "label": judge.label, "noun": judge.noun},
        "raters": humans,
        "bootstrap": {
            "n_resamples": parameters.bootstrap,
            "seed": parameters.seed,
            "confidence_level": parameters.confidence_level,
        },
        "items_without_gold": no_gold,
        "by_complexity": groups,
    }
    return Evaluation(
        name="ipqa_validation",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest({"ratings": ratings.digest(), "complexity": complexity}),
        library_versions=current_versions(),
        result=result,
        tables=(table,),
        judge_label="" if judge is None else judge.label,
    )
