"""The item browser and the item page, for a project's researchers and experts. Thin: check access,
read the query, call annotation.item_browser (and the registered panels), render."""

from __future__ import annotations

from typing import cast
from urllib.parse import urlencode

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotation.access import require_project_role
from annotation.item_browser import SEARCH_MAX_CHARS, filter_choices, item_detail, item_page, project_item
from annotation.models import Role
from annotation.panels import item_panels
from annotation.request_types import HtmxHttpRequest
from annotation.value_grid import value_grid

BROWSERS = {Role.RESEARCHER, Role.EXPERT}
NOT_A_BROWSER = "Only the project's researchers and experts browse its items."
MAX_ID = 2**63 - 1


class BrowserQuery(forms.Form):
    """The browser's query string; anything else is a 400 that says what was wrong."""

    q = forms.CharField(max_length=SEARCH_MAX_CHARS, required=False, label="Search")
    status = forms.ChoiceField(required=False, label="Show")
    after = forms.IntegerField(min_value=0, max_value=MAX_ID, required=False)
    before = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    last = forms.BooleanField(required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["status"]).choices = [("", "All items"), *filter_choices()]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if data.get("after") is not None and data.get("before") is not None:
            raise forms.ValidationError("give after or before, not both")
        return data


@login_required
def item_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, _ = require_project_role(request, slug, BROWSERS, denied=NOT_A_BROWSER)
    query = BrowserQuery(request.GET)
    template = "annotation/item_list.html#table" if request.htmx else "annotation/item_list.html"
    if not query.is_valid():
        return render(request, template, {"project": project, "query": query, "page": None}, status=400)
    data = query.cleaned_data
    page = item_page(
        project=project,
        q=data["q"],
        status=data["status"],
        after=data["after"],
        before=data["before"],
        last=data["last"],
    )
    keep = urlencode({key: data[key] for key in ("q", "status") if data[key]})
    context = {
        "project": project,
        "query": query,
        "page": page,
        "keep": f"&{keep}" if keep else "",
        "keep_first": f"?{keep}" if keep else "",
        # Each row links to its item: one reverse() for the page, not one per row.
        "item_url": reverse("item_list", args=[project.slug]),
    }
    return render(request, template, context)


@login_required
def item_page_view(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    project, roles = require_project_role(request, slug, BROWSERS, denied=NOT_A_BROWSER)
    item = project_item(project=project, item_id=item_id)
    if item is None:
        raise Http404("No such item in this project.")
    kind = project.task_kind
    detail = item_detail(project=project, item=item)
    context = {
        "project": project,
        "kind": kind,
        "item": item,
        # The forms show the item as its raters see it; the fields kept from them are listed apart.
        "payload": kind.rater_payload(item.payload, revealed=project.revealed_fields),
        "blank_form": kind.form_context(payload=item.payload, value=None, peers=[]),
        # An expert who is not a researcher makes gold blind to them too, unless the project shows them.
        "hidden": kind.hidden_values(item.payload)
        if Role.RESEARCHER in roles or request.user.is_superuser or project.adjudicators_see_hidden
        else [],
        "detail": detail,
        # Each rater's latest answer as the kind reads it, side by side (not a copy of the form per rater).
        "grid": value_grid(kind=kind, payload=item.payload, columns=[(a.rater, a.value) for a in detail.answers]),
        "panels": item_panels(project=project, item=item, user=request.user, roles=roles),
    }
    return render(request, "annotation/item_detail.html", context)
