"""Building a project's report: ratings → agreement → the kind's tables and figures.

Everything a report reads comes through here: the ratings, and the other inputs its builder names
(``ReportBuilder.inputs``), each loaded by one function of :data:`INPUT_LOADERS`. Whatever is loaded
enters the inputs digest, always; the builders then only lay out what they are given.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import platform
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from typing import Any, overload

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q

from annotation.errors import ConcordError
from annotation.kinds import KINDS, all_kinds
from annotation.kinds.base import TaskKind
from annotation.latest import latest_annotations
from annotation.models import Item, Project, SuggestionExposure
from annotation.registry import Registry
from judges.models import Judge, JudgeRun, Suggestion
from validation.agreement import DimensionInput, JointAgreement, joint_agreement
from validation.agreement.dimensions import Progress
from validation.ratings import JUDGE_PREFIX, RatingSet, judge_rater_name, project_ratings
from validation.reports.base import (
    ANCHORING_NOT_RANDOMISED,
    ANCHORING_RANDOMISED,
    Figure,
    JudgeInfo,
    ReportBuilder,
    ReportContext,
    ReportParameters,
    Table,
    exposure_inputs,
)

__all__ = [
    "INPUT_LOADERS",
    "LIBRARIES",
    "DraftInputs",
    "LoadedInput",
    "ReportSource",
    "Report",
    "UnknownJudgeRun",
    "build_report",
    "judge_info",
    "library_versions",
    "report_agreement",
    "report_builder",
]

#: The libraries whose versions can change a number in a report.
LIBRARIES = ("numpy", "scipy", "statsmodels", "krippendorff", "pandas", "ppi-python", "crowd-kit")

UNKNOWN_RUN = "judge run {run_id} does not exist in project {slug!r}"
OTHER_KIND = "judge run {run_id} judges {kind!r} items, not {expected!r}"


class UnknownJudgeRun(ConcordError):
    code = "unknown_judge_run"


@cache
def library_versions() -> dict[str, str]:
    """Versions of Python and of every library behind the numbers, as stored with a snapshot."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        versions[name] = metadata.version(name)
    return versions


#: The package whose ``<kind>.py`` modules lay out each kind's report.
REPORTS_PACKAGE = "validation.reports"


def _builder_class(kind_name: str) -> type[ReportBuilder]:
    """The one ``ReportBuilder`` subclass that ``validation/reports/<kind>.py`` defines; the shared
    layout when the kind has no such module."""
    module_name = f"{REPORTS_PACKAGE}.{kind_name}"
    if importlib.util.find_spec(module_name) is None:
        return ReportBuilder
    module = importlib.import_module(module_name)
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, ReportBuilder) and value.__module__ == module_name
    ]
    if len(found) != 1:
        raise ImproperlyConfigured(f"{module_name} defines {len(found)} report builders; a kind's module defines one")
    return found[0]


def _kinds_builders() -> Iterator[tuple[str, type[ReportBuilder]]]:
    for kind in all_kinds():
        yield kind.name, _builder_class(kind.name)


#: Each registered kind's report builder class (an :class:`annotation.registry.Registry`, found
#: again whenever the kinds change).
REPORT_BUILDERS: Registry[type[ReportBuilder]] = Registry("report builder", load=_kinds_builders, follows=KINDS)


def report_builder(kind: TaskKind) -> ReportBuilder:
    """The kind's report layout, found by the kind's name (``validation/reports/<kind>.py``)."""
    builder = REPORT_BUILDERS.get(kind.name) if kind.name in REPORT_BUILDERS else _builder_class(kind.name)
    return builder(kind)


