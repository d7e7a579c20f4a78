"""Template helpers for setting projects up: who may create one, archived rows, the setup checklist."""

from __future__ import annotations

from django import template

from annotation.access import can_create_projects as _can_create_projects
from annotation.setup_checklist import setup_checklist

register = template.Library()


@register.filter
def can_create_projects(user) -> bool:
    """``user|can_create_projects``: whether the New project page is open to them."""
    return _can_create_projects(user)


@register.filter
def active_projects(rows: list) -> list:
    """Rows (ProjectProgress) of projects that are not archived."""
    return [row for row in rows if row.project.archived_at is None]


@register.filter
def archived_projects(rows: list) -> list:
    return [row for row in rows if row.project.archived_at is not None]


@register.inclusion_tag("annotation/_setup_checklist.html")
def project_checklist(project) -> dict:
    steps = setup_checklist(project=project)
    return {"project": project, "steps": steps, "done": sum(step.done for step in steps)}
