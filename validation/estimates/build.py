"""``estimate``: a project's benchmark quantities from a judge run and people's labels, three ways.

For every dimension the kind estimates (``TaskKind.estimate_dimensions``; how a value becomes a
number is the kind's ``estimate_numbers``), overall and per group of a payload field: the model's
mean over every item it answered, people's mean over the labelled sample with its interval, and
the prediction-powered mean (``validation.estimates.inference``). The human value of an item is
the mean of its raters' latest values (``truth="mean"``) or its gold (``truth="gold"``). Items the
run has no value for (failed, or not reached) are left out and counted. With a validation sample
(``annotation.sampling``) only sampled items count as labelled and stratified samples are weighted
by their inclusion probabilities; without one, the labelled items are taken as a uniform random
sample, and every output says so.

The result is an ``Evaluation`` (``validation.evaluations.base``): the command's JSON, a table for
Markdown, LaTeX and CSV, and what a snapshot stores, so ``--freeze`` works as for the paper
evaluations.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
from django.db.models import Q
from django.db.models.fields.json import KT

from annotation.errors import ConcordError
from annotation.latest import latest_annotations
from annotation.models import Item, Project
from annotation.sampling import (
    FIELD_ON_NO_ITEM,
    MISSING_STRATUM,
    SampleDesign,
    project_items_have_field,
    project_sample_design,
)
from judges.selectors import suggestion_values
from validation.estimates.entries import DimensionArrays, group_difference, one_estimate
from validation.evaluations.base import Evaluation, current_versions
from validation.goldset import project_items_state
from validation.ratings import PARAMETERS
from validation.reports import Cell, Row, Table
from validation.reports.build import judge_info

__all__ = [
    "MAX_GROUPS",
    "MIN_ALPHA",
    "TRUTHS",
    "EstimateInputs",
    "EstimateParameters",
    "alpha_problem",
    "estimate_inputs",
    "estimate_result",
    "project_estimates",
]

TRUTHS = ("mean", "gold")
#: Groups of ``by`` reported, at most; differences are given for every pair of up to MAX_DIFFERENCE_GROUPS.
MAX_GROUPS = 50
MAX_DIFFERENCE_GROUPS = 6
MAX_FIELD_CHARS = 100

#: The smallest alpha: far below it ``1 - alpha/2`` rounds to 1 and the interval is infinite.
MIN_ALPHA = 1e-10
BAD_ALPHA = "alpha must be a number from 1e-10 up to (not including) 0.5"
BAD_TRUTH = f"truth must be one of {', '.join(TRUTHS)}"
BAD_FPC = "fpc must be true or false"
BAD_FIELD = "by must be a payload field of the project's kind (or meta.<key>), at most 100 characters"
TOO_MANY_GROUPS = "{field!r} has {n} groups; estimates show at most {limit}"
MODEL_ONLY_NOTE = "Model only: the run's mean over every item it answered; biased by design, so no interval."
UNIFORM_NOTE = (
    "The labelled items were not drawn by a Concord validation sample: the intervals assume they are a "
    "uniform random sample of the items."
)
SAMPLED_NOTE = (
    "Labelled items: the validation sample's ({draws} draw(s), {design}); each stratum weighs its share of the "
    "items, its labelled items standing for it (missing labels assumed missing at random within a stratum)."
)
FPC_NOTE = (
    "People only: the stratified variance Σ W_h² s_h² / n_h with the finite-population correction (1 − n_h/N_h), "
    "since the estimand is the project's own items (turn it off when they stand for a larger population); "
    "the prediction-powered intervals are ppi_py's, which carry no such correction."
)
NO_FPC_NOTE = (
    "People only: the stratified variance Σ W_h² s_h² / n_h without finite-population correction (the items "
    "stand for a larger population)."
)
STRATIFIED_PPI_NOTE = (
    "Stratified PPI (Fisch et al. 2024): PPI++ in each stratum with its own λ, combined with the strata's "
    "shares, beside the pooled-weight one."
)
MAX_WARNINGS = 20
OUTSIDE_SAMPLE_NOTE = "{n} labelled item(s) outside the validation sample are treated as unlabelled."
FAILED_NOTE = "{n} item(s) without a value from the run (failed or not reached) are left out."
NAME = "estimates"
TITLE = "Model-only, people-only and prediction-powered estimates"


class EstimateRefused(ConcordError):
    code = "estimate_refused"


@dataclass(frozen=True, kw_only=True)
class EstimateParameters:
    """What besides the data changes the estimates (a snapshot stores it)."""

    run: int
    by: str = ""
    alpha: float = 0.05
    truth: str = "mean"
    #: The finite-population correction of the people-only variance: the estimand is the project's
    #: own items (off: they stand for a larger population).
    fpc: bool = True

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "evaluation": NAME,
            "run": self.run,
            "by": self.by,
            "alpha": self.alpha,
            "truth": self.truth,
            "fpc": self.fpc,
        }

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> EstimateParameters:
        # Snapshots frozen before the correction existed were computed without it.
        return cls(run=data["run"], by=data["by"], alpha=data["alpha"], truth=data["truth"], fpc=data.get("fpc", False))

    def check(self, project: Project) -> None:
        """The caps, as a ValueError (exit code 1, a 400, a form error)."""
        if alpha_problem(self.alpha):
            raise ValueError(BAD_ALPHA)
        if self.truth not in TRUTHS:
            raise ValueError(BAD_TRUTH)
        if not isinstance(self.fpc, bool):
            raise ValueError(BAD_FPC)
        if self.by:
            fields = project.task_kind.payload_fields
            inside_meta = self.by.startswith("meta.") and len(self.by) > len("meta.")
            if len(self.by) > MAX_FIELD_CHARS or not (self.by in fields or inside_meta):
                raise ValueError(BAD_FIELD)
            if not project_items_have_field(project=project, field=self.by):
                raise ValueError(FIELD_ON_NO_ITEM.format(field=self.by))


def alpha_problem(alpha: object) -> str | None:
    """Why ``alpha`` is refused (NaN fails every comparison), or None."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not MIN_ALPHA <= alpha < 0.5:
        return BAD_ALPHA
    return None


