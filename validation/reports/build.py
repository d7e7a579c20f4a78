"""Building a project's report: ratings → agreement → the kind's tables and figures."""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from django.utils.module_loading import import_string

from annotation.errors import ConcordError
from annotation.kinds.base import TaskKind
from annotation.models import Project
from validation.agreement import DimensionInput, JointAgreement, joint_agreement
from validation.ratings import JUDGE_PREFIX, RatingSet, judge_rater_name, project_ratings
from validation.reports.base import Figure, JudgeInfo, ReportBuilder, ReportContext, ReportParameters, Table

__all__ = [
    "LIBRARIES",
    "Report",
    "UnknownJudgeRun",
    "build_report",
    "judge_info",
    "library_versions",
    "report_agreement",
    "report_builder",
]

#: The libraries whose versions can change a number in a report.
LIBRARIES = ("numpy", "scipy", "statsmodels", "krippendorff", "pandas")

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


def report_builder(kind: TaskKind) -> ReportBuilder:
    """The kind's report layout (``TaskKind.report_builder``), never chosen by the kind's name here."""
    return import_string(kind.report_builder)(kind)


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


def judge_info(project: Project, run_id: int | None) -> JudgeInfo | None:
    """The run as a report names it; UnknownJudgeRun unless it is a run of this project's kind."""
    if run_id is None:
        return None
    from judges.models import JudgeRun  # judges depends on annotation; only a report with a run needs it

    run = JudgeRun.objects.select_related("judge").filter(pk=run_id, project=project).first()
    if run is None:
        raise UnknownJudgeRun(UNKNOWN_RUN.format(run_id=run_id, slug=project.slug))
    if run.judge.kind != project.kind:
        raise UnknownJudgeRun(OTHER_KIND.format(run_id=run_id, kind=run.judge.kind, expected=project.kind))
    judge = run.judge
    return JudgeInfo(
        run_id=run.pk,
        rater=judge_rater_name(run.pk),
        label=_judge_label(judge, run.pk),
        is_baseline=judge.is_baseline,
    )


def _judge_label(judge: Any, run_id: int) -> str:
    """``name (backend · model), run N``, naming the prompt version unless the name already does."""
    prompt = "" if judge.prompt_key in judge.name else f", prompt {judge.prompt_key}"
    return f"{judge.name} ({judge.backend_label}){prompt}, run {run_id}"


def report_agreement(
    ratings: RatingSet,
    kind: TaskKind,
    parameters: ReportParameters,
    judge: JudgeInfo | None,
    *,
    judge_as_rater: bool = False,
) -> tuple[JointAgreement, tuple[str, ...]]:
    """People's agreement on every dimension, with the judge (when given) compared with them; it
    counts among them in the coefficients only with ``judge_as_rater``."""
    humans = tuple(r for r in ratings.raters if not r.startswith(JUDGE_PREFIX))
    raters = [*humans, *([judge.rater] if judge else [])]
    agreement = joint_agreement(
        {
            d.name: DimensionInput(ratings=ratings.matrix(d.name, raters), level=d.level, categories=d.categories)  # type: ignore[arg-type]
            for d in kind.rating_dimensions
        },
        raters=raters,
        reference=judge.rater if judge else None,
        reference_in_coefficients=judge_as_rater,
        bootstrap=parameters.bootstrap,
        seed=parameters.seed,
        confidence_level=parameters.confidence_level,
    )
    return agreement, humans


def build_report(*, project: Project, parameters: ReportParameters) -> Report:
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
    agreement, humans = report_agreement(ratings, kind, parameters, judge)
    context = ReportContext(
        project=project,
        kind=kind,
        parameters=parameters,
        ratings=ratings,
        agreement=agreement,
        human_raters=humans,
        judge=judge,
    )
    builder = report_builder(kind)
    tables = tuple(builder.all_tables(context))
    figures = tuple(builder.figures(context))
    return Report(
        project=project.slug,
        kind=kind.name,
        title=project.title,
        parameters=parameters,
        inputs_sha256=inputs_digest(ratings, context.extra_inputs),
        library_versions=library_versions(),
        judge=judge,
        human_raters=humans,
        n_units=ratings.n_units,
        agreement=agreement,
        tables=tables,
        figures=figures,
    )


def inputs_digest(ratings: RatingSet, extra: dict[str, Any]) -> str:
    """The ratings' digest, extended by whatever else the kind's tables read (see ``record_input``)."""
    if not extra:
        return ratings.digest()
    sha = hashlib.sha256(ratings.digest().encode())
    sha.update(json.dumps(extra, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
    return sha.hexdigest()
