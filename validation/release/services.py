"""Writes of the release: the metadata a team enters once per project."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from annotation.errors import FieldError, ValidationFailed
from annotation.models import Project
from validation.models import ReleaseSettings

__all__ = ["SETTINGS_FIELDS", "release_settings_of", "release_settings_update"]

#: What a team may set, in the order the page and the API list them.
SETTINGS_FIELDS = (
    "license",
    "creators",
    "citation",
    "url",
    "version",
    "language",
    "description",
    "annotator_demographics",
)


def release_settings_of(project: Project) -> ReleaseSettings:
    """The project's release metadata, or the defaults (unsaved) when none was entered yet."""
    return ReleaseSettings.objects.filter(project=project).first() or ReleaseSettings(project=project)


def release_settings_update(*, project: Project, data: dict[str, Any]) -> ReleaseSettings:
    """Set the fields named in ``data`` (others keep their value); every field is checked against its cap
    and nothing is stored when one is refused."""
    unknown = sorted(set(data) - set(SETTINGS_FIELDS))
    if unknown:
        raise ValidationFailed([FieldError(name, "not a release setting") for name in unknown])
    settings = release_settings_of(project)
    problems = [FieldError(name, "must be text") for name, value in data.items() if not isinstance(value, str)]
    if problems:
        raise ValidationFailed(problems)
    for name, value in data.items():
        setattr(settings, name, value.strip())
    try:
        settings.full_clean()
    except ValidationError as exc:
        raise ValidationFailed(
            [FieldError(name, " ".join(messages)) for name, messages in exc.message_dict.items()]
        ) from None
    settings.save()
    return settings
