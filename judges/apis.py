"""REST API for judge runs: start one on a project, list a project's runs, watch one. Researchers only."""

from __future__ import annotations

from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import member_project
from annotation.models import Role
from judges.backends import backend_choices
from judges.models import JudgeRun
from judges.selectors import run_progress, runs_for_project
from judges.services import judge_get_or_create, judge_run_start
from judges.tasks import judge_run_dispatch

RESEARCHERS = {Role.RESEARCHER}


class RunOutput(serializers.Serializer):
    id = serializers.IntegerField(source="run.pk")
    status = serializers.CharField(source="run.status")
    backend = serializers.CharField(source="run.judge.backend")
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

    def get_prompt(self, progress) -> str:
        return f"{progress.run.judge.prompt_name}.v{progress.run.judge.prompt_version}"


class JudgeRunListApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "JudgeRunStartInput"  # schema component names must be unique across views

        backend = serializers.ChoiceField(choices=backend_choices())
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
        transaction.on_commit(lambda: judge_run_dispatch(run_id=run.pk))
        return Response(RunOutput(run_progress(run=run)).data, status=status.HTTP_201_CREATED)


class JudgeRunDetailApi(APIView):
    @extend_schema(responses=RunOutput)
    def get(self, request, run_id: int):
        run = JudgeRun.objects.select_related("judge", "project").filter(pk=run_id).first()
        if run is None:
            raise Http404("no such run")
        member_project(request, run.project.slug, allowed=RESEARCHERS)
        return Response(RunOutput(run_progress(run=run)).data)