@dataclass(frozen=True, kw_only=True)
class EstimateInputs:
    """Everything the estimates read, as arrays over the items the run answered."""

    dimensions: tuple[tuple[str, str], ...]
    item_ids: npt.NDArray[np.int64]
    groups: npt.NDArray[Any] | None
    model: dict[str, npt.NDArray[np.float64]]  # NaN: the run's value has no number there
    human: dict[str, npt.NDArray[np.float64]]  # NaN: no people's value (or not in the sample)
    strata: npt.NDArray[Any] | None  # each item's stratum, stratified samples only
    in_sample: npt.NDArray[np.bool_] | None  # drawn into the validation sample (None: no sample)
    sampled_by_concord: bool
    n_model_failed: int
    n_outside_sample: int
    design: SampleDesign | None = field(default=None, compare=False)

    def arrays(self, name: str) -> DimensionArrays:
        """One dimension's arrays with the sample's design (strata as integer codes)."""
        codes = None
        names: tuple[str, ...] = ()
        if self.strata is not None:
            found, codes = np.unique(self.strata.astype(str), return_inverse=True)
            names = tuple(str(n) for n in found)
        return DimensionArrays(
            model=self.model[name], human=self.human[name], strata=codes, in_sample=self.in_sample, stratum_names=names
        )

    def digest(self, parameters: EstimateParameters) -> str:
        sha = hashlib.sha256(repr(sorted(parameters.to_json_dict().items())).encode())
        sha.update(self.item_ids.tobytes())
        for name, _title in self.dimensions:
            sha.update(name.encode())
            sha.update(np.nan_to_num(self.model[name], nan=-1e300).tobytes())
            sha.update(np.nan_to_num(self.human[name], nan=-1e300).tobytes())
        if self.groups is not None:
            sha.update("\x1f".join(map(str, self.groups)).encode())
        if self.strata is not None:
            sha.update("\x1f".join(map(str, self.strata)).encode())
        return sha.hexdigest()


def _field_lookup(name: str) -> str:
    return "payload__" + name.replace(".", "__")


def _group_text(value: Any) -> str:
    return MISSING_STRATUM if value is None else str(value)


def _payloads(item_ids: list[int]) -> dict[int, dict]:
    """Payloads by item id, for kinds whose numbers read them (a batch of ids per query: SQLite caps
    a statement's parameters)."""
    found: dict[int, dict] = {}
    for start in range(0, len(item_ids), PARAMETERS):
        found.update(Item.objects.filter(pk__in=item_ids[start : start + PARAMETERS]).values_list("pk", "payload"))
    return found


