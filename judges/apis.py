"""REST API for runs: start a judge run or a generation run on a project, list a project's runs, watch,
cancel and resume one; import and export run files. Researchers only."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import jsonsafe
from annotation.access import require_project_role
from annotation.errors import FieldError, ValidationFailed
from annotation.models import Project, Role
from annotation.uploads import JsonLinesParser, JsonlParser, request_file
from judges.backends import runnable_backend_choices
from judges.execution import JUDGE_RUNS
from judges.generation.execution import GENERATION_RUNS
from judges.generation.forms import MAX_LIMIT
from judges.generation.selectors import generation_runs_for_project
from judges.generation.services import generation_run_start
from judges.models import MAX_CONCURRENCY
from judges.run_files import RUN_FILE_TYPES, judge_run_import, run_file_lines
from judges.runs.services import run_cancel, run_resume
from judges.runs.types import get_run_type
from judges.selectors import run_progress, runs_for_project
from judges.services import DEFAULT_MAX_TOKENS, DEFAULT_SEED, judge_get_or_create, judge_run_start
from judges.tasks import run_dispatch

RESEARCHERS = {Role.RESEARCHER}


class RunStateOutput(serializers.Serializer):
    """What every run answers with: its state and counts (judges.models.RunState), rate and ETA."""

    id = serializers.IntegerField(source="run.pk")
    status = serializers.CharField(source="run.status")
    total = serializers.IntegerField(source="run.total")
    ok = serializers.IntegerField(source="run.ok_count")
    failed = serializers.IntegerField(source="run.failed_count")
    pending = serializers.IntegerField(source="run.pending_count")
    items_per_s = serializers.FloatField(allow_null=True, help_text="Items (records, for generation runs) a second.")
    eta_seconds = serializers.FloatField(allow_null=True)
    last_error = serializers.CharField(source="run.last_error")
    created_at = serializers.DateTimeField(source="run.created_at")
    finished_at = serializers.DateTimeField(source="run.finished_at", allow_null=True)


class RunOutput(RunStateOutput):
    backend = serializers.CharField(source="run.judge.backend")
    label = serializers.CharField(source="run.judge.backend_label")  # type: ignore[assignment]  # a declared field, not Field.label
    model = serializers.CharField(source="run.judge.model")
    prompt = serializers.SerializerMethodField()
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
        project, _ = require_project_role(request, slug, RESEARCHERS, api=True)
        runs = runs_for_project(project=project).select_related("judge")[:100]
        return Response(RunOutput([run_progress(run=run) for run in runs], many=True).data)

    @extend_schema(request=Input, responses={201: RunOutput})
    def post(self, request, slug: str):
        project, _ = require_project_role(request, slug, RESEARCHERS, api=True)
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
        run = _visible_run(request, JUDGE_RUNS, run_id)
        return Response(RunOutput(run_progress(run=run)).data)


NOT_A_JSON_OBJECT = "{field} must be a JSON object"


@dataclass(frozen=True)
class Upload:
    project: Project
    options: dict[str, Any]
    path: Path
    file_name: str


@contextmanager
def uploaded(
    request: Any, slug: str, input_class: type[serializers.Serializer], *, file_field: str, json_field: str
) -> Iterator[Upload]:
    """A researcher's upload: the project, the checked options (form fields of a multipart body, or the
    query string beside a JSON Lines body; ``json_field`` a JSON object given as text) and the file,
    copied to disk while the block runs. 400 naming the field when an option or the file is bad."""
    project, _ = require_project_role(request, slug, RESEARCHERS, api=True)
    multipart = request.content_type.startswith("multipart/")
    data = input_class(data=request.data if multipart else request.query_params)
    data.is_valid(raise_exception=True)
    options = dict(data.validated_data)
    options[json_field] = _json_object(options[json_field], field=json_field)
    with tempfile.TemporaryDirectory() as folder:
        path, file_name = request_file(request, Path(folder), field=file_field)
        yield Upload(project=project, options=options, path=path, file_name=file_name)


def _json_object(text: str, *, field: str) -> dict | None:
    """A form field holding a JSON object as text (None when empty); a ValidationError naming it otherwise."""
    if not text:
        return None
    try:
        value = jsonsafe.loads(text)
    except jsonsafe.UnsafeJSON:
        value = None
    if not isinstance(value, dict):
        raise exceptions.ValidationError({field: [NOT_A_JSON_OBJECT.format(field=field)]})
    return value


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
        allow_same_outputs = serializers.BooleanField(
            required=False, default=False, help_text="Import even when another run of the project has the same outputs."
        )

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
        with uploaded(request, slug, self.Input, file_field="file", json_field="sampling") as upload:
            result = judge_run_import(
                project=upload.project,
                path=upload.path,
                file_name=upload.file_name,
                created_by=request.user,
                **upload.options,
            )
        return Response(result.as_dict(), status=status.HTTP_201_CREATED)


class JudgeRunFileApi(APIView):
    """A run in the format the run import reads (what ``manage.py export_run`` writes), streamed."""

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=list(RUN_FILE_TYPES), default="jsonl")],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    )
    def get(self, request, run_id: int):
        run = _visible_run(request, JUDGE_RUNS, run_id)
        fmt = request.query_params.get("format", "jsonl")
        if fmt not in RUN_FILE_TYPES:
            raise ValidationFailed([FieldError("format", f"must be one of {', '.join(RUN_FILE_TYPES)}")])
        response = StreamingHttpResponse(run_file_lines(run, fmt), content_type=RUN_FILE_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{run.project.slug}-run-{run.pk}.{fmt}"'
        return response


# -- generation runs ----------------------------------------------------------------------------------


class GenerationRunOutput(RunStateOutput):
    step = serializers.CharField(source="run.step")
    options = serializers.JSONField(source="run.options")
    backend = serializers.CharField(source="run.backend")
    label = serializers.CharField(source="run.backend_label")  # type: ignore[assignment]  # a declared field, not Field.label
    model = serializers.CharField(source="run.model")
    endpoint = serializers.CharField(source="run.endpoint")
    prompt = serializers.CharField(source="run.prompt_key")
    prompt_sha256 = serializers.CharField(source="run.prompt_sha256")
    source_name = serializers.CharField(source="run.source_name")
    source_sha256 = serializers.CharField(source="run.source_sha256")
    existing = serializers.IntegerField(source="run.existing_count", help_text="Records the project had items of.")
    items_created = serializers.IntegerField(source="run.items_created")


class GenerationRunListApi(APIView):
    """A project's generation runs, and a new one from a source file (Stack Exchange threads, labels)."""

    parser_classes = [MultiPartParser, JsonLinesParser, JsonlParser]

    class Input(serializers.Serializer):
        class Meta:
            ref_name = "GenerationRunStartInput"

        step = serializers.CharField(max_length=50, help_text="A step that makes items of the project's kind.")
        backend = serializers.ChoiceField(choices=runnable_backend_choices())
        model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        endpoint = serializers.CharField(
            max_length=50, required=False, default="", allow_blank=True, help_text="A configured endpoint, by name."
        )
        temperature = serializers.FloatField(
            min_value=0, max_value=2, required=False, default=None, allow_null=True, help_text="Empty: the step's."
        )
        max_tokens = serializers.IntegerField(min_value=1, max_value=131072, required=False, default=DEFAULT_MAX_TOKENS)
        seed = serializers.IntegerField(
            min_value=0, max_value=2**31 - 1, required=False, default=DEFAULT_SEED, allow_null=True
        )
        limit = serializers.IntegerField(
            min_value=1, max_value=MAX_LIMIT, required=False, default=None, allow_null=True,
            help_text="Only the first N records of the file.",
        )  # fmt: skip
        concurrency = serializers.IntegerField(
            min_value=1, max_value=MAX_CONCURRENCY, required=False, default=None, allow_null=True
        )
        options = serializers.CharField(
            max_length=4000, required=False, default="", allow_blank=True,
            help_text='The step\'s options as a JSON object, e.g. {"profile_from": "current"}.',
        )  # fmt: skip

    @extend_schema(responses=GenerationRunOutput(many=True))
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, RESEARCHERS, api=True)
        runs = generation_runs_for_project(project=project)[:100]
        return Response(GenerationRunOutput([run_progress(run=run) for run in runs], many=True).data)

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "GenerationRunUpload", {"source": serializers.FileField(), **Input().get_fields()}
            ),
            "application/x-ndjson": {"type": "string"},
        },
        responses={201: GenerationRunOutput},
    )
    def post(self, request, slug: str):
        with uploaded(request, slug, self.Input, file_field="source", json_field="options") as upload:
            run = generation_run_start(
                project=upload.project,
                path=upload.path,
                source_name=Path(upload.file_name).name,
                created_by=request.user,
                **upload.options,
            )
        transaction.on_commit(lambda: run_dispatch(run_type=GENERATION_RUNS, run_id=run.pk))
        return Response(GenerationRunOutput(run_progress(run=run)).data, status=status.HTTP_201_CREATED)


