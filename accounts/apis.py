"""POST /api/token/ (a token for a username and password) and DELETE /api/token/ (revoke the one sent)."""

from __future__ import annotations

from typing import cast

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, inline_serializer
from knox.auth import TokenAuthentication
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts.errors import BAD_CREDENTIALS, PASSWORD_CHANGE_REQUIRED, BadCredentials, PasswordChangeRequired
from accounts.services import api_token_create
from annotation.member_services import password_change_required

#: Longest username and password accepted (Django's username field; a generous passphrase).
USERNAME_MAX_CHARS = 150
PASSWORD_MAX_CHARS = 1024


class TokenApi(APIView):
    """Tokens for scripts. Sign-in limits (django-axes) and the `token` throttle scope apply; an account
    that still has its temporary password gets a 403 until it is changed on the web."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"

    class Input(serializers.Serializer):
        username = serializers.CharField(max_length=USERNAME_MAX_CHARS)
        password = serializers.CharField(max_length=PASSWORD_MAX_CHARS, trim_whitespace=False)

    class Output(serializers.Serializer):
        token = serializers.CharField()
        expiry = serializers.DateTimeField(allow_null=True)

    def get_authenticators(self):
        # Getting a token needs no credentials but the password (a stale token header must not block
        # it); revoking one is done with that very token.
        # The token check the rest of the API is configured with (a django-rest-knox TokenAuthentication).
        request = getattr(self, "request", None)
        if request is None or request.method != "DELETE":
            return []
        # api_settings imports the classes its setting names; DRF's stubs type the dotted paths.
        classes = cast("list[type[BaseAuthentication]]", api_settings.DEFAULT_AUTHENTICATION_CLASSES)
        return [auth() for auth in classes if issubclass(auth, TokenAuthentication)]

    def get_permissions(self):
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(request=Input, responses={200: Output}, auth=[])
    def post(self, request):
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        # The Django request, so that django-axes counts the failure and flags a lockout on it.
        user = authenticate(request=request._request, **data.validated_data)
        if user is None:
            raise BadCredentials(BAD_CREDENTIALS)
        if password_change_required(user=user):
            # A temporary password opens the password change page only, never the API.
            raise PasswordChangeRequired(PASSWORD_CHANGE_REQUIRED)
        token, key = api_token_create(user=user)
        return Response(self.Output({"token": key, "expiry": token.expiry}).data)

    @extend_schema(request=None, responses={204: inline_serializer("TokenRevoked", {})})
    def delete(self, request):
        request.auth.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
