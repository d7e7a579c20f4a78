"""Pages that set a project up: New project, Settings, archive, and the guidelines preview.

Thin like annotation/views.py: check access, call a service, render. Who may create projects is
``can_create_projects``; settings and archive are for the project's researchers (superusers pass).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.access import CANNOT_CREATE_PROJECTS, can_create_projects, require_project_role
from annotation.design_views import design_examples
from annotation.kinds import all_kinds, kind_choices
from annotation.kinds.designs import MAX_DESIGN_BYTES
from annotation.models import Project, Role, SuggestionExposure
from annotation.post_redirect import post_only
from annotation.services import (
    GUIDELINES_MAX_CHARS,
    GUIDELINES_TOO_LONG,
    ProjectLocks,
    project_archive,
    project_create_as,
    project_setting_locks,
    project_update,
)

NOT_A_RESEARCHER = "Only the project's researchers can change its settings."
SLUG_TAKEN = "a project with this slug already exists; choose another"
EXAMPLE_TEXT_CHARS = 160
# What adjudication does when the project keeps its kind's rules (the rules' own defaults, then the kind's).
RULE_DEFAULTS = {"unanimous": True, "ordinal_distance": None, "llm_majority": False, "posterior_below": None}
#: Said on Settings beside k when k = 2 and an answer has several dimensions: gold by majority is the
#: whole answer, so two people must agree on every dimension (a CoPA study sent 25 of 30 items on).
TWO_RATERS_ALL_DIMENSIONS = (
    "With 2 annotators, gold by majority needs both to give the same answer on all {n} dimensions; an item "
    "where they differ on any one waits for an expert. A third annotator (k = 3) lets a majority settle most."
)


# -- the task-kind cards --------------------------------------------------------------------------


@dataclass(frozen=True)
class KindCard:
    name: str
    label: str
    description: str
    #: (field, value shortened) of the kind's example item.
    example: tuple[tuple[str, str], ...]
    default_rules: str
    #: The kind's rules with every rule named, as JSON: "My own rules" starts from them (project_form.js).
    rules_json: str = "{}"


def describe_rules(rules: dict) -> str:
    """Adjudication rules in words: which disagreements go to an expert."""
    rules = {**RULE_DEFAULTS, **(rules or {})}
    parts = []
    if rules["unanimous"]:
        parts.append("any disagreement")
    if rules["ordinal_distance"] is not None:
        parts.append(f"ratings {rules['ordinal_distance']} or more points apart")
    if rules["llm_majority"]:
        parts.append("a human majority that differs from the LLM judge")
    if rules["posterior_below"] is not None:
        method = str(rules.get("posterior_method", "dawid_skene")).replace("_", "–").title()
        parts.append(f"a {method} posterior below {rules['posterior_below']:g}")
    return ("Goes to an expert: " + "; ".join(parts)) if parts else "Nothing goes to an expert"


def _shorten(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= EXAMPLE_TEXT_CHARS else text[: EXAMPLE_TEXT_CHARS - 1] + "…"


def kind_cards() -> list[KindCard]:
    return [
        KindCard(
            name=kind.name,
            label=kind.label,
            description=kind.description,
            example=tuple((field, _shorten(value)) for field, value in kind.example_payload().items()),
            default_rules=describe_rules(kind.default_adjudication_rules),
            rules_json=json.dumps({**RULE_DEFAULTS, **kind.default_adjudication_rules}),
        )
        for kind in all_kinds()
    ]


# -- the form the New project and Settings pages share ----------------------------------------------


class ProjectForm(forms.Form):
    title = forms.CharField(max_length=200, help_text="Shown to everyone on the project.")
    slug = forms.SlugField(
        max_length=80,
        help_text="The project's name in links, files and commands (letters, digits, hyphens); it cannot change later.",
    )
    kind = forms.ChoiceField(choices=kind_choices, widget=forms.RadioSelect, label="Task kind")
    guidelines = forms.CharField(
        required=False,
        strip=False,
        max_length=GUIDELINES_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 12}),
        help_text=f"Markdown, shown to annotators beside each item (at most {GUIDELINES_MAX_CHARS:,} characters).",
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=1000, initial=2, label="Annotators per item (k)",
        help_text="How many different people annotate each item; agreement needs at least 2.",
    )  # fmt: skip
    suggestion_exposure = forms.ChoiceField(
        choices=SuggestionExposure.choices,
        initial=SuggestionExposure.HIDDEN,
        widget=forms.RadioSelect,
        label="LLM suggestions",
        help_text="Whether annotators see an LLM judge's answer before giving theirs.",
    )
    suggestion_probability = forms.FloatField(
        min_value=0.0, max_value=1.0, initial=0.5, label="Probability p",
        help_text="With randomised exposure: the chance a suggestion is shown for an (item, annotator).",
    )  # fmt: skip
    seed = forms.IntegerField(
        min_value=-(2**62), max_value=2**62, initial=0,
        help_text="Seeds the item order and the randomised suggestions: the same seed gives the same study.",
    )  # fmt: skip
    qualification_rate = forms.FloatField(
        min_value=0.0, max_value=1.0, initial=0.0, label="Qualification rate",
        help_text="Share of served items that are qualification items with a known answer (0 to 1).",
    )  # fmt: skip
    adjudication = forms.ChoiceField(
        choices=[("default", "The task kind's rules"), ("custom", "My own rules")],
        initial="default",
        widget=forms.RadioSelect,
        label="Adjudication: which disagreements go to an expert",
    )
    adj_unanimous = forms.BooleanField(required=False, initial=True, label="Any disagreement between raters")
    adj_ordinal_distance = forms.IntegerField(
        required=False, min_value=1, max_value=100, label="Ratings at least this many points apart",
        help_text="Empty: off. Applies to rating scales.",
    )  # fmt: skip
    adj_llm_majority = forms.BooleanField(
        required=False, label="The human majority differs from the LLM judge (audits the judge)"
    )
    design = forms.JSONField(
        required=False,
        max_length=MAX_DESIGN_BYTES,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "class": "code"}),
        label="Design (JSON)",
        help_text="For a rating scale or a label set: the fields shown and the questions asked "
        "(docs/formats.md, Designs). Frozen once the first answer exists.",
    )
    adj_posterior_below = forms.FloatField(
        required=False, min_value=0.01, max_value=1, label="The Dawid–Skene posterior of a label is below",
        help_text="Empty: off. A model of the annotators (crowd-kit) fitted to the people's answers; 0.01 to 1.",
    )  # fmt: skip

    def __init__(self, *args, project: Project | None = None, locks: ProjectLocks | None = None, preview_url: str = "",
                 **kwargs) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["guidelines"].widget.attrs.update(
            {"hx-post": preview_url, "hx-trigger": "input changed delay:400ms", "hx-target": "#guidelines-preview",
             "hx-swap": "innerHTML", "aria-controls": "guidelines-preview"}
        )  # fmt: skip
        if project is None:
            return
        del self.fields["slug"]
        kind = project.task_kind
        self.fields["revealed_fields"] = forms.MultipleChoiceField(
            required=False,
            choices=[(name, f"{name}: {kind.hidden_fields[name]}") for name in kind.revealable_fields],
            widget=forms.CheckboxSelectMultiple,
            label="Show raters on purpose",
            help_text="Fields this task kind keeps from raters (researchers only). Leave all unticked to keep "
            "raters blind; the agreement report says when raters saw one.",
        )
        if kind.hidden_fields:
            self.fields["adjudicators_see_hidden"] = forms.BooleanField(
                required=False,
                label="Show experts these fields when they adjudicate",
                help_text="Off (the default) keeps gold blind to the condition under study. A change is logged, "
                "and gold exports say for each decision whether the expert saw them.",
            )
        rules = project.adjudication_rules
        self.initial = {
            "title": project.title,
            "kind": project.kind,
            "guidelines": project.guidelines,
            "overlap": project.overlap,
            "suggestion_exposure": project.suggestion_exposure,
            "suggestion_probability": project.suggestion_probability,
            "seed": project.seed,
            "qualification_rate": project.qualification_rate,
            "revealed_fields": project.revealed_fields,
            "design": project.design,
            "adjudicators_see_hidden": project.adjudicators_see_hidden,
            "adjudication": "default" if rules is None else "custom",
            **{
                f"adj_{name}": value
                for name, value in {
                    **RULE_DEFAULTS,
                    **project.task_kind.default_adjudication_rules,
                    **(rules or {}),
                }.items()
            },
        }
        if locks is not None:
            # Shown read-only with the reason; the service refuses the change however the request is made.
            for name, reason in (("kind", locks.kind), ("seed", locks.seed), ("design", locks.design)):
                if reason:
                    self.fields[name].disabled = True
                    self.fields[name].help_text = reason
            self.fields["overlap"].widget.attrs["min"] = locks.min_overlap
            if locks.min_overlap > 1:
                self.fields["overlap"].help_text += f" At least {locks.min_overlap}: an item already has that many."
        dimensions = kind.rating_dimensions
        if project.overlap == 2 and len(dimensions) > 1:
            self.fields["overlap"].help_text += " " + TWO_RATERS_ALL_DIMENSIONS.format(n=len(dimensions))

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if Project.objects.filter(slug=slug).exists():
            raise ValidationError(SLUG_TAKEN)
        return slug

    def settings_values(self) -> dict[str, Any]:
        """The cleaned form as project settings (what project_create and project_update take)."""
        data = self.cleaned_data
        rules = None
        if data["adjudication"] == "custom":
            rules = {
                "unanimous": data["adj_unanimous"],
                "ordinal_distance": data["adj_ordinal_distance"],
                "llm_majority": data["adj_llm_majority"],
                # Only when set: rules saved before the posterior rule existed read the same.
                **({"posterior_below": p} if (p := data["adj_posterior_below"]) is not None else {}),
            }
        return {
            "title": data["title"],
            "kind": data["kind"],
            "guidelines": data["guidelines"],
            "overlap": data["overlap"],
            "suggestion_exposure": data["suggestion_exposure"],
            "suggestion_probability": data["suggestion_probability"],
            "seed": data["seed"],
            "qualification_rate": data["qualification_rate"],
            "adjudication_rules": rules,
            "design": data.get("design"),
            **({"revealed_fields": data["revealed_fields"]} if "revealed_fields" in self.fields else {}),
            **(
                {"adjudicators_see_hidden": data["adjudicators_see_hidden"]}
                if "adjudicators_see_hidden" in self.fields
                else {}
            ),
        }

    def add_service_errors(self, exc: ValidationError) -> None:
        """The service's refusal, on the field it names (adjudication rules on the adjudication choice)."""
        for name, found in exc.message_dict.items():
            target = "adjudication" if name == "adjudication_rules" else name
            self.add_error(target if target in self.fields else None, found)


