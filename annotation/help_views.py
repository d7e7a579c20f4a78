"""The app's help: the repository's user documentation (docs/*.md), served as pages so that a web user
can open what the pages point to ("Formats", "Caps on input"). Only the documents named here are
served, by a fixed name; nothing a user types chooses a path."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

#: name in the address → (file under docs/, title)
HELP_PAGES = {
    "formats": ("formats.md", "File formats"),
    "cli": ("cli.md", "Command line"),
    "api": ("api.md", "REST API"),
    "security": ("security.md", "Security and caps on input"),
    "estimates": ("estimates.md", "Estimates"),
}


#: A Markdown link to another document of docs/ ("[formats](formats.md#items)").
_DOC_LINK = re.compile(r"\[([^\]]+)\]\(([\w.-]+)\.md(#[\w-]+)?\)")


@cache
def _document(file_name: str) -> str:
    text = (Path(settings.BASE_DIR) / "docs" / file_name).read_text(encoding="utf-8")
    return _DOC_LINK.sub(_help_link, text)


def _help_link(link: re.Match) -> str:
    """A link to a served document points at its help page; to one not served, it stays plain words."""
    label, stem, anchor = link.group(1), link.group(2), link.group(3) or ""
    served = {file: key for key, (file, _) in HELP_PAGES.items()}
    if f"{stem}.md" in served:
        return f"[{label}]({reverse('help_page', args=[served[f'{stem}.md']])}{anchor})"
    return label


@login_required
def help_page(request: HttpRequest, name: str = "") -> HttpResponse:
    if name and name not in HELP_PAGES:
        raise Http404("no such help page")
    context = {"pages": [(key, title) for key, (_, title) in HELP_PAGES.items()], "name": name}
    if name:
        file_name, title = HELP_PAGES[name]
        context |= {"title": title, "text": _document(file_name)}
    return render(request, "annotation/help.html", context)
