"""An account with a temporary password changes it before anything else.

The mark is put in the session at sign-in (accounts/signals.py), so every other request costs nothing;
only a marked session reads the account's flag, and drops the mark once the password was changed."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse

from accounts.errors import PASSWORD_CHANGE_REQUIRED, PASSWORD_CHANGE_REQUIRED_CODE
from annotation.errors import error_body
from annotation.member_services import password_change_required

#: The session key that marks a signed-in account still holding its temporary password.
SESSION_KEY = "concord_password_change_required"
#: Pages a marked session may still open.
ALLOWED_URL_NAMES = ("password_change", "password_change_done", "logout")


class PasswordChangeRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        if session is not None and session.get(SESSION_KEY):
            refused = self._refusal(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        user = request.user
        if not user.is_authenticated or not password_change_required(user=user):
            request.session.pop(SESSION_KEY, None)
            return None
        path = request.path_info
        if path.startswith(settings.STATIC_URL) or path in {reverse(name) for name in ALLOWED_URL_NAMES}:
            return None
        if path.startswith("/api/"):
            body = error_body(code=PASSWORD_CHANGE_REQUIRED_CODE, detail=PASSWORD_CHANGE_REQUIRED)
            return JsonResponse(body, status=403)
        if request.method == "GET":
            messages.warning(request, PASSWORD_CHANGE_REQUIRED)
        return redirect("password_change")