@dataclass(frozen=True, kw_only=True)
class Report:
    """A computed report: its inputs' digest, parameters, library versions, numbers, tables, figures."""

    project: str
    kind: str
    title: str
    parameters: ReportParameters
    inputs_sha256: str
    library_versions: dict[str, str]
    judge: JudgeInfo | None
    human_raters: tuple[str, ...]
    n_units: int
    agreement: JointAgreement
    tables: tuple[Table, ...]
    figures: tuple[Figure, ...]

    def numbers(self) -> dict[str, Any]:
        """Every number in the report, JSON-ready: what a snapshot stores and a recompute compares."""
        return {
            "dimensions": {name: d.to_json_dict() for name, d in self.agreement.dimensions.items()},
            "overall": {
                key: {
                    "statistic": r.statistic,
                    "ci": None if r.confidence_interval is None else list(r.confidence_interval),
                    "n_resamples": r.n_resamples,
                    "reason": r.reason,
                }
                for key, r in self.agreement.overall.items()
            },
            "tables": {t.key: t.to_json_dict() for t in self.tables},
        }

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)


@overload
def judge_info(project: Project, run_id: int) -> JudgeInfo: ...
@overload
def judge_info(project: Project, run_id: None) -> None: ...
@overload
def judge_info(project: Project, run_id: int | None) -> JudgeInfo | None: ...
def judge_info(project: Project, run_id: int | None) -> JudgeInfo | None:
    """The run as a report names it; UnknownJudgeRun unless it is a run of this project's kind."""
    if run_id is None:
        return None
    run = JudgeRun.objects.select_related("judge").filter(pk=run_id, project=project).first()
    if run is None:
        raise UnknownJudgeRun(UNKNOWN_RUN.format(run_id=run_id, slug=project.slug))
    if run.judge.kind != project.kind:
        raise UnknownJudgeRun(OTHER_KIND.format(run_id=run_id, kind=run.judge.kind, expected=project.kind))
    judge = run.judge
    return JudgeInfo(
        run_id=run.pk,
        rater=judge_rater_name(run.pk),
        label=_judge_label(judge, run),
        is_baseline=judge.is_baseline,
    )


def _judge_label(judge: Any, run: JudgeRun) -> str:
    """``name (backend · model), run N``, naming the prompt version unless the name already does, and
    the provenance of outputs made outside a Concord run (an imported file: model, prompt, sampling,
    producer run id, file SHA-256), so every report that uses such a run says where it came from."""
    prompt = "" if judge.prompt_key in judge.name else f", prompt {judge.prompt_key}"
    provenance = f" [{run.provenance_text}]" if run.provenance_text else ""
    return f"{judge.name} ({judge.backend_label}){prompt}, run {run.pk}{provenance}"


def report_agreement(
    ratings: RatingSet,
    kind: TaskKind,
    parameters: ReportParameters,
    judge: JudgeInfo | None,
    *,
    judge_as_rater: bool = False,
    progress: Progress | None = None,
    anchoring: bool = False,
) -> tuple[JointAgreement, tuple[str, ...]]:
    """People's agreement on every dimension, with the judge (when given) compared with them; it
    counts among them in the coefficients only with ``judge_as_rater``. With ``anchoring`` the
    report's anchoring comparisons come too, from the same resamples (``JointAgreement.exposures``)."""
    humans = tuple(r for r in ratings.raters if not r.startswith(JUDGE_PREFIX))
    raters = [*humans, *([judge.rater] if judge else [])]
    exposures = exposure_inputs(ratings, kind, parameters, humans, judge) if anchoring else None
    agreement = joint_agreement(
        {
            d.name: DimensionInput(ratings=ratings.matrix(d.name, raters), level=d.level, categories=d.categories)
            for d in kind.rating_dimensions
        },
        raters=raters,
        reference=judge.rater if judge else None,
        reference_in_coefficients=judge_as_rater,
        bootstrap=parameters.bootstrap,
        seed=parameters.seed,
        confidence_level=parameters.confidence_level,
        progress=progress,
        exposures=exposures,
    )
    return agreement, humans


@dataclass(frozen=True, kw_only=True)
class ReportSource:
    """What the loaders start from: the project, its ratings and the report's parameters."""

    project: Project
    kind: TaskKind
    parameters: ReportParameters
    ratings: RatingSet
    human_raters: tuple[str, ...]


@dataclass(frozen=True)
class LoadedInput:
    """One loader's result: ``data`` for the builder, ``digest`` the same content as JSON for the
    inputs hash, with external ids and judge fingerprints in place of database ids (which change
    when a database is recreated, so they are no input)."""

    data: Any
    digest: Any


