"""``mcq_gem_set`` and ``mcq_subsets``: IntentGrasp's evaluation sets drawn from an All Set project.

- ``mcq_gem_set``: the instances every chosen run fails (each open model's first run: §3), then at
  most ``per_domain`` of them per domain drawn with ``seed`` (``validation.kinds.intent_mcq.mcq_sets``);
  a table per domain as the paper's Table 4 gives the Gem Set's domain coverage.
- ``mcq_subsets``: uniform subsets of ``size`` instances, one per seed (App. B.1: 3 × 470 with seeds
  42, 43 and 44), for models too costly to run on the whole All Set; a table of their domains.

Each lists the chosen items' external ids; the commands also write them as an item file that
``import_items`` takes into a new ``intent_mcq`` project (the Gem Set), or that a costly model is run
on elsewhere and imported back as a run covering only that subset (``mcq_eval`` scores such a run on
the items it covers). An instance's domain is ``meta.domain``, "(none)" without one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from annotation.models import Item, Project
from validation.evaluations.base import (
    Evaluation,
    check_kind,
    check_runs,
    current_versions,
    evaluated_runs,
    inputs_digest,
)
from validation.exports import write_jsonl
from validation.kinds.intent_mcq.mcq_runs import McqInstance, mcq_instances_of, run_scores
from validation.kinds.intent_mcq.mcq_sets import downsample_per_domain, failed_by_every_run, uniform_subsets
from validation.reports import Cell, Row, Table
from validation.reports.render import latex_escape

__all__ = [
    "GemSetParameters",
    "SubsetsParameters",
    "gem_set_evaluation",
    "set_item_records",
    "write_set_items",
    "subsets_evaluation",
]

KIND = "intent_mcq"
DRAW_LABELS = {
    "python": "random.seed(seed); random.sample(instances, size), as the released code draws",
    "numpy": "numpy default_rng(seed).choice",
}
NO_RUN = "choose the runs whose failures make the Gem Set (each model's first run)"


@dataclass(frozen=True, kw_only=True)
class GemSetParameters:
    """The runs every Gem Set instance is failed by, the cap per domain and the seed of the draw."""

    runs: tuple[int, ...] = ()
    per_domain: int = 50
    seed: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {"evaluation": "mcq_gem_set", "runs": list(self.runs), "per_domain": self.per_domain, "seed": self.seed}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> GemSetParameters:
        return cls(runs=tuple(data["runs"]), per_domain=data["per_domain"], seed=data["seed"])


@dataclass(frozen=True, kw_only=True)
class SubsetsParameters:
    """The size of each uniform subset and one seed per subset."""

    size: int = 470
    seeds: tuple[int, ...] = (42, 43, 44)
    #: "python": ``random.seed(s); random.sample(...)`` as the release draws; "numpy": the earlier draw.
    draw: str = "python"

    def to_json_dict(self) -> dict[str, Any]:
        return {"evaluation": "mcq_subsets", "size": self.size, "seeds": list(self.seeds), "draw": self.draw}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> SubsetsParameters:
        # Subsets frozen before the release's draw was the default were numpy's.
        return cls(size=data["size"], seeds=tuple(data["seeds"]), draw=data.get("draw", "numpy"))


def _domains(instances: Sequence[McqInstance]) -> list[str]:
    return [instance.groups["domain"] for instance in instances]


def _share(part: int, whole: int) -> Cell:
    return Cell(value=part / whole if whole else None, format="percent", note=None if whole else "empty set")


def gem_set_evaluation(*, project: Project, parameters: GemSetParameters) -> Evaluation:
    """The Gem Set of an ``intent_mcq`` project (the All Set) from the chosen runs.

    Raises
    ------
    WrongKind, UnknownJudgeRun, ValueError
        Another kind of project; a run of another project or kind; no run, too many or a repeated one,
        or a cap below 1.
    """
    check_kind(project, expected=KIND, evaluation="mcq_gem_set")
    check_runs(parameters.runs)
    if not parameters.runs:
        raise ValueError(NO_RUN)
    if parameters.per_domain < 1:
        raise ValueError("per_domain is at least 1")
    runs = evaluated_runs(project, parameters.runs)
    instances = mcq_instances_of(project)
    scores = [run_scores(run, instances) for run in runs]
    failed, uncovered = failed_by_every_run([s.f1 for s in scores], [s.covered for s in scores])
    candidates = np.flatnonzero(failed)
    domains = _domains(instances)
    kept = candidates[
        downsample_per_domain([domains[i] for i in candidates], per_domain=parameters.per_domain, seed=parameters.seed)
    ]
    all_counts = Counter(domains)
    failed_counts = Counter(domains[i] for i in candidates)
    kept_counts = Counter(domains[i] for i in kept)
    per_domain: list[dict[str, Any]] = [
        {
            "domain": domain,
            "instances": all_counts[domain],
            "failed_by_every_run": failed_counts[domain],
            "chosen": kept_counts[domain],
        }
        for domain in sorted(all_counts)
    ]
    result = {
        "project": project.slug,
        "set": "gem",
        "runs": [{"run": run.run_id, "label": run.label} for run in runs],
        "per_domain": parameters.per_domain,
        "seed": parameters.seed,
        "n_instances": len(instances),
        "failed_by_every_run": int(failed.sum()),
        "not_covered_by_every_run": int(uncovered.sum()),
        "n_chosen": len(kept),
        "domains": per_domain,
        "items": [instances[i].external_id for i in kept],
    }
    rows = [
        Row(
            entry["domain"],
            (
                Cell.count(entry["instances"]),
                Cell.count(entry["failed_by_every_run"]),
                Cell.count(entry["chosen"]),
                _share(entry["chosen"], len(kept)),
            ),
        )
        for entry in per_domain
    ]
    rows.append(
        Row(
            "Total",
            (
                Cell.count(len(instances)),
                Cell.count(int(failed.sum())),
                Cell.count(len(kept)),
                _share(len(kept), len(kept)),
            ),
            summary=True,
            rule_above=True,
        )
    )
    table = Table(
        key="mcq_gem_set",
        title="IntentGrasp Gem Set by domain (IntentGrasp §3, Table 4)",
        caption=(
            f"Instances of the All Set, those every one of the {len(runs)} runs fails, and the Gem Set: at most "
            f"{parameters.per_domain} per domain drawn with seed {parameters.seed}; the share is the domain's "
            "coverage of the Gem Set."
        ),
        columns=("Domain", "All Set", "Failed by every run", "Gem Set", "Share of Gem Set"),
        latex_columns=("Domain", "All", "Failed by all", "Gem", r"\% of Gem"),
        rows=tuple(rows),
        notes=(
            "A run fails an instance when its answer is not exactly the key (per-instance F1 below 1) or it has no "
            "readable answer. An instance some run has no answer or failure for is no candidate: "
            f"{int(uncovered.sum())} such instances.",
            "Per domain in sorted order, one numpy default_rng(seed) draws the cap uniformly without replacement; "
            "a domain with fewer candidates keeps them all.",
        ),
    )
    inputs = {
        "instances": [[i.external_id, i.groups["domain"]] for i in instances],
        "runs": [
            [s.run.run_id, [None if np.isnan(x) else float(x) for x in s.f1], [bool(x) for x in s.covered]]
            for s in scores
        ],
    }
    return Evaluation(
        name="mcq_gem_set",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest(inputs),
        library_versions=current_versions(),
        result=result,
        tables=(table,),
        judge_label="; ".join(run.label for run in runs),
    )


def subsets_evaluation(*, project: Project, parameters: SubsetsParameters) -> Evaluation:
    """Uniform subsets of an ``intent_mcq`` project's instances, one per seed.

    Raises
    ------
    WrongKind, ValueError
        Another kind of project; a size below 1 or above the project's instances, a repeated seed,
        more than ``MAX_SUBSETS`` seeds or none.
    """
    check_kind(project, expected=KIND, evaluation="mcq_subsets")
    if not parameters.seeds:
        raise ValueError("give at least one seed")
    instances = mcq_instances_of(project)
    draws = uniform_subsets(len(instances), size=parameters.size, seeds=parameters.seeds, draw=parameters.draw)
    domains = _domains(instances)
    all_counts = Counter(domains)
    subset_counts = [Counter(domains[i] for i in draw) for draw in draws]
    result = {
        "project": project.slug,
        "set": "uniform",
        "size": parameters.size,
        "draw": parameters.draw,
        "n_instances": len(instances),
        "subsets": [
            {
                "seed": seed,
                "n_instances": len(draw),
                "domains": dict(sorted(counts.items())),
                "items": [instances[i].external_id for i in draw],
            }
            for seed, draw, counts in zip(parameters.seeds, draws, subset_counts, strict=True)
        ],
    }
    rows = [
        Row(domain, (Cell.count(all_counts[domain]), *(Cell.count(c[domain]) for c in subset_counts)))
        for domain in sorted(all_counts)
    ]
    rows.append(
        Row(
            "Total",
            (Cell.count(len(instances)), *(Cell.count(len(draw)) for draw in draws)),
            summary=True,
            rule_above=True,
        )
    )
    names = [f"sample-{seed}" for seed in parameters.seeds]
    table = Table(
        key="mcq_subsets",
        title="IntentGrasp uniform subsets of the All Set by domain (IntentGrasp App. B.1, Table 9)",
        caption=(
            f"{len(draws)} subsets of {parameters.size} of the {len(instances)} instances, each drawn uniformly "
            f"without replacement with its seed ({DRAW_LABELS[parameters.draw]}), by domain."
        ),
        columns=("Domain", "All Set", *names),
        latex_columns=("Domain", "All", *(latex_escape(n) for n in names)),
        rows=tuple(rows),
    )
    return Evaluation(
        name="mcq_subsets",
        project=project.slug,
        title=project.title,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs_digest([[i.external_id, i.groups["domain"]] for i in instances]),
        library_versions=current_versions(),
        result=result,
        tables=(table,),
    )


def set_item_records(*, project: Project, external_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
    """The chosen items as an item file's records (``external_id`` and the payload), in the order given."""
    wanted = set(external_ids)
    payloads = {}
    rows = Item.objects.filter(project=project).values_list("external_id", "payload").iterator(chunk_size=2000)
    for external_id, payload in rows:
        if external_id in wanted:
            payloads[external_id] = payload
    for external_id in external_ids:
        yield {"external_id": external_id, **payloads[external_id]}


def write_set_items(*, project: Project, external_ids: Sequence[str], path: str | Path) -> int:
    """Write the chosen items as an item file (JSONL) that ``import_items`` takes; the number written."""
    return write_jsonl(path, set_item_records(project=project, external_ids=external_ids))