def _human_values(project: Project, parameters: EstimateParameters, position: dict[int, int], names: list[str]):
    """Per dimension, the human value of each item: its raters' mean, or its gold."""
    kind = project.task_kind
    size = len(position)
    sums = {name: np.zeros(size) for name in names}
    counts = {name: np.zeros(size) for name in names}
    payloads: dict[int, dict] = {}
    rows: Iterable[tuple[int, Any]]
    if parameters.truth == "gold":
        rows = (
            (state.item.pk, state.gold.value)
            for state in project_items_state(project=project, with_reasons=False)
            if state.gold.ready
        )
    else:
        rows = latest_annotations(project=project).values_list("item_id", "value").iterator(chunk_size=5000)
    pending = [(item_id, value) for item_id, value in rows if item_id in position]
    if kind.ratings_need_payload:
        payloads = _payloads(sorted({item_id for item_id, _ in pending}))
    labelled = set()
    for item_id, value in pending:
        at = position[item_id]
        for name, number in kind.estimate_numbers(value, payloads.get(item_id)).items():
            sums[name][at] += number
            counts[name][at] += 1
            labelled.add(item_id)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {name: np.where(counts[name] > 0, sums[name] / counts[name], np.nan) for name in names}, labelled


def estimate_inputs(*, project: Project, parameters: EstimateParameters) -> EstimateInputs:
    """Read the run's values, people's values, groups and the sample design (UnknownJudgeRun for a
    run of another project or kind)."""
    parameters.check(project)
    judge_info(project, parameters.run)  # raises UnknownJudgeRun
    kind = project.task_kind
    dimensions = kind.estimate_dimensions()
    names = [name for name, _ in dimensions]
    design = project_sample_design(project=project)
    fields: list[Any] = ["pk"]
    extra: dict[str, Any] = {}
    if parameters.by:
        extra["group"] = KT(_field_lookup(parameters.by))
    if design is not None and design.strata_field:
        extra["stratum"] = KT(_field_lookup(design.strata_field))
    population = (
        Item.objects.filter(project=project)
        .filter(Q(gold_value__isnull=True))
        .annotate(**extra)
        .order_by("pk")
        .values_list(*fields, *extra)
    )
    rows = list(population.iterator(chunk_size=10_000))
    columns = {key: index + 1 for index, key in enumerate(extra)}
    answered = dict(suggestion_values(run_id=parameters.run, as_text=True))
    kept = [row for row in rows if row[0] in answered]
    item_ids = np.fromiter((row[0] for row in kept), dtype=np.int64, count=len(kept))
    position = {int(item_id): at for at, item_id in enumerate(item_ids)}
    values = [orjson.loads(answered[int(item_id)]) for item_id in item_ids]
    payloads: list[dict | None] = [None] * len(values)
    if kind.ratings_need_payload:
        found = _payloads([int(i) for i in item_ids])
        payloads = [found[int(i)] for i in item_ids]
    model = kind.estimate_columns(values, payloads)
    human, labelled = _human_values(project, parameters, position, names)
    outside = 0
    strata = in_sample = None
    if design is not None:
        in_sample = np.fromiter((int(i) in design.sampled_item_ids for i in item_ids), dtype=bool, count=len(item_ids))
        outside = len({i for i in labelled if i not in design.sampled_item_ids})
        for name in names:
            human[name][~in_sample] = np.nan
        if design.strata_field:
            at = columns["stratum"]
            strata = np.asarray([_group_text(row[at]) for row in kept], dtype=object)
    groups = None
    if parameters.by:
        at = columns["group"]
        groups = np.asarray([_group_text(row[at]) for row in kept], dtype=object)
        distinct = len(set(groups))
        if distinct > MAX_GROUPS:
            raise ValueError(TOO_MANY_GROUPS.format(field=parameters.by, n=distinct, limit=MAX_GROUPS))
    return EstimateInputs(
        dimensions=dimensions,
        item_ids=item_ids,
        groups=groups,
        model=model,
        human=human,
        strata=strata,
        in_sample=in_sample,
        sampled_by_concord=design is not None,
        n_model_failed=len(rows) - len(kept),
        n_outside_sample=outside,
        design=design,
    )


def _warnings(entries: list[dict[str, Any]]) -> list[str]:
    """Each distinct warning of the rows once, naming the rows it holds for unless it holds for all
    of them; at most MAX_WARNINGS of them."""
    where: dict[str, list[str]] = {}
    for entry in entries:
        for warning in entry["warnings"]:
            where.setdefault(warning, []).append(_entry_label(entry))
    return [
        warning if len(labels) == len(entries) else f"{warning} ({', '.join(labels)})"
        for warning, labels in list(where.items())[:MAX_WARNINGS]
    ]


