"""REST API for judge runs: start one on a project, list a project's runs, watch one. Researchers only."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import member_project
from annotation.errors import FieldError, ValidationFailed
from annotation.models import Role
from judges.backends import runnable_backend_choices
from judges.execution import JUDGE_RUNS
from judges.models import JudgeRun
from judges.run_files import RUN_FILE_TYPES, judge_run_import, run_file_lines
from judges.selectors import run_progress, runs_for_project
from judges.services import judge_get_or_create, judge_run_start
from judges.tasks import run_dispatch

RESEARCHERS = {Role.RESEARCHER}


class RunOutput(serializers.Serializer):
    id = serializers.IntegerField(source="run.pk")
    status = serializers.CharField(source="run.status")
    backend = serializers.CharField(source="run.judge.backend")
    label = serializers.CharField(source="run.judge.backend_label")
    model = serializers.CharField(source="run.judge.model")
    prompt = serializers.SerializerMethodField()
    total = serializers.IntegerField(source="run.total")
    ok = serializers.IntegerField(source="run.ok_count")
    failed = serializers.IntegerField(source="run.failed_count")
    pending = serializers.IntegerField(source="run.pending_count")
    items_per_s = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.FloatField(allow_null=True)
    last_error = serializers.CharField(source="run.last_error")
    created_at = serializers.DateTimeField(source="run.created_at")
    finished_at = serializers.DateTimeField(source="run.finished_at", allow_null=True)
    provenance = serializers.JSONField(source="run.provenance", help_text="Where an imported run's outputs came from.")

    def get_prompt(self, progress) -> str:
        return f"{progress.run.judge.prompt_name}.v{progress.run.judge.prompt_version}"


class JudgeRunListApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "JudgeRunStartInput"  # schema component names must be unique across views

        backend = serializers.ChoiceField(choices=runnable_backend_choices())
        model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        endpoint = serializers.CharField(
            max_length=50,
            required=False,
            default="",
            allow_blank=True,
            help_text="An endpoint the operator configured, by name (openai backend); empty: default.",
        )
        prompt = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
        temperature = serializers.FloatField(min_value=0, max_value=2, required=False, default=0.0)
        seed = serializers.IntegerField(
            min_value=0,
            max_value=2**31 - 1,
            required=False,
            default=42,
            allow_null=True,
            help_text="Sampling seed; orders multiple-choice options. null: no seed, options in the item's order.",
        )
        concurrency = serializers.IntegerField(
            min_value=1, max_value=256, required=False, allow_null=True, default=None
        )

    @extend_schema(responses=RunOutput(many=True))
    def get(self, request, slug: str):
        project, _ = member_project(request, slug, allowed=RESEARCHERS)
        runs = runs_for_project(project=project).select_related("judge")[:100]
        return Response(RunOutput([run_progress(run=run) for run in runs], many=True).data)

    @extend_schema(request=Input, responses={201: RunOutput})
    def post(self, request, slug: str):
        project, _ = member_project(request, slug, allowed=RESEARCHERS)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        concurrency = options.pop("concurrency")
        judge, _ = judge_get_or_create(project=project, created_by=request.user, **options)
        run = judge_run_start(judge=judge, project=project, concurrency=concurrency, created_by=request.user)
        transaction.on_commit(lambda: run_dispatch(run_type=JUDGE_RUNS, run_id=run.pk))
        return Response(RunOutput(run_progress(run=run)).data, status=status.HTTP_201_CREATED)


class JudgeRunDetailApi(APIView):
    @extend_schema(responses=RunOutput)
    def get(self, request, run_id: int):
        run = JudgeRun.objects.select_related("judge", "project").filter(pk=run_id).first()
        if run is None:
            raise Http404("no such run")
        member_project(request, run.project.slug, allowed=RESEARCHERS)
        return Response(RunOutput(run_progress(run=run)).data)


BODY_TOO_LARGE = "the run file is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES)"
NO_FILE = "send the run file as the multipart field 'file', or as a JSON Lines body (application/x-ndjson)"
SAMPLING_NOT_JSON = "sampling must be a JSON object"
#: How much of a JSON Lines body is copied to disk at a time.
BODY_BLOCK = 1 << 20


class JsonLinesParser(BaseParser):
    """A JSON Lines body, left unread: the view streams it to a file for the run importer."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        return stream


