"""REST API for a project's team: list and add members, change a member's roles or pause them,
remove them. Researchers of the project (and superusers) only; others get 403, outsiders 404.
Errors go through config.api.exception_handler.

Adding someone answers only what was entered and what happened ("added", "invitation_sent",
"already"): never the account's username, e-mail or state. A member's e-mail is listed only for
accounts the project itself made (the address its researcher typed)."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import member_services as team
from annotation.access import require_project_role
from annotation.members import MemberRow, project_member, project_member_user, project_members, project_own_accounts
from annotation.models import Project, Role
from annotation.team_views import invitation_link, members_add_for

NO_SUCH_MEMBER = "no such member of this project"


class MemberOutput(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.CharField(help_text="Only for accounts this project made; empty otherwise.")
    roles = serializers.ListField(child=serializers.CharField())
    state = serializers.ChoiceField(choices=["active", "paused", "invited", "inactive"])
    paused = serializers.BooleanField()
    submitted = serializers.IntegerField()
    skipped = serializers.IntegerField()
    holding = serializers.IntegerField(help_text="Items the member holds now (open assignments).")
    target = serializers.IntegerField(help_text="The member's fair share of items (0 for researchers only).")
    percent = serializers.IntegerField()
    last_activity = serializers.DateTimeField(allow_null=True)


def member_data(row: MemberRow, own_accounts: set[int]) -> dict:
    return MemberOutput(
        {
            "username": row.username,
            "email": row.email if row.user_id in own_accounts else "",
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
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        own = project_own_accounts(project=project)["own_accounts"]
        return Response([member_data(row, own) for row in project_members(project=project)])

    @extend_schema(
        request=Input,
        responses={
            201: inline_serializer(
                "MemberAddOutput",
                {
                    "entered": serializers.CharField(help_text="The username or e-mail given."),
                    "role": serializers.CharField(),
                    "outcome": serializers.ChoiceField(choices=[team.ADDED, team.INVITATION_SENT, team.ALREADY]),
                    "invitation_url": serializers.CharField(
                        help_text="For a new account's invitation or a join invitation: shown once."
                    ),
                    "temporary_password": serializers.CharField(help_text="Shown once; changed at first sign-in."),
                },
            )
        },
    )
    def post(self, request, slug: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        spec = team.MemberSpec(
            username=data.validated_data["username"].strip(),
            email=data.validated_data["email"],
            role=data.validated_data["role"],
        )
        (added,) = members_add_for(request, project, [spec], data.validated_data["accounts"])
        body = {
            "entered": added.entered,
            "role": added.role,
            "outcome": added.outcome,
            "invitation_url": invitation_link(added.invitation_token) if added.invitation_token else "",
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
        user = project_member_user(project=project, username=username)
        if user is None:
            raise Http404(NO_SUCH_MEMBER)
        return user

    def _data(self, project: Project, user) -> Response:
        own = project_own_accounts(project=project)["own_accounts"]
        row = project_member(project=project, username=user.username)
        assert row is not None  # the user was just found a member
        return Response(member_data(row, own))

    @extend_schema(responses=MemberOutput)
    def get(self, request, slug: str, username: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        user = self._member(project, username)
        return self._data(project, user)

    @extend_schema(request=Input, responses=MemberOutput)
    def patch(self, request, slug: str, username: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
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
        return self._data(project, user)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, slug: str, username: str):
        project, _ = require_project_role(request, slug, {Role.RESEARCHER}, api=True)
        user = self._member(project, username)
        team.member_remove(project=project, actor=request.user, user=user)
        return Response(status=status.HTTP_204_NO_CONTENT)