@dataclass(frozen=True)
class DraftJudge:
    """A judge that drafted statements: its name in tables, its prompt, its latest draft per item id."""

    label: str
    prompt: str
    drafts: dict[int, str]


@dataclass(frozen=True)
class DraftInputs:
    """LLM drafts and people's final statements (``TaskKind.draft_text``), for draft acceptance.

    ``judges`` come in table order (name, prompt, then age); ``finals`` are every rater's latest
    statement as ``(item id, rater, text, suggestion_visible)``.
    """

    judges: tuple[DraftJudge, ...]
    finals: tuple[tuple[int, str, str, Any], ...]


def load_drafts(source: ReportSource) -> LoadedInput:
    """Every judge's newest OK draft per item, and each person's latest statement per item."""
    kind, project = source.kind, source.project
    drafts: dict[int, dict[int, str]] = defaultdict(dict)
    suggestions = (
        Suggestion.objects.filter(item__project=project, status=Suggestion.Status.OK)
        .order_by("judge_id", "item_id", "updated_at", "id")
        .values_list("judge_id", "item_id", "value")
        .iterator(chunk_size=5000)
    )
    for judge_id, item_id, value in suggestions:
        text = kind.draft_text(value) if value is not None else None
        if text is not None:
            drafts[judge_id][item_id] = text  # the newest suggestion per (judge, item) wins
    finals = tuple(
        (item_id, rater, text, visible)
        for item_id, rater, value, visible in latest_annotations(
            project=project, sources=source.parameters.sources or None
        )
        .values_list("item_id", "rater", "value", "suggestion_visible")
        .iterator(chunk_size=5000)
        if (text := kind.draft_text(value)) is not None
    )
    judges = Judge.objects.in_bulk(list(drafts))
    order = sorted(drafts, key=lambda j: (judges[j].name, judges[j].prompt_key, j))
    data = DraftInputs(
        judges=tuple(
            DraftJudge(
                label=f"{judges[j].name} ({judges[j].backend_label})", prompt=judges[j].prompt_key, drafts=drafts[j]
            )
            for j in order
        ),
        finals=finals,
    )
    external = dict(Item.objects.filter(project=project).values_list("pk", "external_id").iterator(chunk_size=5000))
    digest: dict[str, Any] = {
        "drafts": sorted([judges[j].fingerprint, external[i], t] for j in drafts for i, t in drafts[j].items()),
        "finals": sorted([external[i], r, t, v] for i, r, t, v in finals),
    }
    if order:
        # The tables name the judges, in this order (no judge drafted: nothing to name, the digest stays).
        digest["judges"] = [[judges[j].fingerprint, d.label, d.prompt] for j, d in zip(order, data.judges, strict=True)]
    return LoadedInput(data, digest)


def load_answer_keys(source: ReportSource) -> LoadedInput:
    """(external id, correct answers, options) of every item the people rated, sorted."""
    rated: set[int] = set()
    for dimension in source.kind.rating_dimensions:
        matrix = source.ratings.matrix(dimension.name, source.human_raters)
        present = (matrix != None) if matrix.dtype == object else ~np.isnan(matrix.astype(float))  # noqa: E711
        rated |= set(source.ratings.unit_items[present.any(axis=1)].tolist())
    sizes = []
    rows = Item.objects.filter(project=source.project).values_list("pk", "external_id", "payload")
    for pk, external_id, payload in rows.iterator(chunk_size=5000):
        if pk in rated:
            sizes.append((external_id, len(set(payload["answers"])), len(payload["options"])))
    sizes.sort()
    return LoadedInput(sizes, sizes)


#: What a builder can ask for besides the ratings (``ReportBuilder.inputs``), by the name under which
#: it enters the inputs digest.
INPUT_LOADERS: dict[str, Callable[[ReportSource], LoadedInput]] = {
    "drafts": load_drafts,
    "mcq_answers_and_options": load_answer_keys,
}


REVEALED_NOTE = (
    "Blinding: raters saw {field}, which the task kind keeps for researchers, on {n} of {total} answers "
    "(shown on purpose by the project's settings, {spans})"
)