# -- pages ----------------------------------------------------------------------------------------


def _require_creator(request: HttpRequest) -> None:
    if not can_create_projects(request.user):
        raise PermissionDenied(CANNOT_CREATE_PROJECTS)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    _require_creator(request)
    form = ProjectForm(request.POST or None, preview_url=reverse("project_new_preview"))
    if request.method == "POST" and form.is_valid():
        try:
            project = project_create_as(user=request.user, slug=form.cleaned_data["slug"], **form.settings_values())
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(request, f"Project {project.title} created. Next: import its items.")
            return redirect("project_detail", slug=project.slug)
    context = {
        "form": form,
        "kinds": kind_cards(),
        "preview_url": reverse("project_new_preview"),
        "design_preview_url": reverse("project_new_design_preview"),
        "design_examples": design_examples(),
    }
    return render(request, "annotation/project_new.html", context, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    locks = project_setting_locks(project=project)
    preview_url = reverse("project_settings_preview", args=[project.slug])
    form = ProjectForm(request.POST or None, project=project, locks=locks, preview_url=preview_url)
    if request.method == "POST" and form.is_valid():
        try:
            project_update(project=project, **form.settings_values())
        except ValidationError as exc:
            form.add_service_errors(exc)
        else:
            messages.success(request, "Settings saved.")
            return redirect("project_settings", slug=project.slug)
    context = {
        "project": project,
        "form": form,
        "locks": locks,
        "kinds": kind_cards(),
        "preview_url": preview_url,
        "design_preview_url": reverse("project_design_preview", args=[project.slug]),
        "design_examples": design_examples(),
    }
    return render(request, "annotation/project_settings.html", context, status=400 if form.errors else 200)


@login_required
@post_only("project_settings", "slug")
def project_archive_view(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    restore = request.POST.get("restore") == "1"
    project_archive(project=project, archived=not restore)
    if restore:
        messages.success(request, "Project restored: annotators see it again.")
    else:
        messages.success(request, "Project archived: hidden from annotators; its data and exports are kept.")
    return redirect("project_settings", slug=project.slug)


@login_required
@require_http_methods(["POST"])
def guidelines_preview(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    """The guidelines as annotators will see them (the same safe Markdown rendering), for htmx."""
    if slug is None:
        _require_creator(request)
    else:
        require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    text = request.POST.get("guidelines", "")
    if len(text) > GUIDELINES_MAX_CHARS:
        context = {"error": GUIDELINES_TOO_LONG}
        return render(request, "annotation/_project_form.html#guidelines-preview", context, status=422)
    return render(request, "annotation/_project_form.html#guidelines-preview", {"guidelines": text})
