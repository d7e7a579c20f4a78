"""Errors of the accounts area; the messages are constants the tests import."""

from __future__ import annotations

from annotation.errors import ConcordError

TOKEN_NOT_FOUND = "No such API token of yours."
BAD_CREDENTIALS = "Unable to log in with provided credentials."


class BadCredentials(ConcordError):
    """No account with this username and password (or one that may not sign in): 400, as before."""

    code = "bad_credentials"


class TokenNotFound(ConcordError):
    """The token named is not one of the user's (or is already revoked): the same answer either way."""

    code = "token_not_found"


PASSWORD_CHANGE_REQUIRED = "Your account has a temporary password: choose your own password first."
PASSWORD_CHANGE_REQUIRED_CODE = "password_change_required"


class PasswordChangeRequired(ConcordError):
    """The account still has its temporary password: pages send it to the password change, the API says 403."""

    code = PASSWORD_CHANGE_REQUIRED_CODE
    http_status = 403
