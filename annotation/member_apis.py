"""REST API for a project's team: list and add members, change a member's roles or pause them,
remove them. Researchers of the project (and superusers) only; others get 403, outsiders 404.
Errors go through config.api.exception_handler."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import member_services as team
from annotation.access import project_access
from annotation.members import MemberRow, project_member, project_members
from annotation.models import Project, Role

NO_SUCH_MEMBER = "no such member of this project"


def team_project(request, slug: str) -> Project:
    return project_access(user=request.user, slug=slug, allowed={Role.RESEARCHER}, hide_from_outsiders=True)[0]


class MemberOutput(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    state = serializers.ChoiceField(choices=["active", "paused", "invited", "inactive"])
    paused = serializers.BooleanField()
    submitted = serializers.IntegerField()
    skipped = serializers.IntegerField()
    holding = serializers.IntegerField(help_text="Items the member holds now (open assignments).")
    target = serializers.IntegerField(help_text="The member's fair share of items (0 for researchers only).")
    percent = serializers.IntegerField()
    last_activity = serializers.DateTimeField(allow_null=True)


def member_data(row: MemberRow) -> dict:
    return MemberOutput(
        {
            "username": row.username,
            "email": row.email,
            "roles": list(row.roles),
            "state": row.state,
            "paused": row.paused,
            "submitted": row.submitted,
            "skipped": row.skipped,
            "holding": row.holding,
            "target": row.target,
            "percent": row.percent,
            "last_activity": row.last_activity,
        }
    ).data


class MemberListApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "MemberAddInput"  # schema component names must be unique across views

        username = serializers.CharField(max_length=team.MAX_USERNAME, required=False, default="", allow_blank=True)
        email = serializers.EmailField(max_length=team.MAX_EMAIL, required=False, default="", allow_blank=True)
        role = serializers.ChoiceField(choices=Role.choices)
        accounts = serializers.ChoiceField(
            choices=team.ACCOUNT_CHOICES,
            required=False,
            default=team.NO_NEW_ACCOUNTS,
            help_text="For a username no account has: none refuses, invite creates it with an invitation link, "
            "password with a temporary password (each returned once).",
        )

    @extend_schema(responses=MemberOutput(many=True))
    def get(self, request, slug: str):
        project = team_project(request, slug)
        return Response([member_data(row) for row in project_members(project=project)])

    @extend_schema(
        request=Input,
        responses={
            201: inline_serializer(
                "MemberAddOutput",
                {
                    "member": MemberOutput(),
                    "created": serializers.BooleanField(),
                    "already": serializers.BooleanField(),
                    "invitation_url": serializers.CharField(),
                    "temporary_password": serializers.CharField(),
                },
            )
        },
    )
    def post(self, request, slug: str):
        project = team_project(request, slug)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        spec = team.MemberSpec(
            username=data.validated_data["username"].strip(),
            email=data.validated_data["email"],
            role=data.validated_data["role"],
        )
        (added,) = team.members_add(
            project=project, actor=request.user, specs=[spec], accounts=data.validated_data["accounts"]
        )
        link = ""
        if added.invitation_token:
            link = request.build_absolute_uri(reverse("invitation_accept", args=[added.invitation_token]))
        body = {
            "member": member_data(project_member(project=project, username=added.username)),
            "created": added.created,
            "already": added.already,
            "invitation_url": link,
            "temporary_password": added.temporary_password,
        }
        response = Response(body, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class MemberDetailApi(APIView):
    class Input(serializers.Serializer):
        class Meta:
            ref_name = "MemberUpdateInput"  # schema component names must be unique across views

        roles = serializers.ListField(
            child=serializers.ChoiceField(choices=Role.choices),
            min_length=1,
            max_length=len(Role.values),
            required=False,
        )
        paused = serializers.BooleanField(required=False)

        def validate(self, data: dict) -> dict:
            if not data:
                raise serializers.ValidationError("give roles, paused or both")
            return data

    def _member(self, project: Project, username: str):
        user = team.project_member_user(project=project, username=username)
        if user is None:
            raise Http404(NO_SUCH_MEMBER)
        return user

    @extend_schema(responses=MemberOutput)
    def get(self, request, slug: str, username: str):
        project = team_project(request, slug)
        user = self._member(project, username)
        return Response(member_data(project_member(project=project, username=user.username)))

    @extend_schema(request=Input, responses=MemberOutput)
    def patch(self, request, slug: str, username: str):
        project = team_project(request, slug)
        user = self._member(project, username)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        team.member_update(
            project=project,
            actor=request.user,
            user=user,
            roles=data.validated_data.get("roles"),
            paused=data.validated_data.get("paused"),
        )
        return Response(member_data(project_member(project=project, username=user.username)))

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, slug: str, username: str):
        project = team_project(request, slug)
        user = self._member(project, username)
        team.member_remove(project=project, actor=request.user, user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)
