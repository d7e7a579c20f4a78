"""Errors of the accounts area; the messages are constants the tests import."""

from __future__ import annotations

from annotation.errors import ConcordError

TOKEN_NOT_FOUND = "No such API token of yours."
BAD_CREDENTIALS = "Unable to log in with provided credentials."


class TokenNotFound(ConcordError):
    """The token named is not one of the user's (or is already revoked): the same answer either way."""

    code = "token_not_found"