class JsonlParser(JsonLinesParser):
    media_type = "application/jsonl"


def _body_to_file(stream: Any, path: Path) -> None:
    """Copy a request body to ``path`` a block at a time, refusing one past CONCORD_IMPORT_MAX_BYTES."""
    limit, written = settings.CONCORD_IMPORT_MAX_BYTES, 0
    with path.open("wb") as out:
        while block := stream.read(BODY_BLOCK):
            written += len(block)
            if written > limit:
                raise exceptions.ValidationError({"file": [BODY_TOO_LARGE.format(limit=limit)]})
            out.write(block)


class JudgeRunImportApi(APIView):
    """A model's outputs made elsewhere, imported as a run (docs/formats.md, Judge runs). Atomic."""

    parser_classes = [MultiPartParser, JsonLinesParser, JsonlParser]

    class Input(serializers.Serializer):
        class Meta:
            ref_name = "JudgeRunImportInput"

        model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        prompt = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
        name = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)
        sampling = serializers.CharField(
            max_length=4000, required=False, default="", allow_blank=True, help_text="A JSON object."
        )
        producer_run_id = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "JudgeRunImportUpload", {"file": serializers.FileField(), **Input().get_fields()}
            ),
            "application/x-ndjson": {"type": "string"},
        },
        responses={
            201: inline_serializer(
                "JudgeRunImportOutput",
                {
                    "run": serializers.IntegerField(),
                    "ok": serializers.IntegerField(),
                    "failed": serializers.IntegerField(),
                },
            )
        },
    )
    def post(self, request, slug: str):
        project, _ = member_project(request, slug, allowed=RESEARCHERS)
        multipart = request.content_type.startswith("multipart/")
        data = self.Input(data=request.data if multipart else request.query_params)
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        sampling_text, sampling = options.pop("sampling"), None
        if sampling_text:
            try:
                sampling = json.loads(sampling_text)
            except json.JSONDecodeError:
                raise exceptions.ValidationError({"sampling": [SAMPLING_NOT_JSON]}) from None
        with tempfile.TemporaryDirectory() as folder:
            if multipart:
                upload = request.FILES.get("file")
                if upload is None:
                    raise exceptions.ValidationError({"file": [NO_FILE]})
                if upload.size > settings.CONCORD_IMPORT_MAX_BYTES:
                    raise exceptions.ValidationError(
                        {"file": [BODY_TOO_LARGE.format(limit=settings.CONCORD_IMPORT_MAX_BYTES)]}
                    )
                suffix = Path(upload.name).suffix.lower()
                path, file_name = Path(folder) / f"run{suffix}", upload.name
                with path.open("wb") as out:
                    for block in upload.chunks():
                        out.write(block)
            else:
                if not hasattr(request.data, "read"):  # no body, or one of another type
                    raise exceptions.ValidationError({"file": [NO_FILE]})
                path, file_name = Path(folder) / "run.jsonl", "request body"
                _body_to_file(request.data, path)
            result = judge_run_import(
                project=project, path=path, sampling=sampling, file_name=file_name, created_by=request.user, **options
            )
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class JudgeRunFileApi(APIView):
    """A run in the format the run import reads (what ``manage.py export_run`` writes), streamed."""

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=list(RUN_FILE_TYPES), default="jsonl")],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    )
    def get(self, request, run_id: int):
        run = JudgeRun.objects.select_related("judge", "project").filter(pk=run_id).first()
        if run is None:
            raise Http404("no such run")
        member_project(request, run.project.slug, allowed=RESEARCHERS)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in RUN_FILE_TYPES:
            raise ValidationFailed([FieldError("format", f"must be one of {', '.join(RUN_FILE_TYPES)}")])
        response = StreamingHttpResponse(run_file_lines(run, fmt), content_type=RUN_FILE_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{run.project.slug}-run-{run.pk}.{fmt}"'
        return response
