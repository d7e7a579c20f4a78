"""REST API for projects, items, assignments and annotations. One view per operation, thin:
check access, call a service or selector, serialise. Errors go through config.api.exception_handler."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import cast

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import BasePagination
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.access import CANNOT_CREATE_PROJECTS, can_create_projects, require_project_role
from annotation.assignments import (
    assignment_claim,
    assignment_for_user,
    assignment_presentation,
    assignment_skip,
    assignment_submit,
)
from annotation.importing import import_job_run
from annotation.importing.services import import_job_record
from annotation.kinds import kind_choices
from annotation.models import Annotation, Assignment, ImportJob, Item, Project, Role, SuggestionExposure
from annotation.sampling import (
    ALLOCATIONS,
    MAX_DRAW,
    draw_json,
    sample_draws,
    validation_sample_discard,
    validation_sample_draw,
)
from annotation.selectors import (
    ProjectProgress,
    project_roles,
    projects_for_user,
    rater_payload,
    sees_project_design,
    visible_suggestion,
)
from annotation.services import GUIDELINES_MAX_CHARS, project_archive, project_create_as, project_update
from annotation.uploads import JsonLinesParser, JsonlParser, request_file

ANNOTATING = {Role.ANNOTATOR, Role.EXPERT}
SEES_ALL_VALUES = {Role.RESEARCHER, Role.EXPERT}
#: The file name an item import made through the API has in the project's import history.
API_IMPORT_NAME = "(API request)"


def _paginator() -> BasePagination:
    """The configured paginator: ?limit= capped (CONCORD_API_MAX_PAGE_SIZE)."""
    # api_settings imports the class its setting names; DRF's stubs type the setting's dotted path.
    return cast("type[BasePagination]", api_settings.DEFAULT_PAGINATION_CLASS)()


DESIGN_HELP = (
    "The questions of a kind that takes a design (rating, categorical; docs/formats.md, Designs): "
    "each problem is named at its path; frozen once answers exist."
)
#: The fields of the project's study design, shown to its researchers and experts only (DESIGN_ROLES). A designed
#: kind's ``design`` (its questions and scales) is not among them: an annotator answering by the API needs it.
DESIGN_FIELDS = ("overlap", "suggestion_exposure", "suggestion_probability", "seed", "qualification_rate",
                 "adjudication_rules", "revealed_fields", "adjudicators_see_hidden")  # fmt: skip


class ProjectOutput(serializers.ModelSerializer):
    """A project; to an annotator (context ``design=False``) without its design fields."""

    class Meta:
        model = Project
        fields = ["slug", "title", "kind", "guidelines", *DESIGN_FIELDS, "design", "created_at", "archived_at"]
        extra_kwargs = {name: {"required": False} for name in DESIGN_FIELDS}

    def to_representation(self, instance: Project) -> dict:
        data = super().to_representation(instance)
        if not self.context.get("design", True):
            for name in DESIGN_FIELDS:
                del data[name]
        return data


def project_data(project: Project, *, user, roles: Iterable[str]) -> dict:
    """ProjectOutput's JSON of ``project`` as ``user`` (with ``roles`` in it) may read it."""
    return ProjectOutput(project, context={"design": sees_project_design(user=user, roles=roles)}).data


class ProjectListApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "ProjectCreateInput"  # schema component names must be unique across views

        slug = serializers.SlugField(max_length=80)
        kind = serializers.ChoiceField(choices=kind_choices())
        title = serializers.CharField(max_length=200, required=False, default="")
        overlap = serializers.IntegerField(min_value=1, max_value=1000, required=False, default=2)
        guidelines = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=GUIDELINES_MAX_CHARS, trim_whitespace=False
        )
        suggestion_exposure = serializers.ChoiceField(
            choices=SuggestionExposure.choices, required=False, default=SuggestionExposure.HIDDEN
        )
        suggestion_probability = serializers.FloatField(min_value=0, max_value=1, required=False, default=0.5)
        seed = serializers.IntegerField(min_value=-(2**62), max_value=2**62, required=False, default=0)
        qualification_rate = serializers.FloatField(min_value=0, max_value=1, required=False, default=0.0)
        adjudication_rules = serializers.JSONField(required=False, allow_null=True, default=None)
        design = serializers.JSONField(required=False, allow_null=True, default=None, help_text=DESIGN_HELP)

        def validate_slug(self, slug: str) -> str:
            if Project.objects.filter(slug=slug).exists():
                raise serializers.ValidationError("a project with this slug already exists")
            return slug

    @extend_schema(responses=ProjectOutput(many=True))
    def get(self, request):
        paginator = _paginator()
        rows = projects_for_user(user=request.user)
        # The limit-offset paginator slices any sequence; the stubs take only a queryset.
        page: list[ProjectProgress] | None = paginator.paginate_queryset(rows, request, view=self)  # type: ignore[arg-type]  # it slices lists too
        data = [project_data(row.project, user=request.user, roles=row.roles) for row in page or []]
        return paginator.get_paginated_response(data)

    @extend_schema(request=Input, responses={201: ProjectOutput})
    def post(self, request):
        # Refused before the body is read: an unpermitted caller learns nothing (not even a taken slug).
        if not can_create_projects(request.user):
            raise PermissionDenied(CANNOT_CREATE_PROJECTS)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        project = project_create_as(user=request.user, **data.validated_data)
        return Response(ProjectOutput(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    class Input(serializers.Serializer):
        """Only the fields sent change. ``archived`` archives (true) or restores (false) the project."""

        class Meta:
            ref_name = "ProjectUpdateInput"  # schema component names must be unique across views

        title = serializers.CharField(max_length=200, required=False)
        kind = serializers.ChoiceField(choices=kind_choices(), required=False)
        guidelines = serializers.CharField(
            required=False, allow_blank=True, max_length=GUIDELINES_MAX_CHARS, trim_whitespace=False
        )
        overlap = serializers.IntegerField(min_value=1, max_value=1000, required=False)
        suggestion_exposure = serializers.ChoiceField(choices=SuggestionExposure.choices, required=False)
        suggestion_probability = serializers.FloatField(min_value=0, max_value=1, required=False)
        seed = serializers.IntegerField(min_value=-(2**62), max_value=2**62, required=False)
        qualification_rate = serializers.FloatField(min_value=0, max_value=1, required=False)
        adjudication_rules = serializers.JSONField(required=False, allow_null=True)
        design = serializers.JSONField(required=False, allow_null=True, help_text=DESIGN_HELP)
        revealed_fields = serializers.ListField(
            child=serializers.CharField(max_length=100), max_length=50, required=False,
            help_text="Fields the task kind hides from raters to show them on purpose (docs/formats.md); [] hides all.",
        )  # fmt: skip
        adjudicators_see_hidden = serializers.BooleanField(
            required=False,
            help_text="Show experts the kind's hidden fields when they adjudicate (logged); false: blind.",
        )
        archived = serializers.BooleanField(required=False)

    @extend_schema(responses=ProjectOutput)
    def get(self, request, slug: str):
        project, roles = require_project_role(request, slug, api=True)
        return Response(project_data(project, user=request.user, roles=roles))

    @extend_schema(request=Input, responses={200: ProjectOutput})
    def patch(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        data = self.Input(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        changes = dict(data.validated_data)
        archived = changes.pop("archived", None)
        with transaction.atomic():
            project = project_update(project=project, **changes)
            if archived is not None:
                project = project_archive(project=project, archived=archived)
        return Response(ProjectOutput(project).data)


class ItemOutput(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = ["id", "external_id", "payload", "created_at"]


#: The configured parsers (DRF's stubs type the setting as the dotted paths it names; api_settings gives classes).
DEFAULT_PARSERS = cast("list[type[BaseParser]]", api_settings.DEFAULT_PARSER_CLASSES)


class ItemListApi(APIView):
    """Items of a project: read by researchers and experts; bulk import by researchers (atomic), as a JSON
    object of records or, for large imports, a JSON Lines body streamed to disk."""

    parser_classes = [*DEFAULT_PARSERS, JsonLinesParser, JsonlParser]

    class Existing(serializers.Serializer):
        existing = serializers.ChoiceField(choices=ImportJob.Existing.choices, default=ImportJob.Existing.REFUSE)

    class Input(serializers.Serializer):
        class Meta:
            ref_name = "ItemImportInput"  # schema component names must be unique across views

        records = serializers.ListField(
            child=serializers.DictField(), min_length=1, max_length=100_000,
            help_text="Import records as in docs/formats.md: external_id, the kind's payload fields, optional gold.",
        )  # fmt: skip
        existing = serializers.ChoiceField(
            choices=ImportJob.Existing.choices, default=ImportJob.Existing.REFUSE,
            help_text="An external id the project already has: refuse the request, skip the record, or update "
            "the item's payload (only while nobody has answered it).",
        )  # fmt: skip

    @extend_schema(responses=ItemOutput(many=True))
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, SEES_ALL_VALUES, api=True)
        paginator = _paginator()
        page = paginator.paginate_queryset(Item.objects.filter(project=project).order_by("pk"), request, view=self)
        return paginator.get_paginated_response(ItemOutput(page, many=True).data)

    @extend_schema(
        request={"application/json": Input, "application/x-ndjson": {"type": "string"}},
        parameters=[
            OpenApiParameter(
                "existing",
                str,
                enum=list(ImportJob.Existing.values),
                required=False,
                description="With a JSON Lines body (one record per line, streamed to disk): what Input's "
                "`existing` says.",
            )
        ],
        responses={
            201: inline_serializer(
                "ItemImportOutput",
                {
                    "imported": serializers.IntegerField(help_text="items created"),
                    "skipped": serializers.IntegerField(help_text="items already there, left as they were"),
                    "updated": serializers.IntegerField(help_text="items already there whose payload was replaced"),
                },
            )
        },
    )
    def post(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        # The same streaming, all-or-nothing importer as files: the records become a JSONL file first.
        with tempfile.TemporaryDirectory() as folder:
            if hasattr(request.data, "read"):  # a JSON Lines body: copied to disk a block at a time, never held
                query = self.Existing(data=request.query_params)
                query.is_valid(raise_exception=True)
                existing = query.validated_data["existing"]
                path, _ = request_file(request, Path(folder), field="records")
            else:
                data = self.Input(data=request.data)
                data.is_valid(raise_exception=True)
                existing = data.validated_data["existing"]
                path = Path(folder) / "records.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for record in data.validated_data["records"]:
                        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            job = import_job_record(
                project=project,
                target=ImportJob.Target.ITEMS,
                filename=API_IMPORT_NAME,
                stored_path=str(path),
                existing=existing,
                user=request.user,
            )
            job = import_job_run(job=job, raise_rejected=True)
        counts = {"imported": job.rows_imported, "skipped": job.rows_skipped, "updated": job.rows_updated}
        return Response(counts, status=status.HTTP_201_CREATED)


class RaterItemOutput(serializers.Serializer):
    """An item as its rater sees it (blinding): the fields the kind's form shows, and those the project
    reveals on purpose. No external or database id: a researcher's id can spell the condition or the key."""

    class Meta:
        ref_name = "RaterItem"

    payload = serializers.JSONField()
    presentation = serializers.JSONField(
        allow_null=True,
        help_text="How to show the item to you: an order of its options or responses, drawn for you and this "
        "item (the kind's `presentation`); null: as the payload lists it. A kind that records the order shown "
        "asks for it in the value.",
    )


class AssignmentOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    item = RaterItemOutput()
    suggestion = serializers.JSONField(
        allow_null=True, help_text="The LLM suggestion, only where the project shows it."
    )
    holds_expired = serializers.IntegerField(
        required=False,
        help_text="Next only: items you held that went back to the pool (CONCORD_HOLD_SECONDS) since your last next.",
    )


def assignment_data(assignment) -> dict:
    suggestion = visible_suggestion(assignment=assignment)
    return {
        "id": assignment.pk,
        "status": assignment.status,
        "item": {
            "payload": rater_payload(assignment=assignment),
            "presentation": assignment_presentation(assignment=assignment),
        },
        "suggestion": None
        if suggestion is None
        else {"value": suggestion.value, "backend": suggestion.run.judge.backend},
    }


def next_data(claim) -> dict:
    """The JSON of a claimed assignment, as ``next`` answers it: what AssignmentOutput (the schema)
    gives for it, built directly, since every claim answers it (a serializer walks its fields again)."""
    return {**assignment_data(claim.assignment), "holds_expired": claim.holds_expired}


class AssignmentNextApi(APIView):
    @extend_schema(request=None, responses={200: AssignmentOutput, 204: None})
    def post(self, request, slug: str):
        project, _ = require_project_role(request, slug, ANNOTATING, api=True)
        claim = assignment_claim(project=project, user=request.user)
        if claim.assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(next_data(claim))


class AnnotationOutput(serializers.ModelSerializer):
    item = serializers.CharField(source="item.external_id")

    class Meta:
        model = Annotation
        fields = ["id", "item", "rater", "version", "value", "source", "suggestion_visible", "seconds_on_item",
                  "created_at"]  # fmt: skip


class RaterAnnotationOutput(serializers.ModelSerializer):
    """An annotation as its rater reads it back: the item named by the rater's assignment, never by
    the researcher's external id (see RaterItemOutput)."""

    assignment = serializers.IntegerField(source="rater_assignment", allow_null=True, read_only=True)

    class Meta:
        model = Annotation
        fields = ["id", "assignment", "rater", "version", "value", "source", "suggestion_visible", "seconds_on_item",
                  "created_at"]  # fmt: skip


_CREATED_AT = serializers.DateTimeField()


def rater_annotation_data(annotation: Annotation) -> dict:
    """RaterAnnotationOutput's JSON of a stored annotation, built directly: it answers every submit,
    and a ModelSerializer copies and walks its fields on each use."""
    return {
        "id": annotation.pk,
        "assignment": annotation.rater_assignment,  # type: ignore[attr-defined]  # annotated or set by the API
        "rater": annotation.rater,
        "version": annotation.version,
        "value": annotation.value,
        "source": annotation.source,
        "suggestion_visible": annotation.suggestion_visible,
        "seconds_on_item": annotation.seconds_on_item,
        "created_at": _CREATED_AT.to_representation(annotation.created_at),
    }


class SubmittedAndNextOutput(RaterAnnotationOutput):
    """The stored annotation and, with ``?next=true``, the next assignment (null when nothing is left)."""

    next = AssignmentOutput(required=False, allow_null=True, help_text="With ?next=true only.")

    class Meta(RaterAnnotationOutput.Meta):
        ref_name = "SubmittedAnnotation"
        fields = [*RaterAnnotationOutput.Meta.fields, "next"]


class AssignmentSubmitApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "AssignmentSubmitInput"  # schema component names must be unique across views

        value = serializers.JSONField()
        idempotency_key = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)

    class Query(serializers.Serializer):
        next = serializers.BooleanField(
            required=False, default=False, help_text="Also claim your next item and answer it as `next`."
        )

    @classmethod
    def read_query(cls, params) -> dict:
        """``Query``'s validated data; a plain ``next`` of one of DRF's boolean spellings is read
        directly, since every label sends one (anything else goes through ``Query``)."""
        raw = params.get("next")
        if raw is None or raw in serializers.BooleanField.FALSE_VALUES:
            return {"next": False}
        if raw in serializers.BooleanField.TRUE_VALUES:
            return {"next": True}
        query = cls.Query(data=params)
        query.is_valid(raise_exception=True)
        return query.validated_data

    @classmethod
    def read_input(cls, data) -> dict:
        """``Input``'s validated data. A JSON object with a value and an idempotency key that
        ``Input`` would take as it is (none, or text of 1 to 100 characters without surrounding
        space or NUL; the parser already refused unpaired surrogates) is read directly, without the
        serializer's walk; anything else goes through ``Input``, which refuses it or cleans it."""
        if type(data) is dict and data.get("value") is not None:
            key = data.get("idempotency_key")
            if key is None or (type(key) is str and 0 < len(key) <= 100 and key.strip() == key and "\x00" not in key):
                return {"value": data["value"], "idempotency_key": key}
        checked = cls.Input(data=data)
        checked.is_valid(raise_exception=True)
        return checked.validated_data

    @extend_schema(request=Input, parameters=[Query], responses={201: SubmittedAndNextOutput})
    def post(self, request, assignment_id: int):
        query = self.read_query(request.query_params)
        # With its project, which the store (the kind's rules) and the claim after it read.
        assignment = assignment_for_user(assignment_id=assignment_id, user=request.user)
        data = self.read_input(request.data)
        # Whether a suggestion was visible is what the assignment recorded when it was served.
        annotation = assignment_submit(
            assignment=assignment,
            value=data["value"],
            idempotency_key=data["idempotency_key"],
            source=Annotation.Source.API,
        )
        annotation.rater_assignment = assignment.pk  # type: ignore[attr-defined]  # as visible_annotations annotates
        body = rater_annotation_data(annotation)
        if query["next"]:
            # The submit checked the user may write here (an annotating, unpaused member, the project
            # not archived): the claim that follows is theirs to make. A first answer ended their one
            # hold; a repeated submit (the same key) or an edit serves the item they hold, if any.
            project = assignment.project
            first = assignment.status == Assignment.Status.ASSIGNED
            claim = assignment_claim(project=project, user=request.user, holds_none=first)
            body["next"] = None if claim.assignment is None else next_data(claim)
        return Response(body, status=status.HTTP_201_CREATED)


class AssignmentSkipApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "AssignmentSkipInput"  # schema component names must be unique across views

        reason = serializers.CharField(max_length=500)

    @extend_schema(request=Input, responses={200: AssignmentOutput})
    def post(self, request, assignment_id: int):
        assignment = assignment_for_user(assignment_id=assignment_id, user=request.user)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = assignment_skip(assignment=assignment, reason=data.validated_data["reason"])
        return Response(AssignmentOutput(assignment_data(assignment)).data)


def visible_annotations(project: Project, roles: set[str], user):
    """Researchers and experts see every rater's values; an annotator only their own (blinding), each
    with the number of their assignment to the item (``rater_assignment``)."""
    annotations = Annotation.objects.filter(project=project).select_related("item")
    if roles & SEES_ALL_VALUES:
        return annotations
    own = Assignment.objects.filter(item=OuterRef("item"), annotator=user).values("pk")[:1]
    return annotations.filter(rater=user.username).annotate(rater_assignment=Subquery(own))


def annotations_schema(*, many: bool = False) -> PolymorphicProxySerializer:
    """The API schema of an annotation answer: by item for researchers and experts, by assignment for raters."""
    return PolymorphicProxySerializer(
        component_name="AnnotationForReader",
        serializers=[AnnotationOutput, RaterAnnotationOutput],
        resource_type_field_name=None,
        many=many,
    )


def annotation_output(roles: set[str]) -> type[serializers.ModelSerializer]:
    """Researchers and experts read annotations by item; an annotator by their own assignment."""
    return AnnotationOutput if roles & SEES_ALL_VALUES else RaterAnnotationOutput


class AnnotationListApi(APIView):
    @extend_schema(responses=annotations_schema(many=True))
    def get(self, request, slug: str):
        project, roles = require_project_role(request, slug, api=True)
        paginator = _paginator()
        rows = visible_annotations(project, roles, request.user).order_by("pk")
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(annotation_output(roles)(page, many=True).data)


class AnnotationDetailApi(APIView):
    @extend_schema(responses=annotations_schema())
    def get(self, request, annotation_id: int):
        project_id = Annotation.objects.filter(pk=annotation_id).values("project_id")
        project = Project.objects.filter(pk=Subquery(project_id)).first()
        if project is None:
            raise Http404("no such annotation")
        roles = project_roles(project=project, user=request.user)
        if not roles and not request.user.is_superuser:
            raise Http404("no such annotation")  # a removed member reads nothing of the project, their answers included
        annotation = visible_annotations(project, roles, request.user).filter(pk=annotation_id).first()
        if annotation is None:  # someone else's value: as if it did not exist
            raise Http404("no such annotation")
        return Response(annotation_output(roles)(annotation).data)


class ValidationSampleApi(APIView):
    """The project's validation sample (its draws), and a new draw into it."""

    class Input(serializers.Serializer):
        class Meta:
            ref_name = "SampleDrawInput"

        n = serializers.IntegerField(min_value=1, max_value=MAX_DRAW, required=False, allow_null=True, default=None)
        fraction = serializers.FloatField(required=False, allow_null=True, default=None)
        strata = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
        allocation = serializers.ChoiceField(choices=ALLOCATIONS, required=False, default="proportional")
        seed = serializers.IntegerField(min_value=0, max_value=2**63 - 1)

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        return Response({"project": project.slug, "draws": [draw_json(draw) for draw in sample_draws(project=project)]})

    @extend_schema(request=Input, responses={201: OpenApiTypes.OBJECT})
    def post(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        draw = validation_sample_draw(project=project, user=request.user, **data.validated_data)
        return Response(draw_json(draw), status=status.HTTP_201_CREATED)


class SampleDrawDiscardApi(APIView):
    """Discard the latest draw of the validation sample before anyone labels it (``discard_draw``):
    409 when it is not the latest or its items are labelled or held."""

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def delete(self, request, slug: str, number: int):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        discarded = validation_sample_discard(project=project, number=number)
        return Response({"project": project.slug, "discarded": discarded})
