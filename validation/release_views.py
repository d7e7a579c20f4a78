"""The *Release* page: the metadata a release carries (remembered per project), and the release as a .zip.

Thin: the form checks caps and shapes, validation.release writes and builds. Researchers only, checked
again in each view.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.access import require_project_role
from annotation.errors import ValidationFailed
from annotation.models import Project, Role
from validation.models import ReleaseSettings
from validation.release import SPLITS, release_archive
from validation.release.services import SETTINGS_FIELDS, release_settings_of, release_settings_update
from validation.selectors import project_snapshots

NOT_A_RESEARCHER = "Only the project's researchers can publish its data."
SAVED = "Release details saved: every release of this project carries them."


class ReleaseSettingsForm(forms.ModelForm):
    class Meta:
        model = ReleaseSettings
        fields = list(SETTINGS_FIELDS)
        labels = {
            "license": "Licence (as the Hub writes it: cc-by-4.0, mit, other)",
            "creators": "Creators, one per line",
            "citation": "How to cite (BibTeX or a sentence)",
            "url": "Where the dataset will be published (written into the metadata, never opened)",
            "language": "Languages of the items' text (codes, comma-separated)",
            "annotator_demographics": "Who the annotators were (optional; only written if you fill it)",
        }
        widgets = {
            "creators": forms.Textarea(attrs={"rows": 3}),
            "citation": forms.Textarea(attrs={"rows": 4}),
            "description": forms.Textarea(attrs={"rows": 3}),
            "annotator_demographics": forms.Textarea(attrs={"rows": 3}),
        }


class ReleaseDownloadForm(forms.Form):
    splits = forms.MultipleChoiceField(
        choices=[(s, s) for s in SPLITS], initial=list(SPLITS), widget=forms.CheckboxSelectMultiple
    )
    snapshot = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, label="Agreement numbers")

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        snapshots = project_snapshots(project=project).filter(evaluation="")
        self.fields["snapshot"].choices = [("", "computed now")] + [  # type: ignore[attr-defined]  # a ChoiceField
            (s.pk, f"snapshot {s.pk}{': ' + s.title if s.title else ''} ({s.created_at:%Y-%m-%d})") for s in snapshots
        ]


def _page(
    request: HttpRequest, project: Project, settings_form: ReleaseSettingsForm, status: int = 200
) -> HttpResponse:
    context = {
        "project": project,
        "settings_form": settings_form,
        "download_form": ReleaseDownloadForm(project=project),
        "splits": SPLITS,
    }
    return render(request, "validation/release.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def release_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    current = release_settings_of(project)
    if request.method != "POST":
        return _page(request, project, ReleaseSettingsForm(instance=current))
    form = ReleaseSettingsForm(request.POST, instance=ReleaseSettings(project=project))
    if not form.is_valid():
        return _page(request, project, form, status=422)
    release_settings_update(project=project, data={name: form.cleaned_data[name] for name in SETTINGS_FIELDS})
    messages.success(request, SAVED)
    return redirect("release", slug=project.slug)


@login_required
@require_GET
def release_download(request: HttpRequest, slug: str) -> HttpResponseBase:
    project, _ = require_project_role(request, slug, {Role.RESEARCHER}, denied=NOT_A_RESEARCHER)
    form = ReleaseDownloadForm(request.GET, project=project)
    if not form.is_valid():
        return HttpResponse("; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in form.errors.items()), status=400)
    try:
        archive = release_archive(
            project=project, splits=form.cleaned_data["splits"], snapshot_id=form.cleaned_data["snapshot"]
        )
    except ValidationFailed as exc:
        return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
    return FileResponse(
        archive, as_attachment=True, filename=f"{project.slug}-release.zip", content_type="application/zip"
    )