def _notes(inputs: EstimateInputs, parameters: EstimateParameters, warnings: list[str]) -> list[str]:
    notes = [MODEL_ONLY_NOTE, FPC_NOTE if parameters.fpc else NO_FPC_NOTE]
    if inputs.design is None:
        notes.append(UNIFORM_NOTE)
    else:
        design = f"stratified by {inputs.design.strata_field}" if inputs.design.strata_field else "simple random"
        notes.append(SAMPLED_NOTE.format(draws=inputs.design.draws, design=design))
        if inputs.design.strata_field:
            notes.append(STRATIFIED_PPI_NOTE)
        if inputs.n_outside_sample:
            notes.append(OUTSIDE_SAMPLE_NOTE.format(n=inputs.n_outside_sample))
    if inputs.n_model_failed:
        notes.append(FAILED_NOTE.format(n=inputs.n_model_failed))
    return notes + warnings


def _entry_label(entry: dict[str, Any]) -> str:
    if "groups" in entry:
        return f"{entry['dimension']} · {' − '.join(entry['groups'])}"
    return entry["dimension"] if entry.get("group") is None else f"{entry['dimension']} · {entry['group']}"


def estimate_result(*, project_slug: str, inputs: EstimateInputs, parameters: EstimateParameters) -> dict[str, Any]:
    """The command's JSON: every dimension overall and per group, then the group differences."""
    everyone = np.ones(len(inputs.item_ids), dtype=bool)
    group_names: list[str] = []
    members: dict[str, np.ndarray] = {}
    if inputs.groups is not None:
        # Masks from integer codes: comparing an object array of names per group costs far more.
        found, codes = np.unique(inputs.groups.astype(str), return_inverse=True)
        group_names = [str(g) for g in found]
        members = {group: codes == code for code, group in enumerate(group_names)}
    options: dict[str, Any] = {"alpha": parameters.alpha, "fpc": parameters.fpc}
    estimates = []
    for name, _title in inputs.dimensions:
        arrays = inputs.arrays(name)
        estimates.append({"dimension": name, "group": None, **one_estimate(arrays, everyone, **options)})
        for group in group_names:
            estimates.append({"dimension": name, "group": group, **one_estimate(arrays, members[group], **options)})
    differences = []
    if 2 <= len(group_names) <= MAX_DIFFERENCE_GROUPS:
        for name, _title in inputs.dimensions:
            arrays = inputs.arrays(name)
            for a, b in itertools.combinations(group_names, 2):
                entry = group_difference(arrays, members[a], members[b], **options)
                differences.append({"dimension": name, "groups": [a, b], **entry})
    warnings = _warnings(estimates + differences)
    any_human = np.zeros(len(inputs.item_ids), dtype=bool)
    for name, _title in inputs.dimensions:
        any_human |= ~np.isnan(inputs.human[name])
    n_labeled = int(any_human.sum())
    return {
        "project": project_slug,
        "run": parameters.run,
        "alpha": parameters.alpha,
        "truth": parameters.truth,
        "by": parameters.by or None,
        "sampled_by_concord": inputs.sampled_by_concord,
        "n_labeled": n_labeled,
        "n_unlabeled": len(inputs.item_ids) - n_labeled,
        "n_model_failed": inputs.n_model_failed,
        "estimates": estimates,
        "differences": differences,
        "fpc": parameters.fpc,
        "warnings": warnings,
        "notes": _notes(inputs, parameters, warnings),
    }


def _cell(part: dict[str, Any], *, interval: bool = True) -> Cell:
    if part.get("estimate") is None:
        return Cell(note=part.get("reason"))
    ci = tuple(part["ci"]) if interval and part.get("ci") else None
    return Cell(value=part["estimate"], ci=ci)


def _lambda_cell(powered: dict[str, Any]) -> Cell:
    lam = powered.get("lambda")
    if powered.get("lambda_reason") and (lam is None or isinstance(lam, dict)):
        return Cell.text("undefined")
    if lam is None:
        return Cell(note=powered.get("reason"))
    if isinstance(lam, dict):
        return Cell.text(" / ".join("–" if value is None else f"{value:.3f}" for value in lam.values()))
    if isinstance(lam, list):
        return Cell.text(" / ".join(f"{value:.3f}" for value in lam))
    return Cell(value=lam)


