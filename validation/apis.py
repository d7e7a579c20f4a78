"""REST API for agreement numbers and gold exports."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import require_project_role
from annotation.errors import FieldError, ValidationFailed
from annotation.models import Role
from validation.aggregation.methods import METHODS
from validation.alttest.statistics import METRICS, SCOPES
from validation.estimates.build import MIN_ALPHA, TRUTHS, EstimateParameters, alpha_problem, project_estimates
from validation.estimates.planning import StatedValues, half_width_problem, plan_json, project_plan, stated_problem
from validation.evaluations.base import render_evaluation
from validation.evaluations.registry import evaluate_request, page_evaluation
from validation.evaluations.snapshots import evaluation_snapshot_create
from validation.exports import FORMATS
from validation.goldset import SHAPES, export_gold
from validation.report_jobs import DONE, FAILED, JobState, needs_worker
from validation.report_queue import agreement_job
from validation.reports import ReportParameters, UnknownJudgeRun
from validation.selectors import project_dimension_agreement

NO_SUCH_EVALUATION = "no paper evaluation {name!r} for {kind} projects"
#: The test's page and API slug (``validation.evaluations.registry``).
ALT_TEST_SLUG = "alt-test"
ONLY_RESEARCHERS_FREEZE = "only the project's researchers can freeze an evaluation"
#: ``output`` of the evaluation API: its JSON (the command's), or the tables as text.
EVALUATION_FORMATS = {
    "md": "text/markdown; charset=utf-8",
    "latex": "application/x-tex; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
}
CONTENT_TYPES = {"jsonl": "application/jsonl", "csv": "text/csv", "parquet": "application/vnd.apache.parquet"}
CSV_ESCAPE_VALUES = {"true": True, "1": True, "false": False, "0": False}


class AgreementApi(APIView):
    class Query(serializers.Serializer):
        judge_run = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
        bootstrap = serializers.IntegerField(min_value=0, max_value=10_000, required=False, default=0)
        seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, default=0)
        retry = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        parameters=[Query],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT},
        description=(
            "Agreement per dimension, in the JSON shape of `manage.py agreement SLUG --format json`. "
            "More bootstrap resamples than CONCORD_REQUEST_BOOTSTRAP_MAX are computed by a worker: "
            "202 with `status` and `poll` (the same URL) until the numbers are ready, then 200; "
            "503 with the reason if the computation failed (`retry=true` starts it again)."
        ),
    )
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, api=True)
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        parameters = ReportParameters(
            judge_run_id=query.validated_data["judge_run"],
            bootstrap=query.validated_data["bootstrap"],
            seed=query.validated_data["seed"],
        )
        try:
            if needs_worker(parameters, project=project):
                job = agreement_job(project=project, parameters=parameters, retry=query.validated_data["retry"])
                return _job_response(request, job)
            results = project_dimension_agreement(project=project, parameters=parameters)
        except UnknownJudgeRun as exc:
            raise ValidationFailed([FieldError("judge_run", str(exc))]) from None
        return Response({"dimensions": {name: result.to_json_dict() for name, result in results.items()}})


def _job_response(request, job: JobState) -> Response:
    """200 with the numbers, 202 while a worker computes them, 503 with the reason if that failed."""
    if job.status == DONE:
        return Response(job.result)
    query = request.query_params.copy()
    query.pop("retry", None)
    poll = f"{request.path}?{query.urlencode()}"
    if job.status == FAILED:
        body = {"status": job.status, "code": "computation_failed", "detail": job.error, "poll": poll}
        return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    return Response({"status": job.status, "poll": poll}, status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "2"})


class GoldExportApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("format", str, enum=list(FORMATS), default="jsonl"),
            OpenApiParameter("shape", str, enum=list(SHAPES), default="concord"),
            OpenApiParameter(
                "csv_escape",
                bool,
                default=True,
                description="CSV: prefix cells a spreadsheet would run as formulas with '. false writes them raw.",
            ),
            OpenApiParameter(
                "method",
                str,
                enum=list(METHODS),
                default="majority",
                description="aggregation the gold is built with where no expert decided (in each record's provenance)",
            ),
        ],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
    )
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, api=True)
        fmt, shape = request.query_params.get("format", "jsonl"), request.query_params.get("shape", "concord")
        method = request.query_params.get("method", "majority")
        problems = [
            FieldError(name, f"must be one of {', '.join(choices)}")
            for name, value, choices in (
                ("format", fmt, FORMATS),
                ("shape", shape, SHAPES),
                ("method", method, METHODS),
            )
            if value not in choices
        ]
        escape = CSV_ESCAPE_VALUES.get(request.query_params.get("csv_escape", "true").strip().lower())
        if escape is None:
            problems.append(FieldError("csv_escape", "must be true or false"))
        if problems:
            raise ValidationFailed(problems)
        assert escape is not None  # else a problem above
        folder = Path(tempfile.mkdtemp(prefix="concord-export-"))
        path = folder / f"{project.slug}-gold-{shape}.{fmt}"
        export_gold(project=project, fmt=fmt, path=path, shape=shape, csv_escape=escape, method=method)
        handle = path.open("rb")
        path.unlink()  # the open handle keeps the bytes until the response is sent
        folder.rmdir()
        return FileResponse(handle, as_attachment=True, filename=path.name, content_type=CONTENT_TYPES[fmt])


class GivenFloatField(serializers.FloatField):
    """A number query parameter whose ``problem`` (a function of the number) refuses it by name; given
    empty (``alpha=``) it is refused, not read as absent."""

    def __init__(self, *, problem: Callable[[float], str | None], **kwargs: Any) -> None:
        self.problem = problem
        super().__init__(**kwargs)

    def get_value(self, dictionary: Any) -> Any:
        if dictionary.get(self.field_name) == "":
            return ""  # float("") is refused as "A valid number is required."
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> float:
        number = super().to_internal_value(data)
        message = self.problem(number)
        if message:
            raise serializers.ValidationError(message)
        return number


def _alpha_field() -> GivenFloatField:
    return GivenFloatField(problem=alpha_problem, required=False, default=0.05, min_value=MIN_ALPHA, max_value=0.5)


class EstimateApi(APIView):
    class Query(serializers.Serializer):
        class Meta:
            ref_name = "EstimateQuery"

        run = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
        by = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
        alpha = _alpha_field()
        truth = serializers.ChoiceField(choices=TRUTHS, required=False, default="mean")
        fpc = serializers.BooleanField(
            required=False, default=True, help_text="finite-population correction (the project's own items)"
        )

    @extend_schema(
        parameters=[Query],
        responses={200: OpenApiTypes.OBJECT},
        description="Model-only, people-only and prediction-powered estimates: `manage.py estimate SLUG --run ID`.",
    )
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, api=True)
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            evaluation = project_estimates(project=project, parameters=EstimateParameters(**query.validated_data))
        except UnknownJudgeRun as exc:
            raise ValidationFailed([FieldError("run", str(exc))]) from None
        except ValueError as exc:
            raise ValidationFailed([FieldError("", str(exc))]) from None
        return Response(evaluation.result)


class SamplePlanApi(APIView):
    class Query(serializers.Serializer):
        class Meta:
            ref_name = "SamplePlanQuery"

        run = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
        half_width = GivenFloatField(problem=half_width_problem, min_value=1e-6, max_value=1e6)
        alpha = _alpha_field()
        dimension = serializers.CharField(max_length=100, required=False, default=None, allow_null=True)
        sd = GivenFloatField(problem=lambda sd: stated_problem(sd=sd), required=False, default=None, allow_null=True)
        share = GivenFloatField(
            problem=lambda share: stated_problem(share=share), required=False, default=None, allow_null=True
        )
        correlation = GivenFloatField(
            problem=lambda r: stated_problem(correlation=r), min_value=-1, max_value=1, required=False, default=0.0
        )

    @extend_schema(
        parameters=[Query],
        responses={200: OpenApiTypes.OBJECT},
        description="Human labels for a target half-width: `manage.py plan_sample SLUG --run ID --half-width W`.",
    )
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, api=True)
        query = self.Query(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        stated = None
        if data["sd"] is not None or data["share"] is not None:
            stated = StatedValues(sd=data["sd"], share=data["share"], correlation=data["correlation"])
        try:
            plan = project_plan(
                project=project,
                run=data["run"],
                half_width=data["half_width"],
                alpha=data["alpha"],
                dimension=data["dimension"],
                stated=stated,
            )
        except UnknownJudgeRun as exc:
            raise ValidationFailed([FieldError("run", str(exc))]) from None
        except ValueError as exc:
            raise ValidationFailed([FieldError("", str(exc))]) from None
        return Response(plan_json(plan))


class EvaluationApi(APIView):
    """A paper evaluation the project's kind registers, with the parameters of its page."""

    parser_classes = [MultiPartParser, FormParser]

    def _evaluate(self, request, slug: str, name: str, data, files=None):
        project, roles = require_project_role(request, slug, {Role.RESEARCHER, Role.EXPERT}, api=True)
        declared = page_evaluation(project, name)
        if declared is None:
            raise NotFound(NO_SUCH_EVALUATION.format(name=name, kind=project.kind))
        form, evaluation = evaluate_request(
            declared=declared, project=project, user=request.user, data=data, files=files
        )
        if evaluation is None:
            problems = [
                FieldError("" if field == "__all__" else field, str(message))
                for field, messages in form.errors.items()
                for message in messages
            ]
            raise ValidationFailed(problems or [FieldError("", "choose what to evaluate")])
        return project, roles, evaluation

    def _respond(self, evaluation, fmt: str):
        if fmt in EVALUATION_FORMATS:
            return HttpResponse(render_evaluation(evaluation, fmt), content_type=EVALUATION_FORMATS[fmt])
        if fmt != "json":
            raise ValidationFailed([FieldError("output", f"one of json, {', '.join(EVALUATION_FORMATS)}")])
        return Response(evaluation.result)

    @extend_schema(
        parameters=[OpenApiParameter("output", str, enum=["json", *EVALUATION_FORMATS])],
        responses={200: OpenApiTypes.OBJECT},
        description=(
            "A paper evaluation (`copa`, `mcq`, ...: those of the project's kind) with its page's parameters in the "
            "query string (`?run=3&run=4`): the JSON of its command, or the tables with `output=md|latex|csv`."
        ),
    )
    def get(self, request, slug: str, name: str):
        _, _, evaluation = self._evaluate(request, slug, name, request.query_params)
        return self._respond(evaluation, request.query_params.get("output", "json"))

    @extend_schema(
        request={"multipart/form-data": OpenApiTypes.OBJECT, "application/x-www-form-urlencoded": OpenApiTypes.OBJECT},
        responses={200: OpenApiTypes.OBJECT, 201: OpenApiTypes.OBJECT},
        description=(
            "The same with the parameters as a form (multipart for those with a file, e.g. IPQA-Eval's "
            "`predictions`). `freeze=true` (researchers) stores it as a snapshot: 201 with its id."
        ),
    )
    def post(self, request, slug: str, name: str):
        freeze = str(request.data.get("freeze", "")).lower() in ("true", "1")
        project, roles, evaluation = self._evaluate(request, slug, name, request.data, request.FILES)
        if not freeze:
            return self._respond(evaluation, str(request.data.get("output", "json")))
        if Role.RESEARCHER not in roles and not request.user.is_superuser:
            raise PermissionDenied(ONLY_RESEARCHERS_FREEZE)
        title = str(request.data.get("title", ""))[:200]
        snapshot = evaluation_snapshot_create(project=project, evaluation=evaluation, user=request.user, title=title)
        body = {
            "snapshot": snapshot.pk,
            "evaluation": snapshot.evaluation,
            "inputs_sha256": snapshot.inputs_sha256,
            "numbers_sha256": snapshot.numbers_sha256,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class AltTestApi(EvaluationApi):
    """The Alternative Annotator Test: the ``alt-test`` evaluation (any kind with rating dimensions)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("run", int, many=True, required=True, description="judge runs (repeat: ?run=3&run=4)"),
            OpenApiParameter("epsilon", float, description="the annotators' advantage ε, 0-1 (0.2)"),
            OpenApiParameter("q", float, description="false discovery rate of the BY step (0.05)"),
            OpenApiParameter("metric", str, enum=list(METRICS)),
            OpenApiParameter("scope", str, enum=list(SCOPES)),
            OpenApiParameter("min_raters", int, description="annotators an item needs (2)"),
            OpenApiParameter("min_items", int, description="items an annotator needs (30)"),
            OpenApiParameter("bootstrap", int, description="resamples of the agreement intervals (1000)"),
            OpenApiParameter("seed", int),
            OpenApiParameter("output", str, enum=["json", *EVALUATION_FORMATS]),
        ],
        responses={200: OpenApiTypes.OBJECT},
        description=(
            "May a run replace the annotators? `manage.py alt_test SLUG --run ID ...`: winning rate and advantage "
            "probability per run, pooled and per dimension, agreement by who rated and calibration."
        ),
    )
    def get(self, request, slug: str):  # type: ignore[override]
        return super().get(request, slug, ALT_TEST_SLUG)

    @extend_schema(exclude=True)
    def post(self, request, slug: str):  # type: ignore[override]
        return super().post(request, slug, ALT_TEST_SLUG)
