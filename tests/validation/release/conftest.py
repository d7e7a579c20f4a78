"""A small study of any kind for the release tests."""

from __future__ import annotations

from annotation.models import Item, Project
from annotation.synthetic import synthetic_records
from tests.validation.conftest import annotate, suggest

#: The people of every study here; their names must reach no file of a release.
RATERS = ("alice.smith", "bob", "carol@example.org")


def study(make_project, judge_run, kind_name: str, *, items: int = 4) -> Project:
    """``items`` items of the kind answered by three people, and one model run with a failure."""
    project = make_project(kind_name, slug=f"rel-{kind_name.replace('_', '-')}", overlap=3)
    kind = project.task_kind
    rows = [
        Item.objects.create(project=project, external_id=r.pop("external_id"), payload=r)
        for r in synthetic_records(kind, items)
    ]
    for item in rows:
        for rater in RATERS:
            annotate(project, item, rater, kind.example_value(), visible=False)
    run = judge_run(project, backend="openai")
    suggest(run, rows[0], kind.example_value())
    suggest(run, rows[1], None, failure="not valid JSON")
    return project
