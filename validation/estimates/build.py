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
from annotation.sampling import MISSING_STRATUM, SampleDesign, project_sample_design
from judges.selectors import suggestion_values
from validation.estimates import inference
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
    "inverse_probability_weights",
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
BAD_FIELD = "by must be a payload field of the project's kind (or meta.<key>), at most 100 characters"
TOO_MANY_GROUPS = "{field!r} has {n} groups; estimates show at most {limit}"
MODEL_ONLY_NOTE = "Model only: the run's mean over every item it answered; biased by design, so no interval."
UNIFORM_NOTE = (
    "The labelled items were not drawn by a Concord validation sample: the intervals assume they are a "
    "uniform random sample of the items."
)
SAMPLED_NOTE = (
    "Labelled items: the validation sample's ({draws} draw(s), {design}); weights from inclusion probabilities."
)
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

    def to_json_dict(self) -> dict[str, Any]:
        return {"evaluation": NAME, "run": self.run, "by": self.by, "alpha": self.alpha, "truth": self.truth}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> EstimateParameters:
        return cls(run=data["run"], by=data["by"], alpha=data["alpha"], truth=data["truth"])

    def check(self, project: Project) -> None:
        """The caps, as a ValueError (exit code 1, a 400, a form error)."""
        if alpha_problem(self.alpha):
            raise ValueError(BAD_ALPHA)
        if self.truth not in TRUTHS:
            raise ValueError(BAD_TRUTH)
        if self.by:
            fields = project.task_kind.payload_fields
            inside_meta = self.by.startswith("meta.") and len(self.by) > len("meta.")
            if len(self.by) > MAX_FIELD_CHARS or not (self.by in fields or inside_meta):
                raise ValueError(BAD_FIELD)


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
    probability: npt.NDArray[np.float64] | None  # inclusion probability, stratified samples only
    sampled_by_concord: bool
    n_model_failed: int
    n_outside_sample: int
    design: SampleDesign | None = field(default=None, compare=False)

    def digest(self, parameters: EstimateParameters) -> str:
        sha = hashlib.sha256(repr(sorted(parameters.to_json_dict().items())).encode())
        sha.update(self.item_ids.tobytes())
        for name, _title in self.dimensions:
            sha.update(name.encode())
            sha.update(np.nan_to_num(self.model[name], nan=-1e300).tobytes())
            sha.update(np.nan_to_num(self.human[name], nan=-1e300).tobytes())
        if self.groups is not None:
            sha.update("\x1f".join(map(str, self.groups)).encode())
        if self.probability is not None:
            sha.update(self.probability.tobytes())
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
    probability = None
    if design is not None:
        in_sample = np.fromiter((int(i) in design.sampled_item_ids for i in item_ids), dtype=bool, count=len(item_ids))
        outside = len({i for i in labelled if i not in design.sampled_item_ids})
        for name in names:
            human[name][~in_sample] = np.nan
        if design.strata_field:
            at = columns["stratum"]
            # A stratum the draws never saw (items imported after them) could not be sampled: 0.
            probability = np.asarray([design.probabilities.get(_group_text(row[at]), 0.0) for row in kept], dtype=float)
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
        probability=probability,
        sampled_by_concord=design is not None,
        n_model_failed=len(rows) - len(kept),
        n_outside_sample=outside,
        design=design,
    )


def inverse_probability_weights(probability: npt.NDArray[np.float64] | None, mask: np.ndarray, *, labelled: bool):
    """Inverse-probability weights of the labelled (1/pi) or unlabelled (1/(1 - pi)) items."""
    if probability is None:
        return None
    pi = probability[mask]
    if labelled:
        return 1.0 / pi
    return np.where(pi < 1, 1.0 / np.clip(1 - pi, 1e-12, None), 1.0)


def _people_json(result: inference.MeanEstimate) -> dict[str, Any]:
    data: dict[str, Any] = {"estimate": result.estimate, "ci": list(result.ci) if result.ci else None, "n": result.n}
    if result.reason:
        data["reason"] = result.reason
    return data


def _ppi_json(result: inference.PredictionPowered | inference.PoweredDifference) -> dict[str, Any]:
    data: dict[str, Any] = {
        "estimate": result.estimate,
        "ci": list(result.ci) if result.ci else None,
        # A difference has each group's own lambda.
        "lambda": list(result.lam) if isinstance(result.lam, tuple) else result.lam,
        "effective_n": result.effective_n,
    }
    if result.reason:
        data["reason"] = result.reason
    return data


def _model_json(estimate: float | None) -> dict[str, Any]:
    return {"estimate": estimate} if estimate is not None else {"estimate": None, "reason": inference.NO_MODEL_VALUES}


def _one(inputs: EstimateInputs, name: str, members: np.ndarray, alpha: float) -> dict[str, Any]:
    model, human = inputs.model[name], inputs.human[name]
    has_model = members & ~np.isnan(model)
    labelled = has_model & ~np.isnan(human)
    unlabelled = has_model & np.isnan(human)
    w = inverse_probability_weights(inputs.probability, labelled, labelled=True)
    w_unlabelled = inverse_probability_weights(inputs.probability, unlabelled, labelled=False)
    people = inference.people_only_mean(human[labelled], alpha=alpha, w=w)
    powered = inference.prediction_powered_mean(
        human[labelled], model[labelled], model[unlabelled], alpha=alpha, w=w, w_unlabeled=w_unlabelled
    )
    return {
        "model_only": _model_json(inference.model_only_mean(model[has_model])),
        "people_only": _people_json(people),
        "prediction_powered": _ppi_json(powered),
    }