def _effective_cell(powered: dict[str, Any]) -> Cell:
    return Cell.count(powered["effective_n"]) if powered.get("effective_n") is not None else Cell()


def _row(label: str, entry: dict[str, Any], *, rule_above: bool, stratified: bool) -> Row:
    powered = entry["prediction_powered"]
    cells = [
        _cell(entry["model_only"], interval=False),
        _cell(entry["people_only"]),
        Cell.count(entry["people_only"]["n"]),
        _cell(powered),
        _lambda_cell(powered),
        _effective_cell(powered),
    ]
    if stratified:
        by_strata = entry["prediction_powered_stratified"]
        cells += [_cell(by_strata), _lambda_cell(by_strata), _effective_cell(by_strata)]
    return Row(label=label, cells=tuple(cells), rule_above=rule_above)


COLUMNS = ("Dimension", "Model only", "People only", "n", "Prediction-powered", "λ", "Effective n")
LATEX_COLUMNS = (
    "Dimension",
    "Model only",
    "People only",
    "$n$",
    "Prediction-powered",
    r"$\lambda$",
    r"$n_{\mathrm{eff}}$",
)
STRATIFIED_COLUMNS = ("Stratified PPI", "λ per stratum", "Effective n (stratified)")
STRATIFIED_LATEX_COLUMNS = ("Stratified PPI", r"$\lambda_h$", r"$n_{\mathrm{eff}}^{\mathrm{strat}}$")


def estimate_tables(result: dict[str, Any], titles: dict[str, str]) -> tuple[Table, ...]:
    """The estimates (and group differences) as paper tables."""
    level = round((1 - result["alpha"]) * 100, 2)
    caption = (
        f"Mean per dimension: the model alone, people alone ({level:g}% normal interval, n labelled items) "
        f"and prediction-powered (PPI++, {level:g}% interval, lambda its power tuning, effective n the "
        "people-only labels as narrow an interval needs, below n where the model does not help)."
    )
    stratified = any("prediction_powered_stratified" in entry for entry in result["estimates"])
    columns = COLUMNS + STRATIFIED_COLUMNS if stratified else COLUMNS
    latex_columns = LATEX_COLUMNS + STRATIFIED_LATEX_COLUMNS if stratified else LATEX_COLUMNS
    rows, previous = [], None
    for entry in result["estimates"]:
        label = titles.get(entry["dimension"], entry["dimension"])
        label = label if entry["group"] is None else f"{entry['dimension']} · {entry['group']}"
        # With groups, a rule sets each dimension's rows apart; without, the rows are one block.
        rule = result["by"] is not None and previous not in (None, entry["dimension"])
        rows.append(_row(label, entry, rule_above=rule, stratified=stratified))
        previous = entry["dimension"]
    tables = [Table(key="estimates", title="Estimates", caption=caption, columns=columns,
                    latex_columns=latex_columns, rows=tuple(rows), notes=tuple(result["notes"]))]  # fmt: skip
    if result["differences"]:
        rows, previous = [], None
        for entry in result["differences"]:
            a, b = entry["groups"]
            rule = previous not in (None, entry["dimension"])
            rows.append(_row(f"{entry['dimension']} · {a} − {b}", entry, rule_above=rule, stratified=stratified))
            previous = entry["dimension"]
        tables.append(
            Table(
                key="differences",
                title="Differences between groups",
                caption=f"Group A minus group B by {result['by']}, the same three ways ({level:g}% intervals).",
                columns=columns,
                latex_columns=latex_columns,
                rows=tuple(rows),
            )
        )
    return tuple(tables)


def project_estimates(*, project: Project, parameters: EstimateParameters) -> Evaluation:
    """The estimates of ``project`` from run ``parameters.run``, as an Evaluation."""
    inputs = estimate_inputs(project=project, parameters=parameters)
    result = estimate_result(project_slug=project.slug, inputs=inputs, parameters=parameters)
    info = judge_info(project, parameters.run)
    return Evaluation(
        name=NAME,
        project=project.slug,
        title=TITLE,
        parameters=parameters.to_json_dict(),
        inputs_sha256=inputs.digest(parameters),
        library_versions=current_versions(),
        result=result,
        tables=estimate_tables(result, dict(inputs.dimensions)),
        judge_label=info.label if info else "",
    )
