"""The release's API: the release as a .zip, and the metadata a team enters once per project."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import require_project_role
from annotation.errors import FieldError, ValidationFailed
from annotation.models import Role
from validation.release import SPLITS, release_archive
from validation.release.services import SETTINGS_FIELDS, release_settings_of, release_settings_update


def _settings_json(project) -> dict[str, str]:
    settings = release_settings_of(project)
    return {name: getattr(settings, name) for name in SETTINGS_FIELDS}


class ReleaseSettingsSerializer(serializers.Serializer):
    license = serializers.CharField(max_length=64, required=False, allow_blank=True)
    creators = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    citation = serializers.CharField(max_length=4000, required=False, allow_blank=True)
    url = serializers.CharField(max_length=500, required=False, allow_blank=True)
    version = serializers.CharField(max_length=32, required=False)
    language = serializers.CharField(max_length=100, required=False, allow_blank=True)
    description = serializers.CharField(max_length=4000, required=False, allow_blank=True)
    annotator_demographics = serializers.CharField(max_length=4000, required=False, allow_blank=True)


class ReleaseApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("splits", str, description=f"comma-separated, from {', '.join(SPLITS)} (default: all)"),
            OpenApiParameter("snapshot", int, description="agreement from this frozen report snapshot"),
        ],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
        description="The dataset release as a .zip: `manage.py release SLUG -o DIR`. Researchers only.",
    )
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        splits = request.query_params.get("splits", ",".join(SPLITS)).split(",")
        snapshot = request.query_params.get("snapshot", "").strip()
        if snapshot and not (snapshot.isdigit() and len(snapshot) <= 18):
            raise ValidationFailed([FieldError("snapshot", "must be a snapshot number")])
        archive = release_archive(project=project, splits=splits, snapshot_id=int(snapshot) if snapshot else None)
        return FileResponse(
            archive, as_attachment=True, filename=f"{project.slug}-release.zip", content_type="application/zip"
        )


class ReleaseSettingsApi(APIView):
    @extend_schema(responses={200: ReleaseSettingsSerializer}, description="The project's release metadata.")
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        return Response(_settings_json(project))

    @extend_schema(
        request=ReleaseSettingsSerializer,
        responses={200: ReleaseSettingsSerializer},
        description="Set any of the release metadata (the others keep their value).",
    )
    def patch(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        body = ReleaseSettingsSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        release_settings_update(project=project, data=dict(body.validated_data))
        return Response(_settings_json(project))
