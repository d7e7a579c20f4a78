"""A password rule beside Django's: the password does not contain the account's username (or its
e-mail's name). Django's similarity rule compares whole strings, so ``annaanna`` for ``anna`` (the
username written twice) passed it."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

CONTAINS_USERNAME = "The password contains your username; choose one that does not."
#: Shorter names are too common inside ordinary words to refuse a password for.
MIN_NAME_CHARS = 3


class UsernameNotInPasswordValidator:
    """Refuse a password holding the username or the e-mail's local part, in any capitals."""

    def validate(self, password: str, user: Any = None) -> None:
        if user is None:
            return
        email = getattr(user, "email", "") or ""
        names = (user.get_username(), email.partition("@")[0])
        lowered = password.casefold()
        if any(len(name) >= MIN_NAME_CHARS and name.casefold() in lowered for name in names):
            raise ValidationError(CONTAINS_USERNAME, code="password_contains_username")

    def get_help_text(self) -> str:
        return "Your password can’t contain your username."
