"""What every paper evaluation shares: its parameters, its result, how it renders, and the runs it reads.

An evaluation is a command's JSON (``result``), the paper tables laid out from it, the SHA-256 of
the inputs it read, its parameters and the library versions; ``numbers()`` is what a snapshot stores
(``validation.evaluations.snapshots``) in the same record as a frozen agreement report.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from annotation.errors import ConcordError
from annotation.models import Project
from judges.models import JudgeRun
from validation.reports import Figure, Table, UnknownJudgeRun, library_versions
from validation.reports.build import judge_info
from validation.reports.render import render_csv, render_latex, render_markdown

__all__ = [
    "FORMATS",
    "MAX_BOOTSTRAP",
    "MAX_RUNS",
    "EvaluatedRun",
    "Evaluation",
    "UnknownJudgeRun",
    "WrongKind",
    "check_bootstrap",
    "check_kind",
    "check_runs",
    "current_versions",
    "evaluated_runs",
    "inputs_digest",
    "render_evaluation",
    "statistic_json",
]

FORMATS = ("json", "md", "latex", "csv")
#: Judge runs one evaluation compares, at most.
MAX_RUNS = 50
#: Bootstrap resamples, at most (a page computes no more than ``CONCORD_REQUEST_BOOTSTRAP_MAX``).
MAX_BOOTSTRAP = 100_000

WRONG_KIND = "{slug} is a {kind} project; {evaluation} evaluates {expected} projects"
TOO_MANY_RUNS = "at most {limit} runs; got {n}"
REPEATED_RUN = "run {run_id} is given twice"
TOO_MANY_RESAMPLES = "at most {limit} bootstrap resamples; got {n}"


class WrongKind(ConcordError):
    code = "wrong_kind"


@dataclass(frozen=True, kw_only=True)
class EvaluatedRun:
    """A judge run as an evaluation names it."""

    run_id: int
    label: str
    prompt_name: str
    prompt_key: str
    seed: int | None
    is_baseline: bool


def check_runs(run_ids: tuple[int, ...]) -> None:
    """The run list's caps, as a ValueError (a bad argument, exit code 1 / a form error)."""
    if len(run_ids) > MAX_RUNS:
        raise ValueError(TOO_MANY_RUNS.format(limit=MAX_RUNS, n=len(run_ids)))
    for position, run_id in enumerate(run_ids):
        if run_id in run_ids[:position]:
            raise ValueError(REPEATED_RUN.format(run_id=run_id))


def check_bootstrap(n: int) -> None:
    if n > MAX_BOOTSTRAP:
        raise ValueError(TOO_MANY_RESAMPLES.format(limit=MAX_BOOTSTRAP, n=n))


def check_kind(project: Project, *, expected: str, evaluation: str) -> None:
    if project.kind != expected:
        raise WrongKind(
            WRONG_KIND.format(slug=project.slug, kind=project.kind, evaluation=evaluation, expected=expected)
        )


def evaluated_runs(project: Project, run_ids: tuple[int, ...]) -> list[EvaluatedRun]:
    """The runs, in the order given; UnknownJudgeRun for a run of another project or kind."""
    found = []
    for run_id in run_ids:
        info = judge_info(project, run_id)  # raises UnknownJudgeRun
        run = JudgeRun.objects.select_related("judge").get(pk=run_id)
        found.append(
            EvaluatedRun(
                run_id=run_id,
                label=info.label,
                prompt_name=run.judge.prompt_name,
                prompt_key=run.judge.prompt_key,
                seed=run.judge.seed,
                is_baseline=run.judge.is_baseline,
            )
        )
    return found


def inputs_digest(inputs: Any) -> str:
    """SHA-256 of the inputs an evaluation read, as canonical JSON."""
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """A computed evaluation: the command's JSON, its tables, and what a snapshot keeps with them."""

    name: str
    project: str
    title: str
    parameters: dict[str, Any]
    inputs_sha256: str
    library_versions: dict[str, str]
    result: dict[str, Any]
    tables: tuple[Table, ...]
    judge_label: str = ""
    #: Plots of the tables' numbers (drawn by ``validation.plots``); not part of ``numbers()``.
    figures: tuple[Figure, ...] = ()
    #: The parameters the rendered header prints where the stored ones hold a whole input file
    #: (its digest then stands in for it); None prints ``parameters``.
    shown_parameters: dict[str, Any] | None = None

    def numbers(self) -> dict[str, Any]:
        """Every number: the JSON result and the tables, as a snapshot stores and a check compares."""
        return {"evaluation": self.result, "tables": {t.key: t.to_json_dict() for t in self.tables}}

    def table(self, key: str) -> Table:
        return next(t for t in self.tables if t.key == key)


def current_versions() -> dict[str, str]:
    return library_versions()


def evaluation_header(evaluation: Evaluation) -> str:
    """The provenance lines above the tables in every rendering (as the agreement reports have)."""
    shown = evaluation.parameters if evaluation.shown_parameters is None else evaluation.shown_parameters
    parameters = json.dumps(shown, sort_keys=True)
    versions = ", ".join(f"{k} {v}" for k, v in evaluation.library_versions.items())
    return (
        f"Concord paper evaluation: {evaluation.title} ({evaluation.project}, {evaluation.name})\n"
        f"Inputs SHA-256: {evaluation.inputs_sha256}\n"
        f"Parameters: {parameters}\n"
        f"Libraries: {versions}\n"
    )


def render_evaluation(evaluation: Evaluation, fmt: str) -> str:
    """JSON (the command's shape), or the tables as Markdown, LaTeX (booktabs) or CSV."""
    if fmt == "json":
        return json.dumps(evaluation.result, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    header = evaluation_header(evaluation)
    if fmt == "md":
        return render_markdown(evaluation.tables, header="\n".join(f"> {line}" for line in header.splitlines()))
    if fmt == "latex":
        return render_latex(evaluation.tables, header=header)
    if fmt == "csv":
        return render_csv(evaluation.tables)
    raise ValueError(f"unknown format {fmt!r}; use {', '.join(FORMATS)}")


def statistic_json(result: Any) -> dict[str, Any]:
    """``{"statistic": x, "confidence_interval": [lo, hi] | null}``, plus ``reason`` when x is null."""
    interval = result.confidence_interval
    data: dict[str, Any] = {
        "statistic": result.statistic,
        "confidence_interval": None if interval is None else [interval[0], interval[1]],
    }
    if result.statistic is None:
        data["reason"] = result.reason
    return data