def _difference(
    inputs: EstimateInputs, name: str, group_a: tuple[str, np.ndarray], group_b: tuple[str, np.ndarray], alpha: float
) -> dict[str, Any]:
    model, human = inputs.model[name], inputs.human[name]
    (a, in_a), (b, in_b) = group_a, group_b
    has_model = (in_a | in_b) & ~np.isnan(model)
    labelled = has_model & ~np.isnan(human)
    unlabelled = has_model & np.isnan(human)
    w = inverse_probability_weights(inputs.probability, labelled, labelled=True)
    model_a, model_b = model[has_model & in_a], model[has_model & in_b]
    model_only = float(model_a.mean() - model_b.mean()) if len(model_a) and len(model_b) else None
    lab_a = in_a[labelled]
    people = inference.people_only_difference(
        human[labelled][lab_a],
        human[labelled][~lab_a],
        alpha=alpha,
        w_a=None if w is None else w[lab_a],
        w_b=None if w is None else w[~lab_a],
    )

    def group(members: np.ndarray) -> inference.GroupArrays:
        mine, theirs = labelled & members, unlabelled & members
        return inference.GroupArrays(
            y=human[mine],
            yhat=model[mine],
            yhat_unlabeled=model[theirs],
            w=inverse_probability_weights(inputs.probability, mine, labelled=True),
            w_unlabeled=inverse_probability_weights(inputs.probability, theirs, labelled=False),
        )

    powered = inference.prediction_powered_difference(group(in_a), group(in_b), alpha=alpha)
    return {
        "dimension": name,
        "groups": [a, b],
        "model_only": _model_json(model_only),
        "people_only": _people_json(people),
        "prediction_powered": _ppi_json(powered),
    }


def _notes(inputs: EstimateInputs) -> list[str]:
    notes = [MODEL_ONLY_NOTE]
    if inputs.design is None:
        notes.append(UNIFORM_NOTE)
    else:
        design = f"stratified by {inputs.design.strata_field}" if inputs.design.strata_field else "simple random"
        notes.append(SAMPLED_NOTE.format(draws=inputs.design.draws, design=design))
        if inputs.n_outside_sample:
            notes.append(OUTSIDE_SAMPLE_NOTE.format(n=inputs.n_outside_sample))
    if inputs.n_model_failed:
        notes.append(FAILED_NOTE.format(n=inputs.n_model_failed))
    return notes


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
    estimates = []
    for name, _title in inputs.dimensions:
        estimates.append({"dimension": name, "group": None, **_one(inputs, name, everyone, parameters.alpha)})
        for group in group_names:
            estimates.append(
                {"dimension": name, "group": group, **_one(inputs, name, members[group], parameters.alpha)}
            )
    differences = []
    if 2 <= len(group_names) <= MAX_DIFFERENCE_GROUPS:
        for name, _title in inputs.dimensions:
            for a, b in itertools.combinations(group_names, 2):
                differences.append(_difference(inputs, name, (a, members[a]), (b, members[b]), parameters.alpha))
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
        "notes": _notes(inputs),
    }


def _cell(part: dict[str, Any], *, interval: bool = True) -> Cell:
    if part.get("estimate") is None:
        return Cell(note=part.get("reason"))
    ci = tuple(part["ci"]) if interval and part.get("ci") else None
    return Cell(value=part["estimate"], ci=ci)


def _lambda_cell(powered: dict[str, Any]) -> Cell:
    lam = powered.get("lambda")
    if lam is None:
        return Cell(note=powered.get("reason"))
    if isinstance(lam, list):
        return Cell.text(" / ".join(f"{value:.3f}" for value in lam))
    return Cell(value=lam)


def _row(label: str, entry: dict[str, Any], *, rule_above: bool) -> Row:
    powered = entry["prediction_powered"]
    return Row(
        label=label,
        cells=(
            _cell(entry["model_only"], interval=False),
            _cell(entry["people_only"]),
            Cell.count(entry["people_only"]["n"]),
            _cell(powered),
            _lambda_cell(powered),
            Cell.count(powered["effective_n"]) if powered.get("effective_n") is not None else Cell(),
        ),
        rule_above=rule_above,
    )


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


def estimate_tables(result: dict[str, Any], titles: dict[str, str]) -> tuple[Table, ...]:
    """The estimates (and group differences) as paper tables."""
    level = round((1 - result["alpha"]) * 100, 2)
    caption = (
        f"Mean per dimension: the model alone, people alone ({level:g}% normal interval, n labelled items) "
        f"and prediction-powered (PPI++, {level:g}% interval, lambda its power tuning, effective n the "
        "people-only labels as narrow an interval needs)."
    )
    rows, previous = [], None
    for entry in result["estimates"]:
        label = titles.get(entry["dimension"], entry["dimension"])
        label = label if entry["group"] is None else f"{entry['dimension']} · {entry['group']}"
        # With groups, a rule sets each dimension's rows apart; without, the rows are one block.
        rule = result["by"] is not None and previous not in (None, entry["dimension"])
        rows.append(_row(label, entry, rule_above=rule))
        previous = entry["dimension"]
    tables = [Table(key="estimates", title="Estimates", caption=caption, columns=COLUMNS,
                    latex_columns=LATEX_COLUMNS, rows=tuple(rows), notes=tuple(result["notes"]))]  # fmt: skip
    if result["differences"]:
        rows, previous = [], None
        for entry in result["differences"]:
            a, b = entry["groups"]
            rows.append(
                _row(f"{entry['dimension']} · {a} − {b}", entry, rule_above=previous not in (None, entry["dimension"]))
            )
            previous = entry["dimension"]
        tables.append(
            Table(
                key="differences",
                title="Differences between groups",
                caption=f"Group A minus group B by {result['by']}, the same three ways ({level:g}% intervals).",
                columns=COLUMNS,
                latex_columns=LATEX_COLUMNS,
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
