"""The paper evaluations, found by folder the way task kinds are.

Each task kind's ``validation/kinds/<kind>/evaluations.py`` declares its evaluations in a tuple
``EVALUATIONS`` of :class:`PaperEvaluation`; evaluations that read any kind (the estimates) are
declared here. The report page links, the evaluation pages and API, the commands' ``--check`` and
snapshots all read this registry, so a new evaluation is new files in its kind's folder.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from annotation.kinds import KINDS, all_kinds
from annotation.models import Project
from annotation.registry import Registry
from validation.aggregation.build import AggregateParameters, project_aggregation
from validation.aggregation.forms import AggregateForm
from validation.alttest.build import AltTestParameters, alt_test_evaluation
from validation.alttest.forms import AltTestForm, AltTestPlanForm
from validation.alttest.planning import PlanParameters, alt_test_plan_evaluation
from validation.estimates.build import EstimateParameters, project_estimates
from validation.evaluations.base import Evaluation, UnknownJudgeRun, WrongKind
from validation.evaluations.forms import EvaluationForm

__all__ = [
    "PaperEvaluation",
    "evaluate_request",
    "evaluation_named",
    "evaluations_for",
    "page_evaluation",
    "paper_evaluations",
]

#: The package whose ``<kind>/evaluations.py`` modules declare each kind's evaluations.
KINDS_PACKAGE = "validation.kinds"
UNKNOWN_EVALUATION = "no paper evaluation {name!r} (known: {known})"


@dataclass(frozen=True, kw_only=True)
class PaperEvaluation:
    """One paper evaluation: how its parameters are read, how it is computed, and its page.

    Attributes
    ----------
    name : str
        The command's name, also what a snapshot of it records (``ReportSnapshot.evaluation``).
    slug : str
        Its page's part of the URL (``/p/<project>/evaluations/<slug>/``) and the API's.
    title : str
    summary : str
        What it computes, in a few words, for the link on the report page.
    from_json : callable
        Parameters from the JSON a snapshot stores (``parameters.to_json_dict()``).
    evaluate : callable
        ``evaluate(project=..., parameters=...) -> Evaluation``.
    form : EvaluationForm subclass or None
        The page's and the API's parameters; None where the evaluation has a page of its own.
    template : str
        The page's template.
    kind : str
        The task kind whose folder declares it (set by the registry; "" for any kind).
    """

    name: str
    slug: str
    title: str
    summary: str = ""
    from_json: Callable[[dict[str, Any]], Any]
    evaluate: Callable[..., Evaluation]
    form: type[EvaluationForm] | None = None
    template: str = "validation/evaluation.html"
    kind: str = ""

    def applies_to(self, project: Project) -> bool:
        """This kind's evaluation, or one of any kind on a kind that declares rating dimensions."""
        if self.kind:
            return self.kind == project.kind
        return bool(project.task_kind.rating_dimensions)


#: Evaluations of any kind's project; their pages are their own.
ANY_KIND = (
    PaperEvaluation(
        name="estimates",
        slug="estimates",
        title="Estimates: model only, people only, prediction-powered",
        from_json=EstimateParameters.from_json_dict,
        evaluate=project_estimates,
    ),
    PaperEvaluation(
        name="alt_test",
        slug="alt-test",
        title="Alternative Annotator Test",
        summary="Calderon, Reichart & Dror (ACL 2025): winning rate and advantage probability per dimension",
        from_json=AltTestParameters.from_json_dict,
        evaluate=alt_test_evaluation,
        form=AltTestForm,
        template="validation/alt_test.html",
    ),
    PaperEvaluation(
        name="alt_test_plan",
        slug="alt-test-plan",
        title="Alternative Annotator Test: how many items?",
        summary="the authors' simulation (Appendix C): the share of studies the model passes per number of items",
        from_json=PlanParameters.from_json_dict,
        evaluate=alt_test_plan_evaluation,
        form=AltTestPlanForm,
        template="validation/alt_test_plan.html",
    ),
    PaperEvaluation(
        name="aggregate",
        slug="aggregate",
        title="Aggregation and annotator competence",
        summary="Dawid–Skene, MACE, GLAD, Wawa beside the majority vote",
        from_json=AggregateParameters.from_json_dict,
        evaluate=project_aggregation,
        form=AggregateForm,
    ),
)


def _declared(kind_name: str) -> tuple[PaperEvaluation, ...]:
    """``EVALUATIONS`` of ``validation/kinds/<kind>/evaluations.py``; () without the folder or module."""
    package = f"{KINDS_PACKAGE}.{kind_name}"
    if importlib.util.find_spec(package) is None or importlib.util.find_spec(f"{package}.evaluations") is None:
        return ()
    module = importlib.import_module(f"{package}.evaluations")
    return tuple(replace(evaluation, kind=kind_name) for evaluation in module.EVALUATIONS)


def _registered_evaluations() -> Iterator[tuple[str, PaperEvaluation]]:
    """Each kind's evaluations, in the kinds' order, then those of any kind; names and slugs once each."""
    slugs: set[str] = set()
    for evaluation in (*(e for kind in all_kinds() for e in _declared(kind.name)), *ANY_KIND):
        if evaluation.slug in slugs:
            raise ValueError(f"paper evaluation {evaluation.name!r} ({evaluation.slug}) is declared twice")
        slugs.add(evaluation.slug)
        yield evaluation.name, evaluation


#: The paper evaluations by name (an :class:`annotation.registry.Registry`, loaded from the kinds'
#: folders again whenever the kinds change).
EVALUATIONS: Registry[PaperEvaluation] = Registry("paper evaluation", load=_registered_evaluations, follows=KINDS)


def paper_evaluations() -> dict[str, PaperEvaluation]:
    """Every registered evaluation by name: each kind's, in the kinds' order, then those of any kind."""
    return dict(EVALUATIONS.items())


def evaluation_named(name: str) -> PaperEvaluation:
    """The evaluation called ``name``; KeyError naming the known ones."""
    if name not in EVALUATIONS:
        raise KeyError(UNKNOWN_EVALUATION.format(name=name, known=", ".join(EVALUATIONS.names())))
    return EVALUATIONS.get(name)


def evaluations_for(project: Project, *, with_page: bool = True) -> list[PaperEvaluation]:
    """The evaluations of the project's kind, then those of any kind (those with a generic page, unless
    ``with_page`` is False)."""
    return [e for e in EVALUATIONS.all() if e.applies_to(project) and (e.form is not None or not with_page)]


def page_evaluation(project: Project, slug: str) -> PaperEvaluation | None:
    """The evaluation with a page at ``slug`` for this project's kind, else None."""
    return next((e for e in evaluations_for(project) if e.slug == slug), None)


def evaluate_request(
    *, declared: PaperEvaluation, project: Project, user: Any, data: Any, files: Any = None
) -> tuple[EvaluationForm, Evaluation | None]:
    """The evaluation's form bound to ``data`` (unbound when it names none of its fields), and the
    evaluation computed from it; a domain error is the form's error, never a 500."""
    assert declared.form is not None
    form_class = declared.form
    bound = any(key in data for key in form_class.base_fields) or bool(files)
    form = form_class(data if bound else None, files if bound else None, project=project, user=user)
    if not bound or not form.is_valid():
        return form, None
    try:
        return form, declared.evaluate(project=project, parameters=form.parameters())
    except (UnknownJudgeRun, WrongKind, ValueError) as exc:
        form.add_error(None, str(exc))
        return form, None