def blinding_notes(project: Project, sources: Sequence[str] | None) -> tuple[str, ...]:
    """A note per hidden field the project showed its raters on purpose: on how many of the answers
    in the report, and from when to when (``Project.reveal_log``). None while raters stayed blind."""
    log = sorted(project.reveal_log, key=lambda entry: entry["at"])
    if not any(entry["fields"] for entry in log):
        return ()
    spans: dict[str, list[list[Any]]] = defaultdict(list)  # [start, end or None]
    for index, entry in enumerate(log):
        start = datetime.fromisoformat(entry["at"])
        end = datetime.fromisoformat(log[index + 1]["at"]) if index + 1 < len(log) else None
        for name in entry["fields"]:
            if spans[name] and spans[name][-1][1] == start:
                spans[name][-1][1] = end  # shown on through a change of the other fields: one span
            else:
                spans[name].append([start, end])
    answers = latest_annotations(project=project, sources=sources)
    total = answers.count()
    notes = []
    for name, windows in sorted(spans.items()):
        during = Q()
        for start, end in windows:
            during |= Q(created_at__gte=start, **({"created_at__lt": end} if end else {}))
        when = "; ".join(f"{_minute(start)} to {_minute(end) if end else 'now'}" for start, end in windows)
        notes.append(REVEALED_NOTE.format(field=name, n=answers.filter(during).count(), total=total, spans=when))
    return tuple(notes)


def _minute(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def exposure_design(project: Project) -> str:
    """Whether the anchoring table's groups were randomised, from the project's suggestion exposure."""
    if project.suggestion_exposure == SuggestionExposure.RANDOMISED:
        return ANCHORING_RANDOMISED.format(p=project.suggestion_probability)
    setting = "shows every suggestion" if project.suggestion_exposure == SuggestionExposure.SHOWN else "hides them"
    return ANCHORING_NOT_RANDOMISED.format(setting=setting)


def build_report(*, project: Project, parameters: ReportParameters, progress: Progress | None = None) -> Report:
    """Compute a project's report: ratings, agreement with intervals, the kind's tables and figures.

    Raises
    ------
    UnknownJudgeRun
        When ``parameters.judge_run_id`` names no run of this project or one of another kind.
    """
    kind = project.task_kind
    judge = judge_info(project, parameters.judge_run_id)
    ratings = project_ratings(
        project=project, judge_run_id=judge.run_id if judge else None, sources=parameters.sources or None
    )
    agreement, humans = report_agreement(ratings, kind, parameters, judge, progress=progress, anchoring=True)
    builder = report_builder(kind)
    source = ReportSource(project=project, kind=kind, parameters=parameters, ratings=ratings, human_raters=humans)
    loaded = {name: INPUT_LOADERS[name](source) for name in builder.inputs}
    context = ReportContext(
        kind=kind,
        parameters=parameters,
        ratings=ratings,
        agreement=agreement,
        human_raters=humans,
        judge=judge,
        inputs={name: loaded_input.data for name, loaded_input in loaded.items()},
        blinding_notes=blinding_notes(project, parameters.sources or None),
        exposure_design=exposure_design(project),
    )
    tables = tuple(builder.all_tables(context))
    figures = tuple(builder.figures(context))
    return Report(
        project=project.slug,
        kind=kind.name,
        title=project.title,
        parameters=parameters,
        inputs_sha256=inputs_digest(
            ratings,
            {name: loaded_input.digest for name, loaded_input in loaded.items()}
            | ({"blinding": list(context.blinding_notes)} if context.blinding_notes else {}),
        ),
        library_versions=library_versions(),
        judge=judge,
        human_raters=humans,
        n_units=ratings.n_units,
        agreement=agreement,
        tables=tables,
        figures=figures,
    )


def inputs_digest(ratings: RatingSet, extra: dict[str, Any]) -> str:
    """The ratings' digest, extended by everything else the build loaded for the kind's tables."""
    if not extra:
        return ratings.digest()
    sha = hashlib.sha256(ratings.digest().encode())
    sha.update(json.dumps(extra, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
    return sha.hexdigest()