def _visible_run(request: Any, run_type: str, run_id: int) -> Any:
    """The run, if the user is one of its project's researchers (404 for outsiders, 403 for other members)."""
    spec = get_run_type(run_type)
    run = spec.run_model.objects.select_related("project", *spec.run_related).filter(pk=run_id).first()
    if run is None:
        raise Http404("no such run")
    require_project_role(request, run.project.slug, RESEARCHERS, api=True)
    return run


#: What each run type's endpoints answer with.
RUN_OUTPUTS: dict[str, type[serializers.Serializer]] = {JUDGE_RUNS: RunOutput, GENERATION_RUNS: GenerationRunOutput}


class GenerationRunDetailApi(APIView):
    @extend_schema(responses=GenerationRunOutput)
    def get(self, request, run_id: int):
        run = _visible_run(request, GENERATION_RUNS, run_id)
        return Response(GenerationRunOutput(run_progress(run=run)).data)


class RunCancelApi(APIView):
    """Stop a running run (judge or generation run): what is done is kept; 400 ``run_state`` if it is not running."""

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def post(self, request, run_id: int, run_type: str):
        run = run_cancel(run=_visible_run(request, run_type, run_id))
        return Response(RUN_OUTPUTS[run_type](run_progress(run=run)).data)


class RunResumeApi(APIView):
    """Run a cancelled or stopped run again from where it was; 400 ``run_state`` otherwise."""

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def post(self, request, run_id: int, run_type: str):
        run = run_resume(run=_visible_run(request, run_type, run_id))
        transaction.on_commit(lambda: run_dispatch(run_type=run_type, run_id=run.pk))
        return Response(RUN_OUTPUTS[run_type](run_progress(run=run)).data)
